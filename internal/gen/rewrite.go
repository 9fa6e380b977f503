package gen

import (
	"slices"
	"strings"
)

// rewriteShare is the share of configurations that load mod_rewrite and
// hold rewrite rules (issue 16: at least a fifth).
const rewriteShare = 0.25

// rewrite writes mod_rewrite's rules into about a quarter of the
// configurations: server-level rules (refusals by path, address, header,
// method and query; [PT] and file-system substitutions into other
// directories; [E=] feeding env= rules; redirects; chains and skips;
// look-ahead subrequests, -U, -F and %{LA-U:...}), and sometimes a
// <Directory> with per-directory rules (refusals, internal redirects to
// other files and directories, a front controller, look-aheads).
func (g *generator) rewrite() {
	if g.opt.AvoidModules["rewrite"] || !g.chance(rewriteShare) {
		return
	}
	if !slices.Contains(g.mods, "rewrite") {
		g.mods = append(g.mods, "rewrite")
		slices.Sort(g.mods)
		if g.wide {
			g.loaded = LoadedModules(g.mods)
		}
	}
	g.line(0, "RewriteEngine On")
	for range 1 + g.intn(4) {
		g.serverRule()
	}
	if g.chance(0.5) {
		g.line(0, "")
		g.dirRules()
	}
	g.line(0, "")
}

// top is a top-level directory of the tree ("" where there is none).
func (g *generator) top() string {
	var tops []string
	for _, d := range g.dirs[1:] {
		if !strings.Contains(d, "/") {
			tops = append(tops, d)
		}
	}
	if len(tops) == 0 {
		return "nosuch"
	}
	return pick(g, tops)
}

// headerCond writes a RewriteCond on one of the headers the requests
// send.
func (g *generator) headerCond(depth int) {
	attr := pick(g, headerAttrs)
	if !slices.Contains(g.envAttrs, attr) {
		g.envAttrs = append(g.envAttrs, attr)
	}
	flags := ""
	if g.chance(0.4) {
		flags = " [NC]"
	}
	neg := ""
	if g.chance(0.2) {
		neg = "!"
	}
	g.line(depth, "RewriteCond %%{HTTP:%s} \"%s%s\"%s", attr, neg, pick(g, attrPatterns[attr]), flags)
}

func (g *generator) serverRule() {
	top := g.top()
	switch x := g.intn(100); {
	case x < 14:
		g.line(0, "RewriteRule ^/%s(/|$) - [F]", top)
	case x < 24:
		g.line(0, "RewriteCond %%{REMOTE_ADDR} \"%s\"", pick(g, attrPatterns["Remote_Addr"]))
		g.line(0, "RewriteRule ^/%s - [F]", top)
	case x < 36:
		g.headerCond(0)
		if g.chance(0.3) {
			g.headerCond(0)
		}
		g.line(0, "RewriteRule %s - [F]", pick(g, []string{".*", "^/" + top, `\.txt$`}))
	case x < 48:
		g.line(0, "RewriteRule ^/%s/(.*)$ /%s/$1 [PT]", top, g.top())
		g.paths = append(g.paths, "/"+top+"/")
	case x < 56:
		g.line(0, "RewriteRule ^/%s/(.*)$ @DOCROOT@/%s/$1 [L]", top, g.top())
	case x < 66:
		v := pick(g, envNames)
		g.line(0, "RewriteRule ^/%s - [E=%s:1]", top, v)
		g.envVars = append(g.envVars, v)
	case x < 72:
		g.line(0, "RewriteCond %%{REQUEST_METHOD} \"%s\"", pick(g, attrPatterns["Request_Method"]))
		g.line(0, "RewriteRule ^/%s - [F]", top)
	case x < 78:
		g.line(0, "RewriteCond %%{QUERY_STRING} .")
		g.line(0, "RewriteRule %s - [%s]", pick(g, []string{`\.txt$`, "^/" + top}), pick(g, []string{"F", "G"}))
	case x < 84:
		g.line(0, "RewriteRule ^/%s/?$ /%s/ [R=301,L]", top, g.top())
	case x < 88:
		g.line(0, "RewriteRule ^/%s - [C]", top)
		g.line(0, "RewriteRule %s - [F]", pick(g, []string{`\.php$`, `\.bak$`, "secret"}))
	case x < 95:
		g.lookaheadRule(top)
	default:
		g.line(0, "RewriteRule ^/%s - [S=1]", top)
		g.line(0, "RewriteRule %s - [F]", pick(g, []string{`\.txt$`, "index"}))
	}
}

// dirRules writes a <Directory> with per-directory rules.
func (g *generator) dirRules() {
	d := pick(g, g.dirs)
	path := "@DOCROOT@"
	url := "/"
	if d != "" {
		path += "/" + d
		url += d + "/"
	}
	g.paths = append(g.paths, url, url+".hidden", url+"route/x")
	g.line(0, "<Directory %q>", path)
	if g.chance(0.85) {
		g.line(1, "Options %s", pick(g, []string{"FollowSymLinks", "+FollowSymLinks", "SymLinksIfOwnerMatch"}))
	}
	g.line(1, "RewriteEngine On")
	if g.chance(0.4) {
		g.line(1, "RewriteBase %s", url)
	}
	files := []string{"index.html"}
	for _, f := range g.files {
		if rest, ok := strings.CutPrefix(f, d+"/"); d != "" && ok && !strings.Contains(rest, "/") {
			files = append(files, rest)
		} else if d == "" && !strings.Contains(f, "/") {
			files = append(files, f)
		}
	}
	for range 1 + g.intn(3) {
		switch x := g.intn(100); {
		case x < 18:
			g.line(1, `RewriteRule (^|/)\. - [F]`)
		case x < 36:
			g.line(1, "RewriteRule ^%s$ %s [L]", regexQuote(pick(g, files)), pick(g, files))
		case x < 52:
			g.line(1, "RewriteCond %%{REQUEST_FILENAME} !-f")
			g.line(1, "RewriteCond %%{REQUEST_FILENAME} !-d")
			g.line(1, "RewriteRule . %s [L]", pick(g, []string{"/index.html", url + "index.html", "/" + pick(g, g.files)}))
		case x < 62:
			g.line(1, `RewriteRule \.(txt|bak)$ - [F,NC]`)
		case x < 74:
			g.headerCond(1)
			g.line(1, "RewriteRule ^ - [F]")
		case x < 80:
			g.line(1, "RewriteRule ^route/(.*)$ /%s/$1 [L]", g.top())
		case x < 88:
			g.lookahead = true
			switch g.intn(3) {
			case 0:
				g.line(1, "RewriteCond %%{REQUEST_FILENAME} !-F")
			case 1:
				g.line(1, "RewriteCond %s !-U", pick(g, []string{"index.html", "/" + pick(g, g.files), "/" + g.top() + "/"}))
			default:
				g.line(1, "RewriteCond %%{LA-U:REQUEST_FILENAME} !-f")
			}
			g.line(1, "RewriteRule %s - [F%s]", pick(g, []string{"^route", `\.txt$`, "^"}), pick(g, []string{"", ",NS"}))
		default:
			v := pick(g, envNames)
			g.line(1, "RewriteRule ^route %s [E=%s:1]", pick(g, []string{"-", "index.html"}), v)
		}
	}
	g.line(0, "</Directory>")
}

// regexQuote escapes a file name's dots for a pattern.
func regexQuote(s string) string {
	return strings.ReplaceAll(s, ".", `\.`)
}

// lookaheadWhy is the reason a case with look-ahead rules gives for its
// backend keeping the access rules.
const lookaheadWhy = "look-ahead subrequests (-U, -F, LA-U) read the access rules, and the backend runs the same rules again"

// lookaheadRule writes a server-level rule whose condition makes a
// look-ahead subrequest.
func (g *generator) lookaheadRule(top string) {
	g.lookahead = true
	ns := pick(g, []string{"", ",NS"})
	switch g.intn(4) {
	case 0:
		g.line(0, "RewriteCond %%{REQUEST_URI} !-U")
		g.line(0, "RewriteRule ^/%s - [F%s]", top, ns)
	case 1:
		g.line(0, "RewriteCond %%{REQUEST_URI} ^/%s/(.*)$", top)
		g.line(0, "RewriteCond /%s/%%1 !-U", g.top())
		g.line(0, "RewriteRule ^/%s/ - [F%s]", top, ns)
	case 2:
		g.line(0, "RewriteCond %%{DOCUMENT_ROOT}%%{REQUEST_URI} !-F")
		g.line(0, "RewriteRule ^/%s/ - [F%s]", top, ns)
	default:
		g.line(0, "RewriteCond %%{LA-U:REQUEST_FILENAME} -d")
		g.line(0, "RewriteRule ^/%s - [F%s]", top, ns)
	}
}

package gen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/tools/txtar"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// symlinks makes one to three symbolic links in the document root, with
// the files outside it they may point to.
func (g *generator) symlinks() {
	g.use(Symlinks)
	g.extraFiles = append(g.extraFiles,
		txtar.File{Name: apachetest.ExtraDir + "/secret.html", Data: []byte("outside the document root\n")},
		txtar.File{Name: apachetest.ExtraDir + "/dir/index.html", Data: []byte("outside, a directory\n")})
	for range 1 + g.intn(3) {
		d := pick(g, g.dirs)
		prefix, up := "", ""
		if d != "" {
			prefix = d + "/"
			up = strings.Repeat("../", strings.Count(d, "/")+1)
		}
		g.nlinks++
		var name, target, owner string
		isDir := false
		switch x := g.intn(8); x {
		case 0:
			name, target = "out.html", "@EXTRA@/secret.html"
		case 1:
			name, target = "in.html", up+pick(g, g.files)
		case 2:
			name, target, isDir = "dir", "@EXTRA@/dir", true
		case 3:
			name, target, isDir = "indir", up+pick(g, g.dirs), true
			if strings.HasSuffix(target, "/") || target == "" {
				target += "."
			}
		case 4:
			name, target = "gone.html", "@EXTRA@/nothing.html"
		case 5:
			name, target, owner = "nobody.html", "@EXTRA@/secret.html", "owner=nobody\n"
		case 6:
			name, target, owner, isDir = "nobodydir", "@EXTRA@/dir", "owner=nobody\n", true
		default:
			name, target = "abs.html", "@DOCROOT@/"+pick(g, g.files)
		}
		name = fmt.Sprintf("ln%d-%s", g.nlinks, name)
		if !isDir && !slices.Contains(g.files, prefix+"index.html") && !g.hasIndexLink(prefix) && g.chance(0.3) {
			name = "index.html"
			g.links = append(g.links, "/"+prefix)
		}
		g.extraFiles = append(g.extraFiles, txtar.File{
			Name: apachetest.DocRootDir + "/" + prefix + name + apachetest.SymlinkSuffix,
			Data: []byte(target + "\n" + owner),
		})
		u := "/" + prefix + name
		if isDir {
			g.links = append(g.links, u+"/", u, u+"/index.html")
			g.paths = append(g.paths, u+"/")
		} else {
			g.links = append(g.links, u)
			g.paths = append(g.paths, u)
		}
	}
}

func (g *generator) hasIndexLink(prefix string) bool {
	for _, f := range g.extraFiles {
		if f.Name == apachetest.DocRootDir+"/"+prefix+"index.html"+apachetest.SymlinkSuffix {
			return true
		}
	}
	return false
}

var overrides = []string{"All", "None", "AuthConfig", "Limit", "AuthConfig Limit", "FileInfo", "Options",
	"Indexes", "AuthConfig Limit FileInfo Options", "Options=FollowSymLinks,Indexes",
	"Nonfatal=Unknown AuthConfig Limit", "Nonfatal=Override Limit", "Nonfatal=All All",
	"AuthConfig Options=None", "Limit FileInfo", "AuthConfig Limit Indexes", "All", "AuthConfig Limit",
	"All Nonfatal=Override", "AuthConfig Limit Nonfatal=All", "Nonfatal=Unknown All", "Nonfatal=Override None",
	"None Nonfatal=Unknown"}

// compatClasses adds Limit and AuthConfig to an AllowOverride value
// with Nonfatal=Override or Nonfatal=All that lacks one of them (and
// neither All nor None).
func compatClasses(v string) string {
	f := strings.Fields(v)
	has := func(w string) bool {
		return slices.ContainsFunc(f, func(x string) bool { return strings.EqualFold(x, w) })
	}
	if !has("Nonfatal=Override") && !has("Nonfatal=All") || has("All") || has("None") {
		return v
	}
	for _, c := range []string{"Limit", "AuthConfig"} {
		if !has(c) {
			v += " " + c
		}
	}
	return v
}

// allFirstNoneLast moves All to the front of an AllowOverride value and
// None to its end: "Nonfatal=All All" becomes "All Nonfatal=All",
// "None Nonfatal=Unknown" becomes "Nonfatal=Unknown None".
func allFirstNoneLast(v string) string {
	var first, mid, last []string
	for _, w := range strings.Fields(v) {
		switch {
		case strings.EqualFold(w, "All"):
			first = append(first, w)
		case strings.EqualFold(w, "None"):
			last = append(last, w)
		default:
			mid = append(mid, w)
		}
	}
	return strings.Join(append(append(first, mid...), last...), " ")
}

var overrideLists = []string{"Redirect RewriteRule", "Header ExpiresActive", "Require AuthType AuthName AuthUserFile", "Order Allow Deny"}

// overrideBits returns the AllowOverride classes an AllowOverride value
// gives (Nonfatal= and the Options= list aside).
func overrideBits(v string) directive.Override {
	var o directive.Override
	for _, w := range strings.Fields(v) {
		w, _, _ = strings.Cut(w, "=")
		switch strings.ToLower(w) {
		case "all":
			o |= directive.OrAll
		case "authconfig":
			o |= directive.OrAuthCfg
		case "limit":
			o |= directive.OrLimit
		case "fileinfo":
			o |= directive.OrFileInfo
		case "options":
			o |= directive.OrOptions
		case "indexes":
			o |= directive.OrIndexes
		}
	}
	return o
}

// htaccessFiles writes one or two .htaccess files, each below a
// <Directory> with an AllowOverride (six times in seven; else AllowOverride
// None, Apache 2.4's default, is in force and the file is not read).
func (g *generator) htaccessFiles() {
	g.use(Htaccess)
	for _, d := range pickN(g, g.dirs, 1+g.intn(2)) {
		value := "None"
		prefix := ""
		if d != "" {
			prefix = d + "/"
		}
		unset := true
		if g.chance(0.86) {
			unset = false
			value = pick(g, overrides)
			if g.opt.Avoid[NonfatalOrder] {
				value = allFirstNoneLast(value)
			}
			if g.opt.Avoid[NonfatalSkipsCompat] {
				value = compatClasses(value)
			}
			anc := []string{d}
			for p := d; strings.Contains(p, "/"); {
				p = p[:strings.LastIndex(p, "/")]
				anc = append(anc, p)
			}
			if d != "" {
				anc = append(anc, "")
			}
			a := pick(g, anc)
			path := apachetest.DocRootPlaceholder
			if a != "" {
				path += "/" + a
			}
			g.line(0, "")
			g.line(0, "<Directory %s>", g.quote(path))
			g.line(1, "AllowOverride %s", value)
			if g.chance(0.05) {
				g.line(1, "AllowOverrideList %s", pick(g, overrideLists))
			}
			g.line(0, "</Directory>")
		}
		var b strings.Builder
		out, where, ov, fatal, on := g.out, g.where, g.override, g.fatal, g.on
		g.out, g.where, g.override = &b, ctxHtaccess, overrideBits(value)
		if unset && g.opt.Avoid[UnsetOverrideSections] {
			g.on = maps.Clone(g.on)
			for _, c := range []Construct{IfModule, IfDefine, IfVersion, IfOther, Misspelt, Unloaded} {
				delete(g.on, c)
			}
		}
		g.body(0, true)
		if g.chance(0.2) {
			g.filesSection(0)
		}
		g.out, g.where, g.override, g.fatal, g.on = out, where, ov, fatal, on
		g.extraFiles = append(g.extraFiles, txtar.File{Name: apachetest.DocRootDir + "/" + prefix + ".htaccess", Data: []byte(b.String())})
		g.paths = append(g.paths, "/"+prefix, "/"+prefix+"index.html")
	}
}

// encodeTarget percent-encodes what a request target cannot hold as it
// is (a space, a % of a name) and, mostly, the bytes of non-ASCII names,
// in upper or lower case hex or both; sometimes it sends them raw.
func (g *generator) encodeTarget(p string) string {
	if strings.IndexFunc(p, func(r rune) bool { return r >= 0x80 || r == ' ' || r == '%' }) < 0 {
		return p
	}
	raw := g.chance(0.1)
	hex := g.intn(3) // upper, lower, mixed
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == ' ' || c == '%' || c >= 0x80 && !raw {
			upper := hex == 0 || hex == 2 && g.chance(0.5)
			if upper {
				fmt.Fprintf(&b, "%%%02X", c)
			} else {
				fmt.Fprintf(&b, "%%%02x", c)
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

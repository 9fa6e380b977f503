package gen

import (
	"sort"
	"strings"

	"github.com/orderly-proxy/orderly/translate/directive"
)

func joinArgs(name, args string) string {
	if args == "" {
		return name
	}
	return name + " " + args
}

// A curated directive: a name and plausible arguments.
type curatedItem struct {
	name string
	args []string
}

// curated are directives with arguments a site would write, among them
// those orderly evaluates, refuses (fail-closed) and leaves to the
// backend. "{top}" stands for a directory of the document root.
var curated = []curatedItem{
	{"AcceptPathInfo", []string{"On", "Off", "Default"}},
	{"AccessFileName", []string{".htaccess", ".acl", ".acl .htaccess"}},
	{"Action", []string{"text/html /cgi-bin/x", "gen-handler /x virtual"}},
	{"AddCharset", []string{"UTF-8 .utf8"}},
	{"AddDefaultCharset", []string{"UTF-8", "Off"}},
	{"AddEncoding", []string{"x-gzip .gz"}},
	{"AddHandler", []string{"cgi-script .php", "type-map .var", "server-parsed .shtml", "default-handler .gen", "cgi-script .cgi"}},
	{"AddLanguage", []string{"en .en"}},
	{"AddOutputFilter", []string{"INCLUDES .shtml"}},
	{"AddOutputFilterByType", []string{"DEFLATE text/html"}},
	{"AddType", []string{"text/plain .gen", "application/x-httpd-php .php", "text/html .txt", "application/x-httpd-cgi .cgi"}},
	{"Alias", []string{"/alias @EXTRA@", "/alias/ @EXTRA@/", "/data2 @DOCROOT@/{top}", "@EXTRA@"}},
	{"AliasMatch", []string{`^/aliasm/(.*)$ @EXTRA@/$1`}},
	{"AllowEncodedSlashes", []string{"On", "Off", "NoDecode"}},
	{"AllowMethods", []string{"GET POST", "reset", "GET HEAD OPTIONS"}},
	{"AllowOverride", []string{"None", "All", "AuthConfig"}},
	{"Anonymous", []string{"guest anonymous"}},
	{"AuthBasicProvider", []string{"file", "anon", "file anon"}},
	{"AuthDigestProvider", []string{"file"}},
	{"AuthType", []string{"Digest", "Basic", "None", "Form"}},
	{"CGIPassAuth", []string{"On"}},
	{"CheckCaseOnly", []string{"On"}},
	{"CheckSpelling", []string{"On", "Off"}},
	{"ContentDigest", []string{"On"}},
	{"CookieTracking", []string{"On"}},
	{"DefaultType", []string{"None", "text/plain"}},
	{"DirectoryIndex", []string{"index.html", "page.html index.html", "disabled", "missing.html", "index.php index.html"}},
	{"DirectorySlash", []string{"On", "Off"}},
	{"DocumentRoot", []string{"@DOCROOT@", "@DOCROOT@/{top}"}},
	{"EnableMMAP", []string{"Off"}},
	{"EnableSendfile", []string{"On"}},
	{"ErrorDocument", []string{"404 /missing.html", `403 "Go away"`, "403 http://example.com/denied", "401 /index.html", `500 "oops"`, "403 /index.html", "404 default"}},
	{"ExpiresActive", []string{"On", "Off"}},
	{"ExpiresByType", []string{`text/html "access plus 1 hour"`}},
	{"ExpiresDefault", []string{`"access plus 1 day"`}},
	{"FallbackResource", []string{"/index.html", "disabled"}},
	{"FileETag", []string{"None", "MTime Size", "All"}},
	{"ForceLanguagePriority", []string{"Fallback"}},
	{"ForceType", []string{"text/plain", "None", "application/octet-stream"}},
	{"Header", []string{"set X-Gen 1", "always unset X-Powered-By", "append Vary Accept", `set Cache-Control "no-store"`}},
	{"HostnameLookups", []string{"Off", "On", "Double"}},
	{"HttpProtocolOptions", []string{"Unsafe", "Strict", "Strict LenientMethods", "Unsafe RegisteredMethods"}},
	{"IndexIgnore", []string{"*.bak", ".??* *~"}},
	{"IndexOptions", []string{"FancyIndexing", "-FancyIndexing"}},
	{"LanguagePriority", []string{"en fr"}},
	{"LimitInternalRecursion", []string{"5", "10 5"}},
	{"LimitRequestBody", []string{"0", "10", "102400", "2147483647"}},
	{"LimitRequestFields", []string{"50", "0"}},
	{"LimitRequestFieldSize", []string{"8190", "100"}},
	{"LimitRequestLine", []string{"8190", "60"}},
	{"LimitXMLRequestBody", []string{"1000", "0"}},
	{"LogLevel", []string{"info", "debug", "warn", "error", "crit", "trace2", "info access_compat:debug", "authz_core:crit"}},
	{"MergeSlashes", []string{"Off", "On"}},
	{"Options", []string{"FollowSymLinks", "-FollowSymLinks", "None", "All", "Indexes", "-Indexes", "+Indexes", "MultiViews", "+ExecCGI", "Includes", "Indexes FollowSymLinks"}},
	{"PassEnv", []string{"PATH"}},
	{"Protocols", []string{"http/1.1", "h2 http/1.1"}},
	{"Redirect", []string{"/gen /index.html", "permanent /old http://example.com/new", "gone /gone", "410 /gone2", "seeother /see http://example.com/"}},
	{"RedirectMatch", []string{`^/gen(.*) /index.html`, `403 \.bak$`}},
	{"RedirectPermanent", []string{"/oldp /index.html"}},
	{"RedirectTemp", []string{"/oldt /index.html"}},
	{"RemoveHandler", []string{".php"}},
	{"RemoveType", []string{".txt"}},
	{"Require", []string{"local", `expr %{REMOTE_ADDR} == '10.0.0.1'`, "file-owner", "all granted", "all denied", "not ip 10.0.0.0/8"}},
	{"RequestHeader", []string{"set X-Gen 1", "unset Authorization", "unset User-Agent", "set X-Forwarded-For 10.0.0.1"}},
	{"RequestReadTimeout", []string{"header=20-40,MinRate=500", "body=10"}},
	{"RewriteBase", []string{"/"}},
	{"RewriteCond", []string{`%{REMOTE_ADDR} ^10\.`}},
	{"RewriteEngine", []string{"On", "Off"}},
	{"RewriteOptions", []string{"Inherit"}},
	{"RewriteRule", []string{"^gen - [F]", `^(.*)\.bak$ - [F]`, "^old$ /index.html [R=301,L]"}},
	{"Satisfy", []string{"Any", "All", "ANY"}},
	{"ScriptAlias", []string{"/cgi-gen/ @EXTRA@/"}},
	{"ServerAdmin", []string{"webmaster@example.com"}},
	{"ServerAlias", []string{"www.example.com"}},
	{"ServerSignature", []string{"On", "Off", "EMail"}},
	{"ServerTokens", []string{"Prod", "Full", "OS"}},
	{"SetEnv", []string{"gen 1", "good 1", "no-gzip 1"}},
	{"SetEnvIfExpr", []string{`"-R '10.0.0.0/8'" good`, `"%{HTTP_USER_AGENT} =~ /bot/" bot`}},
	{"SetHandler", []string{"None", "default-handler", "cgi-script", "server-status", "server-info", "type-map", "imap-file", "send-as-is"}},
	{"SetOutputFilter", []string{"DEFLATE", "INCLUDES"}},
	{"UnsetEnv", []string{"good"}},
	{"UseCanonicalName", []string{"On", "Off", "DNS"}},
	{"XBitHack", []string{"On", "Full"}},
	// Directives of modules a case never loads: drawn as Unloaded.
	{"SSLRequireSSL", []string{""}},
	{"SSLOptions", []string{"+StrictRequire"}},
	{"ProxyPass", []string{"/gen http://127.0.0.1:1/"}},
	{"AuthLDAPURL", []string{"ldap://127.0.0.1/dc=example"}},
	{"Dav", []string{"On"}},
	{"CacheEnable", []string{"disk /"}},
	{"LuaHookAccessChecker", []string{"/x.lua gen"}},
	{"ProxyPreserveHost", []string{"On"}},
	{"VirtualDocumentRoot", []string{"@DOCROOT@/%0"}},
	{"UserDir", []string{"public_html"}},
}

// misspelt are lines Apache refuses to start with: unknown names,
// misspellings, third-party directives, bad words of access directives.
var misspelt = []string{
	"Dney from all", "Requre valid-user", "Alow from all", "Ordr deny,allow", "Satisfyy any",
	"AuthTyp Basic", "AuthUserFiel @AUTH@/users", "Requires all granted", "Deny form all",
	"Order Deny, Allow", "Require all grant", "Require valid_user", "Require All granted",
	"Allow from 10.0.0.0/33", "Order allow,deny,mutual-failure", "Satisfy some", "Requier all denied",
	"DOSHashTableSize 3097", "DOSPageCount 2", "php_value upload_max_filesize 10M",
	"php_flag display_errors off", "php_admin_value open_basedir /tmp", "SecRuleEngine On",
	"PassengerEnabled on", "ExpiresActiv On", "Headr set X-Gen 1", "RewriteEngin On",
	"Allow 10.0.0.1", "Order", "AuthName", "Require", "Deny from",
}

// thirdParty are directives of modules Apache does not ship.
var thirdParty = []string{
	"php_value upload_max_filesize 10M", "php_flag engine off", "DOSHashTableSize 3097",
	"SecRuleEngine On", "php_admin_flag allow_url_fopen off",
}

var symOptions = []string{"FollowSymLinks", "-FollowSymLinks", "+FollowSymLinks", "SymLinksIfOwnerMatch",
	"+SymLinksIfOwnerMatch", "-SymLinksIfOwnerMatch", "None", "All", "Indexes",
	"FollowSymLinks SymLinksIfOwnerMatch", "-FollowSymLinks +SymLinksIfOwnerMatch", "+Indexes", "-Indexes",
	"MultiViews", "+FollowSymLinks -Indexes", "Indexes -FollowSymLinks"}

// probedNames are the names of probed, sorted.
var probedNames = func() []string {
	var ns []string
	for n := range probed {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}()

// dctx is the directive table's context for where the generator writes.
func (g *generator) dctx() directive.Context {
	switch g.where {
	case ctxServer:
		return directive.Server
	case ctxHtaccess:
		return directive.Htaccess
	}
	return directive.Dir
}

func (g *generator) isLoaded(m string) bool { return g.loaded[m] }

func (g *generator) avoided(name string) bool {
	return Unsafe(name) || g.opt.AvoidDirectives[strings.ToLower(name)]
}

// tableItem draws a directive of the table whose module is loaded, with
// plausible arguments: one its context allows here (in), or one it does
// not (!in). It returns the line.
func (g *generator) tableItem(in bool) (string, bool) {
	c := g.dctx()
	allowed := func(name string) bool {
		if c == directive.Server && strings.EqualFold(name, "DirectoryIndex") {
			// The oracle's main configuration sets DirectoryIndex
			// index.html at the server level, which a DirectoryIndex of
			// the fragment there adds to; orderly reads the fragment
			// alone. In a section it replaces the list, alike for both.
			return false
		}
		info, _ := directive.Find(name, directive.V24, g.isLoaded)
		return info != nil && info.Where.Allows(c, g.override) == in && !g.avoided(name)
	}
	if g.chance(0.55) {
		var items []curatedItem
		for _, it := range curated {
			if allowed(it.name) && (g.curatedOK(it.name) || it.name == "DocumentRoot") {
				items = append(items, it)
			}
		}
		if len(items) > 0 {
			it := pick(g, items)
			return g.curatedLine(it.name, pick(g, it.args)), true
		}
	}
	var names []string
	for _, n := range probedNames {
		if allowed(n) && g.probedArgs(n, in) != "" && g.curatedOK(n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", false
	}
	n := pick(g, names)
	return joinArgs(n, g.probedArgs(n, in)), true
}

// curatedOK reports whether a directive may be drawn here, for the
// finer switches.
func (g *generator) curatedOK(name string) bool {
	switch {
	case name == "AddOutputFilterByType" && g.opt.Avoid[UnknownFilterProvider] && !g.loaded["deflate_module"]:
		return false
	case name == "DocumentRoot" && g.opt.Avoid[DocumentRootMoved]:
		return false // probed: @EXTRA@
	}
	return true
}

// probedArgs returns the probed arguments of n for this context (in) or
// for the other one (!in).
func (g *generator) probedArgs(n string, in bool) string {
	a := probed[n]
	server := g.where == ctxServer
	if !in {
		server = !server
	}
	if server {
		return a[0]
	}
	return a[1]
}

// curatedLine writes a curated directive's line, with {top} replaced and
// the URL paths it names aimed at.
func (g *generator) curatedLine(name, args string) string {
	switch {
	case name == "ErrorDocument" && strings.Contains(args, "://") && g.on[Symlinks] && g.opt.Avoid[ErrorDocumentURLSymlinks]:
		args = `403 "Go away"`
	case name == "ErrorDocument" && strings.Contains(args, " /") && g.opt.Avoid[ErrorDocumentLocal]:
		args = `403 "Go away"`
	case name == "DocumentRoot" && g.opt.Avoid[DocumentRootMoved]:
		args = "@DOCROOT@"
	case name == "LogLevel" && strings.Contains(args, "crit") && g.opt.Avoid[QuietLogLevel]:
		args = "info"
	}
	if strings.Contains(args, "{top}") {
		top := "nosuch"
		if len(g.dirs) > 1 {
			top = strings.SplitN(pick(g, g.dirs[1:]), "/", 2)[0]
		}
		args = strings.ReplaceAll(args, "{top}", top)
	}
	for _, a := range strings.Fields(args) {
		if strings.HasPrefix(a, "/") && !strings.ContainsAny(a, "@") {
			g.paths = append(g.paths, a, strings.TrimSuffix(a, "/")+"/index.html")
		}
	}
	return joinArgs(name, args)
}

// badArgs draws a directive of the table allowed here with arguments it
// does not take: none, or more.
func (g *generator) badArgs() (string, bool) {
	it, ok := g.tableItem(true)
	if !ok {
		return "", false
	}
	name, args, _ := strings.Cut(it, " ")
	if g.opt.Avoid[BadValues] {
		return g.badCount(name, args)
	}
	switch {
	case args == "" || g.chance(0.4):
		return name, true
	case args == "On" || args == "Off":
		return name + " Maybe", true
	}
	return name + " " + args + " gen gen gen", true
}

// badCount returns the directive name (drawn with the arguments args)
// with arguments that invoke_cmd refuses by its args_how, before the
// directive's own code reads them: none, four or more where it takes at
// most three, Maybe for a FLAG. A RAW_ARGS or TAKE_ARGV directive counts
// its arguments itself: none is drawn for it.
func (g *generator) badCount(name, args string) (string, bool) {
	info, _ := directive.Find(name, directive.V24, g.isLoaded)
	if info == nil {
		return "", false
	}
	switch info.Args {
	case directive.Flag:
		if g.chance(0.5) {
			return name, true
		}
		return name + " Maybe", true
	case directive.Take1, directive.Take2, directive.Take3, directive.Take12, directive.Take13, directive.Take23, directive.Take123:
		if args == "" || g.chance(0.4) {
			return name, true
		}
		return name + " " + args + " gen gen gen", true
	case directive.Iterate, directive.Iterate2:
		return name, true
	}
	return "", false
}

// unloadedItem draws a directive whose module the case does not load
// (one it could, or one it never does), with its arguments and its
// module's identifier.
func (g *generator) unloadedItem() (name, args, mod string, ok bool) {
	type row struct{ name, mod string }
	var rows []row
	for _, r := range directive.All() {
		if r.In&directive.V24 == 0 || r.Section() || g.loaded[r.Module] || g.avoided(r.Name) {
			continue
		}
		if info, _ := directive.Find(r.Name, directive.V24, g.isLoaded); info != nil {
			continue // another module of the case provides the name
		}
		rows = append(rows, row{r.Name, r.Module})
	}
	if len(rows) == 0 {
		return "", "", "", false
	}
	// The curated ones a third of the time: the names sites write.
	var cur []row
	for _, r := range rows {
		for _, it := range curated {
			if it.name == r.name {
				cur = append(cur, r)
			}
		}
	}
	r := pick(g, rows)
	if len(cur) > 0 && g.chance(0.35) {
		r = pick(g, cur)
	}
	for _, it := range curated {
		if it.name == r.name {
			return r.name, pick(g, it.args), r.mod, true
		}
	}
	a := probed[r.name]
	switch {
	case a[1] != "":
		args = a[1]
	case a[0] != "":
		args = a[0]
	default:
		args = "On"
	}
	return r.name, args, r.mod, true
}

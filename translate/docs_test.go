package translate

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/directives.md from the directive table")

// verdict is what orderly does with a directive, found by building a
// configuration that holds it.
type verdict int

const (
	verdictInert     verdict = iota // loaded and left to the backend
	verdictEvaluated                // decided by orderly as Apache does
	verdictRefused                  // refused at load unless legacy.forward_unfaithful
)

// probe builds a configuration with the directive alone, in the first
// context its override allows, and reports what the builder made of it.
func probe(r *directive.Info, sem Semantics) verdict {
	if r.Effect == directive.Inert {
		return verdictInert
	}
	if r.Effect == directive.Reads && readByLoader[strings.ToLower(r.Name)] {
		return verdictEvaluated
	}
	if r.Name == "Port" {
		return verdictRefused // Apache 2.2 refuses it too
	}
	mods := map[string]bool{r.Module: true, "authz_core_module": true, "access_compat_module": true, "authz_host_module": true}
	name := strings.TrimPrefix(r.Name, "<")
	line := name + " " + probeArgs(r)
	if r.Section() {
		line = "<" + name + " x>\n</" + name + ">"
	}
	text := line + "\n"
	if !r.Where.Allows(directive.Server, 0) {
		text = "<Directory /srv/www>\n" + line + "\n</Directory>\n"
	}
	ds, err := apacheconf.Parse("probe.conf", []byte(text))
	if err != nil {
		return verdictEvaluated
	}
	cfg, err := Build(ds, Options{Semantics: sem, Modules: mods, ForwardUnfaithful: true, DocumentRoot: "/srv/www"})
	if cfg != nil && len(cfg.Unfaithful) > 0 {
		return verdictRefused
	}
	if err != nil && (strings.Contains(err.Error(), "orderly cannot evaluate") || strings.Contains(err.Error(), "cannot be evaluated by orderly")) {
		return verdictRefused
	}
	return verdictEvaluated
}

// probeArgs are arguments the directive of r takes, by its args_how and
// its keywords, and that are not a harmless setting (a FLAG's On, or Off
// where On is harmless).
func probeArgs(r *directive.Info) string {
	name := strings.ToLower(r.Name)
	if a, ok := probeValid[name]; ok {
		return a
	}
	if k, ok := keywords[name]; ok && k.module == r.Module {
		for _, w := range k.words {
			if !harmless(&apacheconf.Directive{Name: r.Name, Args: []string{w}}, name) {
				return w
			}
		}
		return k.words[0]
	}
	switch r.Args {
	case directive.Flag:
		d := &apacheconf.Directive{Name: r.Name, Args: []string{"On"}}
		if harmless(d, strings.ToLower(r.Name)) {
			return "Off"
		}
		return "On"
	case directive.Take2, directive.Take23, directive.Iterate2:
		return "x x"
	case directive.Take3:
		return "x x x"
	}
	return "x"
}

// probeValid are arguments for directives whose own code refuses "x"
// (mod_rewrite parses its lines: translate/rewrite).
var probeValid = map[string]string{
	"rewriterule": "^ - [F]",
	"rewritecond": "%{REMOTE_ADDR} ^10",
	"rewritemap":  "m int:tolower",
	// mod_ldap's certificate lines take a type first.
	"ldaptrustedglobalcert": "CA_BASE64 /etc/ssl/ldap-ca.pem",
	"ldaptrustedclientcert": "CERT_BASE64 /etc/ssl/ldap-client.pem",
}

// readByLoader are what translate/apacheconf evaluates while it reads
// the configuration, as Apache does: none reaches the builder.
var readByLoader = map[string]bool{
	"<ifmodule": true, "<ifdefine": true, "include": true, "includeoptional": true,
	"<ifversion": true, "<iffile": true, "<ifdirective": true, "<ifsection": true,
	"<macro": true, "use": true, "undefmacro": true, "define": true, "undefine": true,
	"loadmodule": true, "loadfile": true, "serverroot": true,
}

// notes say more about a directive orderly refuses only with some
// settings, or evaluates in part (the harmless settings of gate.go).
var docNotes = map[string]string{
	"AcceptPathInfo":         "Off is 404 for path info once access control allows (the handler's answer); On and Default leave it to the handler",
	"ErrorDocument":          "a full URL turns the refusal into a 302 to it (not for 401, as Apache); a local document or a message changes only the body",
	"RewriteEngine":          "server level, virtual hosts, <Directory> and .htaccess (docs/rewrite.md); refused in <Location>, <Files> and <If>",
	"RewriteBase":            "per directory (docs/rewrite.md)",
	"RewriteOptions":         "every option (docs/rewrite.md)",
	"RewriteRule":            "every flag but [P] (docs/rewrite.md); refused in <Location>, <Files> and <If>",
	"RewriteCond":            "every test but expr, -U and -F through orderly's own subrequests; %{...} variables whose value is the legacy server's own (REMOTE_PORT, SSL: ...) are refused (docs/rewrite.md)",
	"RewriteMap":             "txt:, rnd: and int: maps; dbm:, prg:, dbd: and fastdbd: are refused (docs/rewrite.md)",
	"CheckSpelling":          "Off loads",
	"CheckCaseOnly":          "Off loads",
	"HostnameLookups":        "what SetEnvIf's Remote_Host is; in <If> and <Proxy>, Off loads",
	"ProxyRequests":          "Off loads",
	"UserDir":                "disabled loads",
	"AuthBasicProvider":      "file only",
	"TraceEnable":            "Off answers TRACE with 405 before access control; On lets it through to be echoed",
	"<If>":                   "refused when it holds access rules or a directive orderly refuses",
	"<ElseIf>":               "refused when it holds access rules or a directive orderly refuses",
	"<Else>":                 "refused when it holds access rules or a directive orderly refuses",
	"<Proxy>":                "applies to proxied requests only, which orderly refuses (ProxyPass): its directives are checked",
	"<ProxyMatch>":           "applies to proxied requests only, which orderly refuses (ProxyPass): its directives are checked",
	"NameVirtualHost":        "2.2: the addresses it names are chosen by Host; the others serve every request with their first host",
	"LoadModule":             "a module Apache does not ship is refused: orderly cannot know its hooks",
	"Port":                   "Apache 2.2 refuses it too: replaced with Listen",
	"<IfVersion>":            "evaluated against legacy.version",
	"Options":                "FollowSymLinks, SymLinksIfOwnerMatch and Indexes evaluated (translate/walk/options.go); MultiViews turned on is refused where mod_negotiation is loaded",
	"AddHandler":             "cgi-script is refused where mod_cgi or mod_cgid is loaded (ExecCGI)",
	"SetHandler":             "cgi-script is refused where mod_cgi or mod_cgid is loaded (ExecCGI); a handler in force turns FallbackResource and mod_autoindex's 403 off",
	"DirectorySlash":         "On redirects (the backend answers it); Off gives the slashless directory to mod_autoindex without an index lookup (403 where Indexes is off)",
	"DirectoryIndexRedirect": "an allowed index is answered with the redirect to it (Location as Apache builds it)",
	"DirectoryCheckHandler":  "On: a directory SetHandler hands to another handler gets no index subrequest",
	"FallbackResource":       "decided as mod_dir's GET subrequest for the fallback (its refusal is the answer, nesting limit 500); where mod_mime gives the request a handler by its extension Apache does not fall back, and orderly's decision can only be stricter",
	"AddType":                "application/x-httpd-cgi is refused where mod_cgi or mod_cgid is loaded (ExecCGI)",
	"ForceType":              "application/x-httpd-cgi is refused where mod_cgi or mod_cgid is loaded (ExecCGI)",
	"DefaultType":            "2.2: application/x-httpd-cgi is refused where mod_cgi or mod_cgid is loaded (ExecCGI)",

	"LimitRequestBody":      "413 for a body over the limit in force (Content-Length before forwarding, a chunked body counted as it streams); 2.4 discards the body before a refusal too",
	"LimitXMLRequestBody":   "only mod_dav's handler reads an XML body: refused where dav_module is loaded",
	"LimitRequestLine":      "414 in the proxy, by the server the address chose (the first <VirtualHost> of the address)",
	"LimitRequestFieldsize": "400 in the proxy, by the server the address chose; a field measured as Name: value",
	"LimitRequestFields":    "400 in the proxy, by the server the address chose",
	"HttpProtocolOptions":   "RegisteredMethods (501), Strict's Host and URI checks evaluated; Unsafe is refused: Go's server refuses with 400 what it lets Apache read",
	"StrictHostCheck":       "400 (AH10156/AH10157) before the walk when the Host names no host of the address",
	"Redirect":              "server level at translate_name (before access control), directory level at fixups (after it); Location as mod_alias builds it",
	"RedirectMatch":         "as Redirect, with $N filled in and the target escaped as mod_alias escapes it",
	"RedirectTemp":          "as Redirect",
	"RedirectPermanent":     "as Redirect",
	"RedirectRelative":      "On sends a path target as it is",
	"UseCanonicalName":      "On builds redirect URLs from ServerName; DNS is refused",

	"LDAPCacheEntries":      "one in-process cache for every virtual host, as mod_ldap's shared cache (docs/semantics.md)",
	"LDAPCacheTTL":          "as mod_ldap: 0 expires an entry at once",
	"LDAPOpCacheEntries":    "0 turns every LDAP cache off, as in mod_ldap",
	"LDAPTrustedGlobalCert": "CA_BASE64 only, the last one (OpenLDAP keeps one CA file); other types and client certificates are refused (docs/semantics.md)",
	"LDAPTrustedClientCert": "2.4: refused, orderly presents no client certificate to LDAP servers",
	"LDAPTrustedMode":       "per virtual host, as mod_ldap",
	"LDAPConnectionPoolTTL": "per virtual host, as mod_ldap",
	"LDAPSharedCacheSize":   "orderly's LDAP caches are in-process, bounded by LDAPCacheEntries and LDAPOpCacheEntries",
	"LDAPReferrals":         "referrals are not chased: an answer with a referral fails as under LDAPReferrals Off",
}

// TestDirectiveDocs keeps docs/directives.md, the list of what orderly
// evaluates, refuses and leaves to the backend, true to the table and to
// the builder (go test ./translate -run TestDirectiveDocs -update).
func TestDirectiveDocs(t *testing.T) {
	type row struct {
		name, module, in, effect, v22, v24 string
	}
	var rows []row
	counts := map[string]int{}
	var prev *directive.Info
	for i := range directive.All() {
		r := &directive.All()[i]
		last := prev
		prev = r
		rw := row{name: r.Name, module: r.Module, in: r.In.String(), effect: r.Effect.String()}
		for _, v := range []struct {
			bit directive.Version
			sem Semantics
			out *string
		}{{directive.V22, Legacy22, &rw.v22}, {directive.V24, Compat24, &rw.v24}} {
			if r.In&v.bit == 0 {
				continue
			}
			switch probe(r, v.sem) {
			case verdictInert:
				*v.out = "inert"
			case verdictEvaluated:
				*v.out = "evaluated"
			default:
				*v.out = "refused"
			}
			counts[string(v.sem)+" "+*v.out]++
		}
		// A name with a row for each version that differ only in how
		// they take their arguments is one line here.
		if n := len(rows); n > 0 && last != nil && last.Name == r.Name && last.Module == r.Module && last.Where == r.Where && last.Effect == r.Effect {
			if p := &rows[n-1]; p.in == "2.2" && rw.in == "2.4" {
				p.in, p.v24 = "2.2, 2.4", rw.v24
				continue
			}
		}
		rows = append(rows, rw)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		return strings.ToLower(strings.TrimPrefix(rows[i].name, "<")) < strings.ToLower(strings.TrimPrefix(rows[j].name, "<"))
	})
	var b strings.Builder
	b.WriteString("# Directives: what orderly evaluates, refuses and leaves to the backend\n\n")
	b.WriteString("Generated from the directive table (`translate/directive`) and the access model by\n")
	b.WriteString("`go test ./translate -run TestDirectiveDocs -update`; the test fails when this file is out of date.\n\n")
	b.WriteString("Every directive and section of Apache httpd 2.2 and 2.4 (core and the modules Apache ships for\n")
	b.WriteString("Unix) is in the table, with its module and the AllowOverride class it needs in `.htaccess`.\n")
	b.WriteString("A name that is not, or whose module the configuration does not load, is refused as Apache\n")
	b.WriteString("refuses it (`Invalid command '...', perhaps misspelled or defined by a module not included in\n")
	b.WriteString("the server configuration`), at load for the configuration files and with a 500 for the\n")
	b.WriteString("directory of an `.htaccess` file. For the others, by semantics:\n\n")
	b.WriteString("- **evaluated**: orderly decides it as Apache does (an access rule, a section, a mapping it models);\n")
	b.WriteString("- **refused**: it can refuse, redirect, limit or change a request and orderly does not evaluate it:\n")
	b.WriteString("  `serve` and `check` refuse the configuration with `file:line` (an `.htaccess` file answers 500),\n")
	b.WriteString("  unless `legacy.forward_unfaithful = true`, which loads it, says so, and leaves it to the backend;\n")
	b.WriteString("- **inert**: it cannot refuse, redirect, limit or change a request (logging, content, caching, TLS\n")
	b.WriteString("  and MPM tuning): loaded and left to the backend.\n\n")
	fmt.Fprintf(&b, "| semantics | evaluated | refused | inert |\n|---|---|---|---|\n")
	for _, s := range []Semantics{Legacy22, Compat24} {
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", s, counts[string(s)+" evaluated"], counts[string(s)+" refused"], counts[string(s)+" inert"])
	}
	b.WriteString("\nEffect is what the directive can do to a request: decides (access), maps (URL to file,\n")
	b.WriteString("redirects), limits (size, form, method), changes (what access control sees), reads (read\n")
	b.WriteString("while the configuration is read), scope (sections), inert.\n\n")
	b.WriteString("| directive | module | versions | effect | 2.2 | 2.4-compat | note |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		name := r.name
		if strings.HasPrefix(name, "<") {
			name += ">"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", name, r.module, r.in, r.effect, dash(r.v22), dash(r.v24), docNotes[r.name])
	}
	got := b.String()
	// The README shows the counts.
	var c strings.Builder
	fmt.Fprintf(&c, "| semantics | evaluated | refused | inert |\n|---|---|---|---|\n")
	for _, s := range []Semantics{Legacy22, Compat24} {
		fmt.Fprintf(&c, "| %s | %d | %d | %d |\n", s, counts[string(s)+" evaluated"], counts[string(s)+" refused"], counts[string(s)+" inert"])
	}
	checkReadmeCounts(t, c.String())
	const path = "../docs/directives.md"
	if *updateDocs {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./translate -run TestDirectiveDocs -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s is out of date: run go test ./translate -run TestDirectiveDocs -update and review the diff", path)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// checkReadmeCounts checks (or, with -update, writes) the counts table
// between the README's directive-count markers.
func checkReadmeCounts(t *testing.T, table string) {
	t.Helper()
	const readme = "../README.md"
	const begin, end = "<!-- directive counts: generated, checked by TestDirectiveDocs -->\n", "<!-- end directive counts -->"
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no directive-count markers", readme)
	}
	cur := text[i+len(begin) : j]
	if cur == table {
		return
	}
	if !*updateDocs {
		t.Errorf("%s: the directive counts are out of date: run go test ./translate -run TestDirectiveDocs -update", readme)
		return
	}
	if err := os.WriteFile(readme, []byte(text[:i+len(begin)]+table+text[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

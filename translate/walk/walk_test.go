package walk

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// users is an in-memory identity: the password files themselves are
// tested in proxy/authfile and against Apache in internal/differential.
type users map[string]string

func (u users) CheckPassword(file, user, password string) (policy.PasswordResult, error) {
	pw, ok := u[user]
	switch {
	case !ok:
		return policy.UserNotFound, nil
	case pw != password:
		return policy.PasswordMismatch, nil
	}
	return policy.PasswordOK, nil
}

func (u users) Groups(file, user string) ([]string, bool, error) {
	if user == "alice" {
		return []string{"admins"}, true, nil
	}
	return nil, false, nil
}

// engine builds an engine from a configuration fragment over a document
// root holding the given files ("dir/" makes a directory).
func engine(t testing.TB, conf string, files ...string) (*Engine, string) {
	return engineWith(t, translate.Compat24, conf, files...)
}

func engineWith(t testing.TB, sem translate.Semantics, conf string, files ...string) (*Engine, string) {
	t.Helper()
	return engineMods(t, sem, nil, conf, files...)
}

// engineMods is engineWith with more modules loaded than Debian's
// defaults.
func engineMods(t testing.TB, sem translate.Semantics, mods []string, conf string, files ...string) (*Engine, string) {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	for _, f := range append([]string{"index.html"}, files...) {
		p := filepath.Join(root, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cf := filepath.Join(dir, "legacy.conf")
	if err := os.WriteFile(cf, []byte(strings.ReplaceAll(conf, "@DOCROOT@", root)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: sem, DocumentRoot: root}, Modules: mods})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return New(cfg, OS, users{"alice": "ok", "bob": "ok"}), root
}

type req struct {
	method, target, ip, user string
	header                   map[string]string
	want                     int // 0 = allowed
}

func decide(e *Engine, r req) Result {
	m := r.method
	if m == "" {
		m = "GET"
	}
	hdr := http.Header{}
	for k, v := range r.header {
		hdr.Set(k, v)
	}
	wr := &Request{
		Method: m, Target: r.target, Proto: "HTTP/1.1",
		Header:     hdr,
		ClientAddr: netip.MustParseAddr(r.ip),
		LocalAddr:  netip.MustParseAddr("127.0.0.1"),
		Host:       r.header["Host"],
	}
	if r.user != "" {
		u, p, _ := strings.Cut(r.user, ":")
		wr.Auth = policy.Credentials{Present: true, Basic: true, User: u, Password: p}
	}
	return e.Decide(wr, nil)
}

// Truth tables of apache-access-semantics.md §9, the rows verified on
// Apache 2.4.
func TestTruthTables(t *testing.T) {
	tests := []struct {
		name  string
		conf  string
		files []string
		reqs  []req
	}{
		{"allow,deny partial", `<Directory @DOCROOT@>
Order allow,deny
Allow from 10.1
</Directory>`, nil, []req{
			{target: "/", ip: "10.1.2.3"}, {target: "/", ip: "10.10.2.3", want: 403}, {target: "/", ip: "110.1.2.3", want: 403}}},
		{"deny,allow overlap", `<Directory @DOCROOT@>
Order deny,allow
Deny from 10.1
Allow from 10.1.2.3
</Directory>`, nil, []req{
			{target: "/", ip: "10.1.2.3"}, {target: "/", ip: "10.1.2.4", want: 403}, {target: "/", ip: "8.8.8.8"}}},
		{"mutual-failure", `<Directory @DOCROOT@>
Order mutual-failure
Allow from 10.1
Deny from 10.1.2.4
</Directory>`, nil, []req{
			{target: "/", ip: "10.1.2.3"}, {target: "/", ip: "10.1.2.4", want: 403}, {target: "/", ip: "8.8.8.8", want: 403}}},
		{"env from SetEnvIf", `SetEnvIf User-Agent bot blocked
<Directory @DOCROOT@>
Order allow,deny
Allow from env=!blocked
</Directory>`, nil, []req{
			{target: "/", ip: "1.2.3.4", header: map[string]string{"User-Agent": "Googlebot"}, want: 403},
			{target: "/", ip: "1.2.3.4", header: map[string]string{"User-Agent": "Firefox"}}}},
		{"SetEnv is too late", `SetEnv ok 1
<Directory @DOCROOT@>
Order deny,allow
Deny from all
Allow from env=ok
</Directory>`, nil, []req{{target: "/", ip: "1.2.3.4", want: 403}}},
		{"Limit GET", `<Directory @DOCROOT@>
<Limit GET>
Order deny,allow
Deny from all
</Limit>
</Directory>`, nil, []req{
			{target: "/", ip: "1.2.3.4", want: 403}, {method: "HEAD", target: "/", ip: "1.2.3.4", want: 403}, {method: "POST", target: "/", ip: "1.2.3.4"}}},
		{"Satisfy Any", `<Directory @DOCROOT@>
AuthType Basic
AuthName "R"
AuthUserFile /nonexistent
Order deny,allow
Deny from all
Allow from 10.1
Satisfy Any
Require valid-user
</Directory>`, nil, []req{
			{target: "/", ip: "10.1.2.3"}, {target: "/", ip: "8.8.8.8", want: 401}, {target: "/", ip: "8.8.8.8", user: "alice:ok"}}},
		{"Satisfy All", `<Directory @DOCROOT@>
AuthType Basic
AuthName "R"
AuthUserFile /nonexistent
Order deny,allow
Deny from all
Allow from 10.1
Satisfy All
Require valid-user
</Directory>`, nil, []req{
			{target: "/", ip: "10.1.2.3", want: 401}, {target: "/", ip: "10.1.2.3", user: "alice:ok"}, {target: "/", ip: "8.8.8.8", user: "alice:ok", want: 403}}},
		{"Satisfy Any without Require grants", `<Directory @DOCROOT@>
Order deny,allow
Deny from all
Satisfy Any
</Directory>`, nil, []req{{target: "/", ip: "8.8.8.8"}}},
		{"Require user fails with 401", `<Directory @DOCROOT@>
AuthType Basic
AuthName "R"
AuthUserFile /x
Require user bob
</Directory>`, nil, []req{{target: "/", ip: "8.8.8.8", user: "alice:ok", want: 401}, {target: "/", ip: "8.8.8.8", user: "bob:ok"}, {target: "/", ip: "8.8.8.8", user: "bob:bad", want: 401}}},
		{"Require user or group (2.4)", `<Directory @DOCROOT@>
AuthType Basic
AuthName "R"
AuthUserFile /x
AuthGroupFile /g
Require user bob
Require group admins
</Directory>`, nil, []req{{target: "/", ip: "8.8.8.8", user: "alice:ok"}, {target: "/", ip: "8.8.8.8", user: "bob:ok"}}},
		{"AuthType without Require is 500", `<Directory @DOCROOT@>
AuthType Basic
AuthName "R"
</Directory>`, nil, []req{{target: "/", ip: "8.8.8.8", want: 500}}},
		{"Require without AuthType is 500", `<Directory @DOCROOT@>
Require valid-user
</Directory>`, nil, []req{{target: "/", ip: "8.8.8.8", want: 500}}},
		{"Location Satisfy Any resets compat", `<Directory @DOCROOT@>
Order deny,allow
Deny from all
</Directory>
<Location /sub>
Satisfy Any
</Location>`, []string{"sub/index.html"}, []req{{target: "/sub/", ip: "8.8.8.8"}, {target: "/", ip: "8.8.8.8", want: 403}}},
		{"Location lone Allow opens", `<Directory @DOCROOT@>
Order deny,allow
Deny from all
</Directory>
<Location /sub>
Allow from 10.1
</Location>`, []string{"sub/index.html"}, []req{{target: "/sub/", ip: "8.8.8.8"}}},
		{"compat deny beats child Require (5.3a)", `<Directory @DOCROOT@>
Order deny,allow
Deny from all
</Directory>
<Location /server-status>
Require ip 10.1.2.3
</Location>`, nil, []req{{target: "/server-status", ip: "10.1.2.3", want: 403}}},
		{"inherited Require all denied (5.3b verbatim)", `<Directory @DOCROOT@>
Require all denied
</Directory>
<Location /server-status>
Order deny,allow
Deny from all
Allow from 10.1.2.3
</Location>`, nil, []req{{target: "/server-status", ip: "10.1.2.3", want: 403}}},
		{"5.3b with the docroot granted", `<Directory />
Require all denied
</Directory>
<Directory @DOCROOT@>
Require all granted
</Directory>
<Location /server-status>
Order deny,allow
Deny from all
Allow from 10.1.2.3
</Location>`, nil, []req{{target: "/server-status", ip: "10.1.2.3"}, {target: "/server-status", ip: "10.1.2.4", want: 403}}},
		{"AuthMerging", `<Directory @DOCROOT@>
Require ip 10.1
</Directory>
<Location /and>
AuthMerging And
Require ip 10.1.2
</Location>
<Location /or>
AuthMerging Or
Require ip 192.168
</Location>
<Location /off>
AuthMerging Off
</Location>`, nil, []req{
			{target: "/and", ip: "10.1.2.3"}, {target: "/and", ip: "10.1.3.3", want: 403},
			{target: "/or", ip: "10.1.2.3"}, {target: "/or", ip: "192.168.1.1"}, {target: "/or", ip: "8.8.8.8", want: 403},
			{target: "/off", ip: "8.8.8.8"}}},
		{"RequireAll ip and user", `<Directory @DOCROOT@>
AuthType Basic
AuthName R
AuthUserFile /x
<RequireAll>
Require ip 10.1
Require valid-user
</RequireAll>
</Directory>`, nil, []req{
			{target: "/", ip: "10.1.2.3", want: 401}, {target: "/", ip: "10.1.2.3", user: "alice:ok"},
			{target: "/", ip: "8.8.8.8", want: 403}, {target: "/", ip: "8.8.8.8", user: "alice:ok", want: 403}}},
		{"RequireNone", `<Directory @DOCROOT@>
<RequireAll>
Require all granted
<RequireNone>
Require ip 10.1
Require ip 192.168
</RequireNone>
</RequireAll>
</Directory>`, nil, []req{{target: "/", ip: "10.1.2.3", want: 403}, {target: "/", ip: "192.168.1.1", want: 403}, {target: "/", ip: "8.8.8.8"}}},
		{"LimitExcept", `<Directory @DOCROOT@>
<LimitExcept GET>
Require all denied
</LimitExcept>
</Directory>`, nil, []req{
			{target: "/", ip: "1.1.1.1"}, {method: "HEAD", target: "/", ip: "1.1.1.1"}, {method: "POST", target: "/", ip: "1.1.1.1", want: 403},
			{method: "OPTIONS", target: "/", ip: "1.1.1.1", want: 403}, {method: "FOO", target: "/", ip: "1.1.1.1", want: 403}}},
		{"Require local", `<Directory @DOCROOT@>
Require local
</Directory>`, nil, []req{{target: "/", ip: "127.0.0.1"}, {target: "/", ip: "127.9.9.9"}, {target: "/", ip: "10.1.2.3", want: 403}}},
		{"Directory for a missing directory never applies", `<Directory @DOCROOT@>
Require all denied
</Directory>
<Directory @DOCROOT@/nosuch>
Require all granted
</Directory>`, nil, []req{{target: "/nosuch/x.html", ip: "1.1.1.1", want: 403}}},
		{"Files sees the name before path info", `<Files secret.txt>
Require all denied
</Files>`, []string{"secret.txt"}, []req{{target: "/secret.txt", ip: "1.1.1.1", want: 403}, {target: "/index.html/secret.txt", ip: "1.1.1.1"}}},
		{"DirectoryMatch matches files (2.4)", `<DirectoryMatch "/docroot/fo">
Require all denied
</DirectoryMatch>`, []string{"foo.txt", "sub/index.html"}, []req{{target: "/foo.txt", ip: "1.1.1.1", want: 403}, {target: "/sub/", ip: "1.1.1.1"}}},
		{"Location boundaries", `<Location /sub>
Require all denied
</Location>`, []string{"sub/index.html", "subx/index.html"}, []req{
			{target: "/sub", ip: "1.1.1.1", want: 403}, {target: "/sub/", ip: "1.1.1.1", want: 403}, {target: "/subx/", ip: "1.1.1.1"},
			{target: "/%73ub/", ip: "1.1.1.1", want: 403}, {target: "//sub/", ip: "1.1.1.1", want: 403}, {target: "/x/../sub/", ip: "1.1.1.1", want: 403},
			{target: "/SUB/", ip: "1.1.1.1"}, {target: "/sub%2ffile", ip: "1.1.1.1", want: 404}, {target: "/%2e%2e/sub", ip: "1.1.1.1", want: 400}}},
		{"DirectoryIndex file refused", `<Files index.html>
Require all denied
</Files>`, []string{"d/index.html"}, []req{{target: "/d/", ip: "1.1.1.1", want: 403}, {target: "/d/index.html", ip: "1.1.1.1", want: 403}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := engine(t, tt.conf, tt.files...)
			for _, r := range tt.reqs {
				res := decide(e, r)
				if res.Status != r.want {
					t.Errorf("%s %s from %s user=%q: status %d (layer %s, rule %s), want %d",
						r.method, r.target, r.ip, r.user, res.Status, res.Layer, res.Rule, r.want)
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		conf, want string
	}{
		{"<Directory @DOCROOT@>\nOrder allow-deny\n</Directory>", "legacy.conf:2: unknown order"},
		{"<Directory @DOCROOT@>\nAllow 10.1\n</Directory>", "legacy.conf:2: allow requires at least two arguments, 'from' followed by hostnames or IP-address wildcards"},
		{"<Directory @DOCROOT@>\nAllow to 10.1\n</Directory>", "legacy.conf:2: allow and deny must be followed by 'from'"},
		{"<Directory @DOCROOT@>\nAllow from 10.1/16\n</Directory>", "legacy.conf:2: The specified IP address is invalid."},
		{"<Directory @DOCROOT@>\nAllow from 10.1.2.3/0\n</Directory>", "legacy.conf:2: The specified network mask is invalid."},
		{"<Directory @DOCROOT@>\nAllow from foo/8\n</Directory>", "legacy.conf:2: An IP address was expected"},
		{"<Directory @DOCROOT@>\nAllow from 10.1 # office\n</Directory>", "legacy.conf:2: No comments are allowed here"},
		{"<Directory @DOCROOT@>\nSatisfy some\n</Directory>", "legacy.conf:2: Satisfy either 'any' or 'all'."},
		{"Order allow,deny", "legacy.conf:1: order not allowed here"},
		{"<Directory @DOCROOT@>\nRequire not ip 10.1\n</Directory>", "legacy.conf:2: negative Require directive has no effect in <RequireAny> directive"},
		{"<Directory @DOCROOT@>\nRequire nobody\n</Directory>", "legacy.conf:2: Unknown Authz provider: nobody"},
		{"<Directory @DOCROOT@>\n<RequireAll>\nRequire not ip 10.1\n</RequireAll>\n</Directory>", "legacy.conf:2: <RequireAll> directive contains only negative authorization directives"},
		{"<Directory @DOCROOT@>\n<Limit TRACE>\nRequire all denied\n</Limit>\n</Directory>", "legacy.conf:2: TRACE cannot be controlled by <Limit>, see TraceEnable"},
		{"<Directory @DOCROOT@>\nRequire expr true\n</Directory>", "legacy.conf:2: Require expr cannot be evaluated by orderly; refusing to load"},
		{"<VirtualHost www.example.com:80>\n</VirtualHost>", "legacy.conf:1: <VirtualHost www.example.com:80>: orderly needs an IP address or *, not a host name"},
		{"<VirtualHost *:80>\n<VirtualHost *:81>\n</VirtualHost>\n</VirtualHost>", "legacy.conf:2: <VirtualHost> cannot occur within <VirtualHost> section"},
		{"<Directory @DOCROOT@>\nAllowOverride Everything\n</Directory>", "legacy.conf:2: Illegal override option Everything"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		cf := filepath.Join(dir, "legacy.conf")
		os.WriteFile(cf, []byte(strings.ReplaceAll(tt.conf, "@DOCROOT@", dir)), 0o644)
		_, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}})
		if err == nil {
			t.Errorf("%q: loaded, want error %q", tt.conf, tt.want)
			continue
		}
		got := strings.ReplaceAll(err.Error(), dir+"/", "")
		if !strings.Contains(got, tt.want) {
			t.Errorf("%q:\n got %s\nwant %s", tt.conf, got, tt.want)
		}
	}
}

// Host rules match the verified name on a label boundary; no name, no
// match (apache-access-semantics.md §6.4).
func TestHostRules(t *testing.T) {
	e, _ := engine(t, `<Directory @DOCROOT@>
Order deny,allow
Deny from all
Allow from .example.org apache.org
</Directory>`)
	tests := []struct {
		name string
		ok   bool
		want int
	}{
		{"www.example.org", true, 0},
		{"example.org", true, 403},
		{"apache.org", true, 0},
		{"www.apache.org", true, 0},
		{"fooapache.org", true, 403},
		{"", false, 403},
	}
	for _, tt := range tests {
		fr := &fakeResolver{name: tt.name, ok: tt.ok}
		r := &Request{Method: "GET", Target: "/", Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("10.1.2.3"), Resolver: fr}
		res := e.Decide(r, nil)
		if res.Status != tt.want || fr.calls != 1 {
			t.Errorf("host %q: status %d after %d lookups, want %d after 1", tt.name, res.Status, fr.calls, tt.want)
		}
	}
}

func TestAuthNameExpression(t *testing.T) {
	e, _ := engine(t, `<Directory @DOCROOT@>
AuthType Basic
AuthName "\\fileserver\share"
AuthUserFile /x
Require valid-user
</Directory>
<Directory @DOCROOT@/b>
AuthName "A \"quoted\" \101 realm"
</Directory>`, "b/")
	if res := decide(e, req{target: "/", ip: "1.1.1.1"}); res.Status != 500 {
		t.Errorf("a realm with a form feed: %d, want 500 (AH02430)", res.Status)
	}
	if res := decide(e, req{target: "/b/", ip: "1.1.1.1"}); res.Status != 401 || res.Realm != `A \"quoted\" A realm` {
		t.Errorf("realm %q, status %d", res.Realm, res.Status)
	}
}

type fakeResolver struct {
	name  string
	ok    bool
	calls int
}

func (f *fakeResolver) Verified(netip.Addr) (string, bool) {
	f.calls++
	return f.name, f.ok
}

// BenchmarkEngineDecide is the whole decision of one request: the path
// normalised, mapped and walked over the real file system (stat calls
// included), the sections merged (from the cache), and the policy.
func BenchmarkEngineDecide(b *testing.B) {
	var conf strings.Builder
	conf.WriteString("<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\n")
	for i := 0; i < 10000; i += 20 {
		conf.WriteString("Allow from")
		for j := i; j < i+20; j++ {
			conf.WriteString(" 10." + strconv.Itoa(j>>8) + "." + strconv.Itoa(j&255) + ".1")
		}
		conf.WriteString("\n")
	}
	conf.WriteString("Allow from 127.0.0.1\n</Directory>\n<Files \"*.bak\">\nRequire all denied\n</Files>\n")
	e, _ := engine(b, conf.String(), "sub/page.html")
	for _, target := range []string{"/sub/page.html", "/"} {
		b.Run(strings.TrimPrefix(target, "/"), func(b *testing.B) {
			b.ReportAllocs()
			r := &Request{Method: "GET", Target: target, Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("127.0.0.1")}
			for b.Loop() {
				r.hostDone = false
				if res := e.Decide(r, nil); res.Status != 0 {
					b.Fatal(res.Status)
				}
			}
		})
	}
}

// .htaccess files: read where AllowOverride is not None, merged after their
// directory's sections, every directive checked against the categories
// allowed (apache-access-semantics.md §4.4, §9.2 last row).
func TestHtaccess(t *testing.T) {
	const deny = "Order deny,allow\nDeny from all\n"
	tests := []struct {
		name     string
		override string // AllowOverride on the directory; "" leaves it unset
		htaccess string
		want     int
	}{
		{"None: not read", "None", deny, 0},
		{"Limit", "Limit", deny, 403},
		{"AuthConfig only: Order not allowed here", "AuthConfig", deny, 500},
		{"All", "All", deny, 403},
		{"unset (2.4): read, nothing allowed", "", deny, 500},
		{"unset: comments only", "", "# nothing here\n\n", 0},
		{"unknown directive", "All", "Frobnicate on\n", 500},
		{"module not loaded", "All", "php_value x 1\n", 500},
		{"server directive not allowed", "All", "DocumentRoot /tmp\n", 500},
		{"Directory not allowed", "All", "<Directory /x>\n</Directory>\n", 500},
		{"Nonfatal=Override skips it", "AuthConfig Nonfatal=Override", deny, 0},
		{"Nonfatal=Unknown skips unknown", "Limit Nonfatal=Unknown", "Frobnicate on\n" + deny, 403},
		{"FileInfo: SetEnvIf then Allow env needs Limit too", "FileInfo", "SetEnvIf User-Agent x y\n", 0},
		{"Files inside", "All", "<Files secret.txt>\n" + deny + "</Files>\n", 0},
		{"Limit section", "Limit", "<Limit POST>\n" + deny + "</Limit>\n", 0},
		{"new method from .htaccess", "Limit", "<Limit FROB>\n" + deny + "</Limit>\n", 500},
		{"Require under AuthConfig", "AuthConfig", "Require all denied\n", 403},
		{"too few arguments", "All", "AuthName\n", 500},
		{"too many arguments", "All", "Satisfy any all\n", 500},
		{"empty quoted argument", "All", "AuthType \"\"\n", 500},
		{"flag not On or Off", "All", "ContentDigest maybe\n", 500},
		{"flag in any case, what follows not read", "All", "ContentDigest oFF extra\n" + deny, 403},
		// Nonfatal= covers what the override forbids and unknown names
		// (server/config.c invoke_cmd, ap_walk_config_sub), not syntax.
		{"Nonfatal=All: arguments still 500", "All Nonfatal=All", "AuthName\n", 500},
		{"Nonfatal=Override: allowed with wrong arguments 500", "Limit Nonfatal=Override", "Order\n" + deny, 500},
		{"Nonfatal=Override: forbidden with wrong arguments skipped", "Limit Nonfatal=Override", "AuthName a b\n" + deny, 403},
		{"a value the directive refuses", "All", "FileETag MTime Bogus\n" + deny, 500},
		{"Nonfatal=All: a value the directive refuses still 500", "All Nonfatal=All", "FileETag -All\n", 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// With AllowOverride unset everywhere, Apache reads .htaccess
			// files from / down; the test's tree has none above d.
			conf := "<Directory @DOCROOT@/d>\n"
			if tt.override != "" {
				conf += "AllowOverride " + tt.override + "\n"
			}
			conf += "</Directory>\n"
			e, root := engine(t, conf, "d/index.html", "d/secret.txt")
			if err := os.WriteFile(filepath.Join(root, "d", ".htaccess"), []byte(tt.htaccess), 0o644); err != nil {
				t.Fatal(err)
			}
			if res := decide(e, req{target: "/d/index.html", ip: "8.8.8.8"}); res.Status != tt.want {
				t.Errorf("status %d (layer %s), want %d", res.Status, res.Layer, tt.want)
			}
		})
	}
}

// Edits to .htaccess take effect on the next request, and counters of
// unchanged rules survive the edit.
func TestHtaccessEdits(t *testing.T) {
	e, root := engine(t, "<Directory />\nAllowOverride None\n</Directory>\n<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n", "d/index.html")
	ht := filepath.Join(root, "d", ".htaccess")
	get := func() int { return decide(e, req{target: "/d/index.html", ip: "8.8.8.8"}).Status }
	if st := get(); st != 0 {
		t.Fatalf("no .htaccess: %d", st)
	}
	os.WriteFile(ht, []byte("Order deny,allow\nDeny from all\n"), 0o644)
	if st := get(); st != 403 {
		t.Fatalf("after adding a denial: %d", st)
	}
	os.WriteFile(ht, []byte("Order deny,allow\nDeny from all\nAllow from 8.8.8.0/24\n"), 0o644)
	if st := get(); st != 0 {
		t.Fatalf("after allowing the client: %d", st)
	}
	var deny *policy.Rule
	for _, r := range e.HtaccessRules() {
		if r.Text == "Deny from all" {
			deny = r
		}
	}
	if deny == nil {
		t.Fatal("the .htaccess rules are not exported")
	}
	if m, _, _ := deny.Stats(); m != 2 {
		t.Errorf("Deny from all matched %d times across the edit, want 2", m)
	}
	os.Remove(ht)
	os.Mkdir(ht, 0o755)
	if st := get(); st != 403 {
		t.Errorf(".htaccess that is a directory: %d, want 403", st)
	}
}

// Virtual hosts: chosen by address, then by Host against ServerName and
// ServerAlias, the first as default; the main server's sections apply
// inside every host, before the host's own.
func TestVirtualHosts(t *testing.T) {
	e, root := engine(t, `<Directory @DOCROOT@/private>
Require all denied
</Directory>
<VirtualHost *:80>
ServerName www.example.test
ServerAlias example.test *.cdn.example.test
<Location /admin>
Require ip 10.0.0.0/8
</Location>
</VirtualHost>
<VirtualHost *:80>
ServerName other.test
DocumentRoot @DOCROOT@/other
<Directory @DOCROOT@/other>
Order deny,allow
Deny from all
Allow from 192.0.2.0/24
</Directory>
</VirtualHost>
<VirtualHost 192.0.2.10:8080>
ServerName www.example.test
<Location />
Require all denied
</Location>
</VirtualHost>`, "private/x", "admin/x", "other/index.html", "other/private/x")
	_ = root
	tests := []struct {
		host, target, ip string
		want             int
	}{
		{"www.example.test", "/admin/x", "10.1.2.3", 0},
		{"www.example.test", "/admin/x", "8.8.8.8", 403},
		{"WWW.Example.TEST:80", "/admin/x", "8.8.8.8", 403},
		{"example.test", "/admin/x", "8.8.8.8", 403},
		{"img.cdn.example.test", "/admin/x", "8.8.8.8", 403},
		{"unknown.test", "/admin/x", "8.8.8.8", 403}, // the first host is the default
		{"", "/admin/x", "8.8.8.8", 403},
		{"other.test", "/admin/x", "8.8.8.8", 403}, // other's own docroot: the Directory denies
		{"other.test", "/index.html", "192.0.2.7", 0},
		{"other.test", "/private/x", "192.0.2.7", 0},        // maps to other/private: the main Directory is for docroot/private
		{"www.example.test", "/private/x", "10.1.2.3", 403}, // the main server's Directory applies in the host
	}
	for _, tt := range tests {
		r := &Request{Method: "GET", Target: tt.target, Host: tt.host, Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr(tt.ip)}
		if res := e.Decide(r, nil); res.Status != tt.want {
			t.Errorf("Host %q %s from %s: %d, want %d", tt.host, tt.target, tt.ip, res.Status, tt.want)
		}
	}
	// Traffic that stands for 192.0.2.10:8080 goes to the IP-based host.
	e.SetLegacyAddress(netip.MustParseAddr("192.0.2.10"), 8080)
	r := &Request{Method: "GET", Target: "/index.html", Host: "anything", Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("10.1.2.3")}
	if res := e.Decide(r, nil); res.Status != 403 {
		t.Errorf("IP-based host: %d, want 403", res.Status)
	}
	// Port 80 on another address: the wildcard hosts.
	e.SetLegacyAddress(netip.MustParseAddr("192.0.2.99"), 80)
	if res := e.Decide(r, nil); res.Status != 0 {
		t.Errorf("wildcard host on port 80: %d, want 0", res.Status)
	}
	// A port no host listens on: the main server.
	e.SetLegacyAddress(netip.Addr{}, 9999)
	r.Target = "/private/x"
	if res := e.Decide(r, nil); res.Status != 403 {
		t.Errorf("main server: %d, want 403", res.Status)
	}
}

// Apache 2.2's semantics: the rows of apache-access-semantics.md §9 that
// were verified on a real 2.2.34 server, where 2.2 and 2.4 differ.
func TestTruthTables22(t *testing.T) {
	auth := "AuthType Basic\nAuthName R\nAuthUserFile /x\nAuthGroupFile /g\n"
	tests := []struct {
		name  string
		conf  string
		files []string
		reqs  []req
	}{
		{"Require user or group: group file decides first", "<Directory @DOCROOT@>\n" + auth + "Require user bob\nRequire group admins\n</Directory>", nil,
			[]req{{target: "/", ip: "1.1.1.1", user: "alice:ok"}, {target: "/", ip: "1.1.1.1", user: "bob:ok", want: 401}}},
		{"valid-user and group behaves as group only", "<Directory @DOCROOT@>\n" + auth + "Require valid-user\nRequire group admins\n</Directory>", nil,
			[]req{{target: "/", ip: "1.1.1.1", user: "alice:ok"}, {target: "/", ip: "1.1.1.1", user: "bob:ok", want: 401}}},
		{"Require user bob, alice", "<Directory @DOCROOT@>\n" + auth + "Require user bob\n</Directory>", nil,
			[]req{{target: "/", ip: "1.1.1.1", user: "alice:ok", want: 401}, {target: "/", ip: "1.1.1.1", user: "bob:ok"}, {target: "/", ip: "1.1.1.1", want: 401}}},
		{"Satisfy Any", "<Directory @DOCROOT@>\n" + auth + "Order deny,allow\nDeny from all\nAllow from 10.1\nSatisfy Any\nRequire valid-user\n</Directory>", nil,
			[]req{{target: "/", ip: "10.1.2.3"}, {target: "/", ip: "8.8.8.8", want: 401}, {target: "/", ip: "8.8.8.8", user: "alice:ok"}}},
		{"Satisfy All", "<Directory @DOCROOT@>\n" + auth + "Order deny,allow\nDeny from all\nAllow from 10.1\nSatisfy All\nRequire valid-user\n</Directory>", nil,
			[]req{{target: "/", ip: "10.1.2.3", want: 401}, {target: "/", ip: "10.1.2.3", user: "alice:ok"}, {target: "/", ip: "8.8.8.8", user: "alice:ok", want: 403}}},
		{"Satisfy Any without Require is 403 (2.4: 200)", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nSatisfy Any\n</Directory>", nil,
			[]req{{target: "/", ip: "8.8.8.8", want: 403}}},
		{"a lone Satisfy keeps the inherited Deny (2.4: resets)", "<Directory @DOCROOT@>\n" + auth + "Order deny,allow\nDeny from all\nRequire valid-user\n</Directory>\n<Location /sub>\nSatisfy Any\n</Location>", []string{"sub/"},
			[]req{{target: "/sub/", ip: "8.8.8.8", want: 401}, {target: "/sub/", ip: "8.8.8.8", user: "alice:ok"}}},
		{"a lone Allow opens", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\n</Directory>\n<Location /sub>\nAllow from 10.1\n</Location>", []string{"sub/"},
			[]req{{target: "/sub/", ip: "8.8.8.8"}}},
		{"AuthType without Require is 200 (2.4: 500)", "<Directory @DOCROOT@>\nAuthType Basic\nAuthName R\n</Directory>", nil,
			[]req{{target: "/", ip: "8.8.8.8"}}},
		{"Require without AuthType is 500", "<Directory @DOCROOT@>\nRequire valid-user\n</Directory>", nil,
			[]req{{target: "/", ip: "8.8.8.8", want: 500}}},
		{"an unknown Require keyword is 401 at run time", "<Directory @DOCROOT@>\n" + auth + "Require nobody-knows\n</Directory>", nil,
			[]req{{target: "/", ip: "8.8.8.8", user: "alice:ok", want: 401}}},
		{"$ never matches in DirectoryMatch", "<DirectoryMatch \"/docroot/sub$\">\nOrder allow,deny\nDeny from all\n</DirectoryMatch>\n<DirectoryMatch \"/docroot/other\">\nOrder allow,deny\nDeny from all\n</DirectoryMatch>", []string{"sub/", "other/"},
			[]req{{target: "/sub", ip: "8.8.8.8"}, {target: "/other/", ip: "8.8.8.8", want: 403}}},
		{"# in Allow: host names, every word after it live", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from 10.1 # office\n</Directory>", nil,
			[]req{{target: "/", ip: "10.1.2.3"}, {target: "/", ip: "8.8.8.8", want: 403}}},
		{"AuthzUserAuthoritative Off passes to authz_default", "<Directory @DOCROOT@>\n" + auth + "AuthzUserAuthoritative Off\nRequire user bob\n</Directory>", nil,
			[]req{{target: "/", ip: "1.1.1.1", user: "alice:ok", want: 401}, {target: "/", ip: "1.1.1.1", user: "bob:ok"}}},
		{"paths: a leading /../ is 400, // is kept", "<Location /sub>\nOrder allow,deny\nDeny from all\n</Location>\n<LocationMatch \"^/a//x\">\nOrder allow,deny\nDeny from all\n</LocationMatch>", []string{"sub/", "a/x/"},
			[]req{{target: "/../sub/", ip: "1.1.1.1", want: 400}, {target: "//sub/", ip: "1.1.1.1", want: 403}, {target: "/%73ub/", ip: "1.1.1.1", want: 403},
				{target: "/a//x/", ip: "1.1.1.1", want: 403}, {target: "/a/x/", ip: "1.1.1.1"}, {target: "/a/../sub/", ip: "1.1.1.1", want: 403}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := engineWith(t, translate.Legacy22, tt.conf, tt.files...)
			for _, r := range tt.reqs {
				res := decide(e, r)
				if res.Status != r.want {
					t.Errorf("%s %s from %s user=%q: status %d (layer %s, rule %s), want %d",
						r.method, r.target, r.ip, r.user, res.Status, res.Layer, res.Rule, r.want)
				}
			}
		})
	}
}

// .htaccess under 2.2: AllowOverride defaults to All, and a lone Satisfy
// in an .htaccess file keeps the inherited Deny (2.4: 200).
func TestHtaccess22(t *testing.T) {
	e, root := engineWith(t, translate.Legacy22, "<Directory />\nAllowOverride None\n</Directory>\n<Directory @DOCROOT@>\nAllowOverride AuthConfig\nOrder deny,allow\nDeny from all\n</Directory>\n<Directory @DOCROOT@/all>\nAllowOverride All\n</Directory>", "d/index.html", "all/index.html")
	os.WriteFile(filepath.Join(root, "d", ".htaccess"), []byte("Satisfy All\n"), 0o644)
	os.WriteFile(filepath.Join(root, "all", ".htaccess"), []byte("Allow from 8.8.8.8\n"), 0o644)
	if res := decide(e, req{target: "/d/index.html", ip: "8.8.8.8"}); res.Status != 403 {
		t.Errorf("lone Satisfy in .htaccess: %d, want 403", res.Status)
	}
	if res := decide(e, req{target: "/all/index.html", ip: "8.8.8.8"}); res.Status != 0 {
		t.Errorf("Allow in .htaccess under All: %d, want 0", res.Status)
	}
	// A 2.2 httpd.conf loads its modules by their 2.2 names: Order is
	// mod_authz_host's there, Require and Satisfy the core's.
	e, root = engineWith(t, translate.Legacy22, "LoadModule authz_host_module modules/mod_authz_host.so\n<Directory @DOCROOT@>\nAllowOverride Limit AuthConfig\n</Directory>", "d/index.html")
	os.WriteFile(filepath.Join(root, "d", ".htaccess"), []byte("Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\nSatisfy All\n"), 0o644)
	for ip, want := range map[string]int{"8.8.8.8": 403, "10.1.2.3": 0} {
		if res := decide(e, req{target: "/d/index.html", ip: ip}); res.Status != want {
			t.Errorf("2.2 modules, .htaccess Order from %s: %d, want %d", ip, res.Status, want)
		}
	}
	// 2.4-only directives are refused under 2.2, with a hint.
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("<Directory /x>\n<RequireAll>\nRequire all granted\n</RequireAll>\n</Directory>\n"), 0o644)
	_, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: dir}})
	if err == nil || !strings.Contains(err.Error(), "legacy.conf:2: Invalid command '<RequireAll'") || !strings.Contains(err.Error(), "<RequireAll is an Apache 2.4 directive, unknown to 2.2") || !strings.Contains(err.Error(), "2.4-compat") {
		t.Errorf("2.4 directive under 2.2: %v", err)
	}
}

// What orderly cannot evaluate is refused at load, with file:line, unless
// the configuration asks to forward it.
func TestUnfaithful(t *testing.T) {
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	conf := "LoadModule evasive20_module modules/mod_evasive20.so\n<Location /x>\nRewriteEngine On\n</Location>\n<Directory /x>\nRewriteRule ^a$ http://b/ [P]\nCheckSpelling Off\n</Directory>\n"
	os.WriteFile(cf, []byte(conf), 0o644)
	opt := translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}, Modules: []string{"rewrite_module", "speling_module"}}
	_, err := translate.Load([]string{cf}, opt)
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{"legacy.conf:1: LoadModule: third-party module evasive20_module", "legacy.conf:3: RewriteEngine: mod_rewrite in a <Location> section", "legacy.conf:6: RewriteRule: RewriteRule [P] proxies", "forward_unfaithful"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "CheckSpelling") {
		t.Errorf("CheckSpelling Off changes nothing, yet: %v", err)
	}
	opt.ForwardUnfaithful = true
	cfg, err := translate.Load([]string{cf}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Unfaithful) != 3 {
		t.Errorf("unfaithful: %v", cfg.Unfaithful)
	}
}

// An Alias target orderly cannot read is refused, not decided without its
// <Directory> sections.
func TestBlindAlias(t *testing.T) {
	e, _ := engine(t, "Alias /hidden /nonexistent/orderly-test/hidden\n<Directory /nonexistent/orderly-test/hidden>\nRequire all denied\n</Directory>\n")
	if res := decide(e, req{target: "/hidden/x", ip: "1.2.3.4"}); res.Status != 403 {
		t.Errorf("blind alias: %d, want 403", res.Status)
	}
	if len(e.Blind()) != 1 {
		t.Errorf("Blind() = %v", e.Blind())
	}
}

// <IfModule> and <IfDefine> in an .htaccess file are evaluated as Apache
// does while it reads the file (WordPress wraps its rules in
// <IfModule mod_rewrite.c>): a section whose module is not loaded is
// dropped, one whose module is loaded applies.
func TestHtaccessIfModule(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n", "wp/index.html", "lan/index.html")
	os.WriteFile(filepath.Join(root, "wp", ".htaccess"), []byte("<IfModule mod_rewrite.c>\nRewriteEngine On\nRewriteRule . /index.php [L]\n</IfModule>\n"), 0o644)
	os.WriteFile(filepath.Join(root, "lan", ".htaccess"), []byte("<IfModule mod_authz_host.c>\nOrder deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n</IfModule>\n<IfModule !mod_authz_host.c>\nBogus directive\n</IfModule>\n"), 0o644)
	for _, tt := range []struct {
		target, ip string
		want       int
	}{
		{"/wp/index.html", "8.8.8.8", 0},
		{"/lan/index.html", "8.8.8.8", 403},
		{"/lan/index.html", "10.1.2.3", 0},
	} {
		if res := decide(e, req{target: tt.target, ip: tt.ip}); res.Status != tt.want {
			t.Errorf("%s from %s: %d, want %d", tt.target, tt.ip, res.Status, tt.want)
		}
	}
}

// Saved counters (state_file) reach the rules of .htaccess files when the
// files are read, and Unclaimed keeps those not read yet.
func TestRestoreHtaccess(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n", "lan/index.html", "other/index.html")
	os.WriteFile(filepath.Join(root, "lan", ".htaccess"), []byte("Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n"), 0o644)
	os.WriteFile(filepath.Join(root, "other", ".htaccess"), []byte("Order allow,deny\nAllow from all\n"), 0o644)
	decide(e, req{target: "/lan/index.html", ip: "10.1.2.3"})
	decide(e, req{target: "/other/index.html", ip: "10.1.2.3"})
	var saved []*policy.Rule
	for _, r := range e.HtaccessRules() {
		m, d, last := r.Stats()
		s := &policy.Rule{ID: r.ID}
		s.Restore(m, d, r.FirstHit(), last)
		saved = append(saved, s)
	}
	if len(saved) < 4 {
		t.Fatalf("%d .htaccess rules", len(saved))
	}
	// A new engine (a restart): only /lan is read.
	e2 := New(e.Config(), OS, users{})
	if left := e2.Restore(saved); len(left) != len(saved) {
		t.Errorf("%d saved rules left unclaimed before any .htaccess is read, want %d", len(left), len(saved))
	}
	decide(e2, req{target: "/lan/index.html", ip: "10.1.2.3"})
	for _, r := range e2.HtaccessRules() {
		if r.Text == "Allow from 10.0.0.0/8" {
			if _, d, _ := r.Stats(); d != 2 {
				t.Errorf("Allow from 10.0.0.0/8 decided %d after a restart, want 2", d)
			}
		}
	}
	unclaimed := map[string]bool{}
	for _, r := range e2.Unclaimed() {
		unclaimed[r.ID] = true
	}
	for _, r := range e.HtaccessRules() {
		if want := strings.Contains(r.File, "other"); unclaimed[r.ID] != want {
			t.Errorf("%s %q unclaimed %v, want %v", r.File, r.Text, unclaimed[r.ID], want)
		}
	}
}

// TRACE is answered before the section walk (http_core's map_to_storage
// hook): 405 under TraceEnable Off, whatever the access rules; otherwise
// let through to be echoed, even where GET is refused. A virtual host
// inherits the main server's setting unless it sets its own. The path is
// decoded and normalised before (ap_process_request_internal), and its
// refusals come first: 400 above the root, 404 for an encoded slash under
// AllowEncodedSlashes Off.
func TestTraceEnable(t *testing.T) {
	conf := "<Directory @DOCROOT@/private>\nOrder allow,deny\nDeny from all\n</Directory>\n"
	for _, tt := range []struct {
		conf   string
		method string
		host   string
		target string
		want   int
	}{
		{"TraceEnable Off\n" + conf, "TRACE", "", "", 405},
		{"TraceEnable Off\n" + conf, "TRACE", "", "/../private/index.html", 400},
		{"TraceEnable On\n" + conf, "TRACE", "", "/../private/index.html", 400},
		{"TraceEnable Off\n" + conf, "TRACE", "", "/private%2findex.html", 404},
		{"TraceEnable Off\nAllowEncodedSlashes On\n" + conf, "TRACE", "", "/private%2findex.html", 405},
		{"TraceEnable Off\n" + conf, "TRACE", "", "/private/../private/index.html", 405},
		{"TraceEnable Off\n" + conf, "GET", "", "", 403},
		{"TraceEnable On\n" + conf, "TRACE", "", "", 0},
		{conf, "TRACE", "", "", 0},
		{"TraceEnable extended\n" + conf, "TRACE", "", "", 0},
		{"TraceEnable Off\n<VirtualHost *:80>\nServerName v.test\n</VirtualHost>\n" + conf, "TRACE", "v.test", "", 405},
		{"TraceEnable Off\n<VirtualHost *:80>\nServerName v.test\nTraceEnable On\n</VirtualHost>\n" + conf, "TRACE", "v.test", "", 0},
	} {
		e, _ := engine(t, tt.conf, "private/index.html")
		target := tt.target
		if target == "" {
			target = "/private/index.html"
		}
		r := &Request{Method: tt.method, Target: target, Host: tt.host, Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("8.8.8.8")}
		if res := e.Decide(r, nil); res.Status != tt.want {
			t.Errorf("%q %s %s %s: %d, want %d", tt.conf, tt.method, tt.host, target, res.Status, tt.want)
		}
	}
}

// Apache 2.2 chooses among the virtual hosts of an address by the Host
// header only where NameVirtualHost names the address (server/vhost.c of
// 2.2.34, ap_fini_vhost_config: "VirtualHost %s:%u overlaps with
// VirtualHost %s:%u, the first has precedence, perhaps you need a
// NameVirtualHost directive"); 2.4 always does (NameVirtualHost has no
// effect, AH00548).
func TestNameVirtualHost22(t *testing.T) {
	hosts := "<VirtualHost *:80>\nServerName open.test\n</VirtualHost>\n<VirtualHost *:80>\nServerName closed.test\n<Location />\nOrder allow,deny\nDeny from all\n</Location>\n</VirtualHost>\n"
	for _, tt := range []struct {
		sem  translate.Semantics
		conf string
		want int // for Host: closed.test
	}{
		{translate.Legacy22, hosts, 0},                              // the first host serves closed.test too
		{translate.Legacy22, "NameVirtualHost *:80\n" + hosts, 403}, // name-based
		{translate.Compat24, hosts, 403},                            // always name-based
		{translate.Compat24, "NameVirtualHost *:80\n" + hosts, 403},
	} {
		e, _ := engineWith(t, tt.sem, tt.conf, "index.html")
		r := &Request{Method: "GET", Target: "/index.html", Host: "closed.test", Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("8.8.8.8")}
		if res := e.Decide(r, nil); res.Status != tt.want {
			t.Errorf("%s %q: %d, want %d", tt.sem, tt.conf, res.Status, tt.want)
		}
	}
	// A NameVirtualHost address that differs from the host's in its port
	// form: undefined in 2.2, refused.
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("NameVirtualHost *\n"+hosts), 0o644)
	if _, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: dir}}); err == nil || !strings.Contains(err.Error(), "differ only in their port form") {
		t.Errorf("NameVirtualHost * with *:80 hosts: %v", err)
	}
}

// The dual 2.2/2.4 blocks packaged configuration files ship: a fragment
// read with semantics 2.2 is assumed to run under 2.2's default modules,
// where there is no mod_authz_core, so the !mod_authz_core.c branch holds;
// read with 2.4-compat, the mod_authz_core.c branch does.
func TestDualBlocks(t *testing.T) {
	conf := "<Directory @DOCROOT@>\n<IfModule mod_authz_core.c>\nRequire all denied\n</IfModule>\n<IfModule !mod_authz_core.c>\nOrder deny,allow\nDeny from all\n</IfModule>\n</Directory>\n"
	for sem, want := range map[translate.Semantics]string{translate.Legacy22: "Deny from all", translate.Compat24: "Require all denied"} {
		e, _ := engineWith(t, sem, conf)
		res := decide(e, req{target: "/index.html", ip: "8.8.8.8"})
		if res.Status != 403 || res.Rule == nil || res.Rule.Text != want {
			t.Errorf("%s: %d by %v, want 403 by %q", sem, res.Status, res.Rule, want)
		}
	}
}

// A 500 for a broken .htaccess file says why: Apache's [core:alert] line
// ("FILE: MESSAGE"), and a rule standing for the file, with the line and
// the message of its first error, whose ID does not change when the file
// is edited.
func TestBrokenHtaccessSaysWhy(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n", "a/index.html")
	p := filepath.Join(root, "a", ".htaccess")
	os.WriteFile(p, []byte("Order deny,allow\nDney from all\n"), 0o644)
	res := decide(e, req{target: "/a/index.html", ip: "8.8.8.8"})
	if res.Status != 500 || res.Rule == nil {
		t.Fatalf("broken .htaccess: %d by %v", res.Status, res.Rule)
	}
	if !strings.HasSuffix(res.Rule.File, "a/.htaccess") || res.Rule.Line != 2 || !strings.Contains(res.Rule.Text, "Invalid command 'Dney'") || len(res.Rule.ID) != 12 {
		t.Errorf("rule: %+v", res.Rule)
	}
	logs := res.Logs()
	if len(logs) != 1 || logs[0].Module != "core" || logs[0].Level != "alert" || logs[0].Message() != p+": Invalid command 'Dney', perhaps misspelled or defined by a module not included in the server configuration" {
		t.Errorf("log lines: %+v", logs)
	}
	found := false
	for _, r := range e.Rules() {
		found = found || r == res.Rule
	}
	if !found {
		t.Errorf("the rule of the broken file is not among the engine's rules")
	}
	id := res.Rule.ID
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(p, []byte("Dney from all\nOrder deny,allow\n"), 0o644)
	os.Chtimes(p, time.Now().Add(-time.Minute), time.Now().Add(-time.Minute))
	if res := decide(e, req{target: "/a/index.html", ip: "8.8.8.8"}); res.Status != 500 || res.Rule == nil || res.Rule.ID != id || res.Rule.Line != 1 {
		t.Errorf("after an edit: %d by %+v (ID %s before)", res.Status, res.Rule, id)
	}
}

// A broken .htaccess file whose only errors are orderly's own refusals
// (a directive it does not evaluate) writes no Apache line: Apache would
// have served; orderly's 500 is named by the rule of the file.
func TestBrokenHtaccessOwnRefusal(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n", "a/index.html")
	os.WriteFile(filepath.Join(root, "a", ".htaccess"), []byte("Order deny,allow\nMultiviewsMatch Any\n"), 0o644)
	res := decide(e, req{target: "/a/index.html", ip: "8.8.8.8"})
	if res.Status != 500 || res.Rule == nil || !strings.Contains(res.Rule.Text, "orderly") || len(res.Logs()) != 0 {
		t.Errorf("own refusal: %d by %+v, logs %+v", res.Status, res.Rule, res.Logs())
	}
}

// The 405 of TraceEnable Off is decided by the TraceEnable line: a rule
// with its file:line, counted, in the main server or the virtual host
// whose line it is.
func TestTraceEnableRule(t *testing.T) {
	e, _ := engine(t, "TraceEnable Off\n", "index.html")
	res := e.Decide(&Request{Method: "TRACE", Target: "/index.html", Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("8.8.8.8"), Now: 1}, nil)
	if res.Status != 405 || res.Rule == nil || res.Rule.Line != 1 || res.Rule.Text != "TraceEnable Off" {
		t.Errorf("TRACE: %d by %+v", res.Status, res.Rule)
	}
	if m, _, _ := res.Rule.Stats(); m != 1 {
		t.Errorf("TraceEnable rule matched %d times, want 1", m)
	}
}

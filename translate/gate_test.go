package translate

import (
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// fragmentModules is FragmentModules as a set, as Load passes them for a
// configuration with no LoadModule line.
func fragmentModules(extra ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range append(append([]string(nil), FragmentModules...), extra...) {
		m[n] = true
	}
	for _, n := range builtinModules {
		m[n] = true
	}
	return m
}

func buildText(t *testing.T, text string, opt Options) (*Config, error) {
	t.Helper()
	ds, err := apacheconf.Parse("legacy.conf", []byte(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if opt.DocumentRoot == "" {
		opt.DocumentRoot = "/srv/www"
	}
	return Build(ds, opt)
}

// The gate refuses what Apache refuses, in Apache's words, with file:line.
func TestGateRefusesAsApache(t *testing.T) {
	tests := []struct {
		name string
		sem  Semantics
		mods map[string]bool // nil: fragmentModules()
		conf string
		want string // "" for no error
	}{
		{"misspelt Deny", Compat24, nil, "<Directory /srv/www>\nDney from all\n</Directory>\n",
			"legacy.conf:2: Invalid command 'Dney', perhaps misspelled or defined by a module not included in the server configuration"},
		{"misspelt Require", Legacy22, nil, "<Location />\nRequre valid-user\n</Location>\n",
			"legacy.conf:2: Invalid command 'Requre', perhaps misspelled"},
		{"unknown section", Compat24, nil, "<Directry /srv>\n</Directry>\n",
			"legacy.conf:1: Invalid command '<Directry', perhaps misspelled"},
		{"third-party directive", Compat24, nil, "DOSHashTableSize 3097\n",
			"legacy.conf:1: Invalid command 'DOSHashTableSize'"},
		{"module not loaded", Compat24, nil, "ExpiresActive On\n",
			"legacy.conf:1: Invalid command 'ExpiresActive', perhaps misspelled or defined by a module not included in the server configuration (orderly: its module is not loaded"},
		{"module loaded", Compat24, fragmentModules("expires_module"), "ExpiresActive On\n", ""},
		{"access_compat not loaded under 2.4", Compat24, map[string]bool{"authz_core_module": true}, "<Directory /srv/www>\nOrder deny,allow\n</Directory>\n",
			"legacy.conf:2: Invalid command 'Order'"},
		{"2.2 Order is mod_authz_host's", Legacy22, map[string]bool{"authz_host_module": true}, "<Directory /srv/www>\nOrder deny,allow\n</Directory>\n", ""},
		{"2.2 Require is the core's", Legacy22, map[string]bool{}, "<Directory /srv/www>\nRequire valid-user\n</Directory>\n", ""},
		{"2.4 Require needs authz_core", Compat24, map[string]bool{}, "<Directory /srv/www>\nRequire valid-user\n</Directory>\n",
			"legacy.conf:2: Invalid command 'Require'"},
		{"2.4 directive under 2.2", Legacy22, nil, "<Directory /srv/www>\nAuthMerging And\n</Directory>\n",
			"(orderly: AuthMerging is an Apache 2.4 directive, unknown to 2.2"},
		{"2.2 directive under 2.4", Compat24, nil, "<Directory /srv/www>\nAuthzUserAuthoritative Off\n</Directory>\n",
			"(orderly: AuthzUserAuthoritative is an Apache 2.2 directive that 2.4 removed"},
		{"2.4: Deny at the top", Compat24, nil, "Deny from all\n", "legacy.conf:1: deny not allowed here"},
		{"2.2: Deny at the top", Legacy22, nil, "Deny from all\n", "legacy.conf:1: deny not allowed here"},
		{"2.4: Require in a virtual host", Compat24, nil, "<VirtualHost *:80>\nRequire all granted\n</VirtualHost>\n",
			"legacy.conf:2: Require not allowed in <VirtualHost> context"},
		{"2.2: Require in a virtual host", Legacy22, nil, "<VirtualHost *:80>\nRequire valid-user\n</VirtualHost>\n",
			"legacy.conf:2: Require not allowed here"},
		{"2.4: Listen in a directory", Compat24, nil, "<Directory /srv/www>\nListen 80\n</Directory>\n",
			"legacy.conf:2: Listen not allowed in <Directory> context"},
		{"2.4: AllowOverride in a location", Compat24, nil, "<Location />\nAllowOverride None\n</Location>\n", ""},
		{"2.4: AllowOverride at the top", Compat24, nil, "AllowOverride None\n", "legacy.conf:1: AllowOverride not allowed here"},
		{"Error", Compat24, nil, "<IfModule !foo_module>\n</IfModule>\nError \"this configuration needs mod_foo\"\n",
			"legacy.conf:3: this configuration needs mod_foo"},
		{"unknown inside <If>", Compat24, nil, "<Directory /srv/www>\n<If \"true\">\nBogus x\n</If>\n</Directory>\n",
			"legacy.conf:3: Invalid command 'Bogus'"},
		{"unknown inside <Proxy>", Compat24, fragmentModules("proxy_module"), "<Proxy *>\nBogus x\n</Proxy>\n",
			"legacy.conf:2: Invalid command 'Bogus'"},
		{"inert directives load", Compat24, nil, "AddType text/plain .txt\nLogLevel warn\n<Directory /srv/www>\nAddDefaultCharset UTF-8\nDirectoryIndex index.html\n</Directory>\n", ""},
	}
	for _, tt := range tests {
		mods := tt.mods
		if mods == nil {
			mods = fragmentModules()
		}
		_, err := buildText(t, tt.conf, Options{Semantics: tt.sem, Modules: mods})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && err == nil:
			t.Errorf("%s: loaded, want %q", tt.name, tt.want)
		case tt.want != "" && !strings.Contains(err.Error(), tt.want):
			t.Errorf("%s:\n got %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

// What can refuse, redirect, limit or change a request and is not
// evaluated is refused at load; legacy.forward_unfaithful loads it and
// lists it; its harmless settings load.
func TestGateFailsClosed(t *testing.T) {
	mods := fragmentModules("rewrite_module", "ssl_module", "headers_module", "allowmethods_module", "speling_module")
	tests := []struct {
		conf     string
		refused  bool
		contains string
	}{
		{"<Directory /srv/www>\nSSLRequireSSL\n</Directory>\n", false, ""}, // evaluated (ssl.go)
		{"<Directory /srv/www>\nSSLRequire %{SSL_CIPHER_USEKEYSIZE} >= 128\n</Directory>\n", true, "SSLRequire"},
		{"<Directory /srv/www>\nAllowMethods GET\n</Directory>\n", true, "AllowMethods"},
		{"DeflateInflateLimitRequestBody 1000\n", true, "DeflateInflateLimitRequestBody: orderly does not evaluate it, and it refuses requests by their size, form or method"},
		{"LimitRequestBody 1000\n", false, ""}, // evaluated: 413 (limits.go)
		{"LimitRequestFields 10\n", false, ""}, // evaluated: 400 in the proxy
		{"HttpProtocolOptions Unsafe\n", true, "HttpProtocolOptions Unsafe lets Apache read"},
		{"TraceEnable Off\n", false, ""},    // evaluated: 405 for TRACE
		{"Redirect gone /old\n", false, ""}, // evaluated: 410 at translate_name
		{"RequestHeader set X-A b early\n", true, "RequestHeader"},
		{"RewriteEngine On\n", false, ""},
		{"RewriteRule ^/a - [F]\n", false, ""},
		{"RewriteRule ^/a http://b/ [P]\n", true, "RewriteRule: RewriteRule [P] proxies"},
		{"RewriteCond %{REMOTE_PORT} 1\nRewriteRule ^/a - [F]\n", true, "RewriteCond: %{REMOTE_PORT} is the client's port"},
		{"RewriteCond %{REQUEST_URI} !-U\nRewriteCond %{REQUEST_FILENAME} -F\nRewriteRule ^/a - [F]\n", false, ""}, // evaluated: look-ahead subrequests (walk/lookup.go)
		{"RewriteCond %{LA-U:REMOTE_USER} =bob\nRewriteRule ^/a - [F]\n", false, ""},
		{"RewriteCond %{LA-F:REMOTE_PORT} 1\nRewriteRule ^/a - [F]\n", true, "RewriteCond: %{REMOTE_PORT} is the client's port"},
		{"RewriteCond %{LA-U:la-f:REMOTE_USER} =bob\nRewriteRule ^/a - [F]\n", true, "RewriteCond: %{LA-U:la-f:REMOTE_USER}: a look-ahead inside a look-ahead"},
		{"<Location /a>\nRewriteEngine On\n</Location>\n", true, "RewriteEngine: mod_rewrite in a <Location> section"},
		{"RewriteMap m \"dbm=sdbm:/etc/hostname\"\n", true, "RewriteMap: a dbm map, which orderly does not read"},
		{"RewriteMap m prg:/bin/cat\n", true, "RewriteMap: a prg map, which orderly does not read"},
		{"RewriteMap m int:escape\n", false, ""},
		{"RewriteMap m /etc/hostname\n", false, ""},
		{"CheckSpelling Off\n", false, ""},
		{"CheckSpelling On\n", true, "CheckSpelling"},
		{"ErrorDocument 403 /forbidden.html\n", false, ""},
		{"ErrorDocument 403 \"Go away\"\n", false, ""},
		{"ErrorDocument 403 http://example.com/denied\n", false, ""},            // evaluated: a 302 to it
		{"<Directory /srv/www>\nAcceptPathInfo Off\n</Directory>\n", false, ""}, // evaluated: 404 for path info
		{"<Directory /srv/www>\nRewriteEngine On\n</Directory>\n", false, ""},
		{"<Directory /srv/www>\nRewriteEngine Off\n</Directory>\n", false, ""},
		{"<Directory /srv/www>\nFallbackResource /index.php\n</Directory>\n", false, ""}, // evaluated: its subrequest
		{"<Directory /srv/www>\nAcceptPathInfo On\n</Directory>\n", false, ""},
		{"<Directory /srv/www>\n<If \"%{HTTPS} != 'on'\">\nRedirect /x /y\n</If>\n</Directory>\n", true, "<If> expressions are not evaluated by orderly"},
		{"<Directory /srv/www>\n<If \"true\">\nAddType text/plain .txt\n</If>\n</Directory>\n", false, ""},
		{"<Directory /srv/www>\n<If \"true\">\nDeny from all\n</If>\n</Directory>\n", true, "access rules inside <If> cannot be evaluated"},
	}
	for _, tt := range tests {
		_, err := buildText(t, tt.conf, Options{Semantics: Compat24, Modules: mods})
		if !tt.refused {
			if err != nil {
				t.Errorf("%q: %v", tt.conf, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("%q: got %v, want an error with %q", tt.conf, err, tt.contains)
			continue
		}
		if strings.Contains(tt.contains, "access rules inside") {
			continue // an error whatever forward_unfaithful says
		}
		cfg, err := buildText(t, tt.conf, Options{Semantics: Compat24, Modules: mods, ForwardUnfaithful: true})
		if err != nil {
			t.Errorf("%q with forward_unfaithful: %v", tt.conf, err)
			continue
		}
		if len(cfg.Unfaithful) == 0 {
			t.Errorf("%q with forward_unfaithful: not listed as unfaithful", tt.conf)
		}
	}
}

// In an .htaccess file the gate answers as Apache's ap_parse_htaccess
// does: an error (500 for the directory) unless AllowOverride's
// Nonfatal skips the line; forward_unfaithful covers .htaccess files too.
func TestGateHtaccess(t *testing.T) {
	cfg, err := buildText(t, "<Directory /srv/www>\nAllowOverride All\n</Directory>\n", Options{Semantics: Compat24, Modules: fragmentModules()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text               string
		override, nonfatal uint16
		forward            bool
		want               string // "" for no error
	}{
		{"Dney from all\n", OrAll, 0, false, ".htaccess:1: Invalid command 'Dney'"},
		{"Dney from all\n", OrAll, 2, false, ""},
		{"Order deny,allow\n", OrAuthCfg, 0, false, ".htaccess:1: order not allowed here"},
		{"Order deny,allow\n", OrAuthCfg, 1, false, ""},
		{"<Files x>\nOrder deny,allow\n</Files>\n", OrAuthCfg, 0, false, ".htaccess:2: order not allowed in <Files> context"},
		{"ExpiresActive On\n", OrAll, 0, false, "Invalid command 'ExpiresActive'"},
		{"DeflateInflateLimitRequestBody 10\n", OrAll, 0, false, ".htaccess:1: DeflateInflateLimitRequestBody: orderly does not evaluate it"},
		{"DeflateInflateLimitRequestBody 10\n", OrAll, 0, true, ""},
		{"LimitRequestBody 10\n", OrAll, 0, false, ""},
		{"AddType text/plain .txt\n", OrFileInfo, 0, false, ""},
		// The reader's own sections pass AllowOverride too (req_override
		// OR_ALL): refused only where no category is allowed.
		{"<IfModule mod_authz_core.c>\nRequire all denied\n</IfModule>\n", OrUnset, 0, false, ".htaccess:1: <IfModule not allowed here"},
		{"<IfModule mod_authz_core.c>\nRequire all denied\n</IfModule>\n", 0, 1, false, ".htaccess:1: </IfModule> without matching <IfModule section"},
		{"<IfDefine !X>\nRequire all denied\n</IfDefine>\n", OrLimit, 0, false, "Require not allowed here"},
		{"<IfDefine !X>\nOrder deny,allow\n</IfDefine>\n", OrLimit, 0, false, ""},
	}
	for _, tt := range tests {
		cfg.ForwardUnfaithful = tt.forward
		_, err := cfg.ParseHtaccess("/srv/www/.htaccess", []byte(tt.text), tt.override, tt.nonfatal, "/srv")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q (override %d, nonfatal %d): %v", tt.text, tt.override, tt.nonfatal, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q (override %d, nonfatal %d): got %v, want %q", tt.text, tt.override, tt.nonfatal, err, tt.want)
		}
	}
}

// AllowOverride as core's set_override reads it: None and All replace the
// words before them, Nonfatal= flags included; an unknown Nonfatal= value
// is ignored; 2.2 knows no Nonfatal.
func TestParseOverride(t *testing.T) {
	tests := []struct {
		args        string
		v22         bool
		v, nonfatal uint16
		err         string
	}{
		{"All", false, OrAll, 0, ""},
		{"Nonfatal=All All", false, OrAll, 0, ""},
		{"All Nonfatal=Override", false, OrAll, 1, ""},
		{"AuthConfig Nonfatal=Unknown None", false, 0, 0, ""},
		{"None Nonfatal=Override", false, 0, 1, ""},
		{"Limit Nonfatal=Bogus", false, OrLimit, 0, ""},
		{"Limit Nonfatal", false, 0, 0, "=Override, =Unknown or =All expected after Nonfatal"},
		{"FileInfo=x Indexes", false, OrFileInfo | OrIndexes, 0, ""},
		{"Limit Nonfatal=All", true, 0, 0, "Illegal override option Nonfatal"},
		{"Bogus=1", false, 0, 0, "Illegal override option Bogus"},
	}
	for _, tt := range tests {
		v, nf, err := parseOverride(strings.Fields(tt.args), tt.v22)
		if err != tt.err || err == "" && (v != tt.v || nf != tt.nonfatal) {
			t.Errorf("AllowOverride %s (2.2 %v) = %d, %d, %q; want %d, %d, %q", tt.args, tt.v22, v, nf, err, tt.v, tt.nonfatal, tt.err)
		}
	}
}

// AllowOverrideList lets the listed directives into .htaccess files
// whatever AllowOverride says; a Nonfatal-skipped mod_access_compat line
// still gives the file an (empty) mod_access_compat configuration.
func TestHtaccessAllow(t *testing.T) {
	cfg, err := buildText(t, "<Directory /srv/www>\nAllowOverride None\nAllowOverrideList Order deny NoSuch\n</Directory>\n", Options{Semantics: Compat24, Modules: fragmentModules()})
	if err != nil {
		t.Fatal(err)
	}
	var list []string
	for _, s := range cfg.Dirs {
		if s.Conf.OverrideList != nil {
			list = s.Conf.OverrideList
		}
	}
	if !slices.Equal(list, []string{"order", "deny"}) {
		t.Fatalf("AllowOverrideList = %q, want [order deny] (NoSuch dropped, AH00116)", list)
	}
	allow := HtaccessAllow{List: list}
	if !allow.Reads() || (HtaccessAllow{}).Reads() || !(HtaccessAllow{NonFatal: 1}).Reads() {
		t.Error("Reads: a list or a Nonfatal flag reads the file, nothing does not")
	}
	if _, err := cfg.ParseHtaccessWith("/srv/www/.htaccess", []byte("Order deny,allow\nDeny from all\n"), allow, "/srv"); err != nil {
		t.Errorf("listed directives: %v", err)
	}
	if _, err := cfg.ParseHtaccessWith("/srv/www/.htaccess", []byte("Allow from all\n"), allow, "/srv"); err == nil || !strings.Contains(err.Error(), "allow not allowed here") {
		t.Errorf("a directive not listed: %v", err)
	}
	sec, err := cfg.ParseHtaccessWith("/srv/www/.htaccess", []byte("Satisfy Any\n"), HtaccessAllow{Override: OrIndexes, NonFatal: 1}, "/srv")
	if err != nil || sec.Conf.Compat == nil {
		t.Errorf("a skipped Satisfy: section %v, err %v; want an empty mod_access_compat configuration", sec, err)
	}
	sec, err = cfg.ParseHtaccessWith("/srv/www/.htaccess", []byte("AuthName x\n"), HtaccessAllow{Override: OrIndexes, NonFatal: 1}, "/srv")
	if err != nil || sec.Conf.Compat != nil || sec.Conf.UserFile != nil {
		t.Errorf("a skipped AuthName: section %v, err %v; want no mod_access_compat or mod_authn_file configuration", sec, err)
	}
	sec, err = cfg.ParseHtaccessWith("/srv/www/.htaccess", []byte("AuthUserFile /x\nAuthGroupFile /y\n"), HtaccessAllow{Override: OrIndexes, NonFatal: 1}, "/srv")
	if err != nil || sec.Conf.UserFile == nil || *sec.Conf.UserFile != "" || sec.Conf.GroupFile == nil || *sec.Conf.GroupFile != "" {
		t.Errorf("a skipped AuthUserFile and AuthGroupFile: section %v, err %v; want their modules' empty configurations", sec, err)
	}
}

// A Require provider is known only where its module is loaded (apache2 -t
// with mod_authz_core and that module alone): without it, Apache's
// "Unknown Authz provider" at start-up (a 500 in an .htaccess file).
func TestAuthzProviderModules(t *testing.T) {
	base := []string{"authz_core_module", "auth_basic_module", "authn_file_module", "ldap_module", "dbd_module"}
	for prov, mod := range authzProviders {
		line := "Require " + prov
		switch prov {
		case "all":
			line += " granted"
		case "ip":
			line += " 10.0.0.1"
		case "env", "method", "user", "group", "host", "forward-dns", "dbm-group", "dbd-group", "ldap-user", "ldap-group", "ldap-dn":
			line += " GET"
		case "expr":
			line += " true"
		case "ldap-attribute":
			line += " a=b"
		case "ldap-filter", "ldap-search":
			line += " (x)"
		}
		text := "<Directory /srv/www>\n    AuthType Basic\n    AuthName x\n    AuthUserFile /dev/null\n    " + line + "\n</Directory>\n"
		for _, with := range []bool{false, true} {
			mods := map[string]bool{}
			for _, m := range base {
				mods[m] = true
			}
			if with && mod != "" {
				mods[mod] = true
			}
			_, err := buildText(t, text, Options{Semantics: Compat24, RenderOnly: true, ForwardUnfaithful: true, Modules: mods})
			unknown := err != nil && strings.Contains(err.Error(), "Unknown Authz provider: "+prov)
			if want := !with && mod != ""; unknown != want {
				t.Errorf("%s with %s loaded %v: %v; want Unknown Authz provider %v", line, mod, with, err, want)
			}
		}
	}
}

// TestAdmitCache: a builder's cache of the directive table answers as
// the table does, for every name of the table, as a directive and as a
// section, looked up the first time and again after all the others
// (names falling on one set of the cache push each other out), under
// either version and with or without the modules loaded.
func TestAdmitCache(t *testing.T) {
	var names []string
	seen := map[string]bool{}
	for _, r := range directive.All() {
		n := strings.ToLower(strings.TrimPrefix(r.Name, "<"))
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	names = append(names, "nosuchdirective", "x")
	for _, sem := range []Semantics{Legacy22, Compat24} {
		for _, mods := range []map[string]bool{nil, {"rewrite_module": true}, fragmentModules()} {
			plain := &builder{opt: &Options{Modules: mods}, cfg: &Config{Semantics: sem}}
			cached := &builder{opt: &Options{Modules: mods}, cfg: &Config{Semantics: sem}, cache: new(buildCache)}
			for round := range 2 {
				for _, n := range names {
					for _, section := range []bool{false, true} {
						d := &apacheconf.Directive{Name: n}
						if section {
							d.Block = []*apacheconf.Directive{}
						}
						var m1, m2 admitSlot
						if got, want := *cached.find(d, &m1), *plain.find(d, &m2); got != want {
							t.Fatalf("%s %v, section %v, round %d: cached %+v, want %+v", sem, mods, section, round, got, want)
						}
					}
				}
			}
		}
	}
	info, _ := directive.Find("xbithack", directive.V24, nil)
	if k := keywordsOf(info, "xbithack"); k == nil || k.module != "include_module" {
		t.Errorf("keywordsOf(XBitHack): %v", k)
	}
	// The row of another module of the same name has none.
	if k := keywordsOf(&directive.Info{Name: "XBitHack", Module: "other_module"}, "xbithack"); k != nil {
		t.Errorf("keywordsOf(XBitHack of other_module): %v", k)
	}
	if k := keywordsOf(nil, "xbithack"); k != nil {
		t.Errorf("keywordsOf(nil): %v", k)
	}
}

package lint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// Everything orderly serve refuses, lint reports as an ORD-14 error with
// the same file:line and message: in the configuration and in the
// .htaccess files below its document root.
func TestLintAgreesWithServe(t *testing.T) {
	tests := []struct {
		name, conf string
		htaccess   map[string]string
		sem        string
		refusals   int
	}{
		{"clean 2.2", "DocumentRoot @ROOT@\n<Directory @ROOT@>\nOrder deny,allow\nDeny from all\n</Directory>\n", nil, "", 0},
		{"misspelt", "DocumentRoot @ROOT@\n<Directory @ROOT@>\nOrder deny,allow\nDney from all\n</Directory>\n", nil, "", 1},
		{"wrong context", "DocumentRoot @ROOT@\nDeny from all\n<VirtualHost *:80>\nAllow from all\n</VirtualHost>\n", nil, "", 2},
		{"bad argument", "DocumentRoot @ROOT@\n<Directory @ROOT@>\nOrder deny,alow\n</Directory>\n", nil, "", 1},
		{"not evaluated", "DocumentRoot @ROOT@\nDeflateInflateLimitRequestBody 100\n", nil, "", 1},
		{"2.4 under 2.2", "DocumentRoot @ROOT@\n<Directory @ROOT@>\nRequire all granted\n</Directory>\n", nil, "2.2", 1},
		{"2.4 read as 2.4", "DocumentRoot @ROOT@\n<Directory @ROOT@>\nRequire all granted\n</Directory>\n", nil, "", 0},
		{".htaccess", "DocumentRoot @ROOT@\n<Directory @ROOT@>\nAllowOverride All\n</Directory>\n",
			map[string]string{"a/.htaccess": "Dney from all\n", "b/c/.htaccess": "DeflateInflateLimitRequestBody 5\nOrder allow,deny\n", "d/.htaccess": "Order allow,deny\n"}, "", 2},
		{"providers", "LoadModule authz_host_module m.so\nLoadModule auth_basic_module m.so\nLoadModule authn_file_module m.so\nLoadModule authz_user_module m.so\nLoadModule dbd_module m.so\nLoadModule authn_dbd_module m.so\nDocumentRoot @ROOT@\n<Directory @ROOT@>\nAuthType Basic\nAuthName x\nAuthBasicProvider dbd\nRequire valid-user\n</Directory>\n<VirtualHost *:80>\n<Location /a>\nAuthType Basic\nAuthName y\nAuthBasicProvider file dbd\nRequire user alice\nRequire valid-user\n</Location>\n</VirtualHost>\n", nil, "", 2},
		{"ldap under 2.2", "LoadModule authz_host_module m.so\nLoadModule auth_basic_module m.so\nLoadModule authn_file_module m.so\nLoadModule authz_user_module m.so\nLoadModule ldap_module m.so\nLoadModule authnz_ldap_module m.so\nDocumentRoot @ROOT@\n<Directory @ROOT@>\nAuthType Basic\nAuthName x\nAuthBasicProvider ldap\nAuthLDAPURL ldap://127.0.0.1/dc=x\nAuthzLDAPAuthoritative off\nRequire ldap-group cn=staff\n</Directory>\n<VirtualHost *:80>\n<Location /a>\nAuthType Basic\nAuthName y\nAuthBasicProvider file ldap\nRequire ldap-user alice\nRequire valid-user\n</Location>\n</VirtualHost>\n", nil, "", 0},
		{"providers and unfaithful", "DocumentRoot @ROOT@\nDeflateInflateLimitRequestBody 100\n<Location /a>\nRequire expr true\n</Location>\n<Location /b>\nRequire all granted\n</Location>\n", nil, "", 2},
		{".htaccess not allowed", "DocumentRoot @ROOT@\n<Directory @ROOT@>\nAllowOverride AuthConfig\n</Directory>\n",
			map[string]string{"a/.htaccess": "Deny from all\n"}, "", 1},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		root := filepath.Join(dir, "www")
		os.MkdirAll(root, 0o755)
		for name, text := range tt.htaccess {
			p := filepath.Join(root, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(text), 0o644)
		}
		conf := filepath.Join(dir, "httpd.conf")
		os.WriteFile(conf, []byte(strings.ReplaceAll(tt.conf, "@ROOT@", root)), 0o644)
		rep, err := Lint([]string{conf}, Options{Semantics: tt.sem})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := map[string]bool{}
		for _, f := range ids(rep, "ORD-14") {
			got[f.Pos.File+":"+itoa(f.Pos.Line)+": "+f.Change] = true
		}
		// What serve's own model says.
		sem := translate.Legacy22
		if tt.sem != "2.2" && strings.Contains(tt.conf, "Require all") {
			sem = translate.Compat24
		}
		want := serveRefusals([]string{conf}, Options{Semantics: string(sem)}, nil)
		if len(want) != tt.refusals {
			t.Errorf("%s: serve refuses %d, want %d: %v", tt.name, len(want), tt.refusals, want)
		}
		for _, e := range want {
			if !got[e.Error()] {
				t.Errorf("%s: serve refuses %q, lint does not report it (got %v)", tt.name, e.Error(), got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: lint reports %d ORD-14, serve refuses %d", tt.name, len(got), len(want))
		}
		// And the load itself agrees with serveRefusals.
		_, err = translate.Load([]string{conf}, translate.LoadOptions{Options: translate.Options{Semantics: sem, DocumentRoot: root}})
		var el apacheconf.ErrorList
		if errors.As(err, &el) && len(tt.htaccess) == 0 && len(el) != len(want) {
			t.Errorf("%s: translate.Load refuses %d, serveRefusals %d", tt.name, len(el), len(want))
		}
	}
}

// TestSemantics holds what lint takes the configuration to be written for,
// given no semantics: 2.4 where something only 2.4 knows is in it and
// nothing only 2.2 knows, wherever either is.
func TestSemantics(t *testing.T) {
	for _, tt := range []struct{ conf, want string }{
		{"<Directory /d>\nOrder deny,allow\n</Directory>\n", "2.2"},
		{"<Directory /d>\nRequire all granted\n</Directory>\n", "2.4-compat"},
		{"<Directory /d>\nRequire not host example.com\n</Directory>\n", "2.4-compat"},
		{"<Directory /d>\n<RequireAll>\nRequire valid-user\n</RequireAll>\n</Directory>\n", "2.4-compat"},
		{"LockFile /x\n<Directory /d>\nRequire all granted\n</Directory>\n", "2.2"},
		{"<Directory /d>\nRequire all granted\n</Directory>\nLockFile /x\n", "2.2"},
	} {
		conf := filepath.Join(t.TempDir(), "httpd.conf")
		os.WriteFile(conf, []byte(tt.conf), 0o644)
		l, err := read([]string{conf}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := l.semantics(); got != tt.want {
			t.Errorf("%q: %s, want %s", tt.conf, got, tt.want)
		}
	}
}

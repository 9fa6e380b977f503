package lint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lint's findings, in every format, never show a credential of the
// configuration: a bind password, AuthBasicFake's password, the password
// of a URL (issue 19, point 6). The bind password is an exec: one, which
// serve refuses, so that a finding names its line.
func TestFindingsRedactCredentials(t *testing.T) {
	dir := t.TempDir()
	conf := `LoadModule auth_basic_module modules/mod_auth_basic.so
LoadModule authn_core_module modules/mod_authn_core.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule authz_user_module modules/mod_authz_user.so
LoadModule access_compat_module modules/mod_access_compat.so
LoadModule ldap_module modules/mod_ldap.so
LoadModule authnz_ldap_module modules/mod_authnz_ldap.so
LoadModule proxy_module modules/mod_proxy.so
<Directory /var/www/html>
    AuthType Basic
    AuthName "Intranet"
    AuthBasicProvider ldap
    AuthLDAPURL "ldap://ldap.example.com/dc=example,dc=com?uid"
    AuthLDAPBindDN "cn=reader,dc=example,dc=com"
    AuthLDAPBindPassword "exec:/bin/echo s3cretPW"
    AuthBasicFake demo fakePW
    Require valid-user
    Order allow,deny
    Allow from all
</Directory>
<Location /app>
    ProxyPass http://app:urlPW@10.0.0.1:8080/app
</Location>
`
	f := filepath.Join(dir, "httpd.conf")
	if err := os.WriteFile(f, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Lint([]string{f}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteText(&out, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&out, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteSARIF(&out, rep, SARIFOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cretPW", "fakePW", "urlPW"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("lint's output shows %q", secret)
		}
	}
	if !strings.Contains(out.String(), "AuthLDAPBindPassword [redacted]") {
		t.Errorf("no finding names the bind password's line, redacted: the test no longer tests it")
	}
}

package proxy

import (
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// TestAuthz22EndToEnd loads a configuration with semantics "2.2"
// (translate.Load), serves it through the walk and the proxy with a real
// slapd (ldaptest) and an SDBM group file made by httxt2dbm, and checks
// what Apache 2.2's auth_checker chain answers. The LoadModule order is
// upstream's httpd.conf (groupfile, user, dbm, ldap): APR sorts the hooks
// to mod_authz_groupfile, mod_authnz_ldap (before mod_authz_user, its
// aszPost), mod_authz_user, mod_authz_dbm, then mod_authz_default
// (2.2.x register_hooks of each module; translate's TestAuthz22Chain).
func TestAuthz22EndToEnd(t *testing.T) {
	srv := ldaptest.Start(t)
	httxt2dbm, err := exec.LookPath("httxt2dbm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("httxt2dbm (apache2-utils) is needed when CI=true: %v", err)
		}
		t.Skipf("httxt2dbm not found: %v", err)
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	for _, d := range []string{"ldap", "ldapoff", "fileldap", "dbm", "dbmuser", "dbmuser/off", "both", "both/reset"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "a.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The password file (mod_authn_file), the text group file
	// (mod_authz_groupfile) and the DBM group file (mod_authz_dbm: the
	// groups of a "user" key, comma-separated; a value with ':' has
	// them after the first ':', as htdbm writes a password file that is
	// also a group file).
	var users strings.Builder
	for _, u := range []string{"alice", "bob", "carol", "dave"} {
		sum := sha1.Sum([]byte(u + "-file"))
		users.WriteString(u + ":{SHA}" + base64.StdEncoding.EncodeToString(sum[:]) + "\n")
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	userFile := write("users", users.String())
	groupFile := write("groups", "ops: bob\nstaff: alice\n")
	dbmText := write("dbmgroups.txt", "alice everyone,dbmonly\nbob x:ops,guests:ignored\n")
	dbm := filepath.Join(dir, "groups.dbm")
	if out, err := exec.Command(httxt2dbm, "-f", "SDBM", "-i", dbmText, "-o", dbm).CombinedOutput(); err != nil {
		t.Fatalf("httxt2dbm: %v\n%s", err, out)
	}
	old := time.Now().Add(-time.Hour) // a Store trusts a DBM file that settled
	for _, ext := range []string{".pag", ".dir"} {
		if err := os.Chtimes(dbm+ext, old, old); err != nil {
			t.Fatal(err)
		}
	}
	ldapURL := `AuthLDAPURL "` + srv.URL + "/" + ldaptest.PeopleDN + `?uid"` + "\nAuthLDAPBindDN " + srv.BindDN + "\nAuthLDAPBindPassword " + srv.BindPassword + "\n"
	basic := func(realm string) string { return "AuthType Basic\nAuthName " + realm + "\n" }
	conf := `LoadModule authz_host_module modules/mod_authz_host.so
LoadModule authz_groupfile_module modules/mod_authz_groupfile.so
LoadModule authz_user_module modules/mod_authz_user.so
LoadModule authz_dbm_module modules/mod_authz_dbm.so
LoadModule ldap_module modules/mod_ldap.so
LoadModule authnz_ldap_module modules/mod_authnz_ldap.so
LoadModule authz_default_module modules/mod_authz_default.so
LoadModule auth_basic_module modules/mod_auth_basic.so
LoadModule authn_file_module modules/mod_authn_file.so
DocumentRoot "@ROOT@"
<Directory "@ROOT@/ldap">
` + basic("L") + "AuthBasicProvider ldap\n" + ldapURL + `Require ldap-group ` + ldaptest.Admins + `
Require valid-user
</Directory>
<Directory "@ROOT@/ldapoff">
` + basic("L") + "AuthBasicProvider ldap\n" + ldapURL + `AuthzLDAPAuthoritative Off
Require ldap-group ` + ldaptest.Admins + `
Require valid-user
</Directory>
<Directory "@ROOT@/fileldap">
` + basic("F") + "AuthUserFile " + userFile + "\n" + ldapURL + `Require ldap-group ` + ldaptest.Staff + `
</Directory>
<Directory "@ROOT@/dbm">
` + basic("D") + "AuthUserFile " + userFile + "\nAuthDBMGroupFile " + dbm + `
AuthzDBMType SDBM
Require group ops
</Directory>
<Directory "@ROOT@/dbmuser">
` + basic("D") + "AuthUserFile " + userFile + "\nAuthDBMGroupFile " + dbm + `
AuthzDBMType SDBM
Require user carol
Require group ops
</Directory>
<Directory "@ROOT@/dbmuser/off">
AuthzUserAuthoritative Off
</Directory>
<Directory "@ROOT@/both">
` + basic("B") + "AuthUserFile " + userFile + "\nAuthGroupFile " + groupFile + "\nAuthDBMGroupFile " + dbm + `
AuthzDBMType SDBM
Require group dbmonly
</Directory>
<Directory "@ROOT@/both/reset">
AuthzGroupFileAuthoritative Off
</Directory>
`
	cf := write("httpd.conf", strings.ReplaceAll(conf, "@ROOT@", root))
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: root}})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if got := strings.Join(cfg.Authz22, " "); got != "authz_groupfile_module authnz_ldap_module authz_user_module authz_dbm_module authz_default_module" {
		t.Fatalf("hook order %s", got)
	}
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Path+" "+r.Header.Get(DefaultUserHeader))
		io.WriteString(w, "backend")
	}))
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	front := httptest.NewServer(New(Config{Backend: u, UserHeader: DefaultUserHeader}, walk.New(cfg, walk.OS, NewIdentity())))
	defer front.Close()
	file := func(u string) string { return u + ":" + u + "-file" }
	for _, tc := range []struct {
		path, cred string
		want       int
		why        string
	}{
		{"/ldap/a.txt", "alice:alice-pw", 200, "an ldap-group member"},
		{"/ldap/a.txt", "bob:bob-pw", 401, "mod_authnz_ldap refuses before mod_authz_user would take valid-user"},
		{"/ldap/a.txt", "bob:wrong", 401, "a wrong password"},
		{"/ldap/a.txt", "nobody:x", 401, "an unknown user"},
		{"/ldap/a.txt", "", 401, "no credentials"},
		{"/ldapoff/a.txt", "bob:bob-pw", 200, "AuthzLDAPAuthoritative Off: mod_authz_user's valid-user"},
		{"/ldapoff/a.txt", "alice:alice-pw", 200, "an ldap-group member"},
		{"/fileldap/a.txt", file("bob"), 200, "a file user: mod_authnz_ldap searches the DN, bob is in staff"},
		{"/fileldap/a.txt", file("dave"), 401, "a file user not in staff"},
		{"/dbm/a.txt", file("bob"), 200, "ops, the DBM value after its first ':'"},
		{"/dbm/a.txt", file("alice"), 401, "not in ops: mod_authz_dbm is authoritative"},
		{"/dbm/a.txt", file("carol"), 401, "not in the DBM file"},
		{"/dbmuser/a.txt", file("carol"), 200, "listed"},
		{"/dbmuser/a.txt", file("bob"), 401, "mod_authz_user decides before mod_authz_dbm"},
		{"/dbmuser/off/a.txt", file("bob"), 200, "users not authoritative: mod_authz_dbm's ops"},
		{"/both/a.txt", file("alice"), 401, "mod_authz_groupfile decides first: dbmonly is not in the text file"},
		{"/both/reset/a.txt", file("alice"), 200, "AuthzGroupFileAuthoritative alone resets AuthGroupFile (no merger): mod_authz_dbm's dbmonly"},
	} {
		req, _ := http.NewRequest("GET", front.URL+tc.path, nil)
		if tc.cred != "" {
			u, p, _ := strings.Cut(tc.cred, ":")
			req.SetBasicAuth(u, p)
		}
		seen = nil
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s as %q: %d, want %d (%s)", tc.path, tc.cred, resp.StatusCode, tc.want, tc.why)
		}
		user, _, _ := strings.Cut(tc.cred, ":")
		if tc.want == 200 && (len(seen) != 1 || seen[0] != tc.path+" "+user) {
			t.Errorf("%s as %q: the backend saw %q", tc.path, tc.cred, seen)
		}
		if tc.want != 200 && len(seen) != 0 {
			t.Errorf("%s as %q: refused, yet forwarded", tc.path, tc.cred)
		}
	}
}

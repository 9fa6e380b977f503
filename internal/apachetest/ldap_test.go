package apachetest

import (
	"os"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
	"golang.org/x/tools/txtar"
)

// A case that names an LDAP placeholder gets the slapd StartLDAP runs for
// the test, and a port where nothing listens without one; a case that
// names none starts nothing.
func TestLDAPPlaceholders(t *testing.T) {
	ldapCase := &Case{Name: "l", Legacy: []byte("AuthLDAPURL @LDAPURL@/@LDAPBASE@?uid\nAuthLDAPBindDN @LDAPBINDDN@\nAuthLDAPBindPassword @LDAPBINDPW@\n")}
	fileCase := &Case{Name: "f", Legacy: []byte("# none\n"), Files: []txtar.File{{Name: "auth/x", Data: []byte("@LDAPURL@")}}}
	plain := &Case{Name: "p", Legacy: []byte("Require all granted\n")}
	if !ldapCase.NeedsLDAP() || !fileCase.NeedsLDAP() || plain.NeedsLDAP() {
		t.Fatal("NeedsLDAP")
	}
	StartLDAP(t, []*Case{plain}) // starts nothing
	l, err := ldapCase.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := "AuthLDAPURL ldap://127.0.0.1:1/dc=example,dc=org?uid\nAuthLDAPBindDN cn=search,dc=example,dc=org\nAuthLDAPBindPassword search-secret\n"
	if got := string(l.Expand(ldapCase.Legacy)); got != want {
		t.Errorf("without slapd:\n%s\nwant\n%s", got, want)
	}
	if pl, err := plain.Materialize(t.TempDir()); err != nil || pl.LDAP != nil {
		t.Errorf("a case without LDAP: %+v %v", pl.LDAP, err)
	}
	var url string
	t.Run("slapd", func(t *testing.T) {
		StartLDAP(t, []*Case{plain, ldapCase})
		l, err := ldapCase.Materialize(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		url = l.LDAP.URL
		if !strings.HasPrefix(url, "ldap://127.0.0.1:") || url == noLDAP.URL || !strings.Contains(string(l.Expand(ldapCase.Legacy)), url+"/dc=example,dc=org?uid") {
			t.Errorf("with slapd: %+v", l.LDAP)
		}
	})
	if currentLDAP().URL != noLDAP.URL {
		t.Errorf("after the test, cases still name %s", currentLDAP().URL)
	}
}

// StartLDAP is internal/differential's startLDAP, for this package's
// tests (which may depend on proxy's packages: no package below uses
// them).
func StartLDAP(tb testing.TB, cases []*Case) {
	tb.Helper()
	if !NeedLDAP(cases) {
		return
	}
	s := ldaptest.Start(tb)
	ca, err := os.ReadFile(s.CAFile)
	if err != nil {
		tb.Fatal(err)
	}
	UseLDAP(tb, LDAPInfo{URL: s.URL, SURL: s.LDAPSURL, Base: s.BaseDN, BindDN: s.BindDN, BindPassword: s.BindPassword, CA: ca})
}

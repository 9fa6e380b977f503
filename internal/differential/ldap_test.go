package differential

import (
	"os"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
)

// startLDAP runs slapd with ldaptest's directory for the test when any of
// the cases needs LDAP (apachetest.NeedLDAP), stopped by its pid when the
// test ends; without it, a case's LDAP placeholders name a port where
// nothing listens.
func startLDAP(tb testing.TB, cases []*apachetest.Case) {
	tb.Helper()
	if !apachetest.NeedLDAP(cases) {
		return
	}
	s := ldaptest.Start(tb)
	ca, err := os.ReadFile(s.CAFile)
	if err != nil {
		tb.Fatal(err)
	}
	apachetest.UseLDAP(tb, apachetest.LDAPInfo{URL: s.URL, SURL: s.LDAPSURL, Base: s.BaseDN, BindDN: s.BindDN, BindPassword: s.BindPassword, CA: ca})
}

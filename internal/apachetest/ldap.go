package apachetest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
)

// The placeholders of a case that authenticates against LDAP, filled from
// the slapd the harness runs ([StartLDAP], proxy/ldapauth/ldaptest and its
// directory: users alice..frank with passwords NAME-pw, groups under
// ou=groups).
const (
	LDAPURLPlaceholder    = "@LDAPURL@"    // ldap://127.0.0.1:PORT
	LDAPBasePlaceholder   = "@LDAPBASE@"   // dc=example,dc=org
	LDAPBindDNPlaceholder = "@LDAPBINDDN@" // the search account's DN
	LDAPBindPWPlaceholder = "@LDAPBINDPW@" // and its password
)

// LDAPInfo is what a case's LDAP placeholders stand for.
type LDAPInfo struct {
	URL, Base, BindDN, BindPassword string
}

// noLDAP is what the placeholders stand for where no slapd runs: a port
// where nothing listens, so that Apache and orderly alike find the server
// down.
var noLDAP = LDAPInfo{URL: "ldap://127.0.0.1:1", Base: ldaptest.BaseDN, BindDN: ldaptest.SearchDN, BindPassword: ldaptest.SearchPassword}

var (
	ldapMu  sync.Mutex
	ldapNow *LDAPInfo
)

// NeedsLDAP reports whether the case names an LDAP placeholder (in
// legacy.conf or a file).
func (c *Case) NeedsLDAP() bool {
	if bytes.Contains(c.Legacy, []byte("@LDAP")) {
		return true
	}
	for _, f := range c.Files {
		if bytes.Contains(f.Data, []byte("@LDAP")) {
			return true
		}
	}
	return false
}

// StartLDAP runs slapd with ldaptest's directory, for the test, when any
// of the cases needs LDAP: the cases laid out until the test ends name it.
// It is stopped by its pid when the test ends. Without it, a case's LDAP
// placeholders name a port where nothing listens.
func StartLDAP(tb testing.TB, cases []*Case) {
	tb.Helper()
	need := false
	for _, c := range cases {
		need = need || c.NeedsLDAP()
	}
	if !need {
		return
	}
	s := ldaptest.Start(tb)
	info := &LDAPInfo{URL: s.URL, Base: s.BaseDN, BindDN: s.BindDN, BindPassword: s.BindPassword}
	ldapMu.Lock()
	prev := ldapNow
	ldapNow = info
	ldapMu.Unlock()
	tb.Cleanup(func() {
		ldapMu.Lock()
		ldapNow = prev
		ldapMu.Unlock()
	})
}

// currentLDAP is the LDAP server cases are laid out for now.
func currentLDAP() *LDAPInfo {
	ldapMu.Lock()
	defer ldapMu.Unlock()
	if ldapNow != nil {
		return ldapNow
	}
	return &noLDAP
}

package apachetest

import (
	"bytes"
	"sync"
	"testing"
)

// The placeholders of a case that authenticates against LDAP, filled from
// the slapd the test runs ([UseLDAP]; internal/differential's startLDAP
// starts proxy/ldapauth/ldaptest's directory: users alice..frank with
// passwords NAME-pw, groups under ou=groups). apachetest does not start it
// itself: the packages whose tests use apachetest (translate's) must not
// depend on proxy's.
const (
	LDAPURLPlaceholder    = "@LDAPURL@"    // ldap://127.0.0.1:PORT (STARTTLS too)
	LDAPSURLPlaceholder   = "@LDAPSURL@"   // ldaps://127.0.0.1:PORT
	LDAPCAPlaceholder     = "@LDAPCA@"     // a PEM file of the CA that signed slapd's certificate
	LDAPBasePlaceholder   = "@LDAPBASE@"   // dc=example,dc=org
	LDAPBindDNPlaceholder = "@LDAPBINDDN@" // the search account's DN
	LDAPBindPWPlaceholder = "@LDAPBINDPW@" // and its password
)

// LDAPInfo is what a case's LDAP placeholders stand for.
type LDAPInfo struct {
	URL, SURL, Base, BindDN, BindPassword string
	// CA is the PEM of the CA that signed the server's certificate,
	// written into each case that names @LDAPCA@ (readable by Apache's
	// children); nil writes an empty file.
	CA []byte
}

// noLDAP is what the placeholders stand for where no slapd runs: a port
// where nothing listens, so that Apache and orderly alike find the server
// down.
// Its names are ldaptest's (BaseDN, SearchDN, SearchPassword).
var noLDAP = LDAPInfo{URL: "ldap://127.0.0.1:1", SURL: "ldaps://127.0.0.1:1", Base: "dc=example,dc=org", BindDN: "cn=search,dc=example,dc=org", BindPassword: "search-secret"}

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

// NeedLDAP reports whether any of the cases needs LDAP.
func NeedLDAP(cases []*Case) bool {
	for _, c := range cases {
		if c.NeedsLDAP() {
			return true
		}
	}
	return false
}

// UseLDAP makes the cases laid out until the test ends name the LDAP
// server info.
func UseLDAP(tb testing.TB, info LDAPInfo) {
	tb.Helper()
	ldapMu.Lock()
	prev := ldapNow
	ldapNow = &info
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

package authfile

import (
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
)

// TestLDAPChecker: the Identity asks a real slapd as policy asks it:
// the outcomes of authentication, r->user by AuthLDAPRemoteUserAttribute,
// the request's state reaching the ldap-* checks, ldap-search without a
// user, and a scope without AuthLDAPURL (the module's defaults).
func TestLDAPChecker(t *testing.T) {
	srv := ldaptest.Start(t)
	scope := func(lines ...[]string) *policy.LDAPScope {
		cfg := ldapauth.NewConfig(ldapauth.Apache24)
		for _, l := range lines {
			if err := cfg.Apply(l[0], l[1:], ldapauth.DirectiveOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return &policy.LDAPScope{Config: cfg}
	}
	url := []string{"AuthLDAPURL", srv.URL + "/" + ldaptest.PeopleDN + "?uid,cn"}
	bind := []string{"AuthLDAPBindDN", srv.BindDN}
	pw := []string{"AuthLDAPBindPassword", srv.BindPassword}
	s := scope(url, bind, pw)
	id := NewIdentity()
	for _, tc := range []struct {
		user, pw string
		want     policy.PasswordResult
		err      bool
	}{
		{"alice", "alice-pw", policy.PasswordOK, false},
		{"alice", "wrong", policy.PasswordMismatch, false},
		{"nobody", "x", policy.UserNotFound, false},
		{"alice", "", policy.PasswordMismatch, false},
	} {
		st := &policy.LDAPState{}
		got, user, err := id.CheckLDAPPassword(s, st, tc.user, tc.pw)
		if got != tc.want || (err != nil) != tc.err || st.Authn == nil {
			t.Errorf("%s/%s: %v %q %v, state %v; want %v", tc.user, tc.pw, got, user, err, st.Authn, tc.want)
		}
		if got == policy.PasswordOK && user != "alice" {
			t.Errorf("%s: r->user %q", tc.user, user)
		}
	}
	if _, _, err := id.CheckLDAPPassword(nil, &policy.LDAPState{}, "alice", "alice-pw"); err == nil {
		t.Error("no AuthLDAPURL, yet no error")
	}
	// AuthLDAPRemoteUserAttribute cn: r->user is the cn; the checks of
	// the request take its state (the DN found by authentication).
	rs := scope(url, bind, pw, []string{"AuthLDAPRemoteUserAttribute", "cn"})
	st := &policy.LDAPState{}
	if got, user, err := id.CheckLDAPPassword(rs, st, "alice", "alice-pw"); got != policy.PasswordOK || user != "Alice Adams" || err != nil {
		t.Fatalf("remote user: %v %q %v", got, user, err)
	}
	for _, tc := range []struct {
		user, form, args string
		want             policy.Result
		err              bool
	}{
		{"Alice Adams", "ldap-group", ldaptest.Admins, policy.Granted, false},
		{"Alice Adams", "ldap-dn", ldaptest.UserDN("alice"), policy.Granted, false},
		{"Alice Adams", "ldap-user", "bob", policy.Denied, false},
		{"", "ldap-user", "alice", policy.DeniedNoUser, false},
		{"", "ldap-search", "(uid=bob)", policy.Granted, false},
		{"", "ldap-search", "(uid=nobody)", policy.Denied, true},
	} {
		got, err := id.AuthorizeLDAP(rs, st, tc.user, tc.form, tc.args)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s %s for %q: %v %v, want %v", tc.form, tc.args, tc.user, got, err, tc.want)
		}
	}
	// An attribute the entry lacks: r->user NULL ("").
	ms := scope([]string{"AuthLDAPURL", srv.URL + "/" + ldaptest.PeopleDN + "?uid,mail"}, []string{"AuthLDAPRemoteUserAttribute", "mail"})
	if got, user, err := id.CheckLDAPPassword(ms, &policy.LDAPState{}, "bob", "bob-pw"); got != policy.PasswordOK || user != "" || err != nil {
		t.Errorf("bob has no mail: %v %q %v", got, user, err)
	}
	if got, user, err := id.CheckLDAPPassword(ms, &policy.LDAPState{}, "alice", "alice-pw"); got != policy.PasswordOK || user != "alice@example.org" || err != nil {
		t.Errorf("alice's mail: %v %q %v", got, user, err)
	}
	// A user another provider authenticated: the first check searches
	// the DN and keeps it in the state.
	st = &policy.LDAPState{}
	if got, err := id.AuthorizeLDAP(s, st, "bob", "ldap-group", ldaptest.Staff); got != policy.Granted || err != nil {
		t.Errorf("bob in staff: %v %v", got, err)
	}
	if a, _ := st.Authn.(*ldapauth.Authn); a == nil || a.DN != ldaptest.UserDN("bob") {
		t.Errorf("state %+v", st.Authn)
	}
	if got, err := id.AuthorizeLDAP(s, &policy.LDAPState{}, "nobody", "ldap-group", ldaptest.Staff); got != policy.Denied || err == nil {
		t.Errorf("an unknown user: %v %v, want denied with an error", got, err)
	}
	if got, err := id.AuthorizeLDAP(nil, &policy.LDAPState{}, "bob", "ldap-user", "bob"); got != policy.Denied || err == nil {
		t.Errorf("no AuthLDAPURL: %v %v, want denied with an error", got, err)
	}
}

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

// TestLDAPChecker22: the Identity asks 2.2's hook of a real slapd with a
// 2.2 configuration: the line that granted, a refusal (AuthzLDAPAuthoritative
// on) or a decline (off), the DN search for a user another module
// authenticated kept in the state; a 2.4 configuration is refused.
func TestLDAPChecker22(t *testing.T) {
	srv := ldaptest.Start(t)
	scope := func(lines ...[]string) *policy.LDAPScope {
		cfg := ldapauth.NewConfig(ldapauth.Apache22)
		for _, l := range lines {
			if err := cfg.Apply(l[0], l[1:], ldapauth.DirectiveOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return &policy.LDAPScope{Config: cfg}
	}
	url := []string{"AuthLDAPURL", srv.URL + "/" + ldaptest.PeopleDN + "?uid"}
	bind := []string{"AuthLDAPBindDN", srv.BindDN}
	pw := []string{"AuthLDAPBindPassword", srv.BindPassword}
	on, off := scope(url, bind, pw), scope(url, bind, pw, []string{"AuthzLDAPAuthoritative", "off"})
	id := NewIdentity()
	for _, tc := range []struct {
		s     *policy.LDAPScope
		user  string
		lines []string
		want  policy.Answer22
		at    int
	}{
		{on, "bob", []string{"valid-user", "ldap-group " + ldaptest.Staff}, policy.OK22, 1},
		{on, "bob", []string{"valid-user", "ldap-group " + ldaptest.Admins}, policy.Unauthorized22, -1},
		{off, "bob", []string{"valid-user", "ldap-group " + ldaptest.Admins}, policy.Declined22, -1},
		{on, "bob", []string{"valid-user"}, policy.Declined22, -1},
	} {
		st := &policy.LDAPState{}
		got, at, err := id.AuthorizeLDAP22(tc.s, st, tc.user, tc.lines)
		if got != tc.want || at != tc.at {
			t.Errorf("%s %q: %v at %d (%v), want %v at %d", tc.user, tc.lines, got, at, err, tc.want, tc.at)
		}
		if a, _ := st.Authn.(*ldapauth.Authn); tc.want != policy.Declined22 && (a == nil || a.DN != ldaptest.UserDN(tc.user)) {
			t.Errorf("%s: state %+v", tc.user, st.Authn)
		}
	}
	// A 2.4 configuration is not 2.2's hook's.
	s24 := &policy.LDAPScope{Config: ldapauth.NewConfig(ldapauth.Apache24)}
	if got, _, err := id.AuthorizeLDAP22(s24, &policy.LDAPState{}, "bob", []string{"ldap-user bob"}); got != policy.Unauthorized22 || err == nil {
		t.Errorf("a 2.4 configuration: %v %v", got, err)
	}
}

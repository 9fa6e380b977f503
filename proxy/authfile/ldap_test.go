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

// TestLDAPServerSettings: the Identity asks with the client of the
// scope's mod_ldap server configuration: its trusted CA (mapped by Map
// as legacy.path_map maps files), its security mode, and its caches,
// which the virtual hosts of one configuration share; another server
// configuration with other server-wide settings has caches of its own.
// The counters go to LDAPCounters.
func TestLDAPServerSettings(t *testing.T) {
	srv := ldaptest.Start(t)
	server := func(lines ...[]string) *ldapauth.ServerConfig {
		s := ldapauth.NewServerConfig(ldapauth.Apache24)
		for _, l := range lines {
			if err := s.Apply(l[0], l[1:], ldapauth.ServerContext{}); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	scope := func(srvConf *ldapauth.ServerConfig, url string) *policy.LDAPScope {
		cfg := ldapauth.NewConfig(ldapauth.Apache24)
		if err := cfg.Apply("AuthLDAPURL", []string{url}, ldapauth.DirectiveOptions{}); err != nil {
			t.Fatal(err)
		}
		s := &policy.LDAPScope{Config: cfg}
		if srvConf != nil {
			s.Server = srvConf
		}
		return s
	}
	id := NewIdentity()
	id.LDAPCounters = ldapauth.NewCounters()
	// The configuration names /etc/ldap-ca.pem; orderly reads the test's.
	id.Map = func(p string) string {
		if p == "/etc/ldap-ca.pem" {
			return srv.CAFile
		}
		return p
	}
	plainURL := srv.URL + "/" + ldaptest.PeopleDN + "?uid"
	main := server([]string{"LDAPTrustedGlobalCert", "CA_BASE64", "/etc/ldap-ca.pem"}, []string{"LDAPTrustedMode", "STARTTLS"}, []string{"LDAPRetries", "0"})
	vhost := server([]string{"LDAPTrustedGlobalCert", "CA_BASE64", "/etc/ldap-ca.pem"}, []string{"LDAPTrustedMode", "STARTTLS"}, []string{"LDAPRetries", "0"}, []string{"LDAPTrustedMode", "NONE"})
	check := func(what string, s *policy.LDAPScope, user string, want policy.PasswordResult, wantErr bool) {
		t.Helper()
		got, _, err := id.CheckLDAPPassword(s, &policy.LDAPState{}, user, user+"-pw")
		if got != want || (err != nil) != wantErr {
			t.Errorf("%s: %s: %v %v, want %v (error %v)", what, user, got, err, want, wantErr)
		}
	}
	check("STARTTLS with the mapped CA", scope(main, plainURL), "alice", policy.PasswordOK, false)
	check("the virtual host's NONE", scope(vhost, plainURL), "bob", policy.PasswordOK, false)
	check("LDAPS with the mapped CA", scope(main, srv.LDAPSURL+"/"+ldaptest.PeopleDN+"?uid"), "carol", policy.PasswordOK, false)
	if c1, _ := id.ldapClient(scope(main, plainURL)); c1 == nil {
		t.Fatal("no client")
	} else if c2, _ := id.ldapClient(scope(main, plainURL)); c1 != c2 {
		t.Error("two clients for one server configuration")
	}
	st := id.LDAPCacheStats()
	// alice and bob share the cache of plainURL; carol's URL has its own.
	if st.Search.Entries != 3 || st.Search.Inserts != 3 || len(id.ldap.roots) != 1 {
		t.Errorf("one cache for both hosts: %+v, %d roots", st.Search, len(id.ldap.roots))
	}
	// mod_ldap's defaults: in the clear; STARTTLS without the CA fails.
	check("the defaults", scope(nil, plainURL+"?sub?(objectClass=*)?x"), "dave", policy.PasswordOK, false)
	noCA := server([]string{"LDAPTrustedMode", "STARTTLS"}, []string{"LDAPRetries", "0"})
	check("STARTTLS without a CA", scope(noCA, plainURL), "dave", 0, true)
	if len(id.ldap.roots) != 3 {
		t.Errorf("%d roots for three server-wide settings", len(id.ldap.roots))
	}
	if s := id.LDAPCounters.Stats(); s.Search.Inserts < 4 {
		t.Errorf("LDAPCounters %+v", s.Search)
	}
	id.CloseLDAP()
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

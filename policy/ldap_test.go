package policy

import (
	"errors"
	"strings"
	"testing"
)

// ldapIdentity is a fakeIdentity with an LDAP directory: carol's
// password is "c" and her r->user "Carol C"; dave's directory answers
// with an error; the scope's Key names the directory's part asked, and
// every ask is recorded with the state it saw.
type ldapIdentity struct {
	fakeIdentity
	asked *[]string
}

func (f ldapIdentity) CheckLDAPPassword(s *LDAPScope, st *LDAPState, user, password string) (PasswordResult, string, error) {
	key := "<nil>"
	if s != nil {
		key = s.Key
	}
	*f.asked = append(*f.asked, "authn "+key+" "+user)
	st.Authn = "authenticated " + user
	switch {
	case user == "dave":
		return 0, "", errors.New("server down")
	case user == "nomail":
		return PasswordOK, "", nil
	case user != "carol":
		return UserNotFound, "", nil
	case password != "c":
		return PasswordMismatch, "", nil
	}
	return PasswordOK, "Carol C", nil
}

func (f ldapIdentity) AuthorizeLDAP(s *LDAPScope, st *LDAPState, user, form, args string) (Result, error) {
	key := "<nil>"
	if s != nil {
		key = s.Key
	}
	state, _ := st.Authn.(string)
	*f.asked = append(*f.asked, "authz "+key+" ["+user+"] "+form+" "+args+" ("+state+")")
	switch {
	case form == "ldap-search":
		if args == "(ok)" {
			return Granted, nil
		}
		return Denied, nil
	case user == "":
		return DeniedNoUser, nil
	case args == "broken":
		return Denied, errors.New("auth_ldap authorise: User DN not found")
	case args == "Carol C":
		return Granted, nil
	}
	return Denied, nil
}

// AuthorizeLDAP22 answers as 2.2's hook over a directory where each user
// is only themself: a line "ldap-user <user>" grants, "ldap-dn broken"
// fails at once with an error (the DN not found), "ldap-dn out-of-range"
// fails naming an index past the lines; a scope whose Key is "lax"
// declines what it refuses (AuthzLDAPAuthoritative Off).
func (f ldapIdentity) AuthorizeLDAP22(s *LDAPScope, st *LDAPState, user string, lines []string) (Answer22, int, error) {
	state, _ := st.Authn.(string)
	*f.asked = append(*f.asked, "authz22 "+s.Key+" ["+user+"] "+strings.Join(lines, "|")+" ("+state+")")
	fail := Unauthorized22
	if s.Key == "lax" {
		fail = Declined22
	}
	for i, l := range lines {
		switch l {
		case "ldap-dn broken":
			return fail, i, errors.New("auth_ldap authorise: require dn: user's DN has not been defined; failing authorisation")
		case "ldap-dn out-of-range":
			return fail, len(lines), nil // a checker that names no line of its lines
		case "ldap-user " + user:
			return OK22, i, nil
		}
	}
	return fail, -1, nil
}

// TestLDAPProvider: AuthBasicProvider ldap as mod_auth_basic asks it:
// granted (r->user the one LDAP made), denied, not found (the next
// provider asked), an error (500, logged); an Identity without LDAP is
// an error; a nil scope is passed on (the module's defaults); granted
// with r->user NULL is the core's 500 (AH00027), an empty name another
// provider granted is not.
func TestLDAPProvider(t *testing.T) {
	var asked []string
	id := ldapIdentity{fakeIdentity: testID, asked: &asked}
	ldap := AuthnProvider{Name: "ldap", Kind: ProviderLDAP, LDAP: &LDAPScope{Key: "k"}}
	file := AuthnProvider{Name: "file", Kind: ProviderFile, File: "/etc/users"}
	type want struct {
		status int
		user   string
		log    string
	}
	for _, tc := range []struct {
		name      string
		providers []AuthnProvider
		id        Identity
		user, pw  string
		want      want
		asked     string
	}{
		{"granted", []AuthnProvider{ldap}, id, "carol", "c", want{0, "Carol C", ""}, "authn k carol"},
		{"mismatch", []AuthnProvider{ldap}, id, "carol", "x", want{401, "", "AH01617"}, "authn k carol"},
		{"not found", []AuthnProvider{ldap}, id, "zed", "x", want{401, "", "AH01618"}, "authn k zed"},
		{"error", []AuthnProvider{ldap}, id, "dave", "x", want{500, "", "AH01695"}, "authn k dave"},
		{"file first, found there", []AuthnProvider{file, ldap}, id, "alice", "wonderland", want{0, "alice", ""}, ""},
		{"file first, then ldap", []AuthnProvider{file, ldap}, id, "carol", "c", want{0, "Carol C", ""}, "authn k carol"},
		{"ldap first, then file", []AuthnProvider{ldap, file}, id, "bob", "builder", want{0, "bob", ""}, "authn k bob"},
		{"ldap refuses, file not asked", []AuthnProvider{ldap, file}, id, "carol", "builder", want{401, "", "AH01617"}, "authn k carol"},
		{"the defaults", []AuthnProvider{{Name: "ldap", Kind: ProviderLDAP}}, id, "carol", "c", want{0, "Carol C", ""}, "authn <nil> carol"},
		{"no LDAP", []AuthnProvider{ldap}, testID, "carol", "c", want{500, "", "AH01695"}, ""},
		{"granted, r->user NULL", []AuthnProvider{ldap}, id, "nomail", "x", want{500, "", "AH00027"}, "authn k nomail"},
		{"ldap not found, file grants an empty name", []AuthnProvider{ldap, {Name: "file", Kind: ProviderFile, File: "/etc/users"}}, ldapIdentity{fakeIdentity: fakeIdentity{passwords: map[string]string{"": "e"}}, asked: &asked}, "", "e", want{0, "", ""}, "authn k "},
	} {
		asked = nil
		l := &Layers{Compat: DefaultCompat, AuthType: "Basic", AuthName: "R", HasAuthName: true, Providers: tc.providers,
			Authz: anyOf(leaf("v", ProvValidUser)).Compile()}
		r := &Request{URI: "/x", Auth: Credentials{Present: true, Basic: true, User: tc.user, Password: tc.pw}}
		d := Decide(l, r, tc.id, nil)
		logs := d.Logs()
		last := ""
		if len(logs) > 0 {
			last = logs[len(logs)-1].Code
		}
		if d.Status != tc.want.status || d.User != tc.want.user || last != tc.want.log {
			t.Errorf("%s: %d %q %v, want %+v", tc.name, d.Status, d.User, logs, tc.want)
		}
		if got := strings.Join(asked, "|"); got != tc.asked {
			t.Errorf("%s: asked %q, want %q", tc.name, got, tc.asked)
		}
		if tc.asked != "" && (r.LDAP == nil || r.LDAP.Authn != "authenticated "+tc.user) {
			t.Errorf("%s: the request's LDAP state %+v", tc.name, r.LDAP)
		}
	}
	// The log line of an error names the user and says why.
	asked = nil
	l := &Layers{Compat: DefaultCompat, AuthType: "Basic", AuthName: "R", HasAuthName: true, Providers: []AuthnProvider{ldap},
		Authz: anyOf(leaf("v", ProvValidUser)).Compile()}
	d := Decide(l, &Request{URI: "/x", Auth: Credentials{Present: true, Basic: true, User: "dave", Password: "x"}}, id, nil)
	if logs := d.Logs(); len(logs) == 0 || logs[0].Module != "authnz_ldap" || logs[0].User != "dave" || logs[0].Message() != "server down" {
		t.Errorf("error logs %+v", logs)
	}
}

// TestLDAPRequire: the ldap-* lines ask the LDAPChecker with the merged
// scope, the request's state and r->user; ldap-search is asked before
// authentication (denied there: 403); the others wait for a user; an
// error denies and is logged; an Identity without LDAP denies.
func TestLDAPRequire(t *testing.T) {
	var asked []string
	id := ldapIdentity{fakeIdentity: testID, asked: &asked}
	scope := &LDAPScope{Key: "s"}
	for _, tc := range []struct {
		name   string
		l      *Layers
		id     Identity
		user   string
		noUser bool
		args   []string
		want   Result
		asked  string
		err    string
	}{
		{name: "no user yet", l: &Layers{LDAP: scope}, id: id, noUser: true, args: []string{"ldap-user", "Carol C"}, want: DeniedNoUser},
		{name: "granted", l: &Layers{LDAP: scope}, id: id, user: "Carol C", args: []string{"ldap-user", "Carol C"}, want: Granted, asked: "authz s [Carol C] ldap-user Carol C ()"},
		{name: "denied", l: &Layers{LDAP: scope}, id: id, user: "bob", args: []string{"ldap-group", `"cn=A B"`}, want: Denied, asked: `authz s [bob] ldap-group "cn=A B" ()`},
		{name: "an error denies", l: &Layers{LDAP: scope}, id: id, user: "bob", args: []string{"ldap-dn", "broken"}, want: Denied, asked: "authz s [bob] ldap-dn broken ()", err: "auth_ldap authorise: User DN not found"},
		{name: "search without a user", l: &Layers{LDAP: scope}, id: id, noUser: true, args: []string{"ldap-search", "(ok)"}, want: Granted, asked: "authz s [] ldap-search (ok) ()"},
		{name: "search denied", l: &Layers{LDAP: scope}, id: id, noUser: true, args: []string{"ldap-search", "(no)"}, want: Denied, asked: "authz s [] ldap-search (no) ()"},
		{name: "the defaults", l: &Layers{}, id: id, user: "Carol C", args: []string{"ldap-user", "Carol C"}, want: Granted, asked: "authz <nil> [Carol C] ldap-user Carol C ()"},
		{name: "no layers", l: nil, id: id, user: "Carol C", args: []string{"ldap-user", "Carol C"}, want: Granted, asked: "authz <nil> [Carol C] ldap-user Carol C ()"},
		{name: "no LDAP", l: &Layers{LDAP: scope}, id: testID, user: "Carol C", args: []string{"ldap-user", "Carol C"}, want: Denied, err: "LDAP is not available"},
		{name: "no LDAP, no user", l: &Layers{LDAP: scope}, id: testID, noUser: true, args: []string{"ldap-search", "(ok)"}, want: Denied, err: "LDAP is not available"},
	} {
		asked = nil
		c := &evalCtx{req: &Request{}, id: tc.id, layers: tc.l, user: tc.user, hasUser: !tc.noUser}
		n := leaf("l", ProvLDAP, tc.args...)
		if got, _ := n.leafResult(c); got != tc.want || c.ldapErr != tc.err {
			t.Errorf("%s: %v (error %q), want %v (%q)", tc.name, got, c.ldapErr, tc.want, tc.err)
		}
		if got := strings.Join(asked, "|"); got != tc.asked {
			t.Errorf("%s: asked %q, want %q", tc.name, got, tc.asked)
		}
		if tc.asked != "" && c.req.LDAP == nil {
			t.Errorf("%s: no state made for the request", tc.name)
		}
	}
}

// TestLDAPDecide: authentication's state reaches the ldap-* lines of the
// same request; ldap-search denied before authentication is a 403; an
// LDAP error in authorization is logged and ends in 401; the rendered
// line reads as written.
func TestLDAPDecide(t *testing.T) {
	var asked []string
	id := ldapIdentity{fakeIdentity: testID, asked: &asked}
	base := func(n *Node) *Layers {
		return &Layers{Compat: DefaultCompat, AuthType: "Basic", AuthName: "R", HasAuthName: true, LDAP: &LDAPScope{Key: "s"},
			Providers: []AuthnProvider{{Name: "ldap", Kind: ProviderLDAP, LDAP: &LDAPScope{Key: "p"}}}, Authz: anyOf(n).Compile()}
	}
	cred := Credentials{Present: true, Basic: true, User: "carol", Password: "c"}
	d := Decide(base(leaf("u", ProvLDAP, "ldap-user", "Carol C")), &Request{URI: "/x", Auth: cred}, id, nil)
	if d.Status != 0 || d.User != "Carol C" || strings.Join(asked, "|") != "authn p carol|authz s [Carol C] ldap-user Carol C (authenticated carol)" {
		t.Errorf("granted: %d %q, asked %q", d.Status, d.User, asked)
	}
	asked = nil
	d = Decide(base(leaf("s", ProvLDAP, "ldap-search", "(no)")), &Request{URI: "/x", Auth: cred}, id, nil)
	if d.Status != 403 || strings.Join(asked, "|") != "authz s [] ldap-search (no) ()" {
		t.Errorf("search denied: %d, asked %q", d.Status, asked)
	}
	asked = nil
	d = Decide(base(leaf("b", ProvLDAP, "ldap-dn", "broken")), &Request{URI: "/x", Auth: cred}, id, nil)
	logs := d.Logs()
	found := false
	for _, l := range logs {
		found = found || l.Module == "authnz_ldap" && l.User == "Carol C" && l.Message() == "auth_ldap authorise: User DN not found"
	}
	if d.Status != 401 || !found {
		t.Errorf("an error: %d, logs %+v", d.Status, logs)
	}
	if got := leafText("", leaf("g", ProvLDAP, "ldap-group", `"cn=A B,ou=x"`)); got != `Require ldap-group "cn=A B,ou=x"` {
		t.Errorf("rendered %q", got)
	}
}

package policy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// fakeIdentity answers from maps, or fails as a file that cannot be
// opened does.
type fakeIdentity struct {
	passwords map[string]string
	groups    map[string][]string
	pwErr     bool
	groupErr  bool
}

func (f fakeIdentity) CheckPassword(_, user, password string) (PasswordResult, error) {
	if f.pwErr {
		return 0, errors.New("cannot open")
	}
	pw, ok := f.passwords[user]
	switch {
	case !ok:
		return UserNotFound, nil
	case pw != password:
		return PasswordMismatch, nil
	}
	return PasswordOK, nil
}

func (f fakeIdentity) Groups(_, user string) ([]string, bool, error) {
	if f.groupErr {
		return nil, false, errors.New("cannot open")
	}
	g, ok := f.groups[user]
	return g, ok, nil
}

var testID = fakeIdentity{
	passwords: map[string]string{"alice": "wonderland", "bob": "builder"},
	groups:    map[string][]string{"alice": {"Staff", "ops"}, "bob": {"guests"}},
}

// leaf is a Require line for all methods, its rule named id.
func leaf(id string, p Provider, args ...string) *Node {
	return &Node{Kind: Leaf, Provider: p, Methods: AllMethods, Args: args, Rule: &Rule{ID: id}}
}

func anyOf(ch ...*Node) *Node { return &Node{Kind: Any, Methods: AllMethods, Children: ch} }
func allOf(ch ...*Node) *Node { return &Node{Kind: All, Methods: AllMethods, Children: ch} }

func not(n *Node) *Node { n.Negate = true; return n }

func limit(m MethodMask, n *Node) *Node { n.Methods = m; return n }

func ipLeaf(t *testing.T, id string, subnets ...string) *Node {
	t.Helper()
	n := leaf(id, ProvIP)
	for _, w := range subnets {
		addr, mask, has := cut(w)
		s, err := ParseSubnet(addr, mask, has)
		if err != nil {
			t.Fatal(err)
		}
		n.Subnets = append(n.Subnets, s)
	}
	return n
}

var (
	alice    = Credentials{Present: true, Basic: true, User: "alice", Password: "wonderland"}
	aliceBad = Credentials{Present: true, Basic: true, User: "alice", Password: "wrong"}
	carol    = Credentials{Present: true, Basic: true, User: "carol", Password: "x"}
	digest   = Credentials{Present: true}
)

func logCodes(d *Decision) string {
	var codes []string
	for _, l := range d.Logs() {
		codes = append(codes, l.Code)
	}
	return strings.Join(codes, " ")
}

// TestDecide24: Apache 2.4's combination of the layers, with the layer
// and directive that decided, the realm of a challenge and the log lines
// (server/request.c, mod_authz_core, mod_auth_basic, mod_authn_core).
func TestDecide24(t *testing.T) {
	basic := func(c *Compat, authz *Node) *Layers {
		return &Layers{Compat: c, Authz: authz, AuthType: "Basic", AuthTypeRule: &Rule{ID: "authtype"}, AuthName: "R", HasAuthName: true, UserFile: "users", GroupFile: "groups", Default: &Rule{ID: "def"}}
	}
	denyAll := newCompat(t, DenyAllow, SatisfyAll, nil, []string{"all"})
	denyAny := newCompat(t, DenyAllow, SatisfyAny, nil, []string{"all"})
	allowAny := newCompat(t, AllowDeny, SatisfyAny, []string{"all"}, nil)
	validUser := anyOf(leaf("valid", ProvValidUser))
	type mod func(*Layers)
	noAuthType := func(l *Layers) { l.AuthType = "" }
	for _, tc := range []struct {
		name   string
		l      *Layers
		mod    mod
		cred   Credentials
		id     Identity
		status int
		layer  Layer
		rule   string
		realm  string
		user   string
		logs   string
	}{
		{"nothing configured", &Layers{Default: &Rule{ID: "def"}}, nil, Credentials{}, nil, 0, LayerCompat, "def", "", "", ""},
		{"Deny from all", &Layers{Compat: denyAll, Default: &Rule{ID: "def"}}, nil, Credentials{}, nil, 403, LayerCompat, "deny1", "", "", "AH01797"},
		{"Satisfy All: host denial is final", basic(denyAll, validUser), nil, alice, testID, 403, LayerCompat, "deny1", "", "", "AH01797"},
		{"Satisfy Any: a host grant is enough", basic(allowAny, validUser), nil, Credentials{}, testID, 0, LayerCompat, "allow1", "", "", ""},
		{"Satisfy Any: a password gets past", basic(denyAny, validUser), nil, alice, testID, 0, LayerAuthz, "valid", "", "alice", "AH01797"},
		{"Satisfy Any: no password", basic(denyAny, validUser), nil, Credentials{}, testID, 401, LayerAuthn, "authtype", "R", "", "AH01797"},
		{"Satisfy Any without Require: denied", &Layers{Compat: denyAny, Default: &Rule{ID: "def"}}, nil, Credentials{}, nil, 0, LayerCompat, "deny1", "", "", "AH01797"},
		{"Require all granted", basic(nil, anyOf(leaf("g", ProvAllGranted))), nil, Credentials{}, testID, 0, LayerAuthz, "g", "", "", ""},
		{"Require all denied", basic(nil, anyOf(leaf("d", ProvAllDenied))), nil, alice, testID, 403, LayerAuthz, "d", "", "", "AH01630"},
		{"AuthType without Require", basic(nil, nil), nil, alice, testID, 500, LayerConfig, "authtype", "", "", "AH01627"},
		{"valid-user, good password", basic(nil, validUser), nil, alice, testID, 0, LayerAuthz, "valid", "", "alice", ""},
		{"valid-user, no credentials", basic(nil, validUser), nil, Credentials{}, testID, 401, LayerAuthn, "authtype", "R", "", ""},
		{"valid-user, another scheme", basic(nil, validUser), nil, digest, testID, 401, LayerAuthn, "authtype", "R", "", "AH01614"},
		{"valid-user, wrong password", basic(nil, validUser), nil, aliceBad, testID, 401, LayerAuthn, "authtype", "R", "", "AH01617"},
		{"valid-user, unknown user", basic(nil, validUser), nil, carol, testID, 401, LayerAuthn, "authtype", "R", "", "AH01618"},
		{"unknown user, AuthBasicAuthoritative Off", basic(nil, validUser), func(l *Layers) { l.BasicNotAuthoritative = true }, carol, testID, 500, LayerConfig, "authtype", "", "", "AH01796"},
		{"wrong password, AuthBasicAuthoritative Off", basic(nil, validUser), func(l *Layers) { l.BasicNotAuthoritative = true }, aliceBad, testID, 401, LayerAuthn, "authtype", "R", "", "AH01617"},
		{"password file unreadable", basic(nil, validUser), nil, alice, fakeIdentity{pwErr: true}, 500, LayerConfig, "authtype", "", "", "AH01620"},
		{"no AuthUserFile", basic(nil, validUser), func(l *Layers) { l.UserFile = "" }, alice, testID, 500, LayerConfig, "authtype", "", "", "AH01619"},
		{"no Identity", basic(nil, validUser), nil, alice, nil, 500, LayerConfig, "authtype", "", "", "AH01619"},
		{"no AuthName", basic(nil, validUser), func(l *Layers) { l.HasAuthName = false }, alice, testID, 500, LayerConfig, "authtype", "", "", "AH01615"},
		{"AuthType Digest", basic(nil, validUser), func(l *Layers) { l.AuthType = "Digest" }, alice, testID, 500, LayerConfig, "authtype", "", "", "AH01796"},
		{"AuthType basic, any case", basic(nil, validUser), func(l *Layers) { l.AuthType = "bASIC" }, alice, testID, 0, LayerAuthz, "valid", "", "alice", ""},
		{"no AuthType, Satisfy All", basic(nil, validUser), noAuthType, alice, testID, 500, LayerConfig, "authtype", "", "", "AH00027"},
		{"no AuthType, Satisfy Any", basic(denyAny, validUser), noAuthType, alice, testID, 500, LayerConfig, "authtype", "", "", "AH01797 AH00028"},
		{"Require user: another user", basic(nil, anyOf(leaf("u", ProvUser, "bob"))), nil, alice, testID, 401, LayerAuthz, "u", "R", "alice", "AH01631"},
		{"Require user: listed", basic(nil, anyOf(leaf("u", ProvUser, "bob", "alice"))), nil, alice, testID, 0, LayerAuthz, "u", "", "alice", ""},
		{"Require user is case-sensitive", basic(nil, anyOf(leaf("u", ProvUser, "Alice"))), nil, alice, testID, 401, LayerAuthz, "u", "R", "alice", "AH01631"},
		{"AuthzSendForbiddenOnFailure", basic(nil, anyOf(leaf("u", ProvUser, "bob"))), func(l *Layers) { l.ForbiddenOnFail = true }, alice, testID, 403, LayerAuthz, "u", "", "alice", "AH01631"},
		{"Require group, any case", basic(nil, anyOf(leaf("g", ProvGroup, "staff"))), nil, alice, testID, 0, LayerAuthz, "g", "", "alice", ""},
		{"Require group: not a member", basic(nil, anyOf(leaf("g", ProvGroup, "staff"))), nil, Credentials{Present: true, Basic: true, User: "bob", Password: "builder"}, testID, 401, LayerAuthz, "g", "R", "bob", "AH01631"},
		{"Require group: not in the file", basic(nil, anyOf(leaf("g", ProvGroup, "staff"))), nil, alice, fakeIdentity{passwords: testID.passwords}, 401, LayerAuthz, "g", "R", "alice", "AH01631"},
		{"Require group: no AuthGroupFile", basic(nil, anyOf(leaf("g", ProvGroup, "staff"))), func(l *Layers) { l.GroupFile = "" }, alice, testID, 401, LayerAuthz, "g", "R", "alice", "AH01631"},
		{"Require group: unreadable group file", basic(nil, anyOf(leaf("g", ProvGroup, "staff"))), nil, alice, unreadableGroups{testID}, 401, LayerAuthz, "g", "R", "alice", "AH01665 AH01631"},
		{"Require not user, with AuthType", basic(nil, allOf(leaf("v", ProvValidUser), not(leaf("u", ProvUser, "alice")))), nil, alice, testID, 401, LayerAuthz, "u", "R", "alice", "AH01631"},
		{"Require not user: another", basic(nil, allOf(leaf("v", ProvValidUser), not(leaf("u", ProvUser, "alice")))), nil, Credentials{Present: true, Basic: true, User: "bob", Password: "builder"}, testID, 0, LayerAuthz, "v", "", "bob", ""},
		{"a realm with a control character", basic(nil, validUser), func(l *Layers) { l.AuthName = "a\x01b" }, Credentials{}, testID, 500, LayerConfig, "authtype", "a\x01b", "", "AH02430"},
		{"a realm with DEL", basic(nil, validUser), func(l *Layers) { l.AuthName = "a\x7f" }, Credentials{}, testID, 500, LayerConfig, "authtype", "a\x7f", "", "AH02430"},
		{"a realm with a tab", basic(nil, validUser), func(l *Layers) { l.AuthName = "a\tb" }, Credentials{}, testID, 401, LayerAuthn, "authtype", "a\tb", "", ""},
		{"a realm with a space and a high byte", basic(nil, validUser), func(l *Layers) { l.AuthName = "a \x80\x1f" }, Credentials{}, testID, 500, LayerConfig, "authtype", "a \x80\x1f", "", "AH02430"},
		{"a realm of printable bytes", basic(nil, validUser), func(l *Layers) { l.AuthName = " ~\x80" }, Credentials{}, testID, 401, LayerAuthn, "authtype", " ~\x80", "", ""},
	} {
		l := *tc.l
		if tc.mod != nil {
			tc.mod(&l)
		}
		if l.Authz != nil {
			l.Authz = l.Authz.Compile()
		}
		r := &Request{Method: MethodGet, Addr: netip.MustParseAddr("10.1.2.3"), URI: "/u", Filename: "/f", Auth: tc.cred, Now: 1}
		d := Decide(&l, r, tc.id, nil)
		rule := "<nil>"
		if d.Rule != nil {
			rule = d.Rule.ID
		}
		if d.Status != tc.status || d.Layer != tc.layer || rule != tc.rule || d.Realm != tc.realm || d.User != tc.user || logCodes(&d) != tc.logs {
			t.Errorf("%s: %d %s %s realm %q user %q logs %q; want %d %s %s realm %q user %q logs %q", tc.name,
				d.Status, d.Layer, rule, d.Realm, d.User, logCodes(&d), tc.status, tc.layer, tc.rule, tc.realm, tc.user, tc.logs)
		}
		if d.Allowed() != (tc.status == 0) {
			t.Errorf("%s: Allowed %v with status %d", tc.name, d.Allowed(), d.Status)
		}
	}
}

type unreadableGroups struct{ fakeIdentity }

func (unreadableGroups) Groups(string, string) ([]string, bool, error) {
	return nil, false, errors.New("cannot open")
}

// TestDecideLogSubjects: the log lines name what Apache names: the file
// when the directory walk found one, else "uri " and the URI; the user
// and the URI on an authentication failure; the group file it could not
// open.
func TestDecideLogSubjects(t *testing.T) {
	denyAll := newCompat(t, DenyAllow, SatisfyAll, nil, []string{"all"})
	for _, tc := range []struct {
		name string
		l    *Layers
		r    Request
		id   Identity
		want LogLine
		msg  string
	}{
		{"a file", &Layers{Compat: denyAll}, Request{URI: "/u", Filename: "/srv/f"}, nil,
			LogLine{Module: "access_compat", Code: "AH01797", Subject: "/srv/f"}, "client denied by server configuration: /srv/f"},
		{"no file: the URI", &Layers{Compat: denyAll}, Request{URI: "/u"}, nil,
			LogLine{Module: "access_compat", Code: "AH01797", Subject: "/u", URIForm: true}, "client denied by server configuration: uri /u"},
		{"Require all denied, no file", &Layers{Authz: anyOf(leaf("d", ProvAllDenied))}, Request{URI: "/u"}, nil,
			LogLine{Module: "authz_core", Code: "AH01630", Subject: "/u", URIForm: true}, "client denied by server configuration: uri /u"},
		{"wrong password", &Layers{Authz: anyOf(leaf("v", ProvValidUser)), AuthType: "Basic", HasAuthName: true, UserFile: "f"}, Request{URI: "/u", Auth: aliceBad}, testID,
			LogLine{Module: "auth_basic", Code: "AH01617", User: "alice", Subject: "/u"}, `user alice: authentication failure for "/u": Password Mismatch`},
		{"unknown user", &Layers{Authz: anyOf(leaf("v", ProvValidUser)), AuthType: "Basic", HasAuthName: true, UserFile: "f"}, Request{URI: "/u", Auth: carol}, testID,
			LogLine{Module: "auth_basic", Code: "AH01618", User: "carol", Subject: "/u"}, "user carol not found: /u"},
		{"user not allowed", &Layers{Authz: anyOf(leaf("u", ProvUser, "bob")), AuthType: "Basic", HasAuthName: true, UserFile: "f"}, Request{URI: "/u", Auth: alice}, testID,
			LogLine{Module: "authz_core", Code: "AH01631", User: "alice", Subject: "/u"}, `user alice: authorization failure for "/u": `},
		{"group file", &Layers{Authz: anyOf(leaf("g", ProvGroup, "x")), AuthType: "Basic", HasAuthName: true, UserFile: "f", GroupFile: "/etc/groups"}, Request{URI: "/u", Auth: alice}, unreadableGroups{testID},
			LogLine{Module: "authz_groupfile", Code: "AH01665", Subject: "/etc/groups"}, "Could not open group file: /etc/groups"},
	} {
		r := tc.r
		r.Addr = netip.MustParseAddr("10.1.2.3")
		l := *tc.l
		if l.Authz != nil {
			l.Authz = l.Authz.Compile()
		}
		d := Decide(&l, &r, tc.id, nil)
		if len(d.Logs()) == 0 || d.Logs()[0] != tc.want || d.Logs()[0].Message() != tc.msg {
			t.Errorf("%s: logs %+v, want %+v first (%q)", tc.name, d.Logs(), tc.want, tc.msg)
		}
	}
}

// TestDecisionLogsBounded: a decision keeps at most MaxLogLines lines,
// the first ones.
func TestDecisionLogsBounded(t *testing.T) {
	var d Decision
	var ls []LogLine
	for i := 0; i < MaxLogLines+3; i++ {
		ls = append(ls, LogLine{Code: string(rune('a' + i))})
	}
	d.AddLogs(ls[:2])
	d.AddLogs(ls[2:])
	if got := d.Logs(); len(got) != MaxLogLines || got[0].Code != "a" || got[MaxLogLines-1].Code != string(rune('a'+MaxLogLines-1)) {
		t.Errorf("logs %+v", got)
	}
	d.SetLogs(ls[3:4])
	if got := d.Logs(); len(got) != 1 || got[0].Code != "d" {
		t.Errorf("SetLogs: %+v", got)
	}
}

// TestRequireEval: apply_authz_sections: RequireAny takes the first
// grant, RequireAll the first denial; a user-dependent denial outranks a
// plain one in RequireAny and is outranked by it in RequireAll; negation
// turns a grant into a denial and a denial into neutral; a node that does
// not apply to the method is neutral, or granted under RequireAll.
func TestRequireEval(t *testing.T) {
	const post = 2
	get := MethodMask(1) << MethodGet
	for _, tc := range []struct {
		name    string
		n       *Node
		method  int
		user    string // "" none yet
		env     string
		host    string
		addr    string
		local   string
		want    Result
		why     string
		compile bool
	}{
		{"any: the first grant", anyOf(leaf("d", ProvAllDenied), leaf("g1", ProvAllGranted), leaf("g2", ProvAllGranted)), 0, "", "", "", "", "", Granted, "g1", false},
		{"any: all denied", anyOf(leaf("d1", ProvAllDenied), leaf("d2", ProvAllDenied)), 0, "", "", "", "", "", Denied, "d1", false},
		{"any: no user outranks denied", anyOf(leaf("d", ProvAllDenied), leaf("v", ProvValidUser)), 0, "", "", "", "", "", DeniedNoUser, "v", false},
		{"any: denied does not outrank no user", anyOf(leaf("v", ProvValidUser), leaf("d", ProvAllDenied)), 0, "", "", "", "", "", DeniedNoUser, "v", false},
		{"any: the first no user", anyOf(leaf("v1", ProvValidUser), leaf("v2", ProvValidUser)), 0, "", "", "", "", "", DeniedNoUser, "v1", false},
		{"any: empty is neutral", anyOf(), 0, "", "", "", "", "", Neutral, "", false},
		{"all: the first denial", allOf(leaf("g", ProvAllGranted), leaf("d1", ProvAllDenied), leaf("d2", ProvAllDenied)), 0, "", "", "", "", "", Denied, "d1", false},
		{"all: all granted", allOf(leaf("g1", ProvAllGranted), leaf("g2", ProvAllGranted)), 0, "", "", "", "", "", Granted, "g1", false},
		{"all: denied outranks no user", allOf(leaf("v", ProvValidUser), leaf("d", ProvAllDenied)), 0, "", "", "", "", "", Denied, "d", false},
		{"all: no user after granted", allOf(leaf("g", ProvAllGranted), leaf("v", ProvValidUser)), 0, "", "", "", "", "", DeniedNoUser, "v", false},
		{"all: the last no user", allOf(leaf("v1", ProvValidUser), leaf("v2", ProvValidUser)), 0, "", "", "", "", "", DeniedNoUser, "v2", false},
		{"all: with a user", allOf(leaf("v", ProvValidUser), leaf("u", ProvUser, "alice")), 0, "alice", "", "", "", "", Granted, "v", false},
		{"not granted is denied", anyOf(not(leaf("g", ProvAllGranted))), 0, "", "", "", "", "", Denied, "g", false},
		{"not denied is neutral", anyOf(not(leaf("d", ProvAllDenied))), 0, "", "", "", "", "", Neutral, "", false},
		{"not no-user is neutral", anyOf(not(leaf("v", ProvValidUser))), 0, "", "", "", "", "", Neutral, "", false},
		{"negated container", not(allOf(leaf("g", ProvAllGranted))), 0, "", "", "", "", "", Denied, "g", false},
		{"all: neutral children skipped", allOf(not(leaf("d", ProvAllDenied)), leaf("g", ProvAllGranted)), 0, "", "", "", "", "", Granted, "g", false},
		{"other method under any: neutral", anyOf(limit(get, leaf("d", ProvAllDenied))), post, "", "", "", "", "", Neutral, "", false},
		{"other method under all: granted", allOf(limit(get, leaf("d", ProvAllDenied)), leaf("v", ProvValidUser)), post, "", "", "", "", "", DeniedNoUser, "v", false},
		{"other method under all, alone", anyOf(allOf(limit(get, leaf("d", ProvAllDenied)))), post, "", "", "", "", "", Granted, "", false},
		{"the method itself", anyOf(limit(get, leaf("d", ProvAllDenied))), MethodGet, "", "", "", "", "", Denied, "d", false},
		{"Require method", anyOf(&Node{Kind: Leaf, Provider: ProvMethod, Methods: AllMethods, MethodOK: get, Rule: &Rule{ID: "m"}}), MethodGet, "", "", "", "", "", Granted, "m", false},
		{"Require method: another", anyOf(&Node{Kind: Leaf, Provider: ProvMethod, Methods: AllMethods, MethodOK: get, Rule: &Rule{ID: "m"}}), post, "", "", "", "", "", Denied, "m", false},
		{"Require env", anyOf(leaf("e", ProvEnv, "a", "b")), 0, "", "B", "", "", "", Granted, "e", false},
		{"Require env: unset", anyOf(leaf("e", ProvEnv, "a", "b")), 0, "", "c", "", "", "", Denied, "e", false},
		{"Require host", anyOf(leaf("h", ProvHost, "example.net", "example.org")), 0, "", "", "www.example.org", "", "", Granted, "h", false},
		{"Require host: another domain", anyOf(leaf("h", ProvHost, "example.net")), 0, "", "", "www.example.org", "", "", Denied, "h", false},
		{"Require host: no name", anyOf(leaf("h", ProvHost, "example.org")), 0, "", "", "", "", "", Denied, "h", false},
		{"Require local: 127.0.0.2", anyOf(leaf("l", ProvLocal)), 0, "", "", "", "127.0.0.2", "", Granted, "l", false},
		{"Require local: ::1", anyOf(leaf("l", ProvLocal)), 0, "", "", "", "::1", "", Granted, "l", false},
		{"Require local: mapped loopback", anyOf(leaf("l", ProvLocal)), 0, "", "", "", "::ffff:127.0.0.1", "", Granted, "l", false},
		{"Require local: the server's address", anyOf(leaf("l", ProvLocal)), 0, "", "", "", "::ffff:192.0.2.7", "192.0.2.7", Granted, "l", false},
		{"Require local: another address", anyOf(leaf("l", ProvLocal)), 0, "", "", "", "192.0.2.8", "192.0.2.7", Denied, "l", false},
		{"Require local: no local address", anyOf(leaf("l", ProvLocal)), 0, "", "", "", "192.0.2.8", "", Denied, "l", false},
		{"Require user", anyOf(leaf("u", ProvUser, "bob", "alice")), 0, "alice", "", "", "", "", Granted, "u", false},
		{"Require user: no user yet", anyOf(leaf("u", ProvUser, "alice")), 0, "", "", "", "", "", DeniedNoUser, "u", false},
		{"Require group: no user yet", anyOf(leaf("g", ProvGroup, "staff")), 0, "", "", "", "", "", DeniedNoUser, "g", false},
		{"Require group: second group", anyOf(leaf("g", ProvGroup, "admins", "OPS")), 0, "alice", "", "", "", "", Granted, "g", false},
		{"Require group: none", anyOf(leaf("g", ProvGroup, "admins")), 0, "alice", "", "", "", "", Denied, "g", false},
		{"Require valid-user", anyOf(leaf("v", ProvValidUser)), 0, "alice", "", "", "", "", Granted, "v", false},
		{"Require ip", anyOf(ipLeaf(t, "i", "192.168.0.0/16", "10.0.0.0/8")), 0, "", "", "", "10.1.2.3", "", Granted, "i", false},
		{"Require ip: outside", anyOf(ipLeaf(t, "i", "192.168.0.0/16")), 0, "", "", "", "10.1.2.3", "", Denied, "i", false},
		{"Require ip, compiled", anyOf(ipLeaf(t, "i", "192.168.0.0/16", "10.0.0.0/8")), 0, "", "", "", "10.1.2.3", "", Granted, "i", true},
		{"Require ip, compiled: outside", anyOf(ipLeaf(t, "i", "192.168.0.0/16")), 0, "", "", "", "10.1.2.3", "", Denied, "i", true},
		{"Require ip lines merged: the line that granted", anyOf(ipLeaf(t, "i1", "192.168.0.0/16"), ipLeaf(t, "i2", "10.1.0.0/16"), ipLeaf(t, "i3", "10.0.0.0/8")), 0, "", "", "", "10.1.2.3", "", Granted, "i2", true},
		{"Require ip lines merged: denied names the first", anyOf(ipLeaf(t, "i1", "192.168.0.0/16"), ipLeaf(t, "i2", "10.1.0.0/16")), 0, "", "", "", "8.8.8.8", "", Denied, "i1", true},
		{"Require ip: a negated line is not merged", anyOf(ipLeaf(t, "i1", "192.168.0.0/16"), not(ipLeaf(t, "i2", "10.0.0.0/8")), ipLeaf(t, "i3", "10.1.0.0/16")), 0, "", "", "", "10.1.2.3", "", Granted, "i3", true},
		{"Require ip: other methods are not merged", anyOf(ipLeaf(t, "i1", "192.168.0.0/16"), limit(1<<post, ipLeaf(t, "i2", "10.0.0.0/8")), ipLeaf(t, "i3", "10.1.0.0/16")), 0, "", "", "", "10.1.2.3", "", Granted, "i3", true},
		{"Require ip in RequireAll", allOf(ipLeaf(t, "i1", "10.0.0.0/8"), ipLeaf(t, "i2", "192.168.0.0/16")), 0, "", "", "", "10.1.2.3", "", Denied, "i2", true},
		{"Require ip nested", anyOf(allOf(ipLeaf(t, "i1", "10.0.0.0/8"), ipLeaf(t, "i2", "10.1.0.0/16"))), 0, "", "", "", "10.1.2.3", "", Granted, "i1", true},
	} {
		n := tc.n
		if tc.compile {
			n = n.Compile()
		}
		addr := tc.addr
		if addr == "" {
			addr = "10.9.9.9"
		}
		r := &Request{Method: tc.method, Addr: netip.MustParseAddr(addr)}
		if tc.local != "" {
			r.LocalAddr = netip.MustParseAddr(tc.local)
		}
		if tc.env != "" {
			r.Env.Set(tc.env, "")
		}
		if tc.host != "" {
			r.Host = verifiedHost(tc.host)
		}
		c := &evalCtx{req: r, id: testID, groupFile: "groups", user: tc.user, hasUser: tc.user != ""}
		res, why := n.eval(c, true)
		id := ""
		if why != nil {
			id = why.ID
		}
		if res != tc.want || id != tc.why {
			t.Errorf("%s: %s %q, want %s %q", tc.name, res, id, tc.want, tc.why)
		}
	}
}

// TestRequireExpr: a Require line with %{env:NAME} is evaluated per
// request, then split into words.
func TestRequireExpr(t *testing.T) {
	for _, tc := range []struct {
		expr string
		p    Provider
		env  string
		user string
		host string
		want Result
	}{
		{"%{env:who}", ProvUser, "bob alice", "alice", "", Granted},
		{"%{env:who}", ProvUser, "bob", "alice", "", Denied},
		{"x%{env:who}", ProvUser, "alice", "xalice", "", Granted},
		{"%{env:who}x", ProvUser, "alice", "alicex", "", Granted},
		{"%{env:who} carol", ProvUser, "", "carol", "", Granted},
		{"%{env:who}", ProvGroup, "ops", "alice", "", Granted},
		{"%{env:who}", ProvHost, "example.org", "", "www.example.org", Granted},
		{"%{env:who}", ProvHost, "example.net", "", "www.example.org", Denied},
	} {
		tmpl, err := ParseTemplate(tc.expr)
		if err != nil || tmpl == nil {
			t.Fatalf("ParseTemplate(%q): %v, %v", tc.expr, tmpl, err)
		}
		n := &Node{Kind: Leaf, Provider: tc.p, Methods: AllMethods, Args: []string{"ignored"}, Expr: tmpl, Rule: &Rule{}}
		r := &Request{Addr: netip.MustParseAddr("10.1.2.3")}
		r.Env.Set("who", tc.env)
		if tc.host != "" {
			r.Host = verifiedHost(tc.host)
		}
		c := &evalCtx{req: r, id: testID, groupFile: "g", user: tc.user, hasUser: true}
		if res, _ := n.eval(c, false); res != tc.want {
			t.Errorf("%q with who=%q for %q: %s, want %s", tc.expr, tc.env, tc.user, res, tc.want)
		}
	}
	for _, tc := range []struct {
		s   string
		nil bool
		err bool
	}{
		{"alice bob", true, false},
		{"%{env:a}", false, false},
		{"%{env:a", true, true},
		{"%{env:}", true, true},
		{"%{req:a}", true, true},
		{"a %{env:b} c %{env:d}", false, false},
	} {
		tmpl, err := ParseTemplate(tc.s)
		if (tmpl == nil) != tc.nil || (err != nil) != tc.err {
			t.Errorf("ParseTemplate(%q) = %v, %v", tc.s, tmpl, err)
		}
	}
	tmpl, _ := ParseTemplate("a %{env:b}c %{env:d}")
	var env Env
	env.Set("b", "B1 B2")
	if got := strings.Join(tmpl.Words(&env), ","); got != "a,B1,B2c" {
		t.Errorf("Words = %q, want a,B1,B2c", got)
	}
}

// TestDecideTraceAuthn: explain says what authentication did.
func TestDecideTraceAuthn(t *testing.T) {
	for _, tc := range []struct {
		authType string
		cred     Credentials
		want     string
	}{
		{"Basic", alice, "authenticated alice"},
		{"Basic", Credentials{}, "401: no credentials"},
		{"Basic", aliceBad, "401: credentials refused for alice"},
		{"", alice, "500: authentication not configured"},
	} {
		l := &Layers{Authz: anyOf(leaf("v", ProvValidUser)).Compile(), AuthType: tc.authType, AuthTypeRule: &Rule{ID: "authtype"}, AuthName: "R", HasAuthName: true, UserFile: "f"}
		var rec recorder
		Decide(l, &Request{Addr: netip.MustParseAddr("10.1.2.3"), Auth: tc.cred}, testID, &rec)
		got := ""
		for _, e := range rec.ev {
			if e.Layer == LayerAuthn {
				got = e.Text + "[" + e.Rule.ID + "]=" + e.Result
			}
		}
		if want := "AuthType " + tc.authType + "[authtype]=" + tc.want; got != want {
			t.Errorf("traced %q, want %q", got, want)
		}
	}
}

// TestCompilePrefixTables: Compile gives every Require ip leaf, nested or
// not, a prefix table (the decision's cost then does not grow with the
// addresses), and leaves other leaves as they are.
func TestCompilePrefixTables(t *testing.T) {
	host := leaf("h", ProvHost, "a")
	root := anyOf(host, allOf(ipLeaf(t, "i1", "10.0.0.0/8"), ipLeaf(t, "i2", "192.168.0.0/16")))
	c := root.Compile()
	if c.Children[0] != host || c.Children[0].set != nil {
		t.Error("a host leaf was changed")
	}
	for i, ch := range c.Children[1].Children {
		if ch.set == nil || len(ch.setRules) != 1 {
			t.Errorf("ip leaf %d has no prefix table", i)
		}
	}
	if root.Children[1].Children[0].set != nil {
		t.Error("Compile changed its argument")
	}
	if l := ipLeaf(t, "i", "10.0.0.0/8", "10.1.0.0/16").Compile(); l.set == nil || len(l.setRules) != 2 {
		t.Error("a lone ip leaf has no prefix table")
	}
	// A run of non-negated ip lines of one RequireAny becomes one leaf.
	merged := anyOf(ipLeaf(t, "i1", "10.0.0.0/8"), ipLeaf(t, "i2", "10.1.0.0/16"), not(ipLeaf(t, "i3", "10.2.0.0/16")), ipLeaf(t, "i4", "10.3.0.0/16")).Compile()
	if len(merged.Children) != 3 || len(merged.Children[0].setRules) != 2 {
		t.Errorf("merged into %d leaves, want 3", len(merged.Children))
	}
	if (*Node)(nil).Compile() != nil {
		t.Error("nil compiled to a tree")
	}
}

// TestRequireCounts: the Require line that granted counts a match, a line
// that denied none; compiling keeps lines of other providers apart.
func TestRequireCounts(t *testing.T) {
	host, user, denied := leaf("h", ProvHost, "example.org"), leaf("u", ProvUser, "alice"), leaf("d", ProvAllDenied)
	n := anyOf(denied, host, user).Compile()
	r := &Request{Addr: netip.MustParseAddr("10.1.2.3"), Now: 1}
	res, why := n.eval(&evalCtx{req: r, user: "alice", hasUser: true}, true)
	if res != Granted || why != user.Rule {
		t.Fatalf("eval = %s %v, want granted by u", res, why)
	}
	for _, tc := range []struct {
		rule *Rule
		want uint64
	}{{denied.Rule, 0}, {host.Rule, 0}, {user.Rule, 1}} {
		if m, _, _ := tc.rule.Stats(); m != tc.want {
			t.Errorf("%s matched %d times, want %d", tc.rule.ID, m, tc.want)
		}
	}
}

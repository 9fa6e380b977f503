package policy

import (
	"net/netip"
	"testing"
)

type okIdentity map[string]string

func (u okIdentity) CheckPassword(_, user, password string) (PasswordResult, error) {
	pw, ok := u[user]
	switch {
	case !ok:
		return UserNotFound, nil
	case pw != password:
		return PasswordMismatch, nil
	}
	return PasswordOK, nil
}

func (okIdentity) Groups(string, string) ([]string, bool, error) { return nil, false, nil }

// TestDecideSSL: where mod_ssl's hooks act in Apache's combination of the
// layers, 2.4 and 2.2 (ssl.go).
func TestDecideSSL(t *testing.T) {
	reqSSL := &Rule{ID: "ssl", Text: "SSLRequireSSL"}
	allowAll := &Compat{Allows: []AccessRule{{Kind: AccessAll, Methods: AllMethods, Word: "all", Rule: &Rule{ID: "a"}}}}
	allowAll.Order[0] = AllowDeny
	denyAll := &Compat{Denys: []AccessRule{{Kind: AccessAll, Methods: AllMethods, Word: "all", Rule: &Rule{ID: "d"}}}}
	for _, c := range []*Compat{allowAll, denyAll} {
		c.Satisfy[0] = SatisfyAny
		c.Compile()
	}
	denyAll.Order[0] = DenyAllow
	validUser := (&Node{Kind: Any, Methods: AllMethods, Children: []*Node{{Kind: Leaf, Provider: ProvValidUser, Methods: AllMethods, Rule: &Rule{ID: "r"}}}}).Compile()
	basic := func(c *Compat, authz *Node) *Layers {
		return &Layers{Compat: c, Authz: authz, AuthType: "Basic", AuthName: "R", HasAuthName: true, UserFile: "f", Default: &Rule{ID: "def"}}
	}
	deny := SSL{Loaded: true, Deny: true, Forbidden: true, DenyRule: reqSSL, DenyLog: LogLine{Module: "ssl", Code: "AH02219", Subject: "/f"}}
	strict := deny
	strict.Strict = true
	final := deny
	final.Final, final.Forbidden = true, false
	alice := Credentials{Present: true, Basic: true, User: "alice", Password: "ok"}
	spoof := Credentials{Present: true, Basic: true, User: "/CN=alice", Password: "password"}
	for _, tc := range []struct {
		name   string
		l      *Layers
		ssl    SSL
		auth   Credentials
		status int
		layer  Layer
		user   string
	}{
		{"Satisfy Any, no Require: 2.4 grants", &Layers{Compat: allowAll, Default: &Rule{}}, deny, Credentials{}, 0, LayerSSL, ""},
		{"Satisfy Any, a password gets past", basic(allowAll, validUser), deny, alice, 0, LayerAuthz, "alice"},
		{"Satisfy Any, no password", basic(allowAll, validUser), deny, Credentials{}, 401, LayerAuthn, ""},
		{"StrictRequire", basic(allowAll, validUser), strict, alice, 403, LayerSSL, ""},
		{"host denial first: mod_ssl never runs", basic(denyAll, validUser), strict, alice, 0, LayerAuthz, "alice"},
		{"a broken renegotiation is final", basic(allowAll, validUser), final, alice, 403, LayerSSL, ""},
		{"spoof guard", basic(denyAll, validUser), SSL{Loaded: true}, spoof, 403, LayerSSL, ""},
		{"spoof guard needs mod_ssl", basic(denyAll, validUser), SSL{}, spoof, 0, LayerAuthz, "/CN=alice"},
		{"FakeBasicAuth", basic(denyAll, validUser), SSL{Loaded: true, Fake: true, FakeUser: "/CN=alice"}, Credentials{}, 0, LayerAuthz, "/CN=alice"},
		{"SSLUserName, Satisfy Any: granted as it is", &Layers{Compat: allowAll, Authz: validUser, Default: &Rule{}}, SSL{Loaded: true, User: "alice"}, Credentials{}, 0, LayerCompat, "alice"},
		{"SSLUserName without AuthType", &Layers{Compat: DefaultCompat, Authz: validUser, Default: &Rule{}}, SSL{Loaded: true, User: "alice"}, Credentials{}, 0, LayerAuthz, "alice"},
	} {
		r := Request{Method: MethodGet, Addr: netip.MustParseAddr("192.0.2.1"), URI: "/f", Filename: "/f", Auth: tc.auth, SSL: tc.ssl}
		d := Decide(tc.l, &r, okIdentity{"alice": "ok", "/CN=alice": "password", "/CN=alice:x": "y"}, nil)
		if d.Status != tc.status || d.Layer != tc.layer || d.User != tc.user {
			t.Errorf("%s: %d %s %q, want %d %s %q", tc.name, d.Status, d.Layer, d.User, tc.status, tc.layer, tc.user)
		}
		r.SSL, r.Auth = tc.ssl, tc.auth
		l22 := *tc.l
		l22.Legacy = &Legacy22{Requires: []Require22{{Methods: AllMethods, Words: []string{"valid-user"}, Rule: &Rule{ID: "q"}}}, UserAuthoritative: true}
		l22.Legacy.Satisfy[0] = tc.l.Compat.Satisfy[0]
		d22 := Decide(&l22, &r, okIdentity{"alice": "ok", "/CN=alice": "password"}, nil)
		if tc.name == "Satisfy Any, no Require: 2.4 grants" {
			continue // 2.2 reads its own Require lines, which this layer has
		}
		if tc.name == "SSLUserName without AuthType" {
			tc.status = 500 // 2.2 authenticates whenever a Require line applies, and needs AuthType
		}
		if d22.Status != tc.status {
			t.Errorf("%s (2.2): %d, want %d", tc.name, d22.Status, tc.status)
		}
	}
}

// TestDecideSSLDoesNotAllocate: mod_ssl's part adds no allocation.
func TestDecideSSLDoesNotAllocate(t *testing.T) {
	l, probes := benchLayers(100)
	r := Request{Method: MethodGet, Addr: probes[0], SSL: SSL{Loaded: true, Fake: true, FakeUser: "/CN=a", Deny: true, DenyLog: LogLine{Code: "AH02219"}}}
	if n := testing.AllocsPerRun(100, func() { Decide(l, &r, nil, nil) }); n != 0 {
		t.Errorf("%v allocations a decision", n)
	}
}

// TestDecideSSLLogsAndUser: mod_ssl's log lines are kept when it has
// one, and SSLUserName's user is r->user when authorization first runs,
// AuthType or not.
func TestDecideSSLLogsAndUser(t *testing.T) {
	validUser := (&Node{Kind: Any, Methods: AllMethods, Children: []*Node{{Kind: Leaf, Provider: ProvValidUser, Methods: AllMethods, Rule: &Rule{ID: "r"}}}}).Compile()
	userLog := LogLine{Module: "ssl", Code: "AH02227", Subject: "SSL_CLIENT_S_DN_CN"}
	for _, tc := range []struct {
		name     string
		authType string
		ssl      SSL
		status   int
		layer    Layer
		user     string
		logs     string
	}{
		{"a refusal with its log line", "Basic", SSL{Loaded: true, Deny: true, DenyLog: LogLine{Module: "ssl", Code: "AH02219", Subject: "/f"}}, 403, LayerSSL, "", "AH02219"},
		{"a refusal without one", "Basic", SSL{Loaded: true, Deny: true}, 403, LayerSSL, "", ""},
		{"an empty SSLUserName variable", "Basic", SSL{Loaded: true, UserLog: userLog}, 401, LayerAuthn, "", "AH02227"},
		{"SSLUserName without AuthType", "", SSL{Loaded: true, User: "alice"}, 0, LayerAuthz, "alice", ""},
		{"SSLUserName under AuthType Basic: authorization reads it first", "Basic", SSL{Loaded: true, User: "alice"}, 0, LayerAuthz, "alice", ""},
		{"no user, no AuthType", "", SSL{Loaded: true}, 500, LayerConfig, "", "AH00027"},
	} {
		l := &Layers{Compat: DefaultCompat, Authz: validUser, AuthType: tc.authType, AuthName: "R", HasAuthName: true, UserFile: "f", Default: &Rule{}}
		r := Request{Addr: netip.MustParseAddr("192.0.2.1"), URI: "/f", Filename: "/f", SSL: tc.ssl}
		d := Decide(l, &r, okIdentity{"alice": "ok"}, nil)
		var codes string
		for _, lg := range d.Logs() {
			codes += lg.Code
		}
		if d.Status != tc.status || d.Layer != tc.layer || d.User != tc.user || codes != tc.logs {
			t.Errorf("%s: %d %s %q logs %q, want %d %s %q logs %q", tc.name, d.Status, d.Layer, d.User, codes, tc.status, tc.layer, tc.user, tc.logs)
		}
	}
}

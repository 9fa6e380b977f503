package digest

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

var testSecret = []byte("0123456789abcdefghij")

func newTestServer(t testing.TB, max int) *Server {
	t.Helper()
	s, err := NewServer(Options{Secret: testSecret, MaxClients: max})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// users is a Lookup of fixed users in realm "R".
func users(t testing.TB) Lookup {
	return func(user, realm string) (string, bool, error) {
		switch {
		case realm != "R":
			t.Errorf("lookup with realm %q", realm)
		case user == "alice":
			return HA1("alice", "R", "secret"), true, nil
		case user == "denied":
			return "", false, ErrDenied
		case user == "broken":
			return "", false, &ProviderError{Code: "AH01622", Err: errors.New("Could not open password file: /x")}
		}
		return "", false, nil
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func getReq(uri string, at time.Time) *Request {
	return &Request{Method: "GET", URI: uri, Path: uri, ServerName: "example.org", ServerPort: 80, Time: at}
}

// creds returns the credentials a correct client sends for req with the
// nonce and opaque of challenge ch.
func creds(t testing.TB, ch, user, password, realm string, req *Request, nc string) *Credentials {
	t.Helper()
	c := &Credentials{Scheme: "Digest"}
	c.Set(ParamUsername, user)
	c.Set(ParamRealm, realm)
	c.Set(ParamNonce, challengeParam(t, ch, "nonce"))
	c.Set(ParamURI, req.URI)
	c.Set(ParamAlgorithm, "MD5")
	c.Set(ParamCNonce, "0a4f113b")
	c.Set(ParamNC, nc)
	c.Set(ParamQOP, "auth")
	if op := challengeParam(t, ch, "opaque"); op != "" {
		c.Set(ParamOpaque, op)
	}
	c.sign(HA1(user, realm, password), req.Method)
	return c
}

// sign sets the response digest for the other parameters.
func (c *Credentials) sign(ha1, method string) {
	c.Set(ParamResponse, ResponseDigest(ha1, c.Nonce, c.NC, c.CNonce, c.QOP, method, c.URI))
}

var challengeRE = regexp.MustCompile(`(\w+)=("([^"\\]|\\.)*"|[^,\s]*)`)

// challengeParam returns a parameter of a WWW-Authenticate value, unquoted
// ("" if absent).
func challengeParam(t testing.TB, ch, name string) string {
	t.Helper()
	for _, m := range challengeRE.FindAllStringSubmatch(ch, -1) {
		if m[1] == name {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				v = strings.ReplaceAll(strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`), `\\`, `\`)
			}
			return v
		}
	}
	return ""
}

func withAuth(req *Request, c *Credentials) *Request {
	r := *req
	r.Authorization, r.HasAuthorization = c.Encode(), true
	return &r
}

func TestChallengeExact(t *testing.T) {
	s := newTestServer(t, 0)
	cfg := NewConfig("R")
	r := s.Authenticate(&cfg, getReq("/x", t0), users(t))
	nonce := nonceTimeString(t0.UnixMicro())
	nonce += s.nonceHash(nonce, "", "R")
	want := `Digest realm="R", nonce="` + nonce + `", algorithm=MD5, qop="auth"`
	if r.Status != 401 || r.Reason != NoCredentials || r.Challenge != want || r.Stale || r.LogCode() != "" {
		t.Fatalf("got %+v\nwant challenge %s", r, want)
	}

	// Every parameter: opaque (NcCheck), domain, in Apache's order.
	cfg.NcCheck = true
	cfg.Domain = []string{"/a/", "http://other/b"}
	cfg.AuthName = `say "hi"`
	r = s.Authenticate(&cfg, getReq("/x", t0), users(t))
	nonce = nonceTimeString(t0.UnixMicro())
	nonce += s.nonceHash(nonce, "1", `say \"hi\"`)
	want = `Digest realm="say \"hi\"", nonce="` + nonce + `", algorithm=MD5, opaque="1", domain="/a/ http://other/b", qop="auth"`
	if r.Challenge != want {
		t.Fatalf("got  %s\nwant %s", r.Challenge, want)
	}
	// Not for a proxied request; the next client number.
	req := getReq("/x", t0)
	req.Proxied = true
	r = s.Authenticate(&cfg, req, users(t))
	if strings.Contains(r.Challenge, "domain=") || challengeParam(t, r.Challenge, "opaque") != "2" {
		t.Fatalf("proxied: %s", r.Challenge)
	}
}

func TestAuthenticate(t *testing.T) {
	type tc struct {
		name string
		cfg  func(*Config)
		// cfg2 changes the configuration after the challenge
		cfg2 func(*Config)
		// mutate changes the credentials of a correct client (nil: none)
		mutate func(c *Credentials, req *Request)
		resign bool // recompute the response after mutate
		at     time.Duration
		req    func(*Request)
		want   int
		reason Reason
		code   string
		stale  bool
	}
	tests := []tc{
		{name: "good", want: 200, reason: Granted},
		{name: "good, scheme and keys in other cases", want: 200, reason: Granted,
			req: func(r *Request) {
				r.Authorization = strings.Replace(strings.Replace(r.Authorization, "Digest", "dIGEST", 1), "username=", "UserName=", 1)
			}},
		{name: "no header", want: 401, reason: NoCredentials, req: func(r *Request) { r.HasAuthorization = false }},
		{name: "basic", want: 401, reason: WrongScheme, code: "AH01781", req: func(r *Request) { r.Authorization = "Basic YTpi" }},
		{name: "no username", want: 401, reason: Malformed, code: "AH01782",
			mutate: func(c *Credentials, _ *Request) { c.Present &^= ParamUsername }},
		{name: "short nonce", want: 401, reason: Malformed, code: "AH01782",
			mutate: func(c *Credentials, _ *Request) { c.Nonce = c.Nonce[1:] }, resign: true},
		{name: "qop without nc", want: 401, reason: Malformed, code: "AH01782",
			mutate: func(c *Credentials, _ *Request) { c.Present &^= ParamNC }},
		{name: "uppercase response", want: 401, reason: PasswordMismatch, code: "AH01794",
			mutate: func(c *Credentials, _ *Request) { c.Response = strings.ToUpper(c.Response) }},
		{name: "uri mismatch", want: 400, reason: URIMismatch, code: "AH01786",
			mutate: func(c *Credentials, _ *Request) { c.URI = "/other" }, resign: true},
		{name: "uri unparsable", want: 400, reason: URIMismatch, code: "AH01783",
			mutate: func(c *Credentials, _ *Request) { c.URI = "http://example.org:8x/x" }, resign: true},
		{name: "uri relative with colon", want: 400, reason: URIMismatch, code: "AH01783",
			mutate: func(c *Credentials, _ *Request) { c.URI = "1:x" }, resign: true},
		{name: "uri with scheme only", want: 400, reason: URIMismatch, code: "AH01786",
			mutate: func(c *Credentials, _ *Request) { c.URI = "a:b/c" }, resign: true},
		{name: "uri absolute with host and port", want: 200, reason: Granted,
			mutate: func(c *Credentials, _ *Request) { c.URI = "http://EXAMPLE.org:80/x" }, resign: true},
		{name: "uri absolute, wrong host", want: 400, reason: URIMismatch, code: "AH01786",
			mutate: func(c *Credentials, _ *Request) { c.URI = "http://other.org/x" }, resign: true},
		{name: "uri escaped", want: 200, reason: Granted,
			mutate: func(c *Credentials, _ *Request) { c.URI = "/%78" }, resign: true},
		{name: "bad opaque", want: 401, reason: BadOpaque, code: "AH01787", stale: true,
			mutate: func(c *Credentials, _ *Request) { c.Set(ParamOpaque, "zz") }},
		{name: "wrong realm", want: 401, reason: RealmMismatch, code: "AH01788",
			mutate: func(c *Credentials, _ *Request) { c.Realm = "r" }, resign: true},
		{name: "md5-sess", want: 401, reason: BadAlgorithm, code: "AH01789",
			mutate: func(c *Credentials, _ *Request) { c.Algorithm = "MD5-sess" }},
		{name: "algorithm md5 lowercase", want: 200, reason: Granted,
			mutate: func(c *Credentials, _ *Request) { c.Algorithm = "md5" }},
		{name: "algorithm empty", want: 401, reason: BadAlgorithm, code: "AH01789",
			mutate: func(c *Credentials, _ *Request) { c.Algorithm = "" }},
		{name: "no algorithm", want: 200, reason: Granted,
			mutate: func(c *Credentials, _ *Request) { c.Present &^= ParamAlgorithm }},
		{name: "unknown user", want: 401, reason: UserNotFound, code: "AH01790",
			mutate: func(c *Credentials, _ *Request) { c.Username = "bob" }},
		{name: "denied user", want: 401, reason: UserDenied, code: "AH01791",
			mutate: func(c *Credentials, _ *Request) { c.Username = "denied" }},
		{name: "provider error", want: 500, reason: ProviderFailed, code: "AH01622",
			mutate: func(c *Credentials, _ *Request) { c.Username = "broken" }},
		{name: "rfc 2069", want: 401, reason: BadQOP, code: "AH10560",
			mutate: func(c *Credentials, _ *Request) {
				c.Present &^= ParamQOP | ParamNC | ParamCNonce
				c.Response = ResponseDigest(HA1("alice", "R", "secret"), c.Nonce, "", "", "", "GET", c.URI)
			}},
		{name: "auth-int", want: 401, reason: BadQOP, code: "AH10560",
			mutate: func(c *Credentials, _ *Request) { c.QOP = "auth-int" }, resign: true},
		{name: "qop AUTH", want: 200, reason: Granted,
			mutate: func(c *Credentials, _ *Request) { c.QOP = "AUTH" }, resign: true},
		{name: "bad password", want: 401, reason: PasswordMismatch, code: "AH01794",
			mutate: func(c *Credentials, _ *Request) { c.sign(HA1("alice", "R", "wrong"), "GET") }},
		{name: "method is in the digest", want: 401, reason: PasswordMismatch, code: "AH01794",
			req: func(r *Request) { r.Method = "POST" }},
		{name: "tampered nonce", want: 401, reason: BadNonce, code: "AH01776", stale: true,
			mutate: func(c *Credentials, _ *Request) { c.Nonce = c.Nonce[:51] + "x" }, resign: true},
		{name: "nonce of another opaque", want: 401, reason: BadNonce, code: "AH01776", stale: true,
			mutate: func(c *Credentials, _ *Request) { c.Set(ParamOpaque, "1") }},
		{name: "expired", at: 301 * time.Second, want: 401, reason: ExpiredNonce, code: "AH01778", stale: true},
		{name: "not yet expired", at: 300 * time.Second, want: 200, reason: Granted},
		{name: "from the future", at: -time.Microsecond, want: 401, reason: FutureNonce, code: "AH01777", stale: true},
		{name: "never expires", cfg: func(c *Config) { c.NonceLifetime = -time.Second },
			at: 1000 * time.Hour, want: 200, reason: Granted},
		{name: "no AuthName", cfg2: func(c *Config) { c.HasAuthName = false }, want: 500, reason: NoAuthName, code: "AH01780"},
		{name: "other realm", cfg2: func(c *Config) { c.AuthName = "S" }, want: 401, reason: RealmMismatch, code: "AH01788"},
		{name: "nc not hex, unchecked", mutate: func(c *Credentials, _ *Request) { c.NC = "xyz" }, resign: true,
			want: 200, reason: Granted},
		{name: "nc not hex, checked", cfg: func(c *Config) { c.NcCheck = true },
			mutate: func(c *Credentials, _ *Request) { c.NC = "xyz" }, resign: true,
			want: 401, reason: BadNC, code: "AH01773"},
		{name: "nc check, good", cfg: func(c *Config) { c.NcCheck = true }, want: 200, reason: Granted},
		{name: "nc check, opaque removed", cfg: func(c *Config) { c.NcCheck = true },
			mutate: func(c *Credentials, _ *Request) { c.Present &^= ParamOpaque }, resign: true,
			want: 401, reason: BadNonce, code: "AH01776", stale: true},
		{name: "nc check, nonce without opaque", cfg2: func(c *Config) { c.NcCheck = true },
			want: 401, reason: UnknownClient, code: "AH10618", stale: true},
		{name: "one-time, nonce without opaque", cfg2: func(c *Config) { c.NonceLifetime = 0 },
			want: 401, reason: UnknownClient, code: "AH10618", stale: true},
		{name: "one-time nonce, good", cfg: func(c *Config) { c.NonceLifetime = 0 }, at: time.Hour, want: 200, reason: Granted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, 0)
			cfg := NewConfig("R")
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			req := getReq("/x", t0)
			ch := s.Authenticate(&cfg, req, users(t))
			if ch.Status != 401 {
				t.Fatalf("first request: %+v", ch)
			}
			c := creds(t, ch.Challenge, "alice", "secret", "R", req, "00000001")
			if tt.cfg2 != nil {
				tt.cfg2(&cfg)
			}
			if tt.mutate != nil {
				tt.mutate(c, req)
				if tt.resign {
					c.sign(HA1("alice", "R", "secret"), "GET")
				}
			}
			r2 := withAuth(getReq("/x", t0.Add(tt.at)), c)
			if tt.req != nil {
				tt.req(r2)
			}
			got := s.Authenticate(&cfg, r2, users(t))
			if got.Status != tt.want || got.Reason != tt.reason || got.LogCode() != tt.code || got.Stale != tt.stale {
				t.Fatalf("got status %d %v %q stale %v (%s), want %d %v %q stale %v",
					got.Status, got.Reason, got.LogCode(), got.Stale, got.Logs, tt.want, tt.reason, tt.code, tt.stale)
			}
			if tt.stale != strings.Contains(got.Challenge, "stale=true") {
				t.Errorf("challenge %q", got.Challenge)
			}
			if (got.Status == 401) != (got.Challenge != "") {
				t.Errorf("status %d with challenge %q", got.Status, got.Challenge)
			}
			if got.Status == 200 {
				if got.User != "alice" || !strings.HasPrefix(got.AuthInfo, `rspauth="`) {
					t.Errorf("granted: %+v", got)
				}
			}
		})
	}
}

// TestAuthInfo checks Authentication-Info against RFC 2617's rspauth and
// the nextnonce rules of add_auth_info.
func TestAuthInfo(t *testing.T) {
	s := newTestServer(t, 0)
	cfg := NewConfig("R")
	req := getReq("/dir/index.html", t0)
	ch := s.Authenticate(&cfg, req, users(t))
	c := creds(t, ch.Challenge, "alice", "secret", "R", req, "00000001")
	c.CNonce = `a"b`
	c.sign(HA1("alice", "R", "secret"), "GET")

	ha1 := HA1("alice", "R", "secret")
	ha2 := md5Hex(":/dir/index.html")
	rsp := md5Hex(ha1 + ":" + c.Nonce + ":00000001:" + `a"b` + ":auth:" + ha2)
	got := s.Authenticate(&cfg, withAuth(getReq("/dir/index.html", t0.Add(270*time.Second)), c), users(t))
	want := `rspauth="` + rsp + `", cnonce="a\"b", nc=00000001, qop=auth`
	if got.Status != 200 || got.AuthInfo != want {
		t.Fatalf("got %q, want %q", got.AuthInfo, want)
	}
	// 30 seconds before expiry, and after: a nextnonce.
	got = s.Authenticate(&cfg, withAuth(getReq("/dir/index.html", t0.Add(270*time.Second+time.Microsecond)), c), users(t))
	next := challengeParam(t, "x "+got.AuthInfo, "nextnonce")
	if got.Status != 200 || next == "" {
		t.Fatalf("no nextnonce: %q", got.AuthInfo)
	}
	if _, _, ok := s.verifyNonce(next, "", "R"); !ok {
		t.Errorf("nextnonce %q does not verify", next)
	}
}

// TestNcCheck follows one client through AuthDigestNcCheck On: counts
// must rise within a nonce (gaps allowed), a replay is refused without
// harming the client, and a newer nonce starts a new count.
func TestNcCheck(t *testing.T) {
	s := newTestServer(t, 0)
	cfg := NewConfig("R")
	cfg.NcCheck = true
	req := getReq("/x", t0)
	ch := s.Authenticate(&cfg, req, users(t))
	if challengeParam(t, ch.Challenge, "opaque") != "1" {
		t.Fatalf("challenge %q", ch.Challenge)
	}
	try := func(ch, nc string, at time.Duration, password string) Result {
		c := creds(t, ch, "alice", password, "R", req, nc)
		return s.Authenticate(&cfg, withAuth(getReq("/x", t0.Add(at)), c), users(t))
	}
	steps := []struct {
		nc       string
		password string
		want     Reason
	}{
		{"00000001", "secret", Granted},
		{"00000002", "secret", Granted},
		{"00000002", "secret", Replay},
		{"00000001", "secret", Replay},
		{"00000005", "wrong", PasswordMismatch}, // does not move the count
		{"00000003", "secret", Granted},
		{"00000010", "secret", Granted}, // a gap is fine
		{"0000000f", "secret", Replay},
	}
	for i, st := range steps {
		if got := try(ch.Challenge, st.nc, time.Duration(i)*time.Second, st.password); got.Reason != st.want {
			t.Fatalf("step %d nc %s: got %v (%s)", i, st.nc, got.Reason, got.Logs)
		}
	}
	// A replay's challenge keeps the opaque and gives a newer nonce,
	// with which the count starts again.
	r := try(ch.Challenge, "00000001", 20*time.Second, "secret")
	if r.Reason != Replay || r.Stale || challengeParam(t, r.Challenge, "opaque") != "1" {
		t.Fatalf("replay: %+v", r)
	}
	if got := try(r.Challenge, "00000001", 21*time.Second, "secret"); got.Reason != Granted {
		t.Fatalf("new nonce: %v (%s)", got.Reason, got.Logs)
	}
	// The old nonce is now older than the last used: refused.
	if got := try(ch.Challenge, "00000100", 22*time.Second, "secret"); got.Reason != Replay {
		t.Fatalf("old nonce: %v", got.Reason)
	}
}

// TestOneTimeNonce: with AuthDigestNonceLifetime 0, a nonce is good once;
// the nextnonce of Authentication-Info is good next; an older one is not.
func TestOneTimeNonce(t *testing.T) {
	s := newTestServer(t, 0)
	cfg := NewConfig("R")
	cfg.NonceLifetime = 0
	req := getReq("/x", t0)
	ch := s.Authenticate(&cfg, req, users(t))
	c := creds(t, ch.Challenge, "alice", "secret", "R", req, "00000001")
	r := s.Authenticate(&cfg, withAuth(req, c), users(t))
	if r.Reason != Granted {
		t.Fatalf("first: %+v", r)
	}
	next := challengeParam(t, "x "+r.AuthInfo, "nextnonce")
	if next == "" {
		t.Fatalf("no nextnonce in %q", r.AuthInfo)
	}
	r = s.Authenticate(&cfg, withAuth(req, c), users(t))
	if r.Reason != NonceUsed || !r.Stale || r.LogCode() != "AH01779" {
		t.Fatalf("reuse: %+v", r)
	}
	c2 := creds(t, `nonce="`+next+`", opaque="1"`, "alice", "secret", "R", req, "00000001")
	if r = s.Authenticate(&cfg, withAuth(req, c2), users(t)); r.Reason != Granted {
		t.Fatalf("nextnonce: %+v", r)
	}
}

// TestEvictionFailsClosed: a client pushed out of a full table is refused
// with stale=true and a new opaque, as Apache refuses a client its
// garbage collector removed, and can then authenticate again.
func TestEvictionFailsClosed(t *testing.T) {
	s := newTestServer(t, 1)
	cfg := NewConfig("R")
	cfg.NcCheck = true
	req := getReq("/x", t0)
	ch1 := s.Authenticate(&cfg, req, users(t))
	ch2 := s.Authenticate(&cfg, req, users(t)) // client 2 evicts client 1
	if s.clients.len() != 1 {
		t.Fatalf("%d clients", s.clients.len())
	}
	c1 := creds(t, ch1.Challenge, "alice", "secret", "R", req, "00000001")
	r := s.Authenticate(&cfg, withAuth(req, c1), users(t))
	if r.Reason != UnknownClient || !r.Stale || r.LogCode() != "AH10618" || challengeParam(t, r.Challenge, "opaque") != "3" {
		t.Fatalf("evicted client: %+v", r)
	}
	c3 := creds(t, r.Challenge, "alice", "secret", "R", req, "00000001")
	if r := s.Authenticate(&cfg, withAuth(req, c3), users(t)); r.Reason != Granted {
		t.Fatalf("after renewal: %+v", r)
	}
	// client 2 was evicted in turn
	c2 := creds(t, ch2.Challenge, "alice", "secret", "R", req, "00000001")
	if r := s.Authenticate(&cfg, withAuth(req, c2), users(t)); r.Reason != UnknownClient {
		t.Fatalf("client 2: %+v", r)
	}
}

// TestChallengeOpaque: the opaque of a challenge, as
// note_digest_auth_failure chooses it.
func TestChallengeOpaque(t *testing.T) {
	s := newTestServer(t, 0)
	cfg := NewConfig("R") // no tracking
	req := getReq("/x", t0)
	r := s.Challenge(&cfg, req)
	if r.Status != 401 || r.Reason != Refused || challengeParam(t, r.Challenge, "opaque") != "" {
		t.Fatalf("no tracking: %+v", r)
	}
	// An opaque the server does not know: a new client, stale.
	req.Authorization, req.HasAuthorization = `Digest opaque="7"`, true
	r = s.Challenge(&cfg, req)
	if !r.Stale || challengeParam(t, r.Challenge, "opaque") != "1" {
		t.Fatalf("unknown opaque: %+v", r)
	}
	// A known one is echoed as sent, and the nonce is made with it.
	req.Authorization = `Digest opaque="0x1", username="u", realm="R", uri="/x", nonce="AAAAAAAAAAA=0000000000000000000000000000000000000000", response="00000000000000000000000000000000"`
	r = s.Challenge(&cfg, req)
	nonce := challengeParam(t, r.Challenge, "nonce")
	if r.Stale || challengeParam(t, r.Challenge, "opaque") != "0x1" {
		t.Fatalf("known opaque: %+v", r)
	}
	if _, _, ok := s.verifyNonce(nonce, "0x1", "R"); !ok {
		t.Errorf("nonce not made with the opaque as sent")
	}
}

func TestProviders(t *testing.T) {
	calls := ""
	p := func(name string, found bool, err error) Lookup {
		return func(user, realm string) (string, bool, error) {
			calls += name
			if found {
				return name, true, nil
			}
			return "", false, err
		}
	}
	boom := errors.New("boom")
	for _, tt := range []struct {
		ls        []Lookup
		ha1       string
		found     bool
		err       error
		wantCalls string
	}{
		{[]Lookup{p("a", false, nil), p("b", true, nil), p("c", true, nil)}, "b", true, nil, "ab"},
		{[]Lookup{p("a", false, nil), p("b", false, nil)}, "", false, nil, "ab"},
		{[]Lookup{p("a", false, boom), p("b", true, nil)}, "", false, boom, "a"},
		{[]Lookup{p("a", false, ErrDenied), p("b", true, nil)}, "", false, ErrDenied, "a"},
		{nil, "", false, ErrNoProvider, ""},
	} {
		calls = ""
		ha1, found, err := Providers(tt.ls...)("u", "r")
		if ha1 != tt.ha1 || found != tt.found || !errors.Is(err, tt.err) || calls != tt.wantCalls {
			t.Errorf("got %q %v %v calls %q, want %q %v %v calls %q", ha1, found, err, calls, tt.ha1, tt.found, tt.err, tt.wantCalls)
		}
	}
	// ErrNoProvider is a 500 with AH01770.
	s := newTestServer(t, 0)
	cfg := NewConfig("R")
	req := getReq("/x", t0)
	ch := s.Authenticate(&cfg, req, nil)
	c := creds(t, ch.Challenge, "alice", "secret", "R", req, "00000001")
	if r := s.Authenticate(&cfg, withAuth(req, c), nil); r.Status != 500 || r.LogCode() != "AH01770" {
		t.Fatalf("no provider: %+v", r)
	}
}

func TestNewServer(t *testing.T) {
	if _, err := NewServer(Options{Secret: []byte("short")}); err == nil {
		t.Error("short secret accepted")
	}
	if _, err := NewServer(Options{MaxClients: -1}); err == nil {
		t.Error("negative MaxClients accepted")
	}
	a, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewServer(Options{})
	if a.secret == b.secret || a.secret == [SecretLen]byte{} {
		t.Error("random secrets are equal or zero")
	}
	if a.clients.capacity() < DefaultMaxClients {
		t.Errorf("capacity %d", a.clients.capacity())
	}
}

package digest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// The oracle: the same requests to a real Apache 2.4 with mod_auth_digest
// and to an httptest server deciding with this package, for the same
// scopes. The statuses, the challenges (all but the nonce, which is
// signed with each server's secret: opaque numbers, stale, realm, domain,
// order and quoting must be equal), the log codes and the shape of
// Authentication-Info must be the same.

// oracleScope is one <Location> of the oracle's configuration.
type oracleScope struct {
	path       string   // "/plain/"
	directives []string // inside <Location>, besides AuthType Digest
	cfg        func(dir string) Config
	lookup     func(dir string) Lookup
	hack       bool   // AuthDigestEnableQueryStringHack is set
	requireOne string // Require user NAME instead of valid-user
}

func oracleScopes() []oracleScope {
	file := func(dir string) Lookup { return HTDigestFile(filepath.Join(dir, "digest.pw")) }
	conf := func(name string, f func(*Config)) func(string) Config {
		return func(string) Config {
			c := NewConfig(name)
			if f != nil {
				f(&c)
			}
			return c
		}
	}
	return []oracleScope{
		{path: "/plain/", directives: []string{`AuthName "Plain Realm"`}, cfg: conf("Plain Realm", nil), lookup: file},
		{path: "/dom/", directives: []string{`AuthName "Plain Realm"`, `AuthDigestDomain /dom/ http://example.org/x`},
			cfg: conf("Plain Realm", func(c *Config) { c.Domain = []string{"/dom/", "http://example.org/x"} }), lookup: file},
		{path: "/nc/", directives: []string{`AuthName "Plain Realm"`, `AuthDigestNcCheck On`},
			cfg: conf("Plain Realm", func(c *Config) { c.NcCheck = true }), lookup: file},
		{path: "/otn/", directives: []string{`AuthName "Plain Realm"`, `AuthDigestNonceLifetime 0`},
			cfg: conf("Plain Realm", func(c *Config) { c.NonceLifetime = 0 }), lookup: file},
		{path: "/short/", directives: []string{`AuthName "Plain Realm"`, `AuthDigestNonceLifetime 1`},
			cfg: conf("Plain Realm", func(c *Config) { c.NonceLifetime = time.Second }), lookup: file},
		{path: "/forever/", directives: []string{`AuthName "Plain Realm"`, `AuthDigestNonceLifetime -1`, `AuthDigestAlgorithm md5`, `AuthDigestQop AUTH`},
			cfg: conf("Plain Realm", func(c *Config) { c.NonceLifetime = -time.Second }), lookup: file},
		{path: "/quote/", directives: []string{`AuthName "a\"b"`}, cfg: conf(`a"b`, nil), lookup: file},
		{path: "/hack/", directives: []string{`AuthName "Plain Realm"`}, cfg: conf("Plain Realm", nil), lookup: file, hack: true},
		{path: "/nofile/", directives: []string{`AuthName "Plain Realm"`, `AuthUserFile /nonexistent/digest.pw`},
			cfg: conf("Plain Realm", nil), lookup: func(string) Lookup { return HTDigestFile("/nonexistent/digest.pw") }},
		{path: "/noname/", directives: nil, cfg: func(string) Config { return Config{NonceLifetime: DefaultNonceLifetime} }, lookup: file},
		{path: "/two/", directives: []string{`AuthName "Plain Realm"`, `AuthDigestProvider first second`},
			cfg: conf("Plain Realm", func(c *Config) { c.Providers = []string{"first", "second"} }),
			lookup: func(dir string) Lookup {
				return Providers(HTDigestFile(filepath.Join(dir, "first.pw")), HTDigestFile(filepath.Join(dir, "second.pw")))
			}},
		{path: "/authz/", directives: []string{`AuthName "Plain Realm"`}, cfg: conf("Plain Realm", nil), lookup: file, requireOne: "alice"},
	}
}

// writeDigestFile writes an htdigest file of user:realm:password triples.
func writeDigestFile(t testing.TB, name string, entries ...[3]string) {
	t.Helper()
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%s:%s:%s\n", e[0], e[1], HA1(e[0], e[1], e[2]))
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// oracleFiles writes the password files and the document root into dir
// and returns the Apache configuration of the scopes.
func oracleFiles(t testing.TB, dir string, scopes []oracleScope) (docroot, conf string) {
	t.Helper()
	writeDigestFile(t, filepath.Join(dir, "digest.pw"),
		[3]string{"alice", "Plain Realm", "secret"},
		[3]string{"bob", "Plain Realm", "hunter2"},
		[3]string{"carol", `a\"b`, "pw"},
		[3]string{"dave", `a"b`, "pw"})
	// Lines that test how the file is read: comments, white space, runs
	// of colons, a continued line, and a line too long for httpd's
	// buffer, which ends the scan before the last user.
	f, err := os.OpenFile(filepath.Join(dir, "digest.pw"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const pr = "Plain Realm"
	h := func(u string) string { return HA1(u, pr, "pw") }
	fmt.Fprintf(f, "# frank:%s:%s\n\n", pr, h("nobody"))
	fmt.Fprintf(f, "  \tfrank:%s:%s  \r\n", pr, h("frank"))
	fmt.Fprintf(f, "gina::%s:::%s:extra\n", pr, h("gina"))
	fmt.Fprintf(f, "hank:%s:%s\\\n%s\n", pr, h("hank")[:10], h("hank")[10:])
	fmt.Fprintf(f, "x:%s:%s\n", pr, strings.Repeat("a", maxStringLen))
	fmt.Fprintf(f, "ivan:%s:%s\n", pr, h("ivan"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	writeDigestFile(t, filepath.Join(dir, "first.pw"), [3]string{"alice", "Plain Realm", "first"})
	writeDigestFile(t, filepath.Join(dir, "second.pw"),
		[3]string{"alice", "Plain Realm", "second"}, [3]string{"erin", "Plain Realm", "pw"})
	docroot = filepath.Join(dir, "htdocs")
	var b strings.Builder
	fmt.Fprintf(&b, "<AuthnProviderAlias file first>\n    AuthUserFile %q\n</AuthnProviderAlias>\n", filepath.Join(dir, "first.pw"))
	fmt.Fprintf(&b, "<AuthnProviderAlias file second>\n    AuthUserFile %q\n</AuthnProviderAlias>\n", filepath.Join(dir, "second.pw"))
	b.WriteString("SetEnvIf Request_URI ^/hack/ AuthDigestEnableQueryStringHack=1\n")
	for _, sc := range scopes {
		if err := os.MkdirAll(filepath.Join(docroot, sc.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docroot, sc.path, "index.html"), []byte("ok\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "<Location %s>\n    AuthType Digest\n    AuthUserFile %q\n", sc.path, filepath.Join(dir, "digest.pw"))
		for _, d := range sc.directives {
			fmt.Fprintf(&b, "    %s\n", d)
		}
		if sc.requireOne != "" {
			fmt.Fprintf(&b, "    Require user %s\n</Location>\n", sc.requireOne)
		} else {
			b.WriteString("    Require valid-user\n</Location>\n")
		}
	}
	return docroot, b.String()
}

// digestHandler serves the scopes with this package, as the oracle's
// Apache does: the index page when granted.
func digestHandler(t testing.TB, s *Server, dir string, scopes []oracleScope) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sc *oracleScope
		for i := range scopes {
			if strings.HasPrefix(r.URL.Path, scopes[i].path) {
				sc = &scopes[i]
			}
		}
		if sc == nil {
			http.NotFound(w, r)
			return
		}
		host, port, _ := net.SplitHostPort(r.Host)
		p, _ := strconv.Atoi(port)
		auth, has := FieldValue(r.Header)
		req := &Request{Method: r.Method, URI: r.RequestURI, Path: r.URL.Path,
			ServerName: strings.ToLower(host), ServerPort: p, DefaultPort: 80,
			QueryStringHack: sc.hack, Authorization: auth, HasAuthorization: has}
		cfg := sc.cfg(dir)
		res := s.Authenticate(&cfg, req, sc.lookup(dir))
		if res.Status == 200 && sc.requireOne != "" && res.User != sc.requireOne {
			res = s.Challenge(&cfg, req)
		}
		for _, l := range res.Logs {
			w.Header().Add("X-Log-Code", l.Code)
		}
		switch res.Status {
		case 200:
			if rest := strings.TrimPrefix(r.URL.Path, sc.path); rest != "" && rest != "index.html" {
				// As Apache's handler, after authentication; an error
				// response has no Authentication-Info (r->headers_out).
				w.WriteHeader(404)
				return
			}
			w.Header().Set("Authentication-Info", res.AuthInfo)
			io.WriteString(w, "ok\n")
		case 401:
			w.Header().Set("WWW-Authenticate", res.Challenge)
			w.WriteHeader(401)
		default:
			w.WriteHeader(res.Status)
		}
	})
}

// oracleResponse is what the comparison looks at.
type oracleResponse struct {
	status   int
	www      string // WWW-Authenticate
	authInfo string
	codes    []string // the AH codes logged by auth_digest and authn_file
}

// rawDo sends one request with the request-target as written.
func rawDo(addr, method, target, auth string) (oracleResponse, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return oracleResponse{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, target, addr)
	if auth != "" {
		req += "Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		return oracleResponse{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		return oracleResponse{}, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r := oracleResponse{status: resp.StatusCode,
		www:      strings.Join(resp.Header.Values("WWW-Authenticate"), ", "),
		authInfo: resp.Header.Get("Authentication-Info")}
	r.codes = resp.Header.Values("X-Log-Code")
	return r, nil
}

var apacheLogRE = regexp.MustCompile(`\[(auth_digest|authn_file|authn_core):[a-z0-9]+\].*?(AH\d{5})`)

// apacheCodes returns the codes the relevant modules logged in log.
func apacheCodes(log string) []string {
	var codes []string
	for _, m := range apacheLogRE.FindAllStringSubmatch(log, -1) {
		codes = append(codes, m[2])
	}
	return codes
}

var nonceParamRE = regexp.MustCompile(`\b(next)?nonce="([^"]*)"`)

// shape replaces the nonces of a challenge or Authentication-Info, and
// the rspauth, with placeholders, checking that each nonce has the form
// of Apache's (12 base64 characters ending in '=', 40 hex digits).
func shape(t testing.TB, side, v string) string {
	t.Helper()
	v = nonceParamRE.ReplaceAllStringFunc(v, func(m string) string {
		n := nonceParamRE.FindStringSubmatch(m)[2]
		if !regexp.MustCompile(`^[A-Za-z0-9+/]{11}=[0-9a-f]{40}$`).MatchString(n) {
			t.Errorf("%s: malformed nonce %q", side, n)
		}
		return strings.TrimSuffix(m, `"`+n+`"`) + `"N"`
	})
	return regexp.MustCompile(`rspauth="[0-9a-f]{32}"`).ReplaceAllString(v, `rspauth="R"`)
}

// oracleState is what a client remembers between the steps of a
// scenario, for one server.
type oracleState struct {
	addr  string
	ch    string            // the last challenge
	ai    string            // the last Authentication-Info
	saved map[string]string // headers kept by name
}

// oracleStep is one request of a scenario.
type oracleStep struct {
	name   string
	method string
	target string
	// auth returns the Authorization value ("" for none).
	auth  func(t testing.TB, st *oracleState) string
	save  string        // keep the Authorization under this name
	sleep time.Duration // before the request
	want  int           // if set, the status Apache must answer
}

// digestAuth returns a step's auth: a correct client's header for the
// user and password, from the last challenge, changed by mut.
func digestAuth(user, password, realm, uri, nc string, mut func(c *Credentials, st *oracleState)) func(testing.TB, *oracleState) string {
	return func(t testing.TB, st *oracleState) string {
		c := &Credentials{Scheme: "Digest"}
		c.Set(ParamUsername, user)
		c.Set(ParamRealm, realm)
		c.Set(ParamNonce, challengeParam(t, st.ch, "nonce"))
		c.Set(ParamURI, uri)
		c.Set(ParamAlgorithm, "MD5")
		c.Set(ParamCNonce, "Y2xpZW50")
		c.Set(ParamNC, nc)
		c.Set(ParamQOP, "auth")
		if op := challengeParam(t, st.ch, "opaque"); op != "" {
			c.Set(ParamOpaque, op)
		}
		c.sign(HA1(user, realm, password), "GET")
		if mut != nil {
			mut(c, st)
		}
		return c.Encode()
	}
}

func resign(user, realm, password string) func(*Credentials) {
	return func(c *Credentials) { c.sign(HA1(user, realm, password), "GET") }
}

func fixed(h string) func(testing.TB, *oracleState) string {
	return func(testing.TB, *oracleState) string { return h }
}

func saved(name string) func(testing.TB, *oracleState) string {
	return func(_ testing.TB, st *oracleState) string { return st.saved[name] }
}

func oracleScenarios() map[string][]oracleStep {
	const pr = "Plain Realm"
	good := func(uri, nc string) func(testing.TB, *oracleState) string {
		return digestAuth("alice", "secret", pr, uri, nc, nil)
	}
	mut := func(uri string, f func(c *Credentials)) func(testing.TB, *oracleState) string {
		return digestAuth("alice", "secret", pr, uri, "00000001", func(c *Credentials, _ *oracleState) { f(c) })
	}
	challenge := func(target string) oracleStep { return oracleStep{name: "challenge", target: target} }
	return map[string][]oracleStep{
		"plain": {
			challenge("/plain/"),
			{want: 200, name: "good", target: "/plain/", auth: good("/plain/", "00000001"), save: "good"},
			{want: 200, name: "same header again (no nc check)", target: "/plain/", auth: saved("good")},
			{name: "good, nc 2", target: "/plain/", auth: good("/plain/", "00000002")},
			{want: 401, name: "bad password", target: "/plain/", auth: digestAuth("alice", "wrong", pr, "/plain/", "00000001", nil)},
			{name: "unknown user", target: "/plain/", auth: digestAuth("zed", "x", pr, "/plain/", "00000001", nil)},
			{name: "wrong realm", target: "/plain/", auth: digestAuth("alice", "secret", "Other", "/plain/", "00000001", nil)},
			{name: "realm in other case", target: "/plain/", auth: digestAuth("alice", "secret", "plain realm", "/plain/", "00000001", nil)},
			{want: 400, name: "uri mismatch", target: "/plain/", auth: good("/plain/index.html", "00000001")},
			{want: 200, name: "uri escaped", target: "/plain/index.html", auth: good("/plain/%69ndex.html", "00000001")},
			{name: "uri without the query", target: "/plain/?a=b", auth: good("/plain/", "00000001")},
			{name: "uri absolute", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				return good("http://"+st.addr+"/plain/", "00000001")(t, st)
			}},
			{name: "uri absolute, host in capitals", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				return good("HTTP://LOCALHOST"+strings.TrimPrefix(st.addr, "127.0.0.1")+"/plain/", "00000001")(t, st)
			}},
			{name: "uri absolute without port", target: "/plain/", auth: good("http://127.0.0.1/plain/", "00000001")},
			{name: "uri unparsable", target: "/plain/", auth: good("http://127.0.0.1:x/plain/", "00000001")},
			{name: "uri relative with colon", target: "/plain/", auth: good("1:x", "00000001")},
			{name: "missing uri", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Present &^= ParamURI })},
			{name: "missing cnonce", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Present &^= ParamCNonce })},
			{name: "short response", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Response = c.Response[1:] })},
			{name: "uppercase response", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Response = strings.ToUpper(c.Response) })},
			{name: "basic", target: "/plain/", auth: fixed("Basic YWxpY2U6c2VjcmV0")},
			{name: "bare Digest", target: "/plain/", auth: fixed("Digest")},
			{name: "lowercase scheme and keys", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				h := good("/plain/", "00000003")(t, st)
				return "digest " + strings.ReplaceAll(strings.TrimPrefix(h, "Digest "), "username=", "USERNAME=")
			}},
			{name: "tokens, not quoted strings", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				return strings.ReplaceAll(good("/plain/", "00000004")(t, st), `"`, "")
			}},
			{name: "rfc 2069", target: "/plain/", auth: mut("/plain/", func(c *Credentials) {
				c.Present &^= ParamQOP | ParamNC | ParamCNonce
				c.Response = ResponseDigest(HA1("alice", pr, "secret"), c.Nonce, "", "", "", "GET", c.URI)
			})},
			{name: "auth-int", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.QOP = "auth-int"; resign("alice", pr, "secret")(c) })},
			{name: "qop AUTH", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.QOP = "AUTH"; resign("alice", pr, "secret")(c) })},
			{name: "md5-sess", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Algorithm = "MD5-sess" })},
			{name: "algorithm md5", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Algorithm = "md5" })},
			{name: "bad opaque", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Set(ParamOpaque, "zz") })},
			{name: "opaque never issued", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Set(ParamOpaque, "63") })},
			{name: "tampered nonce", target: "/plain/", auth: mut("/plain/", func(c *Credentials) {
				last := "0"
				if c.Nonce[51] == '0' {
					last = "1"
				}
				c.Nonce = c.Nonce[:51] + last
				resign("alice", pr, "secret")(c)
			})},
			{name: "nonce too long", target: "/plain/", auth: mut("/plain/", func(c *Credentials) { c.Nonce += "0"; resign("alice", pr, "secret")(c) })},
			{name: "other method", method: "POST", target: "/plain/", auth: good("/plain/", "00000005")},
			{name: "duplicate username, last wins", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				return strings.Replace(good("/plain/", "00000006")(t, st), "Digest ", `Digest username="bob", `, 1)
			}},
			{name: "second user", target: "/plain/", auth: digestAuth("bob", "hunter2", pr, "/plain/", "00000001", nil)},
			{want: 200, name: "indented user", target: "/plain/", auth: digestAuth("frank", "pw", pr, "/plain/", "00000001", nil)},
			{want: 200, name: "user with colon runs", target: "/plain/", auth: digestAuth("gina", "pw", pr, "/plain/", "00000001", nil)},
			{want: 200, name: "user on a continued line", target: "/plain/", auth: digestAuth("hank", "pw", pr, "/plain/", "00000001", nil)},
			{want: 401, name: "user after a too long line", target: "/plain/", auth: digestAuth("ivan", "pw", pr, "/plain/", "00000001", nil)},
			{name: "escaped target", target: "/plain/%69ndex.html", auth: good("/plain/index.html", "00000001")},
			{want: 404, name: "double-escaped target (decoded twice)", target: "/plain/%2569ndex.html", auth: good("/plain/index.html", "00000001")},
			{name: "escaped query", target: "/plain/?a=%41", auth: good("/plain/?a=A", "00000001")},
			{name: "query differs", target: "/plain/?a=b", auth: good("/plain/?a=c", "00000001")},
			{name: "absolute-form target", target: "/plain/", auth: good("/plain/", "00000001")},
			{name: "absolute-form target, path uri", target: "ABSOLUTE/plain/", auth: good("/plain/", "00000001")},
			{name: "spaces, unknown parameters, quoted commas", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				h := good("/plain/", "00000007")(t, st)
				h = strings.Replace(h, "Digest ", `Digest  foo="a,b\"c", `, 1)
				return strings.ReplaceAll(strings.ReplaceAll(h, `="`, ` = "`), ", ", " ,\t")
			}},
			{name: "unterminated last value", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				h := good("/plain/", "00000008")(t, st)
				c, _ := Parse(h)
				resp := c.Response
				c.Present &^= ParamResponse
				return c.Encode() + `, response="` + resp
			}},
			{name: "bare qop", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				return strings.Replace(good("/plain/", "00000009")(t, st), `qop="auth"`, "qop", 1)
			}},
			{name: "two Authorization fields, joined", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				return good("/plain/", "0000000b")(t, st) + "\r\nAuthorization: Basic eDp5"
			}},
			{name: "two Authorization fields, Basic first", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				return "Basic eDp5\r\nAuthorization: " + good("/plain/", "0000000c")(t, st)
			}},
			{name: "no space after the scheme", target: "/plain/", auth: func(t testing.TB, st *oracleState) string {
				return strings.Replace(good("/plain/", "0000000a")(t, st), "Digest ", "Digest,", 1)
			}},
		},
		"domain": {challenge("/dom/")},
		"nc": {
			challenge("/nc/"),
			{name: "nc 1", target: "/nc/", auth: good("/nc/", "00000001"), save: "nc1"},
			{name: "nc 2", target: "/nc/", auth: good("/nc/", "00000002"), save: "nc2"},
			{want: 401, name: "replay nc 2", target: "/nc/", auth: saved("nc2")},
			{name: "replay nc 1", target: "/nc/", auth: saved("nc1")},
			{want: 200, name: "nc 5 (gap)", target: "/nc/", auth: good("/nc/", "00000005")},
			{name: "nc not hex", target: "/nc/", auth: good("/nc/", "xyz")},
			{name: "nc empty", target: "/nc/", auth: good("/nc/", "")},
			{name: "bad password does not move the count", target: "/nc/", auth: digestAuth("alice", "wrong", pr, "/nc/", "00000009", nil)},
			{name: "nc 6", target: "/nc/", auth: good("/nc/", "00000006")},
			{name: "fresh challenge", target: "/nc/"},
			{name: "new nonce, nc 1", target: "/nc/", auth: good("/nc/", "00000001")},
			{name: "plain nonce (no opaque) here", target: "/plain/"},
			{name: "nonce without opaque", target: "/nc/", auth: good("/nc/", "00000001")},
		},
		"one-time": {
			challenge("/otn/"),
			{name: "first use", target: "/otn/", auth: good("/otn/", "00000001"), save: "first"},
			{want: 401, name: "second use", target: "/otn/", auth: saved("first")},
			{want: 200, name: "nextnonce", target: "/otn/", auth: func(t testing.TB, st *oracleState) string {
				return digestAuth("alice", "secret", pr, "/otn/", "00000002", func(c *Credentials, st *oracleState) {
					c.Nonce = challengeParam(t, "x "+st.ai, "nextnonce")
					resign("alice", pr, "secret")(c)
				})(t, st)
			}},
		},
		"short": {
			challenge("/short/"),
			{name: "good", target: "/short/", auth: good("/short/", "00000001")},
			{want: 401, name: "expired", target: "/short/", auth: good("/short/", "00000002"), sleep: 1200 * time.Millisecond},
		},
		"forever": {
			challenge("/forever/"),
			{name: "good", target: "/forever/", auth: good("/forever/", "00000001")},
		},
		"quote": {
			challenge("/quote/"),
			{want: 401, name: "realm unquoted", target: "/quote/", auth: digestAuth("dave", "pw", `a"b`, "/quote/", "00000001", nil)},
			{want: 200, name: "realm as quoted", target: "/quote/", auth: digestAuth("carol", "pw", `a\"b`, "/quote/", "00000001", nil)},
		},
		"hack": {
			challenge("/hack/"),
			{want: 200, name: "uri without the query", target: "/hack/?a=b", auth: good("/hack/", "00000001")},
			{name: "uri with another query", target: "/hack/?a=b", auth: good("/hack/?a=c", "00000001")},
		},
		"errors": {
			challenge("/nofile/"),
			{want: 500, name: "no password file", target: "/nofile/", auth: good("/nofile/", "00000001")},
			{want: 500, name: "no AuthName", target: "/noname/"},
		},
		"providers": {
			challenge("/two/"),
			{want: 200, name: "first provider decides", target: "/two/", auth: digestAuth("alice", "first", pr, "/two/", "00000001", nil)},
			{name: "not the second's password", target: "/two/", auth: digestAuth("alice", "second", pr, "/two/", "00000001", nil)},
			{want: 200, name: "user of the second", target: "/two/", auth: digestAuth("erin", "pw", pr, "/two/", "00000001", nil)},
		},
		"authz": {
			challenge("/authz/"),
			{name: "allowed user", target: "/authz/", auth: good("/authz/", "00000001")},
			{want: 401, name: "other user", target: "/authz/", auth: digestAuth("bob", "hunter2", pr, "/authz/", "00000001", nil)},
		},
	}
}

// requireDigestModule fails (CI=true) or skips the test without
// mod_auth_digest, as apachetest.Require does without Apache.
func requireDigestModule(t testing.TB, p apachetest.Paths) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(p.ModulesDir, "mod_auth_digest.so")); err != nil {
		if apachetest.CI() {
			t.Fatalf("mod_auth_digest.so: %v (package apache2); CI=true, so this is an error", err)
		}
		t.Skipf("mod_auth_digest.so: %v; skipping (set CI=true to make this an error)", err)
	}
}

func TestAgainstApache(t *testing.T) {
	paths := apachetest.Require(t)
	requireDigestModule(t, paths)
	dir := apachetest.TempDir(t)
	scopes := oracleScopes()
	docroot, conf := oracleFiles(t, dir, scopes)
	apache := apachetest.Start(t, apachetest.Options{DocumentRoot: docroot, Modules: []string{"auth_digest"}, Extra: conf})

	s := newTestServer(t, 0)
	ours := httptest.NewServer(digestHandler(t, s, dir, scopes))
	defer ours.Close()
	oursAddr := strings.TrimPrefix(ours.URL, "http://")

	// The scenarios in a fixed order: client numbers are counted over
	// the whole run, on both sides.
	order := []string{"plain", "domain", "nc", "one-time", "short", "forever", "quote", "hack", "errors", "providers", "authz"}
	sc := oracleScenarios()
	if len(order) != len(sc) {
		t.Fatalf("order lists %d scenarios of %d", len(order), len(sc))
	}
	seen := map[string]bool{} // Apache's statuses, log codes, stale
	for _, name := range order {
		a := &oracleState{addr: apache.Addr, saved: map[string]string{}}
		o := &oracleState{addr: oursAddr, saved: map[string]string{}}
		for i, step := range sc[name] {
			if step.sleep > 0 {
				time.Sleep(step.sleep)
			}
			method := step.method
			if method == "" {
				method = "GET"
			}
			targetA, targetO := step.target, step.target
			if rest, ok := strings.CutPrefix(step.target, "ABSOLUTE"); ok {
				targetA, targetO = "http://"+a.addr+rest, "http://"+o.addr+rest
			}
			var ha, ho string
			if step.auth != nil {
				ha, ho = step.auth(t, a), step.auth(t, o)
			}
			logOff := len(apache.ErrorLog())
			ra, err := rawDo(a.addr, method, targetA, ha)
			if err != nil {
				t.Fatalf("%s/%s: Apache: %v", name, step.name, err)
			}
			ra.codes = apacheCodes(apache.ErrorLog()[logOff:])
			seen[strconv.Itoa(ra.status)] = true
			for _, c := range ra.codes {
				seen[c] = true
			}
			if strings.Contains(ra.www, "stale=true") {
				seen["stale"] = true
			}
			ro, err := rawDo(o.addr, method, targetO, ho)
			if err != nil {
				t.Fatalf("%s/%s: ours: %v", name, step.name, err)
			}
			where := fmt.Sprintf("%s step %d (%s) %s %s\n  apache auth: %s\n  our auth:    %s", name, i, step.name, method, step.target, ha, ho)
			if step.want != 0 && ra.status != step.want {
				t.Errorf("%s\n  Apache answered %d, not %d", where, ra.status, step.want)
			}
			if ra.status != ro.status {
				t.Errorf("%s\n  status: Apache %d, ours %d", where, ra.status, ro.status)
			}
			if sa, so := shape(t, "Apache", ra.www), shape(t, "ours", ro.www); sa != so {
				t.Errorf("%s\n  challenge: Apache %s\n             ours   %s", where, sa, so)
			}
			if sa, so := shape(t, "Apache", ra.authInfo), shape(t, "ours", ro.authInfo); sa != so {
				t.Errorf("%s\n  Authentication-Info: Apache %s\n                       ours   %s", where, sa, so)
			}
			if strings.Join(ra.codes, " ") != strings.Join(ro.codes, " ") {
				t.Errorf("%s\n  logged: Apache %v, ours %v", where, ra.codes, ro.codes)
			}
			for _, side := range []struct {
				st   *oracleState
				r    oracleResponse
				auth string
			}{{a, ra, ha}, {o, ro, ho}} {
				if side.r.www != "" {
					side.st.ch = side.r.www
				}
				if side.r.authInfo != "" {
					side.st.ai = side.r.authInfo
					checkRspauth(t, where, side.r.authInfo, side.auth, step.target)
				}
				if step.save != "" {
					side.st.saved[step.save] = side.auth
				}
			}
			// One-time nonces count issues: the same on both sides.
			if name == "one-time" {
				ta, to := nonceTimes(t, ra.www+ra.authInfo), nonceTimes(t, ro.www+ro.authInfo)
				if fmt.Sprint(ta) != fmt.Sprint(to) {
					t.Errorf("%s\n  one-time nonce counters: Apache %v, ours %v", where, ta, to)
				}
			} else if ra.www != "" {
				// Apache's nonce time is its request time, in
				// microseconds, little-endian: ours is made the same way.
				for _, nt := range nonceTimes(t, ra.www) {
					if d := time.Since(time.UnixMicro(nt)); d < 0 || d > time.Minute {
						t.Errorf("%s\n  Apache's nonce time %v is not its request time", where, time.UnixMicro(nt))
					}
				}
			}
		}
	}

	// The scenarios must keep reaching every outcome they were written
	// for, or the comparison proves less than it seems.
	for _, want := range []string{"200", "400", "401", "500", "stale",
		"AH01773", "AH01780", "AH01774", "AH01776", "AH01778", "AH01779", "AH01781", "AH01782", "AH01783",
		"AH01784", "AH01786", "AH01787", "AH01788", "AH01789", "AH01790", "AH01794", "AH10560", "AH10618", "AH01622"} {
		if !seen[want] {
			t.Errorf("no scenario made Apache answer or log %s", want)
		}
	}
}

// nonceTimes decodes the time parts of the nonces in v.
func nonceTimes(t testing.TB, v string) []int64 {
	var ts []int64
	for _, m := range nonceParamRE.FindAllStringSubmatch(v, -1) {
		if len(m[2]) != nonceLen {
			continue
		}
		s := &Server{}
		tm, _, _ := s.verifyNonce(m[2], "", "")
		ts = append(ts, tm)
	}
	return ts
}

// checkRspauth checks the rspauth of an Authentication-Info against RFC
// 2617 for the request's credentials.
func checkRspauth(t testing.TB, where, ai, auth, target string) {
	t.Helper()
	c, st := Parse(auth)
	if st != Valid {
		t.Errorf("%s: Authentication-Info for an invalid header", where)
		return
	}
	users := map[string]string{"alice": "secret", "bob": "hunter2"}
	pw, ok := users[c.Username]
	if !ok {
		pw = "pw"
	}
	if strings.HasPrefix(target, "/two/") && c.Username == "alice" {
		pw = "first"
	}
	want := rspauth(HA1(c.Username, c.Realm, pw), c.Nonce, c.NC, c.CNonce, c.QOP, c.URI)
	if got := challengeParam(t, "x "+ai, "rspauth"); got != want {
		t.Errorf("%s\n  rspauth %s, want %s (%s)", where, got, want, ai)
	}
}

// TestDirectivesAgainstApache checks that Config.Set accepts what Apache
// accepts in a <Location>, and refuses the rest with Apache's message.
func TestDirectivesAgainstApache(t *testing.T) {
	paths := apachetest.Require(t)
	requireDigestModule(t, paths)
	dir := apachetest.TempDir(t)
	lines := []struct {
		directive string
		args      []string
	}{
		{"AuthDigestQop", []string{"auth"}},
		{"AuthDigestQop", []string{"AUTH", "auth"}},
		{"AuthDigestQop", []string{"none"}},
		{"AuthDigestQop", []string{"auth-int"}},
		{"AuthDigestQop", []string{"auth", "auth-int"}},
		{"AuthDigestAlgorithm", []string{"MD5"}},
		{"AuthDigestAlgorithm", []string{"md5"}},
		{"AuthDigestAlgorithm", []string{"MD5-sess"}},
		{"AuthDigestAlgorithm", []string{"SHA-256"}},
		{"AuthDigestNonceLifetime", []string{"300"}},
		{"AuthDigestNonceLifetime", []string{"-1"}},
		{"AuthDigestNonceLifetime", []string{"0"}},
		{"AuthDigestNonceLifetime", []string{"10s"}},
		{"AuthDigestNonceLifetime", []string{"ten"}},
		{"AuthDigestNonceLifetime", []string{"12 seconds"}},
		{"AuthDigestNcCheck", []string{"On"}},
		{"AuthDigestNcCheck", []string{"off"}},
		{"AuthDigestNcCheck", []string{"yes"}},
		{"AuthDigestDomain", []string{"/a/", "http://b/c"}},
		{"AuthDigestProvider", []string{"file"}},
		{"AuthDigestNonceFormat", []string{"x"}},
	}
	for i, l := range lines {
		line := l.directive
		for _, a := range l.args {
			line += fmt.Sprintf(" %q", a)
		}
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			checkDirective(t, paths, filepath.Join(dir, strconv.Itoa(i)), line, l.directive, l.args)
		})
	}
}

// checkDirective runs apache2 -t on a configuration with line in a
// <Location> and compares its verdict with Config.Set's.
func checkDirective(t *testing.T, paths apachetest.Paths, dir, line, directive string, args []string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cf := filepath.Join(dir, "t.conf")
	conf := fmt.Sprintf("ServerRoot %q\nServerName 127.0.0.1\nListen 127.0.0.1:1\nPidFile %q\nErrorLog %q\n"+
		"LoadModule mpm_event_module %q\nLoadModule authn_core_module %q\nLoadModule authn_file_module %q\nLoadModule auth_digest_module %q\n"+
		"<Location />\n%s\n</Location>\n", dir, filepath.Join(dir, "pid"), filepath.Join(dir, "error.log"),
		filepath.Join(paths.ModulesDir, "mod_mpm_event.so"), filepath.Join(paths.ModulesDir, "mod_authn_core.so"),
		filepath.Join(paths.ModulesDir, "mod_authn_file.so"), filepath.Join(paths.ModulesDir, "mod_auth_digest.so"), line)
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(paths.Apache, "-t", "-f", cf).CombinedOutput()
	apacheOK := err == nil
	var c Config
	ourErr := c.Set(directive, args...)
	if directive == "AuthDigestNonceFormat" {
		// Removed from 2.4.71: Apache does not know it at all.
		if apacheOK || ourErr == nil {
			t.Errorf("%s: Apache ok %v, ours %v", line, apacheOK, ourErr)
		}
		return
	}
	switch {
	case apacheOK != (ourErr == nil):
		t.Errorf("%s: Apache ok %v (%s), ours %v", line, apacheOK, out, ourErr)
	case ourErr != nil && !strings.Contains(string(out), ourErr.Error()):
		t.Errorf("%s: Apache says %s, ours %q", line, out, ourErr)
	}
}

package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

func TestValidGuardToken(t *testing.T) {
	for _, tt := range []struct {
		tok string
		ok  bool
	}{
		{"0123456789abcdef", true},
		{"q8J+/f3=._~-AZaz09xx", true},
		{"0123456789abcde", false},                     // too short
		{"0123456789abcdef'", false},                   // would end the ap_expr string
		{"0123456789 abcdef", false},                   // space
		{"0123456789abcdef\"", false},                  // would end the Apache argument
		{"0123456789abcdef\\", false},                  // escape
		{"0123456789abcdef\r\nX-Evil: 1", false},       // header injection
		{"0123456789abcdef\u00e9", false},              // not ASCII
		{strings.Repeat("a", 64) + "%{HTTP:x}", false}, // ap_expr variable
	} {
		if err := ValidGuardToken(tt.tok); (err == nil) != tt.ok {
			t.Errorf("ValidGuardToken(%q) = %v, want ok=%v", tt.tok, err, tt.ok)
		}
	}
}

func TestGuardConfig(t *testing.T) {
	p := func(s ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, x := range s {
			out = append(out, netip.MustParsePrefix(x))
		}
		return out
	}
	got, err := GuardConfig(GuardOptions{
		Orderly:        p("10.0.0.5/32", "2001:db8::5/128", "10.42.0.0/16"),
		TrustedProxies: p("10.9.0.0/16"),
		Token:          "0123456789abcdef0123",
		ModulesDir:     "/opt/httpd/modules/",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`LoadModule remoteip_module "/opt/httpd/modules/mod_remoteip.so"`,
		"<IfModule !remoteip_module>",
		"RemoteIPHeader X-Forwarded-For\n",
		"RemoteIPInternalProxy 10.0.0.5 2001:db8::5 10.42.0.0/16 10.9.0.0/16\n",
		`<If "!(%{CONN_REMOTE_ADDR} -ipmatch '10.0.0.5/32' || %{CONN_REMOTE_ADDR} -ipmatch '2001:db8::5/128' || %{CONN_REMOTE_ADDR} -ipmatch '10.42.0.0/16') || req_novary('X-Orderly-Guard') != '0123456789abcdef0123'">`,
		`<If "%{REQUEST_URI} == '/orderly-guard-probe' && -R '192.0.2.1'">`,
		"        Satisfy All\n",
		"    Require all denied\n",
		"keep it readable by root only",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("guard lacks %q:\n%s", want, got)
		}
	}
	// A proxy in front of orderly is believed, never allowed to connect.
	if strings.Contains(got, "10.9.0.0/16'") {
		t.Errorf("a trusted proxy may connect:\n%s", got)
	}
	noTok, err := GuardConfig(GuardOptions{Orderly: p("10.0.0.5/32")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(noTok, "req_novary") || strings.Contains(noTok, "root only") || !strings.Contains(noTok, `"/usr/lib/apache2/modules/mod_remoteip.so"`) {
		t.Errorf("guard without token:\n%s", noTok)
	}
	for _, bad := range []GuardOptions{
		{},
		{Orderly: p("10.0.0.5/32"), Token: "short"},
		{Orderly: p("10.0.0.5/32"), ModulesDir: `/x"y`},
	} {
		if _, err := GuardConfig(bad); err == nil {
			t.Errorf("GuardConfig(%+v): no error", bad)
		}
	}
}

// TestGuardHeaderForwarded: orderly sends its token with every request it
// forwards, and a client's own copy of the header never reaches the
// backend, with a token configured or not.
func TestGuardHeaderForwarded(t *testing.T) {
	var mu sync.Mutex
	var seen [][]string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Values(GuardHeader))
		mu.Unlock()
	}))
	defer backend.Close()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docroot"), 0o755)
	os.WriteFile(filepath.Join(dir, "docroot", "index.html"), nil, 0o644) // "/" is served, not refused by Options (no Indexes)
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("# no rules: everything is forwarded\n"), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: filepath.Join(dir, "docroot")}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(backend.URL)
	for _, tok := range []string{"", "0123456789abcdef0123"} {
		seen = nil
		for _, mode := range []Mode{ModeEnforce, ModeShadow} {
			h := New(Config{Backend: u, GuardToken: tok, Mode: mode}, walk.New(cfg, walk.OS, NewIdentity()))
			front := httptest.NewServer(h)
			req, _ := http.NewRequest("GET", front.URL+"/", nil)
			req.Header.Add(GuardHeader, "client-made-up-token-123")
			req.Header.Add(GuardHeader, tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			front.Close()
		}
		want := "[]"
		if tok != "" {
			want = "[" + tok + "]"
		}
		for i, s := range seen {
			if got := "[" + strings.Join(s, " ") + "]"; got != want {
				t.Errorf("token %q, request %d: backend saw %s %s, want %s", tok, i, GuardHeader, got, want)
			}
		}
		if len(seen) != 2 {
			t.Errorf("token %q: %d requests reached the backend, want 2", tok, len(seen))
		}
	}
}

// fakeBackend answers the probe as a backend with or without the guard
// would; the real thing is tested in internal/differential.
type fakeBackend struct {
	guard, token, tokenWanted string
}

func (f fakeBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client := r.Header.Get("X-Forwarded-For")
	switch {
	case f.guard == "refuse-all":
		w.WriteHeader(403)
	case f.guard == "" || f.guard == "ip-only":
		if f.guard == "ip-only" && r.URL.Path == GuardProbePath && client == GuardProbeClient {
			w.WriteHeader(403)
			return
		}
		w.WriteHeader(404)
	case r.Header.Get(GuardHeader) != f.tokenWanted:
		w.WriteHeader(403)
	case r.URL.Path == GuardProbePath && client == GuardProbeClient:
		w.WriteHeader(403)
	default:
		w.WriteHeader(404)
	}
}

func TestProbeGuard(t *testing.T) {
	const tok = "0123456789abcdef0123"
	for _, tt := range []struct {
		name     string
		backend  fakeBackend
		token    string
		ok       bool
		problems []string
	}{
		{"no guard, no token", fakeBackend{}, "", false, []string{"does not use the client address", "guard_token_file is not set"}},
		{"no guard, token", fakeBackend{}, tok, false, []string{"does not use the client address", "answered 404 to a request without orderly's guard token"}},
		{"guard by address only", fakeBackend{guard: "ip-only"}, "", false, []string{"guard_token_file is not set"}},
		{"guard with token", fakeBackend{guard: "token", tokenWanted: tok}, tok, true, nil},
		{"guard wants another token", fakeBackend{guard: "token", tokenWanted: tok + "x"}, tok, false, []string{"refuses orderly's own requests (403"}},
		{"backend refuses everything", fakeBackend{guard: "refuse-all"}, tok, false, []string{"refuses orderly's own requests"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.backend)
			defer srv.Close()
			u, _ := url.Parse(srv.URL)
			r, err := ProbeGuard(context.Background(), u, tt.token, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() != tt.ok {
				t.Errorf("OK() = %v, want %v (%+v)", r.OK(), tt.ok, r)
			}
			probs := r.Problems()
			if len(probs) != len(tt.problems) {
				t.Fatalf("problems %q, want %d matching %q", probs, len(tt.problems), tt.problems)
			}
			for i, p := range probs {
				if !strings.Contains(p, tt.problems[i]) {
					t.Errorf("problem %d: %q, want it to contain %q", i, p, tt.problems[i])
				}
			}
			m := NewMetrics(nil)
			m.GuardChecked(r)
			want := map[bool]float64{true: 1, false: 0}[tt.ok]
			if got := testutil.ToFloat64(m.guardOK); got != want {
				t.Errorf("orderly_backend_guard_ok = %v, want %v", got, want)
			}
		})
	}
	// A backend that cannot be reached is an error, not a verdict.
	srv := httptest.NewServer(fakeBackend{})
	u, _ := url.Parse(srv.URL)
	srv.Close()
	if _, err := ProbeGuard(context.Background(), u, tok, nil); err == nil {
		t.Error("probe of a closed port: no error")
	}
}

package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderly-proxy/orderly/translate/walk"
)

// serveRig is a Handler over the private directory privateDir makes, in
// front of a backend that records what it saw, with both logs kept.
type serveRig struct {
	h              *Handler
	errlog, access bytes.Buffer

	mu   sync.Mutex
	seen []*http.Request
}

func newServeRig(t *testing.T, directives string, cfg Config) *serveRig {
	t.Helper()
	rig := &serveRig{}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.mu.Lock()
		rig.seen = append(rig.seen, r.Clone(context.Background()))
		rig.mu.Unlock()
		io.WriteString(w, "backend")
	}))
	t.Cleanup(backend.Close)
	c, _ := privateDir(t, directives)
	if cfg.Backend == nil {
		cfg.Backend, _ = url.Parse(backend.URL)
	} else {
		u, _ := url.Parse(backend.URL)
		cfg.Backend.Host = u.Host
	}
	if cfg.TrustedProxies == nil {
		cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.9.0.0/16")}
	}
	cfg.ErrorLog, cfg.AccessLog = &rig.errlog, &rig.access
	rig.h = New(cfg, walk.New(c, walk.OS, NewIdentity()))
	return rig
}

// do serves r directly (no listener), from peer.
func (rig *serveRig) do(r *http.Request, peer string) *httptest.ResponseRecorder {
	r.RemoteAddr = peer
	w := httptest.NewRecorder()
	rig.h.ServeHTTP(w, r)
	return w
}

func (rig *serveRig) last() *http.Request {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	if len(rig.seen) == 0 {
		return nil
	}
	return rig.seen[len(rig.seen)-1]
}

// The client address decides as mod_remoteip makes it: the right-most
// X-Forwarded-For hop that is not a trusted proxy, read only from a
// trusted peer; a hop a trusted peer sent that is no address is refused
// (400), logged with no client.
func TestServeClientAddress(t *testing.T) {
	rig := newServeRig(t, "Order deny,allow\nDeny from all\nAllow from 10.1.2.3 2001:db8::7\n", Config{})
	tests := []struct {
		name    string
		peer    string
		xff     []string
		status  int
		client  string // the access log's first field
		backend string // X-Forwarded-For at the backend ("" not reached)
	}{
		{"trusted peer, client hop", "127.0.0.1:4000", []string{"10.1.2.3"}, 200, "10.1.2.3", "10.1.2.3, 127.0.0.1"},
		{"trusted peer and hop skipped", "127.0.0.1:4000", []string{"198.51.100.1, 10.1.2.3, 10.9.0.1"}, 200, "10.1.2.3", "198.51.100.1, 10.1.2.3, 10.9.0.1, 127.0.0.1"},
		{"the right-most untrusted hop decides", "127.0.0.1:4000", []string{"10.1.2.3, 198.51.100.1"}, 403, "198.51.100.1", ""},
		{"two header lines", "127.0.0.1:4000", []string{"10.1.2.3", "10.9.3.3"}, 200, "10.1.2.3", "10.1.2.3, 10.9.3.3, 127.0.0.1"},
		{"untrusted peer: header ignored", "198.51.100.1:4000", []string{"10.1.2.3"}, 403, "198.51.100.1", ""},
		{"untrusted peer, its own address", "10.1.2.3:4000", []string{"198.51.100.1"}, 200, "10.1.2.3", "10.1.2.3"},
		{"trusted peer, no header", "127.0.0.1:4000", nil, 403, "127.0.0.1", ""},
		{"IPv6 hop", "127.0.0.1:4000", []string{"2001:db8::7"}, 200, "2001:db8::7", "2001:db8::7, 127.0.0.1"},
		{"hop with a port", "127.0.0.1:4000", []string{"10.1.2.3:80"}, 400, "-", ""},
		{"garbage hop behind a good one", "127.0.0.1:4000", []string{"garbage, 10.1.2.3"}, 200, "10.1.2.3", "garbage, 10.1.2.3, 127.0.0.1"},
		{"garbage hop after trusted ones", "127.0.0.1:4000", []string{"garbage, 10.9.0.1"}, 400, "-", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig.access.Reset()
			rig.mu.Lock()
			rig.seen = nil
			rig.mu.Unlock()
			r := httptest.NewRequest("GET", "/private/a.txt", nil)
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			w := rig.do(r, tt.peer)
			if w.Code != tt.status {
				t.Errorf("status %d, want %d", w.Code, tt.status)
			}
			line := rig.access.String()
			if !strings.HasPrefix(line, tt.client+" - - [") || !strings.Contains(line, `"GET /private/a.txt HTTP/1.1" `+strconv.Itoa(tt.status)+" ") || strings.Count(line, "\n") != 1 {
				t.Errorf("access log %q, want one line for %s with %d", line, tt.client, tt.status)
			}
			got := rig.last()
			switch {
			case tt.backend == "" && got != nil:
				t.Errorf("the backend saw a request refused with %d", w.Code)
			case tt.backend != "" && got == nil:
				t.Error("the backend saw nothing")
			case tt.backend != "" && got.Header.Get("X-Forwarded-For") != tt.backend:
				t.Errorf("X-Forwarded-For at the backend %q, want %q", got.Header.Get("X-Forwarded-For"), tt.backend)
			}
		})
	}
}

// What serve hands the decision besides the address: whether an
// Authorization header came (none is not a wrong scheme: no AH01614),
// the address the client connected to (Require local), and the resolver
// (host rules).
func TestServeRequestFacts(t *testing.T) {
	t.Run("no Authorization", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "users"), []byte("alice:{SHA}"+sha1b64("ok")+"\n"), 0o644)
		rig := newServeRig(t, "AuthType Basic\nAuthName zone\nAuthUserFile "+filepath.Join(dir, "users")+"\nRequire valid-user\n", Config{})
		w := rig.do(httptest.NewRequest("GET", "/private/a.txt", nil), "198.51.100.1:4000")
		if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Basic realm="zone"` {
			t.Errorf("%d %q, want 401 with a challenge", w.Code, w.Header().Get("WWW-Authenticate"))
		}
		if strings.Contains(rig.errlog.String(), "AH01614") {
			t.Errorf("no credentials logged as a wrong scheme: %s", rig.errlog.String())
		}
		r := httptest.NewRequest("GET", "/private/a.txt", nil)
		r.Header.Set("Authorization", "Bearer x")
		if w := rig.do(r, "198.51.100.1:4000"); w.Code != 401 || !strings.Contains(rig.errlog.String(), "AH01614") {
			t.Errorf("Bearer: %d, log %q, want 401 and AH01614", w.Code, rig.errlog.String())
		}
	})
	t.Run("Require local", func(t *testing.T) {
		rig := newServeRig(t, "Require local\n", Config{TrustedProxies: []netip.Prefix{}})
		for _, tt := range []struct {
			local, peer string
			status      int
		}{
			{"192.0.2.10:8080", "192.0.2.10:4000", 200},
			{"[::ffff:192.0.2.10]:8080", "192.0.2.10:4000", 200},
			{"192.0.2.10:8080", "192.0.2.11:4000", 403},
			{"192.0.2.10:8080", "127.0.0.1:4000", 200},
		} {
			r := httptest.NewRequest("GET", "/private/a.txt", nil)
			la, _ := net.ResolveTCPAddr("tcp", tt.local)
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, la))
			if w := rig.do(r, tt.peer); w.Code != tt.status {
				t.Errorf("local %s, peer %s: %d, want %d", tt.local, tt.peer, w.Code, tt.status)
			}
		}
	})
	t.Run("host rules", func(t *testing.T) {
		dir := t.TempDir()
		hosts := filepath.Join(dir, "hosts")
		os.WriteFile(hosts, []byte("192.0.2.1 web.example.test\n"), 0o644)
		res := NewResolver("", time.Second)
		res.hostsPath, res.r = hosts, nil
		const conf = "Order deny,allow\nDeny from all\nAllow from .example.test\n"
		with := newServeRig(t, conf, Config{Resolver: res})
		if w := with.do(httptest.NewRequest("GET", "/private/a.txt", nil), "192.0.2.1:4000"); w.Code != 200 {
			t.Errorf("a client named by the resolver: %d, want 200", w.Code)
		}
		without := newServeRig(t, conf, Config{})
		if w := without.do(httptest.NewRequest("GET", "/private/a.txt", nil), "192.0.2.1:4000"); w.Code != 403 {
			t.Errorf("no resolver: %d, want 403", w.Code)
		}
	})
}

// The backend's own path prefix goes before the path orderly decided on.
func TestRewriteBackendPath(t *testing.T) {
	for _, prefix := range []string{"/app", "/app/"} {
		rig := newServeRig(t, "Require all granted\n", Config{Backend: &url.URL{Scheme: "http", Path: prefix}})
		rig.do(httptest.NewRequest("GET", "/private/a%20b.txt?x=1", nil), "198.51.100.1:4000")
		got := rig.last()
		if got == nil || got.RequestURI != "/app/private/a%20b.txt?x=1" || got.URL.Path != "/app/private/a b.txt" {
			t.Errorf("backend %s: saw %v", prefix, got)
		}
	}
}

// badForm on its own: what Apache answers 400 before access control,
// the requests Go's server never hands a handler included.
func TestBadFormCases(t *testing.T) {
	tests := []struct {
		name   string
		target string
		proto  string
		method string
		host   string
		tls    bool
		bad    bool
	}{
		{"origin form", "/a", "HTTP/1.1", "GET", "h.test", false, false},
		{"absolute http on plain", "http://h.test/a", "HTTP/1.1", "GET", "h.test", false, false},
		{"absolute https on plain", "https://h.test/a", "HTTP/1.1", "GET", "h.test", false, true},
		{"absolute http under TLS", "http://h.test/a", "HTTP/1.1", "GET", "h.test", true, true},
		{"absolute https under TLS", "https://h.test/a", "HTTP/1.1", "GET", "h.test", true, false},
		{"ftp", "ftp://h.test/a", "HTTP/1.1", "GET", "h.test", false, true},
		{"HTTP/1.1 empty Host", "/a", "HTTP/1.1", "GET", "", false, true},
		{"HTTP/1.1 empty Host, POST", "/a", "HTTP/1.1", "POST", "", false, true},
		{"HTTP/1.0 empty Host", "/a", "HTTP/1.0", "GET", "", false, false},
		{"CONNECT empty Host", "/a", "HTTP/1.1", "CONNECT", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, nil)
			r.Proto, r.ProtoMajor, r.ProtoMinor = tt.proto, 1, int(tt.proto[len(tt.proto)-1]-'0')
			r.Host = tt.host
			r.TLS = nil
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := badForm(r); got != tt.bad {
				t.Errorf("badForm = %v, want %v", got, tt.bad)
			}
		})
	}
}

// A refusal carries a Location for the redirect statuses (300 to 399)
// and for no other.
func TestRedirectStatusRange(t *testing.T) {
	f := newLimitsFront(t, "Redirect 300 /m300 /x\nRedirect 399 /m399 /y\nRedirect 301 /m301 /z\nRedirect 410 /gone\n")
	for _, tt := range []struct {
		path   string
		status int
		loc    string
	}{
		{"/m300", 300, "http://h/x"},
		{"/m301", 301, "http://h/z"},
		{"/m399", 399, "http://h/y"},
		{"/gone", 410, ""},
	} {
		if st, loc := f.raw(t, "GET "+tt.path+" HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"); st != tt.status || loc != tt.loc {
			t.Errorf("%s: %d %q, want %d %q", tt.path, st, loc, tt.status, tt.loc)
		}
	}
}

// Shadow mode compares orderly's decision with the status the backend
// answered: a backend that refuses what orderly would refuse agrees.
func TestShadowComparesBackendStatus(t *testing.T) {
	for _, tt := range []struct {
		backend int
		want    float64
	}{
		{http.StatusForbidden, 0},
		{http.StatusOK, 1},
	} {
		backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tt.backend)
		}))
		defer backend.Close()
		cfg, _ := privateDir(t, "Order deny,allow\nDeny from all\n")
		u, _ := url.Parse(backend.URL)
		m := NewMetrics(nil)
		h := New(Config{Backend: u, Metrics: m, Mode: ModeShadow}, walk.New(cfg, walk.OS, NewIdentity()))
		r := httptest.NewRequest("GET", "/private/a.txt", nil)
		r.RemoteAddr = "198.51.100.1:4000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.backend {
			t.Errorf("backend %d: answered %d", tt.backend, w.Code)
		}
		if n := disagreements(t, m); n != tt.want {
			t.Errorf("backend %d: %v disagreements, want %v", tt.backend, n, tt.want)
		}
	}
}

// With every backend down, requests get 502 at once, and the error is
// logged once a second at most, with the 502s answered since the last
// line.
func TestNoBackendLogThrottled(t *testing.T) {
	cfg, _ := privateDir(t, "Require all granted\n")
	var logbuf bytes.Buffer
	m := NewMetrics(nil)
	h := New(Config{Pool: NewPool(nil, HealthCheck{}), Metrics: m, Logger: slog.New(slog.NewTextHandler(&logbuf, nil))}, walk.New(cfg, walk.OS, NewIdentity()))
	get := func() {
		t.Helper()
		r := httptest.NewRequest("GET", "/private/a.txt", nil)
		r.RemoteAddr = "198.51.100.1:4000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusBadGateway {
			t.Fatalf("no backend: %d, want 502", w.Code)
		}
	}
	lines := func() []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(logbuf.String()), "\n") {
			if strings.Contains(l, "no backend available") {
				out = append(out, l[strings.Index(l, "requests_answered_502="):])
			}
		}
		return out
	}
	for range 3 {
		get()
	}
	if got := lines(); len(got) != 1 || got[0] != "requests_answered_502=1" {
		t.Fatalf("three 502s within a second logged %q, want one line for the first", got)
	}
	// A second later (the last line's time moved back), the next 502 is
	// logged with the two not logged before it.
	h.noBackendLog.Add(-int64(2 * time.Second))
	get()
	if got := lines(); len(got) != 2 || got[1] != "requests_answered_502=3" {
		t.Errorf("a 502 a second later logged %q, want a second line for 3", got)
	}
	if v := testutil.ToFloat64(m.backend); v != 4 {
		t.Errorf("backend errors counted %v, want 4", v)
	}
}

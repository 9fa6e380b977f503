package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// securityFront runs orderly on conf (@ROOT@ is the document root, which
// holds admin/secret.html and index.html) in front of a backend recording
// the request targets it saw, with passive failure detection on.
func securityFront(t *testing.T, conf string) (addr string, seen func() []string) {
	t.Helper()
	var mu sync.Mutex
	var targets []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		targets = append(targets, r.RequestURI)
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	t.Cleanup(backend.Close)
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	os.MkdirAll(filepath.Join(root, "admin"), 0o755)
	os.WriteFile(filepath.Join(root, "admin", "secret.html"), []byte("secret"), 0o644)
	os.WriteFile(filepath.Join(root, "index.html"), []byte("public"), 0o644)
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte(strings.ReplaceAll(conf, "@ROOT@", root)), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(backend.URL)
	pool := NewPool([]*url.URL{u}, HealthCheck{})
	h := New(Config{Pool: pool, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, walk.New(cfg, walk.OS, NewIdentity()))
	front := httptest.NewServer(h)
	t.Cleanup(front.Close)
	return front.Listener.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), targets...)
	}
}

// raw sends a raw request and returns the status of the answer (0 when
// none came).
func raw(t *testing.T, addr, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDoubleEncodedSlash: with AllowEncodedSlashes On, Apache decodes
// "%252F" once, to a literal "%2F" in the name of a file it looks for; the
// backend must be sent that name ("%252F"), not "%2F", which it would
// decode again into a slash and serve the protected file.
func TestDoubleEncodedSlash(t *testing.T) {
	addr, seen := securityFront(t, `AllowEncodedSlashes On
<Directory "@ROOT@/admin">
    Order deny,allow
    Deny from all
</Directory>
`)
	for _, tt := range []struct {
		target string
		status int
		sent   string // what the backend saw, "" for nothing
	}{
		{"/admin%2Fsecret.html", 403, ""},
		{"/admin%252Fsecret.html", 200, "/admin%252Fsecret.html"},
		{"/admin%252fsecret.html", 200, "/admin%252fsecret.html"},
		{"/pub%252F..%252Fadmin%252Fsecret.html", 200, "/pub%252F..%252Fadmin%252Fsecret.html"},
	} {
		before := len(seen())
		st := raw(t, addr, "GET "+tt.target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		got := seen()[before:]
		if st != tt.status || tt.sent == "" && len(got) != 0 || tt.sent != "" && (len(got) != 1 || got[0] != tt.sent) {
			t.Errorf("%s: %d, backend saw %q; want %d, %q", tt.target, st, got, tt.status, tt.sent)
		}
	}
}

// TestEncodedSlashNoDecode: with AllowEncodedSlashes NoDecode, Apache keeps
// "%2F" and reads "%252F" as the same name; the backend gets "%2F" as sent.
func TestEncodedSlashNoDecode(t *testing.T) {
	addr, seen := securityFront(t, "AllowEncodedSlashes NoDecode\n")
	for _, target := range []string{"/admin%2Fsecret.html", "/admin%252Fsecret.html"} {
		before := len(seen())
		st := raw(t, addr, "GET "+target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if got := seen()[before:]; st != 200 || len(got) != 1 || got[0] != "/admin%2Fsecret.html" {
			t.Errorf("%s: %d, backend saw %q; want 200, /admin%%2Fsecret.html", target, st, got)
		}
	}
}

// TestClientBodyFault: a request body the client botched (a chunk size
// that overflows) is the client's fault: 400, and the backend stays in
// service. Before, the transport error marked the only backend down, and
// every client got 502 for fail_timeout.
func TestClientBodyFault(t *testing.T) {
	addr, seen := securityFront(t, "")
	st := raw(t, addr, "POST /index.html HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n100000000000000005\r\nhello\r\n0\r\n\r\n")
	if st != 400 {
		t.Errorf("overflowing chunk size: %d, want 400", st)
	}
	for i := range 3 {
		if st := raw(t, addr, "GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); st != 200 {
			t.Fatalf("request %d after the bad body: %d, want 200 (backend taken out of service); backend saw %q", i, st, seen())
		}
	}
}

// TestBadForm: requests Apache reads otherwise than Go's server, refused.
func TestBadForm(t *testing.T) {
	addr, seen := securityFront(t, "")
	for _, tt := range []struct {
		req    string
		status int
	}{
		{"GET https://a.example/index.html HTTP/1.1\r\nHost: b.example\r\n", 400},
		{"GET ftp://a.example/index.html HTTP/1.1\r\nHost: b.example\r\n", 400},
		{"GET http://a.example/index.html HTTP/1.1\r\nHost: b.example\r\n", 200},
		{"GET HTTP://a.example/index.html HTTP/1.1\r\nHost: b.example\r\n", 200},
		{"GET /index.html HTTP/1.1\r\nHost: \r\n", 400},
		{"GET /index.html HTTP/1.0\r\n", 200},
		{"GET /index.html HTTP/1.1\r\nHost: a.example\r\n", 200},
	} {
		before := len(seen())
		st := raw(t, addr, tt.req+"Connection: close\r\n\r\n")
		reached := len(seen()) > before
		if st != tt.status || reached != (tt.status == 200) {
			t.Errorf("%q: %d (backend reached: %v), want %d", tt.req, st, reached, tt.status)
		}
	}
}

// An upgrade to anything but WebSocket is not passed on: an h2c tunnel
// would carry requests to the backend that orderly never decides.
func TestUpgradeOnlyWebSocket(t *testing.T) {
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Upgrade")+"|"+r.Header.Get("Connection"))
		io.WriteString(w, "ok")
	}))
	defer backend.Close()
	cfg, _ := privateDir(t, "Order allow,deny\nAllow from all\n")
	u, _ := url.Parse(backend.URL)
	h := New(Config{Backend: u}, walk.New(cfg, walk.OS, NewIdentity()))
	front := httptest.NewServer(h)
	defer front.Close()
	for _, up := range []string{"h2c", "websocket"} {
		req, _ := http.NewRequest("GET", front.URL+"/private/a.txt", nil)
		req.Header.Set("Connection", "Upgrade, HTTP2-Settings")
		req.Header.Set("Upgrade", up)
		req.Header.Set("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(seen) != 2 || seen[0] != "|" || seen[1] != "websocket|Upgrade" {
		t.Errorf("the backend saw Upgrade|Connection %q, want none for h2c and websocket|Upgrade", seen)
	}
}

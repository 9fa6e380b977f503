package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
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

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// limitsFront is orderly in front of a backend that reads every body
// (as Apache's default handler discards it) and records what it read.
type limitsFront struct {
	url     string
	errlog  *bytes.Buffer
	mu      sync.Mutex
	got     []int64  // bytes the backend read, per request
	cases   []string // the X-Case field of each
	backend *httptest.Server
}

func newLimitsFront(t *testing.T, conf string) *limitsFront {
	t.Helper()
	return newLimitsFrontWith(t, conf, nil)
}

// newLimitsFrontWith is newLimitsFront with the Config edited by edit
// (when not nil) before the Handler is made.
func newLimitsFrontWith(t *testing.T, conf string, edit func(*Config)) *limitsFront {
	t.Helper()
	f := &limitsFront{errlog: &bytes.Buffer{}}
	f.backend = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.got = append(f.got, n)
		f.cases = append(f.cases, r.Header.Get("X-Case"))
		f.mu.Unlock()
		io.WriteString(w, "ok")
	}))
	t.Cleanup(f.backend.Close)
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	for _, d := range []string{"private", "open"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
		os.WriteFile(filepath.Join(root, d, "a.html"), []byte("x"), 0o644)
	}
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte(strings.ReplaceAll(conf, "@DOCROOT@", root)), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(f.backend.URL)
	c := Config{Backend: u, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, ErrorLog: f.errlog}
	if edit != nil {
		edit(&c)
	}
	h := New(c, walk.New(cfg, walk.OS, NewIdentity()))
	front := httptest.NewServer(h)
	t.Cleanup(front.Close)
	f.url = front.URL
	return f
}

// raw sends a request as written and returns the status and Location.
func (f *limitsFront) raw(t *testing.T, text string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, text)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

func (f *limitsFront) backendRead() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.got...)
}

// backendReadFor is what the backend read of the requests whose X-Case
// field is c: a request the front gave up on mid-body may finish on the
// backend after the next one started.
func (f *limitsFront) backendReadFor(c string) []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int64
	for i, n := range f.got {
		if f.cases[i] == c {
			out = append(out, n)
		}
	}
	return out
}

func chunked(n int) string {
	return fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", n, strings.Repeat("x", n))
}

// LimitRequestBody through the proxy, as corpus 400-402 show it on
// Apache 2.4: a Content-Length over the limit is 413 before anything is
// forwarded, a refusal too; a chunked body is forwarded through a
// counter and the request fails with 413 past the limit, without the
// backend ever reading more than the limit; a refused chunked request is
// discarded up to the limit first.
func TestBodyLimitProxy(t *testing.T) {
	f := newLimitsFront(t, `LimitRequestBody 100
<Directory "@DOCROOT@/private">
    Order allow,deny
    Deny from all
</Directory>
<Directory "@DOCROOT@/open">
    LimitRequestBody 0
</Directory>
`)
	post := func(path, body string, chunk bool) string {
		if chunk {
			return "POST " + path + " HTTP/1.1\r\nHost: h\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n" + body
		}
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
	}
	tests := []struct {
		text     string
		want     int
		backend  int64 // bytes the backend read; -1: not reached
		logsCode string
	}{
		{post("/index.html", strings.Repeat("x", 100), false), 200, 100, ""},
		{post("/index.html", strings.Repeat("x", 101), false), 413, -1, "AH01588"},
		{post("/private/a.html", strings.Repeat("x", 50), false), 403, -1, "AH01797"},
		{post("/private/a.html", strings.Repeat("x", 101), false), 413, -1, "AH01588"},
		{post("/index.html", chunked(100), true), 200, 100, ""},
		{post("/index.html", chunked(5000), true), 413, -1, "AH01591"},
		{post("/private/a.html", chunked(50), true), 403, -1, ""},
		{post("/private/a.html", chunked(101), true), 413, -1, "AH01591"},
		{post("/open/a.html", chunked(5000), true), 200, 5000, ""},
		{post("/open/a.html", strings.Repeat("x", 5000), false), 200, 5000, ""},
	}
	for i, tt := range tests {
		f.errlog.Reset()
		c := strconv.Itoa(i)
		st, _ := f.raw(t, strings.Replace(tt.text, "Host: h\r\n", "Host: h\r\nX-Case: "+c+"\r\n", 1))
		line, _, _ := strings.Cut(tt.text, "\r\n")
		if st != tt.want {
			t.Errorf("%s: %d, want %d", line, st, tt.want)
		}
		got := f.backendReadFor(c)
		switch {
		case tt.backend < 0 && len(got) > 0 && got[0] > 100:
			t.Errorf("%s: the backend read %d bytes past the limit", line, got[0])
		case tt.backend >= 0 && (len(got) != 1 || got[0] != tt.backend):
			t.Errorf("%s: the backend read %v, want %d", line, got, tt.backend)
		}
		if tt.logsCode != "" && !strings.Contains(f.errlog.String(), tt.logsCode) {
			t.Errorf("%s: error log %q, want %s", line, f.errlog.String(), tt.logsCode)
		}
	}
}

// Without a limit in force the body goes to the backend as it came: no
// counter (the fast path).
func TestBodyLimitFastPath(t *testing.T) {
	r := httptest.NewRequest("POST", "/", strings.NewReader("abc"))
	body := r.Body
	res := walk.Result{}
	bodyLimit(r, &res) // no engine: no limit
	if r.Body != body {
		t.Error("the body was wrapped with no limit in force")
	}
}

// What Apache refuses as it reads the request line and the header fields
// (corpus 405-407 on Apache 2.4): lines of the limit plus one byte are
// read, one more is refused.
func TestHeadLimits(t *testing.T) {
	lim := translate.DefaultServerLimits
	lim.RequestLine, lim.FieldSize, lim.Fields = 100, 100, 8
	target := func(n int) string { return "/" + strings.Repeat("a", n-13-1) } // "GET " + t + " HTTP/1.1"
	tests := []struct {
		name   string
		target string
		host   string
		header http.Header
		want   int
	}{
		{"line at limit+1", target(101), "h", nil, 0},
		{"line at limit+2", target(102), "h", nil, 414},
		{"field at limit+1", "/", "h", http.Header{"X-A": {strings.Repeat("v", 96)}}, 0},
		{"field at limit+2", "/", "h", http.Header{"X-A": {strings.Repeat("v", 97)}}, 400},
		{"merged at limit", "/", "h", http.Header{"X-A": {strings.Repeat("v", 49), strings.Repeat("w", 49)}}, 0},
		{"merged over", "/", "h", http.Header{"X-A": {strings.Repeat("v", 50), strings.Repeat("w", 50)}}, 400},
		{"8 fields", "/", "h", http.Header{"A": {"1"}, "B": {"1"}, "C": {"1"}, "D": {"1"}, "E": {"1"}, "F": {"1"}, "G": {"1"}}, 0},
		{"9 fields", "/", "h", http.Header{"A": {"1"}, "B": {"1"}, "C": {"1"}, "D": {"1"}, "E": {"1"}, "F": {"1"}, "G": {"1", "2"}}, 400},
		{"empty host", "/", "", nil, 400},
	}
	for _, tt := range tests {
		r := &http.Request{Method: "GET", RequestURI: tt.target, Proto: "HTTP/1.1", Host: tt.host, Header: tt.header}
		if r.Header == nil {
			r.Header = http.Header{}
		}
		d, ok := headLimits(r, &lim)
		if ok && tt.want != 0 || !ok && d.Status != tt.want {
			t.Errorf("%s: %v %d, want %d", tt.name, ok, d.Status, tt.want)
		}
	}
}

package proxy

import (
	"bufio"
	"github.com/orderly-proxy/orderly/translate/regex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// feedAll feeds stream to a new parser in pieces of n bytes (the whole
// stream when n is 0) and returns it.
func feedAll(stream string, n int) *headParser {
	p := &headParser{}
	b := []byte(stream)
	if n == 0 {
		n = len(b)
	}
	for len(b) > 0 {
		k := min(n, len(b))
		p.feed(b[:k])
		b = b[k:]
	}
	return p
}

func headLines(p *headParser) []string {
	var out []string
	for _, h := range p.heads {
		out = append(out, h.method+" "+h.target)
	}
	return out
}

// TestHeadParserFraming follows pipelined requests with the framing Go's
// server uses, fed whole, byte by byte and in pieces.
func TestHeadParserFraming(t *testing.T) {
	tests := []struct {
		name    string
		stream  string
		heads   []string
		stopped bool
	}{
		{"one", "GET /a HTTP/1.1\r\nHost: x\r\n\r\n", []string{"GET /a"}, false},
		{"pipelined", "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", []string{"GET /a", "GET /b"}, false},
		{"content-length body hides a request",
			"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 35\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
			[]string{"POST /a", "GET /b"}, false},
		{"chunked with trailer",
			"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n5\r\nhello\r\n1d\r\nGET /no HTTP/1.1\r\nHost: x\r\n\r\n\r\n0\r\nX-Sum: 1\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
			[]string{"POST /a", "GET /b"}, false},
		{"chunked wins over content-length",
			"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
			[]string{"POST /a", "GET /b"}, false},
		{"HTTP/1.0 ignores transfer-encoding",
			"POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\nGET /b HTTP/1.0\r\n\r\n",
			[]string{"POST /a", "GET /b"}, false},
		{"CRLF after a POST", "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nz\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", []string{"POST /a", "GET /b"}, false},
		{"CRLF after a GET", "GET /a HTTP/1.1\r\nHost: x\r\n\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", []string{"GET /a"}, true},
		{"bare LF", "GET /a HTTP/1.1\nHost: x\n\n", nil, true},
		{"bare CR", "GET /a HTTP/1.1\r\nX: a\rb\r\n\r\n", nil, true},
		{"folded line", "GET /a HTTP/1.1\r\nX: a\r\n b\r\n\r\n", nil, true},
		{"space before colon", "GET /a HTTP/1.1\r\nX : a\r\n\r\n", nil, true},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", nil, true},
		{"two transfer-encodings", "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", []string{"POST /a"}, true},
		{"gzip transfer-encoding", "POST /a HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", []string{"POST /a"}, true},
		{"differing content-lengths", "POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", []string{"POST /a"}, true},
		{"signed content-length", "POST /a HTTP/1.1\r\nContent-Length: +1\r\n\r\n", []string{"POST /a"}, true},
		{"chunk extension", "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;x=y\r\na\r\n0\r\n\r\nGET /b HTTP/1.1\r\n\r\n", []string{"POST /a"}, true},
		{"chunk data without CRLF", "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n", []string{"POST /a"}, true},
		{"upgrade stops after the request", "GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x05hello", []string{"GET /ws"}, true},
		{"connect stops", "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\nGET /b HTTP/1.1\r\n\r\n", []string{"CONNECT x:443"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []int{0, 1, 2, 3, 7, 64} {
				p := feedAll(tt.stream, n)
				if got := headLines(p); strings.Join(got, "|") != strings.Join(tt.heads, "|") {
					t.Errorf("pieces of %d: heads %q, want %q", n, got, tt.heads)
				}
				if stopped := p.st == stStopped; stopped != tt.stopped {
					t.Errorf("pieces of %d: stopped %v, want %v", n, stopped, tt.stopped)
				}
			}
		})
	}
}

// TestHeadParserBounds: a head longer than Go allows stops the parser,
// and heads nobody takes are dropped, oldest first.
func TestHeadParserBounds(t *testing.T) {
	p := feedAll("GET / HTTP/1.1\r\nX: "+strings.Repeat("a", maxRawHead), 4096)
	if p.st != stStopped || len(p.heads) != 0 {
		t.Errorf("long head: state %d, %d heads", p.st, len(p.heads))
	}
	var b strings.Builder
	for i := 0; i < maxRawQueue+5; i++ {
		b.WriteString("GET /" + string(rune('a'+i)) + " HTTP/1.1\r\n\r\n")
	}
	p = feedAll(b.String(), 0)
	if len(p.heads) != maxRawQueue || p.heads[0].target != "/f" {
		t.Errorf("queue: %d heads, first %s", len(p.heads), p.heads[0].target)
	}
}

// goRequest is the request Go's server reads from the first request of
// stream.
func goRequest(t *testing.T, stream string) *http.Request {
	t.Helper()
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(stream)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fieldsString(h translate.Headers) string {
	switch v := h.(type) {
	case *rawView:
		var b []string
		for _, f := range v.fields {
			b = append(b, f.Name+": "+f.Value)
		}
		return strings.Join(b, "|")
	}
	return "?"
}

// TestRawView: headers_in as Apache has it, from a head as sent: merged
// fields, Content-Length dropped beside Transfer-Encoding, an
// absolute-form target's host for Host; and a head that is not exactly
// the request Go read is not used.
func TestRawView(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   string // "" : not used
	}{
		{"order and spelling", "GET / HTTP/1.1\r\nhost: x\r\nX-b: 1\r\nx-A: 2\r\n\r\n", "host: x|X-b: 1|x-A: 2"},
		{"merged into the first", "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nX-B: 2\r\nx-a: 3\r\n\r\n", "Host: x|X-A: 1, 3|X-B: 2"},
		{"blanks around values", "GET / HTTP/1.1\r\nHost: x\r\nX-A:  \t1 2 \t\r\nX-E:\r\n\r\n", "Host: x|X-A: 1 2|X-E: "},
		{"content-length beside transfer-encoding",
			"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: Chunked\r\nTrailer: X-S\r\n\r\n0\r\n\r\n",
			"Host: x|Transfer-Encoding: Chunked|Trailer: X-S"},
		{"pragma without cache-control", "GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\n\r\n", "Host: x|Pragma: no-cache"},
		{"duplicate content-length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", "Host: x|Content-Length: 0, 0"},
		{"absolute form", "GET http://WWW.Example.COM.:8080/a HTTP/1.1\r\nX: 1\r\nHost: other\r\n\r\n", "X: 1|Host: www.example.com:8080"},
		{"absolute form, no host field", "GET http://a.example/ HTTP/1.0\r\nX: 1\r\n\r\n", "X: 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := feedAll(tt.stream, 0)
			if len(p.heads) != 1 {
				t.Fatalf("%d heads", len(p.heads))
			}
			v, ok := p.heads[0].view(goRequest(t, tt.stream))
			if !ok {
				t.Fatalf("view refused")
			}
			if got := fieldsString(v); got != tt.want {
				t.Errorf("fields %q, want %q", got, tt.want)
			}
		})
	}
	// Not the request Go read: another line, other fields, a field less.
	p := feedAll("GET /a HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n", 0)
	for _, other := range []string{
		"GET /b HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: x\r\nX-A: 2\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: y\r\nX-A: 1\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nX-A: 1\r\n\r\n",
		"GET /a HTTP/1.0\r\nHost: x\r\nX-A: 1\r\n\r\n",
	} {
		if _, ok := p.heads[0].view(goRequest(t, other)); ok {
			t.Errorf("head used for %q", other)
		}
	}
}

// TestAbsoluteHost: construct_host_header with fix_hostname_non_v6.
func TestAbsoluteHost(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Example.COM", "example.com", true},
		{"example.com.", "example.com", true},
		{"example.com:80", "example.com:80", true},
		{"example.com:", "example.com:", true},
		{"10.1.2.3:8080", "10.1.2.3:8080", true},
		{"[::1]:80", "", false},
		{"a..b", "", false},
		{"1234", "", false},
		{"a_b.example", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := absoluteHost(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: %q %v, want %q %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestGoHeaders: Go's form of a request where no head was kept: what Go
// moved is put back, and what it cannot tell is Unknown.
func TestGoHeaders(t *testing.T) {
	type get struct {
		name  string
		value string
		found bool
		k     translate.Exactness
	}
	tests := []struct {
		name   string
		stream string
		gets   []get
	}{
		{"host", "GET / HTTP/1.1\r\nHost: Www.Example.com:81\r\n\r\n", []get{{"host", "Www.Example.com:81", true, translate.Exact}}},
		{"no host (1.0)", "GET / HTTP/1.0\r\n\r\n", []get{{"Host", "", false, translate.Exact}}},
		{"absolute 1.1", "GET http://A.example:8/ HTTP/1.1\r\nHost: b\r\n\r\n", []get{{"Host", "a.example:8", true, translate.Exact}}},
		{"absolute 1.0", "GET http://a.example/ HTTP/1.0\r\n\r\n", []get{{"Host", "", false, translate.Unknown}}},
		{"chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\nTrailer: X-S\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", []get{
			{"Transfer-Encoding", "chunked", true, translate.ExactFold},
			{"Trailer", "", false, translate.Unknown},
			{"Content-Length", "", false, translate.Exact},
		}},
		{"trailer without chunked", "GET / HTTP/1.1\r\nHost: x\r\nTrailer: X-S\r\n\r\n", []get{{"Trailer", "X-S", true, translate.Exact}}},
		{"pragma", "GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\n\r\n", []get{{"Cache-Control", "", false, translate.Unknown}}},
		{"pragma and own cache-control", "GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\nCache-Control: max-age=0\r\n\r\n", []get{{"Cache-Control", "max-age=0", true, translate.Exact}}},
		{"joined", "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nx-a: 2\r\n\r\n", []get{{"X-A", "1, 2", true, translate.Exact}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := (*goHeaders)(goRequest(t, tt.stream))
			for _, w := range tt.gets {
				v, found, k := g.Get(w.name)
				if v != w.value || found != w.found || k != w.k {
					t.Errorf("Get(%s) = %q %v %d, want %q %v %d", w.name, v, found, k, w.value, w.found, w.k)
				}
			}
		})
	}
	r := goRequest(t, "POST / HTTP/1.1\r\nHost: x\r\nX-Ro-A: a\r\nX-Ro-B: b\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	g := (*goHeaders)(r)
	last := func(re string) (string, bool, translate.Exactness) {
		return g.LastMatch(regex.MustCompile(re, regex.Options{}), regex.MustCompile(re, regex.Options{ICase: true}))
	}
	if _, _, k := last("^X-Ro"); k != translate.Unknown {
		t.Errorf("two names match: %d", k)
	}
	if v, found, k := last("^X-Ro-A"); v != "a" || !found || k != translate.ExactFold {
		t.Errorf("one name matches: %q %v %d", v, found, k)
	}
	if _, found, k := last("^Transfer"); found || k != translate.Unknown {
		t.Errorf("transfer-encoding, spelling unknown: %v %d", found, k)
	}
	if _, found, k := last("^X-None"); found || k != translate.Exact {
		t.Errorf("no name: %v %d", found, k)
	}
}

// TestRawHeadersServe runs the handler behind Listener and sends
// requests, several on one connection, whose decision needs the header
// fields as sent: a header-name regex whose last match decides, and
// Transfer-Encoding as spelled. The same requests through a plain
// listener are refused (500) where Go's form cannot tell.
func TestRawHeadersServe(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	defer backend.Close()
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	os.MkdirAll(filepath.Join(root, "ro"), 0o755)
	os.WriteFile(filepath.Join(root, "ro", "index.html"), []byte("ro"), 0o644)
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte(`SetEnvIf ^X-Ro "^(.*)$" ro=$1
SetEnvIf ro "^a" ro_a
SetEnvIf Transfer-Encoding "chunked" streamed
SetEnvIf Host "^www\.example\.com$" www
<Directory "`+root+`/ro">
Order deny,allow
Deny from all
Allow from env=ro_a
Allow from env=streamed
Allow from env=www
</Directory>
`), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}})
	if err != nil {
		t.Fatal(err)
	}
	e := walk.New(cfg, walk.OS, NewIdentity())
	if !e.WantsRawHeaders() {
		t.Fatal("WantsRawHeaders: false")
	}
	u, _ := url.Parse(backend.URL)
	h := New(Config{Backend: u, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, e)

	serve := func(wrap bool) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if wrap {
			ln = h.Listener(ln)
		}
		srv := &http.Server{Handler: h}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().String()
	}
	// Each step is sent on one connection, in order, and answered with
	// the status wanted (wrapped) and wanted without the kept heads.
	steps := []struct {
		req           string
		wrapped, bare int
	}{
		{"GET /ro/ HTTP/1.1\r\nHost: x\r\nX-Ro-A: a\r\n\r\n", 200, 500},
		{"GET /ro/ HTTP/1.1\r\nHost: x\r\nX-Ro-A: a\r\nX-Ro-B: b\r\n\r\n", 403, 500},
		{"GET /ro/ HTTP/1.1\r\nHost: x\r\nX-Ro-B: b\r\nX-Ro-A: a\r\n\r\n", 200, 500},
		{"GET /ro/ HTTP/1.1\r\nHost: x\r\nx-ro-a: a\r\n\r\n", 403, 500},
		{"POST /ro/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 200, 500},
		{"POST /ro/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", 403, 500},
		{"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 200, 200},
		{"GET /ro/ HTTP/1.1\r\nHost: x\r\nX-Ro-C: c\r\nX-Ro-A: a\r\n\r\n", 200, 500},
		// Absolute form: Apache's Host field is the target's host.
		{"GET http://WWW.Example.com/ro/ HTTP/1.1\r\nHost: x\r\n\r\n", 200, 200},
		{"GET http://x/ro/ HTTP/1.1\r\nHost: www.example.com\r\n\r\n", 403, 403},
	}
	for _, wrap := range []bool{true, false} {
		c, err := net.Dial("tcp", serve(wrap))
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for _, s := range steps {
			if _, err := io.WriteString(c, s.req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%q: %v", s.req, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			want := s.wrapped
			if !wrap {
				want = s.bare
			}
			if resp.StatusCode != want {
				t.Errorf("wrapped %v: %q: %d, want %d", wrap, s.req, resp.StatusCode, want)
			}
		}
		c.Close()
	}
}

// FuzzHeadParser checks the parser against Go's own reading of the same
// bytes (http.ReadRequest, the reader of Go's server): every head it
// queues, in order, is exactly the request Go reads at that place, for as
// long as Go reads requests; it never panics, whatever the pieces.
func FuzzHeadParser(f *testing.F) {
	f.Add("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", uint8(3))
	f.Add("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 35\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", uint8(5))
	f.Add("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", uint8(1))
	f.Add("POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\nGET /b HTTP/1.0\r\n\r\n", uint8(2))
	f.Add("GET /a HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", uint8(9))
	f.Fuzz(func(t *testing.T, stream string, piece uint8) {
		p := feedAll(stream, int(piece))
		br := bufio.NewReader(strings.NewReader(stream))
		for i := 0; i < len(p.heads); i++ {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			// The server's view: the host from the target or the field.
			if _, ok := p.heads[i].view(r); !ok {
				t.Fatalf("head %d (%s %s) is not the request Go read (%s %s)", i, p.heads[i].method, p.heads[i].target, r.Method, r.RequestURI)
			}
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				return
			}
			if r.Method == "POST" {
				// Go's server skips up to 4 CR or LF after a POST.
				peek, _ := br.Peek(4)
				n := 0
				for n < len(peek) && (peek[n] == '\r' || peek[n] == '\n') {
					n++
				}
				br.Discard(n)
			}
		}
	})
}

// TestListenerOff: without rules that want them, connections are not
// wrapped.
func TestListenerOff(t *testing.T) {
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("SetEnvIf User-Agent bot bot\n"), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Backend: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}}, walk.New(cfg, walk.OS, NewIdentity()))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wl := h.Listener(ln)
	defer wl.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
	}()
	c, err := wl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*headConn); ok {
		t.Error("connection wrapped without rules that want it")
	}
}

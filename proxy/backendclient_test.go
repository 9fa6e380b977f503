package proxy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// rawBackend is a backend written by hand, to answer as a test needs
// down to the connection: serve is called for every request read, with
// the number of the connection it came on (from 1) and the number of the
// request on that connection (from 1); it writes the answer itself, and
// returns false to close the connection after it.
type rawBackend struct {
	ln    net.Listener
	conns atomic.Int32
	mu    sync.Mutex
	seen  []string // "conn/req METHOD PATH body-length"
	serve func(conn, req int, r *http.Request, body []byte, w *bufio.Writer) bool
}

func newRawBackend(t *testing.T, serve func(conn, req int, r *http.Request, body []byte, w *bufio.Writer) bool) *rawBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &rawBackend{ln: ln, serve: serve}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(b.conns.Add(1))
			go b.handle(n, c)
		}
	}()
	return b
}

func (b *rawBackend) handle(n int, c net.Conn) {
	defer c.Close()
	br, bw := bufio.NewReader(c), bufio.NewWriter(c)
	for i := 1; ; i++ {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		var body []byte
		if r.Header.Get("Expect") == "" {
			body, _ = io.ReadAll(r.Body)
		}
		b.mu.Lock()
		b.seen = append(b.seen, fmt.Sprintf("%d/%d %s %s %d", n, i, r.Method, r.URL.Path, len(body)))
		b.mu.Unlock()
		keep := b.serve(n, i, r, body, bw)
		bw.Flush()
		if !keep {
			return
		}
	}
}

func (b *rawBackend) requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.seen...)
}

// rawFront is orderly, letting everything through, in front of b.
func rawFront(t *testing.T, b *rawBackend) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("<Directory "+dir+">\nOrder allow,deny\nAllow from all\n</Directory>\n"), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://" + b.ln.Addr().String())
	pool := NewPool([]*url.URL{u}, HealthCheck{}) // passive detection on
	front := httptest.NewServer(New(Config{Pool: pool}, walk.New(cfg, walk.OS, nil)))
	t.Cleanup(front.Close)
	return front
}

func okAnswer(w *bufio.Writer, body string) {
	fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// fetch sends one request through front on a connection of its own and
// returns the status and body ("" and 0 when no answer came).
func fetch(t *testing.T, front *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, front.URL+path, rd)
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A connection the backend closed while it sat idle in the pool: a
// request that can be sent again is, on a new connection; one that
// cannot is never sent on a connection found closed. A connection that
// breaks before any answer fails a request that cannot be sent again
// (502), and a new connection that breaks is never retried, as net/http.
func TestBackendConnectionClosedWhileIdle(t *testing.T) {
	tests := []struct {
		name string
		// drop: the backend closes the connection after its first answer
		// without saying so (idle), or reads the second request and
		// closes without an answer (broken)
		drop   string
		method string
		body   string
		status int
		seen   []string
	}{
		{"idle, GET retried on a new connection", "idle", "GET", "", 200, []string{"1/1 GET /first 0", "2/1 GET /second 0"}},
		{"idle, POST sent on a new connection only", "idle", "POST", "payload", 200, []string{"1/1 GET /first 0", "2/1 POST /second 7"}},
		{"broken, GET retried", "broken", "GET", "", 200, []string{"1/1 GET /first 0", "1/2 GET /second 0", "2/1 GET /second 0"}},
		{"broken, POST not retried", "broken", "POST", "payload", 502, []string{"1/1 GET /first 0", "1/2 POST /second 7"}},
		{"broken on a new connection, GET not retried", "new", "GET", "", 502, []string{"1/1 GET /first 0", "2/1 GET /second 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			closed := make(chan struct{})
			b := newRawBackend(t, func(conn, req int, r *http.Request, body []byte, w *bufio.Writer) bool {
				switch {
				case r.URL.Path == "/first":
					okAnswer(w, "first")
					defer close(closed)
					return tt.drop == "broken" // idle, new: closed after the answer
				case tt.drop == "new" && conn == 2 || tt.drop == "broken" && conn == 1:
					return false // read, no answer
				}
				okAnswer(w, "second")
				return true
			})
			front := rawFront(t, b)
			if st, _ := fetch(t, front, "GET", "/first", ""); st != 200 {
				t.Fatalf("first: %d", st)
			}
			<-closed
			time.Sleep(20 * time.Millisecond) // the FIN reaches orderly's side
			st, _ := fetch(t, front, tt.method, "/second", tt.body)
			if st != tt.status {
				t.Errorf("status %d, want %d", st, tt.status)
			}
			if got := b.requests(); strings.Join(got, ", ") != strings.Join(tt.seen, ", ") {
				t.Errorf("the backend saw %q, want %q", got, tt.seen)
			}
		})
	}
}

// Which answers leave the connection for the next request: one read
// whole whose backend keeps it open, including those without a body
// (HEAD, 204, 304) and after interim answers; not one that says
// Connection: close, nor one the client stopped reading.
func TestBackendConnectionReuse(t *testing.T) {
	big := strings.Repeat("x", 4<<20)
	tests := []struct {
		name   string
		method string
		answer string // the backend's answer to /a
		reused bool
	}{
		{"Content-Length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true},
		{"chunked with trailers", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n2\r\nok\r\n0\r\nX-Sum: 1\r\n\r\n", true},
		{"HEAD", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", true},
		{"204", "GET", "HTTP/1.1 204 No Content\r\n\r\n", true},
		{"304", "GET", "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", true},
		{"103 then 200", "GET", "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true},
		{"Connection: close", "GET", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.0", "GET", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
		{"body not read by the client", "GET", "HTTP/1.1 200 OK\r\nContent-Length: " + fmt.Sprint(len(big)) + "\r\n\r\n" + big, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRawBackend(t, func(conn, req int, r *http.Request, body []byte, w *bufio.Writer) bool {
				if r.URL.Path == "/a" {
					w.WriteString(tt.answer)
					return !strings.Contains(tt.answer, "close") && !strings.HasPrefix(tt.answer, "HTTP/1.0")
				}
				okAnswer(w, "next")
				return true
			})
			front := rawFront(t, b)
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "%s /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", tt.method)
			br := bufio.NewReader(c)
			req, _ := http.NewRequest(tt.method, "/a", nil)
			var interim []int
			for {
				resp, err := http.ReadResponse(br, req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode >= 100 && resp.StatusCode < 200 {
					interim = append(interim, resp.StatusCode)
					if resp.Header.Get("Link") == "" {
						t.Errorf("103 without its Link header")
					}
					continue
				}
				if tt.name == "body not read by the client" {
					io.CopyN(io.Discard, resp.Body, 1000)
					c.Close()
					time.Sleep(50 * time.Millisecond)
					break
				}
				got, _ := io.ReadAll(resp.Body)
				want := map[string]string{"HEAD": "", "204": "", "304": ""}[tt.name]
				if _, none := map[string]bool{"HEAD": true, "204": true, "304": true}[tt.name]; !none {
					want = "ok"
				}
				if string(got) != want {
					t.Errorf("body %q, want %q", got, want)
				}
				if tt.name == "chunked with trailers" && resp.Trailer.Get("X-Sum") != "1" {
					t.Errorf("trailer X-Sum %q, want 1", resp.Trailer.Get("X-Sum"))
				}
				break
			}
			c.Close()
			if tt.name == "103 then 200" && fmt.Sprint(interim) != "[103]" {
				t.Errorf("interim answers %v, want [103]", interim)
			}
			if st, body := fetch(t, front, "GET", "/b", ""); st != 200 || body != "next" {
				t.Errorf("next request: %d %q", st, body)
			}
			seen := b.requests()
			last := seen[len(seen)-1]
			if reused := strings.HasPrefix(last, "1/2 "); reused != tt.reused {
				t.Errorf("next request %q: reused %v, want %v (the backend saw %q)", last, reused, tt.reused, seen)
			}
		})
	}
}

// Expect: 100-continue: the body follows the backend's 100 Continue (which
// reaches the client), and is not sent when the backend answers at once
// and closes the connection.
func TestBackendExpectContinue(t *testing.T) {
	tests := []struct {
		name     string
		refuse   bool
		status   int
		got100   bool
		bodySent bool
	}{
		{"100 Continue", false, 200, true, true},
		{"refused at once", true, 401, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent atomic.Int64
			b := newRawBackend(t, func(conn, req int, r *http.Request, body []byte, w *bufio.Writer) bool {
				if tt.refuse {
					w.WriteString("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
					w.Flush()
					// Anything sent would arrive now.
					r.Body.Read(make([]byte, 1))
					time.Sleep(50 * time.Millisecond)
					n, _ := io.Copy(io.Discard, r.Body)
					sent.Store(n)
					return false
				}
				w.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
				w.Flush()
				n, _ := io.Copy(io.Discard, r.Body)
				sent.Store(n)
				okAnswer(w, "done")
				return true
			})
			front := rawFront(t, b)
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(c, "PUT /up HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n")
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			got100 := resp.StatusCode == 100
			if got100 {
				io.WriteString(c, "0123456789")
				if resp, err = http.ReadResponse(br, nil); err != nil {
					t.Fatal(err)
				}
			}
			if resp.StatusCode != tt.status || got100 != tt.got100 {
				t.Errorf("status %d, 100 Continue %v; want %d, %v", resp.StatusCode, got100, tt.status, tt.got100)
			}
			time.Sleep(100 * time.Millisecond)
			if (sent.Load() == 10) != tt.bodySent {
				t.Errorf("the backend got %d bytes of the body; sent: want %v", sent.Load(), tt.bodySent)
			}
		})
	}
}

// A WebSocket upgrade becomes a tunnel between the client and the
// backend; any other protocol goes on as a plain request.
func TestBackendUpgrade(t *testing.T) {
	// The raw backend reads requests with http.ReadRequest: a tunnel needs
	// the connection itself, so this backend is a plain listener.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				r, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				if r.Header.Get("Upgrade") != "websocket" {
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len("plain:"+r.Header.Get("Upgrade")), "plain:"+r.Header.Get("Upgrade"))
					return
				}
				io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
				line, _ := br.ReadString('\n')
				io.WriteString(c, strings.ToUpper(line))
			}()
		}
	}()
	front := rawFront(t, &rawBackend{ln: ln})
	for _, tt := range []struct{ proto, want string }{{"websocket", "HELLO\n"}, {"h2c", "plain:"}} {
		c, err := net.Dial("tcp", front.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", tt.proto)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if resp.StatusCode == 101 {
			io.WriteString(c, "hello\n")
			got, _ = br.ReadString('\n')
		} else {
			b, _ := io.ReadAll(resp.Body)
			got = string(b)
		}
		c.Close()
		if got != tt.want {
			t.Errorf("%s: %d %q, want %q", tt.proto, resp.StatusCode, got, tt.want)
		}
	}
}

// A client that asks for a protocol with bytes outside ASCII gets 502, as
// before, but does not take the backend out of service.
func TestBackendInvalidUpgradeKeepsBackend(t *testing.T) {
	b := newRawBackend(t, func(conn, req int, r *http.Request, body []byte, w *bufio.Writer) bool {
		okAnswer(w, "ok")
		return true
	})
	front := rawFront(t, b)
	c, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /x HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: web\tsocket\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	c.Close()
	if err != nil || resp.StatusCode != 502 {
		t.Fatalf("invalid upgrade: %v %v, want 502", resp, err)
	}
	if st, _ := fetch(t, front, "GET", "/x", ""); st != 200 {
		t.Errorf("after an invalid upgrade: %d, want 200 (the backend left in)", st)
	}
}

// The request the backend gets: the client's headers less the hop-by-hop
// ones and those its Connection header names, the forwarding headers of
// orderly's making (X-Forwarded-Proto https when the client came over
// TLS), no User-Agent when the client sent none, and a request trailer
// still announced.
func TestForwardedRequestHeaders(t *testing.T) {
	type seen struct {
		header  http.Header
		trailer []string
	}
	got := make(chan seen, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var tr []string
		for k := range r.Trailer {
			tr = append(tr, k)
		}
		got <- seen{r.Header.Clone(), tr}
	}))
	defer backend.Close()
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("<Directory "+dir+">\nOrder allow,deny\nAllow from all\n</Directory>\n"), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(backend.URL)
	h := New(Config{Backend: u}, walk.New(cfg, walk.OS, nil))
	plain, secure := httptest.NewServer(h), httptest.NewTLSServer(h)
	defer plain.Close()
	defer secure.Close()
	tests := []struct {
		name   string
		front  *httptest.Server
		req    string
		want   map[string]string // "" : absent
		trailr []string
	}{
		{"plain", plain, "GET /x HTTP/1.1\r\nHost: site.example\r\nX-Forwarded-For: 192.0.2.9\r\nX-Forwarded-Proto: https\r\nForwarded: for=192.0.2.9\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\nKeep-Alive: 5\r\nTE: trailers\r\nX-Other: 2\r\n\r\n",
			map[string]string{"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Host": "site.example", "X-Forwarded-Proto": "http",
				"Forwarded": "", "X-Secret": "", "Keep-Alive": "", "Connection": "", "Te": "trailers", "X-Other": "2", "User-Agent": ""}, nil},
		{"over TLS", secure, "GET /x HTTP/1.1\r\nHost: site.example\r\nUser-Agent: ua/1\r\n\r\n",
			map[string]string{"X-Forwarded-Proto": "https", "User-Agent": "ua/1", "Te": ""}, nil},
		{"request trailer", plain, "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n2\r\nab\r\n0\r\nX-Sum: 7\r\n\r\n",
			map[string]string{"Trailer": ""}, []string{"X-Sum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c net.Conn
			var err error
			if tt.front == secure {
				c, err = tls.Dial("tcp", secure.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true})
			} else {
				c, err = net.Dial("tcp", plain.Listener.Addr().String())
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, tt.req)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("answer %v %v", resp, err)
			}
			s := <-got
			for k, want := range tt.want {
				if v := strings.Join(s.header[k], ","); v != want {
					t.Errorf("%s: %q, want %q", k, v, want)
				}
			}
			if fmt.Sprint(s.trailer) != fmt.Sprint(tt.trailr) {
				t.Errorf("trailers announced %v, want %v", s.trailer, tt.trailr)
			}
		})
	}
}

type textAddr string

func (a textAddr) Network() string { return "test" }
func (a textAddr) String() string  { return string(a) }

// localAddr reads a TCP address as it is, under rawhead's wrapper too,
// and parses any other.
func TestLocalAddr(t *testing.T) {
	tcp := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 80}
	tests := []struct {
		addr net.Addr
		want string
	}{
		{tcp, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 443}, "2001:db8::1"},
		{&headAddr{Addr: tcp}, "192.0.2.7"},
		{textAddr("[::ffff:198.51.100.1]:8080"), "198.51.100.1"},
		{textAddr("not an address"), "invalid IP"},
		{&net.UnixAddr{Name: "/run/x.sock", Net: "unix"}, "invalid IP"},
	}
	for _, tt := range tests {
		if got := localAddr(tt.addr).String(); got != tt.want {
			t.Errorf("localAddr(%v) = %s, want %s", tt.addr, got, tt.want)
		}
	}
}

// An https backend: the server's certificate is checked against the name
// in the backend URL, and the connection is kept for the next request.
func TestBackendTLS(t *testing.T) {
	var conns atomic.Int32
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tls:"+r.Host)
	}))
	backend.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	backend.StartTLS()
	defer backend.Close()
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("<Directory "+dir+">\nOrder allow,deny\nAllow from all\n</Directory>\n"), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		host   string // the backend URL's host name (the certificate is for example.com and 127.0.0.1)
		status int
	}{
		{"certificate for the name", "127.0.0.1", 200},
		{"certificate for another name", "localhost", 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conns.Store(0)
			u, _ := url.Parse("https://" + tt.host + ":" + backend.URL[strings.LastIndex(backend.URL, ":")+1:])
			h := New(Config{Pool: NewPool([]*url.URL{u}, HealthCheck{NoPassive: true})}, walk.New(cfg, walk.OS, nil))
			h.backend.tlsConfig = &tls.Config{RootCAs: backend.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
			front := httptest.NewServer(h)
			defer front.Close()
			for i := 0; i < 2; i++ {
				st, body := fetch(t, front, "GET", "/x", "")
				if st != tt.status || st == 200 && body != "tls:"+front.Listener.Addr().String() {
					t.Errorf("request %d: %d %q, want %d", i, st, body, tt.status)
				}
			}
			if tt.status == 200 && conns.Load() != 1 {
				t.Errorf("%d connections for two requests, want 1", conns.Load())
			}
		})
	}
}

// TestBackendClientGone: a client that goes away before the backend
// answers aborts the backend exchange (here on a connection reused from
// the pool): the backend's connection is closed at once, not when the
// wait for the answer's headers (60 s) ends.
func TestBackendClientGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got, closed := make(chan struct{}, 1), make(chan struct{}, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		// The first request is answered, so that the connection goes back
		// to the pool; the second is not.
		if skipHead(br) != nil {
			return
		}
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		if skipHead(br) != nil {
			return
		}
		got <- struct{}{}
		io.Copy(io.Discard, br) // until orderly closes the connection
		closed <- struct{}{}
	}()
	front := rawFront(t, &rawBackend{ln: ln})
	if code, body := fetch(t, front, "GET", "/first", ""); code != 200 || body != "ok" {
		t.Fatalf("first request: %d %q", code, body)
	}
	conn, err := net.Dial("tcp", front.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the backend never got the request")
	}
	conn.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the client went away, and the backend's connection stayed open")
	}
}

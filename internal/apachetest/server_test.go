package apachetest

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// site writes a small document root (index.html, private/index.html,
// members/index.html) and a fragment into a world-readable directory, and
// returns the document root and the fragment's path.
func site(t *testing.T, fragment string) (docroot, conf string) {
	t.Helper()
	dir := TempDir(t)
	docroot = filepath.Join(dir, "docroot")
	for _, f := range []string{"index.html", "private/index.html", "members/index.html"} {
		name := filepath.Join(docroot, f)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf = filepath.Join(dir, "legacy.conf")
	writeFragment(t, conf, docroot, fragment)
	return docroot, conf
}

func writeFragment(t *testing.T, conf, docroot, fragment string) {
	t.Helper()
	data := strings.ReplaceAll(fragment, "@DOCROOT@", docroot)
	if err := os.WriteFile(conf, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitAccessLog waits until the access log of s contains every line: Apache
// writes a request's line after it has sent the response.
func waitAccessLog(t *testing.T, s *Server, lines ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		log := s.AccessLog()
		missing := ""
		for _, line := range lines {
			if !strings.Contains(log, line) {
				missing = line
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("access log lacks %q:\n%s", missing, log)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// check sends a request and fails the test unless the status is want.
func check(t *testing.T, s *Server, method, target, clientIP string, want int) Response {
	t.Helper()
	resp, err := Do(s.Addr, Request{Method: method, Target: target, ClientIP: clientIP})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != want {
		t.Errorf("%s %s from %s: status %d, want %d\n%s", method, target, clientIP, resp.Status, want, s.ErrorLog())
	}
	return resp
}

const denyPrivate = `<Directory "@DOCROOT@/private">
    Order deny,allow
    Deny from all
    Allow from 10.1
</Directory>
`

func oracle(docroot, conf string) Options {
	return Options{DocumentRoot: docroot, Include: []string{conf}, RemoteIP: true, AccessCompat: true}
}

// TestRemoteIPAccessCompat checks that the legacy rules see the address from
// X-Forwarded-For.
func TestRemoteIPAccessCompat(t *testing.T) {
	t.Parallel()
	docroot, conf := site(t, denyPrivate)
	s := Start(t, oracle(docroot, conf))
	check(t, s, "GET", "/private/", "10.1.2.3", 200)
	check(t, s, "GET", "/private/", "8.8.8.8", 403)
	check(t, s, "GET", "/private/index.html", "10.2.0.1", 403)
	check(t, s, "GET", "/", "8.8.8.8", 200)
	if log := s.ErrorLog(); !strings.Contains(log, "AH01797") || !strings.Contains(log, "[client 8.8.8.8:") {
		t.Errorf("error log lacks the denial of 8.8.8.8 (AH01797):\n%s", log)
	}
	waitAccessLog(t, s, `10.1.2.3 "GET /private/ HTTP/1.1" 200`)
}

// TestNoAccessRules checks that the generated configuration denies nothing
// by itself, and that it serves the index.
func TestNoAccessRules(t *testing.T) {
	t.Parallel()
	docroot, conf := site(t, "# nothing\n")
	s := Start(t, oracle(docroot, conf))
	if resp := check(t, s, "GET", "/private/", "8.8.8.8", 200); string(resp.Body) != "private/index.html\n" {
		t.Errorf("body %q, want the index of /private/", resp.Body)
	}
	check(t, s, "GET", "/nope", "8.8.8.8", 404)
	main, err := os.ReadFile(filepath.Join(s.Dir, "httpd.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"Require", "Order", "Allow", "Deny", "<Directory", "<Location", "Satisfy"} {
		if strings.Contains(string(main), word) {
			t.Errorf("generated configuration contains %q:\n%s", word, main)
		}
	}
}

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	p := Require(t)
	dir := TempDir(t)
	users := filepath.Join(dir, "users")
	p.AddUser(t, users, "alice", "secret")
	p.AddUser(t, users, "bob", "hunter2")
	docroot, conf := site(t, `<Directory "@DOCROOT@/members">
    AuthType Basic
    AuthName "Secret Area"
    AuthUserFile `+users+`
    Require valid-user
</Directory>
`)
	s := Start(t, oracle(docroot, conf))
	resp := check(t, s, "GET", "/members/", "8.8.8.8", 401)
	if got, want := resp.Class(), `401 realm="Secret Area"`; got != want {
		t.Errorf("class %q, want %q (WWW-Authenticate: %q)", got, want, resp.WWWAuthenticate)
	}
	for _, tt := range []struct {
		user, password string
		want           int
	}{
		{"alice", "secret", 200},
		{"bob", "hunter2", 200},
		{"alice", "hunter2", 401},
		{"carol", "secret", 401},
	} {
		resp, err := Do(s.Addr, Request{Method: "GET", Target: "/members/", ClientIP: "8.8.8.8", User: tt.user, Password: tt.password, HasAuth: true})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != tt.want {
			t.Errorf("%s:%s: status %d, want %d", tt.user, tt.password, resp.Status, tt.want)
		}
	}
	if log := s.ErrorLog(); !strings.Contains(log, "AH01617") { // user carol not found
		t.Errorf("error log lacks AH01617:\n%s", log)
	}
}

// TestRawTarget checks that targets reach Apache unnormalised.
func TestRawTarget(t *testing.T) {
	t.Parallel()
	docroot, conf := site(t, denyPrivate)
	s := Start(t, oracle(docroot, conf))
	// A target that climbs above the root is refused by Apache itself; a
	// normalising client would have sent /x.
	check(t, s, "GET", "/../x", "8.8.8.8", 400)
	check(t, s, "GET", "/%2e%2e/x", "8.8.8.8", 400)
	// Apache resolves these to /private/: denied.
	check(t, s, "GET", "/a/../private/", "8.8.8.8", 403)
	check(t, s, "GET", "//private/", "8.8.8.8", 403)
	check(t, s, "GET", "/%70rivate/", "8.8.8.8", 403)
	waitAccessLog(t, s, "GET /../x HTTP/1.1", "GET /a/../private/ HTTP/1.1", "GET //private/ HTTP/1.1", "GET /%70rivate/ HTTP/1.1")
}

func TestReload(t *testing.T) {
	t.Parallel()
	docroot, conf := site(t, denyPrivate)
	s := Start(t, oracle(docroot, conf))
	addr := s.Addr
	check(t, s, "GET", "/private/", "8.8.8.8", 403)
	// Alternate between two configurations: every request right after a
	// Reload must see the new one.
	for i := 0; i < 20; i++ {
		allow := i%2 == 0
		frag := strings.Replace(denyPrivate, "Allow from 10.1", "Allow from 10.1 8.8.8.8", 1)
		want := 200
		if !allow {
			frag, want = denyPrivate, 403
		}
		writeFragment(t, conf, docroot, frag)
		s.Reload(t, oracle(docroot, conf))
		check(t, s, "GET", "/private/", "8.8.8.8", want)
	}
	if s.Addr != addr {
		t.Errorf("address changed from %s to %s", addr, s.Addr)
	}
	// Options change too: without mod_access_compat, the fragment is left
	// out here, and everything is allowed.
	s.Reload(t, Options{DocumentRoot: docroot, RemoteIP: true})
	check(t, s, "GET", "/private/", "8.8.8.8", 200)
}

// TestReloadKeepAlive checks that a client that keeps connections alive, as
// a reverse proxy does, sees the new configuration right after Reload: the
// children of the old generation, and so its connections, are gone.
func TestReloadKeepAlive(t *testing.T) {
	t.Parallel()
	docroot, conf := site(t, denyPrivate)
	s := Start(t, oracle(docroot, conf))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	get := func(want int) {
		t.Helper()
		req, err := http.NewRequest("GET", "http://"+s.Addr+"/private/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", "8.8.8.8")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("status %d, want %d", resp.StatusCode, want)
		}
	}
	for i := 0; i < 6; i++ {
		frag, want := denyPrivate, 403
		if i%2 == 0 {
			frag, want = "", 200
		}
		writeFragment(t, conf, docroot, frag)
		start := time.Now()
		s.Reload(t, oracle(docroot, conf))
		if d := time.Since(start); d > time.Second {
			t.Logf("Reload took %v with an idle keep-alive connection", d)
		}
		get(want)
	}
}

// TestReloadInvalid checks that a configuration Apache rejects makes Reload
// fail with Apache's message, and that the next Reload starts afresh.
func TestReloadInvalid(t *testing.T) {
	t.Parallel()
	docroot, conf := site(t, denyPrivate)
	s := Start(t, oracle(docroot, conf))
	bad := filepath.Join(TempDir(t), "bad.conf")
	writeFragment(t, bad, docroot, "NoSuchDirective on\n")
	err := s.reload(Options{DocumentRoot: docroot, Include: []string{bad}})
	if err == nil || !strings.Contains(err.Error(), "NoSuchDirective") {
		t.Fatalf("reload with an invalid configuration: error %v, want one naming NoSuchDirective", err)
	}
	s.Reload(t, oracle(docroot, conf))
	check(t, s, "GET", "/private/", "10.1.0.1", 200)
	check(t, s, "GET", "/private/", "8.8.8.8", 403)
}

func TestStartInvalid(t *testing.T) {
	t.Parallel()
	s := &Server{paths: Require(t), Dir: TempDir(t)}
	err := s.start(Options{Extra: "Order allow,deny\n"}) // mod_access_compat not loaded
	if err == nil || !strings.Contains(err.Error(), "Order") {
		t.Fatalf("start with an invalid configuration: error %v, want one naming Order", err)
	}
	if err := s.Stop(); err != nil {
		t.Error(err)
	}
}

// TestStartPortTaken checks that Start picks another port when the one it
// chose is taken in the meantime.
func TestStartPortTaken(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	s := &Server{paths: Require(t), Dir: TempDir(t), port: taken}
	defer s.Stop()
	if err := s.start(Options{}); err != nil {
		t.Fatal(err)
	}
	if s.port == taken {
		t.Fatalf("server on the taken port %d", taken)
	}
	check(t, s, "GET", "/", "8.8.8.8", 404)
	if !strings.Contains(s.ErrorLog()+readFile(s.stderrPath()), "Address already in use") {
		t.Errorf("Apache did not report the taken port")
	}
}

func TestStop(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	check(t, s, "GET", "/", "8.8.8.8", 404) // an empty document root, no mod_autoindex
	pid := s.proc.cmd.Process.Pid
	kids, err := children(pid)
	if err != nil || len(kids) == 0 {
		t.Fatalf("children of %d: %v, %v", pid, kids, err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections", s.Addr)
	}
	for id := range kids {
		if st, ok := readStat(id.pid); ok && st.start == id.start {
			t.Errorf("child %d still exists", id.pid)
		}
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestProxyTo(t *testing.T) {
	t.Parallel()
	docroot, _ := site(t, "")
	backend := Start(t, Options{DocumentRoot: docroot, RemoteIP: true})
	front := Start(t, Options{RemoteIP: true, AccessCompat: true, ProxyTo: "http://" + backend.Addr,
		Extra: "<Location /private>\n    Order deny,allow\n    Deny from all\n</Location>\n"})
	if resp := check(t, front, "GET", "/members/", "8.8.8.8", 200); string(resp.Body) != "members/index.html\n" {
		t.Errorf("body %q, want the backend's members/index.html", resp.Body)
	}
	check(t, front, "GET", "/private/", "8.8.8.8", 403)
	// The backend sees the client's address, passed on in X-Forwarded-For.
	waitAccessLog(t, backend, `8.8.8.8 "GET /members/ HTTP/1.1" 200`)
	if _, err := proxyTarget("http://192.0.2.1/"); err == nil {
		t.Error("ProxyTo accepts a non-loopback address")
	}
}

// BenchmarkStartStop measures starting a server, one request, and stopping it.
func BenchmarkStartStop(b *testing.B) {
	p := Require(b)
	for b.Loop() {
		s := &Server{paths: p, Dir: TempDir(b)}
		if err := s.start(Options{}); err != nil {
			b.Fatal(err)
		}
		if _, err := Do(s.Addr, Request{Method: "GET", Target: "/"}); err != nil {
			b.Fatal(err)
		}
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReload measures a graceful restart and one request.
func BenchmarkReload(b *testing.B) {
	s := Start(b, Options{})
	for b.Loop() {
		s.Reload(b, Options{})
		if _, err := Do(s.Addr, Request{Method: "GET", Target: "/"}); err != nil {
			b.Fatal(err)
		}
	}
}

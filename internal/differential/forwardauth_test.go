package differential

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// nginxFront is real nginx (Debian's) in front of the backend, asking
// orderly's forward-auth endpoint about every request with auth_request,
// as a site that keeps its nginx would run orderly.
type nginxFront struct {
	nginx string
	// authLog is orderly's access log: a request nginx answered itself,
	// without asking, is not in it.
	authLog string
}

// tolerate: nginx refuses some request-targets itself with its own 400
// page (lower-case methods, NUL, a path above the root once decoded),
// and shows an auth answer other than 401/403 as 500; orderly answers
// the request refusals Apache makes (400, 404) with their own status,
// and refuses (500) a request whose SetEnvIf rules read what nginx does
// not pass on as the client sent it: the fields it sets itself
// (Content-Length, Transfer-Encoding, Connection, ...), Trailer, or
// header names in their order (proxy.frontHeaders).
func (f *nginxFront) tolerate(want, got apachetest.Response) string {
	page := strings.Contains(string(got.Body), "<center>nginx")
	switch {
	case page && got.Status == 400:
		return "nginx refused the request itself"
	case page && got.Status == 500 && (want.Status == 400 || want.Status == 404):
		return "orderly refused the request as Apache does; nginx shows it as 500"
	case page && got.Status == 500 && f.lastAuthStatus() == "500":
		return "orderly cannot decide it from what nginx passes on (500)"
	case page && got.Status == 500 && want.Status >= 400 && want.Status != 401 && want.Status != 403:
		// auth_request passes on 2xx, 401 and 403 only: orderly's 413,
		// 414, 400 or 501 (its access log has none of those it answers
		// before deciding) reaches the client as nginx's 500.
		return "orderly refused the request as Apache does (" + strconv.Itoa(want.Status) + "); nginx shows it as 500"
	case page && got.Status == 405:
		return "nginx refuses TRACE itself"
	case page && got.Status == 500 && want.Status >= 300 && want.Status < 400:
		return "orderly redirects as Apache does (" + strconv.Itoa(want.Status) + "); auth_request cannot pass a redirect on, and nginx shows 500"
	case page && got.Status == 500:
		// LimitRequestFields and LimitRequestFieldSize count the fields
		// nginx adds to the subrequest (X-Original-*): over-strict.
		return "orderly refused the subrequest nginx made of it (" + strconv.Itoa(want.Status) + " from Apache); nginx shows 500"
	}
	return ""
}

// authStatus finds the status in an access-log line.
var authStatus = regexp.MustCompile(`" ([0-9]{3}) `)

// lastAuthStatus is the status orderly answered nginx's last auth
// request with, from its access log, once the log has settled: orderly
// writes it from a goroutine of its own, and which line is the last
// request's is known only when no more come (nginx asks orderly for
// most requests, not all).
func (f *nginxFront) lastAuthStatus() string {
	settle(f.authLog)
	b, _ := os.ReadFile(f.authLog)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if m := authStatus.FindStringSubmatch(lines[len(lines)-1]); m != nil {
		return m[1]
	}
	return ""
}

func (f *nginxFront) errorLog(l apachetest.Layout) func() string {
	return orderlyFront{}.errorLog(l)
}

func (f *nginxFront) start(t *testing.T, l apachetest.Layout, backend string) (string, func()) {
	t.Helper()
	auth := freePort(t)
	f.authLog = filepath.Join(l.Dir, "access.log")
	os.Remove(f.authLog)
	_, stopOrderly := orderlyFront{access: true, extra: fmt.Sprintf("forward_auth {\n  listen = %q\n  style  = \"nginx\"\n}\n", auth)}.start(t, l, backend)
	for deadline := time.Now().Add(5 * time.Second); !listening(auth); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			stopOrderly()
			t.Fatalf("orderly's forward-auth listener %s did not open", auth)
		}
	}
	addr := freePort(t)
	dir := filepath.Join(l.Dir, "nginx")
	os.MkdirAll(dir, 0o755)
	conf := fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  server {
    listen %[2]s;
    # Keep the path as the client sent it: orderly and Apache both
    # decide on the raw request-target.
    merge_slashes off;
    # Header-based legacy rules (SetEnvIf from_lan ...) must see every
    # header the client sent.
    underscores_in_headers on;
    location = /_orderly_auth {
      internal;
      proxy_pass http://%[3]s;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-Content-Length $content_length;
      proxy_set_header X-Original-Transfer-Encoding $http_transfer_encoding;
      proxy_set_header X-Original-URI $request_uri;
      proxy_set_header X-Original-Method $request_method;
      proxy_set_header X-Original-Protocol $server_protocol;
      proxy_set_header X-Forwarded-Host $http_host;
    }
    location / {
      auth_request /_orderly_auth;
      auth_request_set $orderly_user $upstream_http_x_remote_user;
      auth_request_set $orderly_challenge $upstream_http_www_authenticate;
      add_header WWW-Authenticate $orderly_challenge always;
      proxy_set_header X-Remote-User $orderly_user;
      proxy_set_header Host $http_host;
      proxy_pass http://%[4]s;
    }
  }
}
`, dir, addr, auth, backend)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(f.nginx, "-c", path, "-p", dir, "-e", filepath.Join(dir, "error.log"))
	out, _ := os.Create(filepath.Join(dir, "nginx.out"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		stopOrderly()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		out.Close()
		stopOrderly()
	}
	for deadline := time.Now().Add(5 * time.Second); !listening(addr); time.Sleep(5 * time.Millisecond) {
		select {
		case <-exited:
			b, _ := os.ReadFile(out.Name())
			stopOrderly()
			t.Fatalf("nginx exited:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("nginx did not listen on %s", addr)
		}
	}
	return addr, stop
}

// TestForwardAuthNginx replays the whole corpus through real nginx with
// auth_request asking orderly's forward-auth endpoint, in front of the
// rule-less backend, and compares every answer with Apache running the
// legacy rules, as TestDifferential does for orderly serve: the same
// policy decides the same through either door. A request nginx answers
// itself without asking (it refuses some request-targets Apache takes)
// is counted apart; none of them may be a bypass.
func TestForwardAuthNginx(t *testing.T) {
	nginx := apachetest.RequireTool(t, "nginx", "nginx-light")
	fr := &nginxFront{nginx: nginx}
	tl := replay(t, fr)
	for _, m := range tl.mismatches {
		t.Error(m)
	}
	for _, m := range tl.logMismatches {
		t.Error(m)
	}
	if tl.bypasses > 0 {
		t.Errorf("%d bypasses through nginx + forward-auth", tl.bypasses)
	}
	tl.printExact("forward-auth")
	fmt.Printf("forward-auth: nginx auth_request + orderly agree with Apache on %d/%d requests across %d cases, %d bypasses\n",
		tl.agree, tl.requests-len(tl.tolerated), tl.cases, tl.bypasses)
	for _, m := range tl.tolerated {
		t.Log(m)
	}
	fmt.Printf("forward-auth: %d refusals differ in kind only (nginx refused the request itself, shows orderly's 400/404 as 500, or does not pass on what a SetEnvIf rule reads)\n", len(tl.tolerated))
	if tl.requests == 0 {
		t.Fatal("no request was replayed")
	}
}

// The forward-auth endpoint's conventions, without nginx: Traefik's and
// Caddy's X-Forwarded-* headers and Envoy's path prefix name the same
// request and get the same answer; a header of another convention (the
// client's own, passed on by the front proxy) is never read.
func TestForwardAuthConventions(t *testing.T) {
	apachetest.Require(t)
	_, l := inlineCase(t, "fwd", `-- legacy.conf --
<Directory "@DOCROOT@/admin">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
-- docroot/index.html --
home
-- docroot/admin/index.html --
admin
-- requests --
GET /admin/ 10.1.2.3 want=200
`)
	type check struct {
		name   string
		target string
		header [][2]string
		ip     string
		want   int
	}
	for _, style := range []struct {
		name, extra string
		checks      []check
	}{
		{"nginx", "", []check{
			{"allowed", "/", [][2]string{{"X-Original-URI", "/admin/"}, {"X-Original-Method", "GET"}, {"X-Forwarded-Host", "www.example"}}, "10.1.2.3", 200},
			{"refused", "/", [][2]string{{"X-Original-URI", "/admin/"}, {"X-Original-Method", "GET"}, {"X-Forwarded-Host", "www.example"}}, "8.8.8.8", 403},
			{"dot segments", "/", [][2]string{{"X-Original-URI", "/x/../%61dmin/"}, {"X-Forwarded-Host", "www.example"}}, "8.8.8.8", 403},
			{"no description", "/index.html", nil, "8.8.8.8", 400},
			{"no host", "/", [][2]string{{"X-Original-URI", "/index.html"}}, "8.8.8.8", 400},
		}},
		{"forwarded", "", []check{
			{"traefik refused", "/", [][2]string{{"X-Forwarded-Uri", "/admin/index.html"}, {"X-Forwarded-Method", "GET"}, {"X-Forwarded-Host", "www.example"}}, "8.8.8.8", 403},
			{"caddy allowed", "/", [][2]string{{"X-Forwarded-Uri", "/index.html"}, {"X-Forwarded-Method", "GET"}, {"X-Forwarded-Host", "www.example"}}, "8.8.8.8", 200},
			// A client's X-Original-URI, passed on by Traefik, is not read.
			{"injected nginx header", "/", [][2]string{{"X-Original-URI", "/index.html"}, {"X-Forwarded-Uri", "/admin/"}, {"X-Forwarded-Host", "www.example"}}, "8.8.8.8", 403},
		}},
		{"envoy", "  path_prefix = \"/check\"\n", []check{
			{"refused", "/check/admin/", nil, "8.8.8.8", 403},
			{"allowed", "/check/admin/", nil, "10.9.9.9", 200},
			{"outside the prefix", "/admin/", nil, "10.9.9.9", 400},
			{"injected headers", "/check/admin/", [][2]string{{"X-Original-URI", "/index.html"}, {"X-Forwarded-Uri", "/index.html"}}, "8.8.8.8", 403},
		}},
	} {
		t.Run(style.name, func(t *testing.T) {
			auth := freePort(t)
			_, stop := orderlyFront{extra: fmt.Sprintf("forward_auth {\n  listen = %q\n  style  = %q\n%s}\n", auth, style.name, style.extra)}.start(t, l, "127.0.0.1:1")
			defer stop()
			for deadline := time.Now().Add(5 * time.Second); !listening(auth); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("no forward-auth listener")
				}
			}
			for _, tt := range style.checks {
				got, err := apachetest.Do(auth, apachetest.Request{Method: "GET", Target: tt.target, ClientIP: tt.ip, Header: tt.header})
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tt.want {
					t.Errorf("%s: %d, want %d", tt.name, got.Status, tt.want)
				}
			}
			log := waitLog(func() string { return readLog(filepath.Join(l.Dir, "orderly-error.log")) }, func(s string) bool { return strings.Contains(s, "AH01797") })
			if !strings.Contains(log, "AH01797") {
				t.Errorf("refusals wrote no AH01797 line:\n%s", log)
			}
		})
	}
}

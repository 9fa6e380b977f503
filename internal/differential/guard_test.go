package differential

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// elsewhere is a loopback address that is not orderly's: requests from it
// stand for anyone who reaches the backend directly. orderly, on the same
// machine, connects to the backend from 127.0.0.1.
const elsewhere = "127.0.0.2"

// TestBackendGuard is issue #7 item 8, on real Apache 2.4. The backend
// guard written by `orderly translate -backend-guard` passes apache2 -t
// and, on a backend with access rules of its own (a Require ip section and
// a Satisfy Any one, mod_access_compat loaded):
//   - refuses every direct request from another address, whatever
//     X-Forwarded-For and token it carries, and one from orderly's address
//     without the token;
//   - answers requests through orderly, with the client address from
//     orderly's X-Forwarded-For in force (the backend's own Require ip
//     sees it, private addresses included, and its access log shows it),
//     its own rules still in force;
//
// and `orderly serve` probes the backend at start-up: guard with token,
// no warning and orderly_backend_guard_ok 1; orderly without the token,
// a warning that the backend refuses orderly; the guard without a token,
// a warning that lock-down cannot be proved; no guard, warnings that the
// backend neither uses orderly's X-Forwarded-For nor refuses requests
// without the token; each with the gauge at 0.
func TestBackendGuard(t *testing.T) {
	paths := apachetest.Require(t)
	if c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(elsewhere)}}).Dial("tcp", freePort(t)); err == nil {
		c.Close()
	} else if !strings.Contains(err.Error(), "refused") {
		t.Fatalf("cannot send from %s: %v", elsewhere, err)
	}
	_, l := inlineCase(t, "guard", `-- legacy.conf --
<Directory "@DOCROOT@/secret">
    Order deny,allow
    Deny from all
</Directory>
-- docroot/index.html --
home
-- docroot/admin/index.html --
admin
-- docroot/open/index.html --
open
-- docroot/secret/index.html --
secret
-- requests --
GET / 203.0.113.9 want=200
`)
	tok := make([]byte, 24)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	tokenFile := filepath.Join(l.Dir, "guard.token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The guards, as an operator writes them: with the token and without.
	translateGuard := func(dir string, args ...string) string {
		t.Helper()
		args = append([]string{"translate", "-backend-guard", "-o", dir}, args...)
		if out, err := exec.Command(binary, args...).CombinedOutput(); err != nil {
			t.Fatalf("orderly %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return filepath.Join(dir, "orderly-guard.conf")
	}
	withToken := translateGuard(filepath.Join(l.Dir, "guard-token"), "-orderly-addr", "127.0.0.1", "-guard-token-file", tokenFile)
	ipOnly := translateGuard(filepath.Join(l.Dir, "guard-ip"), "-orderly-addr", "127.0.0.1")
	// The backend's own rules, which the guard must leave in force.
	own := fmt.Sprintf(`<Directory />
    AllowOverride None
</Directory>
<Directory "%[1]s/admin">
    Require ip 10.0.0.0/8
</Directory>
<Directory "%[1]s/open">
    Order allow,deny
    Allow from all
    Satisfy Any
</Directory>
`, l.DocRoot)
	opts := func(guard string) apachetest.Options {
		o := apachetest.Options{DocumentRoot: l.DocRoot, AccessCompat: true, Extra: own}
		if guard != "" {
			o.Include = []string{guard}
		}
		return o
	}
	backend := apachetest.Start(t, opts(withToken))

	t.Run("apache2 -t", func(t *testing.T) {
		// The running backend's configuration, and one with a guard
		// for several addresses, IPv6 and a prefix among them, and the
		// proxies in front of orderly.
		many := translateGuard(filepath.Join(l.Dir, "guard-many"), "-orderly-addr", "127.0.0.1,::1,10.42.0.0/16", "-trusted-proxies", "10.9.0.0/16,2001:db8::/32", "-guard-token-file", tokenFile)
		conf, err := os.ReadFile(filepath.Join(backend.Dir, "httpd.conf"))
		if err != nil {
			t.Fatal(err)
		}
		manyConf := filepath.Join(l.Dir, "many.conf")
		os.WriteFile(manyConf, []byte(strings.Replace(string(conf), withToken, many, 1)), 0o644)
		for _, f := range []string{filepath.Join(backend.Dir, "httpd.conf"), manyConf} {
			out, err := exec.Command(paths.Apache, "-t", "-f", f).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Syntax OK") {
				t.Errorf("apache2 -t -f %s: %v\n%s", f, err, out)
			}
		}
	})

	metrics := freePort(t)
	front := func(t *testing.T, withToken bool) (string, string, func()) {
		hcl := fmt.Sprintf(`listen = %q
backend "httpd" {
  url = "http://%s"
%s}
legacy {
  files         = [%q]
  document_root = %q
  semantics     = "2.4-compat"
}
client_ip {
  trusted_proxies = ["127.0.0.1/32"]
}
error_log = %q
metrics {
  listen = %q
}
`, freePort(t), backend.Addr, map[bool]string{true: fmt.Sprintf("  guard_token_file = %q\n", tokenFile)}[withToken],
			l.Legacy, l.DocRoot, filepath.Join(l.Dir, "orderly-error.log"), metrics)
		return serveHCL(t, l.Dir, hcl, metrics)
	}

	t.Run("direct requests refused", func(t *testing.T) {
		for _, path := range []string{"/", "/open/", "/admin/"} {
			for _, src := range []string{elsewhere, "127.0.0.1"} {
				for _, xff := range []string{"", "127.0.0.1", "10.1.2.3"} {
					for _, tok := range []bool{false, true} {
						if src == "127.0.0.1" && tok {
							continue // that is what orderly sends
						}
						rq := apachetest.Request{Method: "GET", Target: path, ClientIP: xff}
						if tok {
							rq.Header = [][2]string{{"X-Orderly-Guard", token}}
						}
						if got := statusFrom(t, src, backend.Addr, rq); got != 403 {
							t.Errorf("from %s, X-Forwarded-For %q, token %v: %s answered %d, want 403", src, xff, tok, path, got)
						}
					}
				}
			}
		}
	})

	t.Run("through orderly", func(t *testing.T) {
		errFrom := fileSize(filepath.Join(backend.Dir, "error.log"))
		addr, out, stop := front(t, true)
		defer stop()
		from := fileSize(filepath.Join(backend.Dir, "access.log"))
		for _, tt := range []struct {
			path, client string
			want         int
		}{
			{"/", "203.0.113.9", 200},
			{"/admin/", "10.1.2.3", 200},    // the backend's Require ip sees the client, a private address
			{"/admin/", "203.0.113.9", 403}, // and still refuses the others
			{"/open/", "203.0.113.9", 200},
			{"/secret/", "203.0.113.9", 403}, // orderly's own legacy rule
		} {
			r, err := apachetest.Do(addr, apachetest.Request{Method: "GET", Target: tt.path, ClientIP: tt.client})
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tt.want {
				t.Errorf("%s from %s through orderly: %d, want %d", tt.path, tt.client, r.Status, tt.want)
			}
		}
		// The backend's access log (%a) names the clients, not orderly.
		// Apache writes a line after its response: wait for all of them.
		wantLog := []string{
			`203.0.113.9 "GET / HTTP/1.1" 200`,
			`10.1.2.3 "GET /admin/ HTTP/1.1" 200`,
			`203.0.113.9 "GET /admin/ HTTP/1.1" 403`,
			`203.0.113.9 "GET /open/ HTTP/1.1" 200`,
		}
		var log string
		var missing []string
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			log, missing = readFrom(filepath.Join(backend.Dir, "access.log"), from), nil
			for _, w := range wantLog {
				if !strings.Contains(log, w+"\n") {
					missing = append(missing, w)
				}
			}
			if len(missing) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(missing) > 0 {
			t.Errorf("backend access log lacks %q:\n%s", missing, log)
		}
		if strings.Contains(log, "/secret/") {
			t.Errorf("orderly forwarded a request its legacy rules refuse:\n%s", log)
		}
		// The probe: the guard is verified.
		msgs := guardMessages(t, out, "backend guard verified")
		if len(msgs) != 1 {
			t.Errorf("probe of the guarded backend: %q, want one \"backend guard verified\" and no warning", msgs)
		}
		if v := guardGauge(t, metrics); v != "1" {
			t.Errorf("orderly_backend_guard_ok %s, want 1", v)
		}
		// The backend logged the probe's refusals for documentation
		// addresses, never for orderly (a fail2ban there would ban it).
		refusals := map[string]int{}
		for _, m := range errorLogClient.FindAllStringSubmatch(readFrom(filepath.Join(backend.Dir, "error.log"), errFrom), -1) {
			if m[2] == "AH01630" || m[1] == "127.0.0.1" {
				refusals[m[1]+" "+m[2]]++
			}
		}
		if want := map[string]int{"203.0.113.9 AH01630": 1, "192.0.2.1 AH01630": 1, "192.0.2.2 AH01630": 1}; fmt.Sprint(refusals) != fmt.Sprint(want) {
			t.Errorf("backend error log: refusals %v, want %v", refusals, want)
		}
	})

	// The probe, where it must warn.
	for _, tt := range []struct {
		name     string
		guard    string
		token    bool
		problems []string
	}{
		{"orderly without the token", withToken, false, []string{"the backend refuses orderly's own requests"}},
		{"guard without a token", ipOnly, false, []string{"guard_token_file is not set"}},
		{"no guard", "", true, []string{"does not use the client address orderly sends", "to a request without orderly's guard token"}},
	} {
		t.Run("probe/"+tt.name, func(t *testing.T) {
			backend.Reload(t, opts(tt.guard))
			_, out, stop := front(t, tt.token)
			defer stop()
			msgs := guardMessages(t, out, "backend guard check failed")
			if len(msgs) != len(tt.problems) {
				t.Fatalf("warnings %q, want %d", msgs, len(tt.problems))
			}
			for i, m := range msgs {
				if !strings.Contains(m, tt.problems[i]) {
					t.Errorf("warning %q, want it to say %q", m, tt.problems[i])
				}
			}
			if v := guardGauge(t, metrics); v != "0" {
				t.Errorf("orderly_backend_guard_ok %s, want 0", v)
			}
		})
	}
	fmt.Println("guard: direct requests refused from another address and without the token; through orderly the backend sees the client; the probe warns in 3/3 faulty set-ups and verifies the guarded one")
}

// statusFrom sends rq to addr from the local address src, as apachetest.Do
// does, and returns the status.
func statusFrom(t *testing.T, src, addr string, rq apachetest.Request) int {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: apachetest.RequestTimeout}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(apachetest.RequestTimeout))
	if _, err := c.Write(rq.Wire()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s from %s: %v", rq, src, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// serveHCL runs `orderly serve` on an HCL file written into dir and waits
// until it listens on its listen address and the others given; it returns
// that address, the file of orderly's output and a function that stops it
// (see serve).
func serveHCL(t *testing.T, dir, hcl string, others ...string) (string, string, func()) {
	t.Helper()
	addr := regexp.MustCompile(`(?m)^listen = "([^"]+)"`).FindStringSubmatch(hcl)[1]
	path := filepath.Join(dir, "orderly.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(dir, "orderly.out")
	stop, err := serve(path, outPath, append(others, addr)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr, outPath, stop
}

// guardMessages waits until orderly's output (JSON lines) has a line about
// the backend guard and returns the "problem" of each line whose message
// is msg (the message itself for "backend guard verified"), failing the
// test if any other guard line appears.
func guardMessages(t *testing.T, outPath, msg string) []string {
	t.Helper()
	line := regexp.MustCompile(`(?m)^.*"msg":"(backend guard[^"]*)".*$`)
	problem := regexp.MustCompile(`"problem":"((?:[^"\\]|\\.)*)"`)
	var found [][]string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(outPath)
		if found = line.FindAllStringSubmatch(string(b), -1); len(found) > 0 {
			time.Sleep(100 * time.Millisecond) // the other lines of the same probe
			b, _ = os.ReadFile(outPath)
			found = line.FindAllStringSubmatch(string(b), -1)
			break
		}
	}
	var out []string
	for _, f := range found {
		if f[1] != msg && !strings.HasPrefix(f[1], msg) {
			t.Errorf("unexpected guard line: %s", f[0])
			continue
		}
		if p := problem.FindStringSubmatch(f[0]); p != nil {
			out = append(out, strings.ReplaceAll(p[1], `\"`, `"`))
		} else {
			out = append(out, f[1])
		}
	}
	return out
}

// guardGauge returns orderly_backend_guard_ok from orderly's /metrics.
func guardGauge(t *testing.T, metrics string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^orderly_backend_guard_ok (\S+)$`).FindStringSubmatch(scrapeMetrics(t, metrics))
	if m == nil {
		t.Fatal("no orderly_backend_guard_ok")
	}
	return m[1]
}

package differential

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

const openCase = `-- legacy.conf --
<Directory "@DOCROOT@">
    Order allow,deny
    Allow from all
</Directory>
-- docroot/index.html --
home
-- requests --
GET / 10.1.2.3 want=200
`

// get sends GET path to addr as client ip and returns the status (0 when
// there was no answer) and how long it took.
func get(addr, path, ip string) (int, time.Duration) {
	start := time.Now()
	resp, err := apachetest.Do(addr, apachetest.Request{Method: "GET", Target: path, ClientIP: ip})
	if err != nil {
		return 0, time.Since(start)
	}
	return resp.Status, time.Since(start)
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBackendPool runs orderly in front of two real Apache backends with
// health checks: it is ready once a backend answers, spreads requests
// over both, stops using one that goes down, answers 502 at once (not
// after a wait) when both are down and is not ready then, and uses a
// backend again as soon as it is back.
func TestBackendPool(t *testing.T) {
	apachetest.Require(t)
	_, l := inlineCase(t, "pool", openCase)
	a := apachetest.Start(t, apachetest.Options{DocumentRoot: l.DocRoot, RemoteIP: true})
	b := apachetest.Start(t, apachetest.Options{DocumentRoot: l.DocRoot, RemoteIP: true})
	metrics, admin := freePort(t), freePort(t)
	front := orderlyFront{metrics: metrics, admin: admin, backend: fmt.Sprintf(`backend "httpd" {
  urls         = ["http://%s", "http://%s"]
  fail_timeout = "30s"
  health_check {
    path     = "/index.html"
    interval = "200ms"
    timeout  = "1s"
  }
}`, a.Addr, b.Addr)}
	addr, stop := front.start(t, l, "")
	defer stop()
	ready := "http://" + admin + "/-/ready"
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5 s", what)
			}
		}
	}
	waitFor("ready", func() bool { return status(t, ready) == 200 })
	for i := range 20 {
		if st, _ := get(addr, "/", fmt.Sprintf("10.0.0.%d", i)); st != 200 {
			t.Fatalf("both up: %d", st)
		}
	}
	hits := func(s *apachetest.Server) int { return strings.Count(s.AccessLog(), "GET / ") }
	if hits(a) < 5 || hits(b) < 5 {
		t.Errorf("requests not spread: %d on a, %d on b", hits(a), hits(b))
	}

	// A goes down: at most one request finds out (passive detection),
	// or none when the health check saw it first.
	a.Stop()
	bad := 0
	for range 20 {
		if st, _ := get(addr, "/", "10.0.0.1"); st != 200 {
			bad++
		}
	}
	if bad > 1 {
		t.Errorf("%d of 20 requests failed with a backend down, want at most 1", bad)
	}
	waitFor("backend a reported down", func() bool {
		return strings.Contains(scrapeMetrics(t, metrics), fmt.Sprintf(`orderly_backend_up{backend="http://%s"} 0`, a.Addr))
	})

	// Both down: 502 at once, and not ready.
	b.Stop()
	waitFor("not ready with both down", func() bool { return status(t, ready) == 503 })
	st, took := get(addr, "/", "10.0.0.1")
	if st != 502 || took > 500*time.Millisecond {
		t.Errorf("both down: %d after %v, want 502 at once", st, took)
	}

	// B is back: used again without waiting for fail_timeout.
	b.Reload(t, apachetest.Options{DocumentRoot: l.DocRoot, RemoteIP: true})
	waitFor("ready again", func() bool { return status(t, ready) == 200 })
	for range 5 {
		if st, _ := get(addr, "/", "10.0.0.1"); st != 200 {
			t.Errorf("b back: %d", st)
		}
	}
}

// slowBackend answers /slow after d, everything else at once, and counts
// requests in flight.
func slowBackend(t *testing.T, d time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(d)
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestDrain: SIGTERM stops orderly taking connections and makes it not
// ready, and the requests in flight finish within shutdown_grace.
func TestDrain(t *testing.T) {
	_, l := inlineCase(t, "drain", openCase)
	backend := slowBackend(t, 1500*time.Millisecond)
	admin := freePort(t)
	front := orderlyFront{admin: admin, extra: "shutdown_grace = \"10s\"\n"}
	addr, stop := front.start(t, l, backend)
	defer stop()
	orderlyPid := int(pid.Load())
	done := make(chan int)
	go func() {
		st, _ := get(addr, "/slow", "10.0.0.1")
		done <- st
	}()
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Kill(orderlyPid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if st := status(t, "http://"+admin+"/-/ready"); st != 503 {
		t.Errorf("/-/ready while draining: %d, want 503", st)
	}
	if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		c.Close()
		t.Errorf("orderly still accepts connections while draining")
	}
	if st := <-done; st != 200 {
		t.Errorf("the request in flight at SIGTERM: %d, want 200", st)
	}
}

// TestLimits: a request line over the limit gets 414 as from Apache; a
// client with too many requests in flight gets 429 while others are
// served; a slowloris client sending its headers a byte at a time is cut
// off after read_header_timeout, and meanwhile others are served.
func TestLimits(t *testing.T) {
	_, l := inlineCase(t, "limits", openCase)
	backend := slowBackend(t, time.Second)
	front := orderlyFront{extra: `limits {
  read_header_timeout     = "1s"
  max_request_line        = 200
  max_requests_per_client = 2
}
`}
	addr, stop := front.start(t, l, backend)
	defer stop()
	if st, _ := get(addr, "/?"+strings.Repeat("a", 300), "10.0.0.1"); st != 414 {
		t.Errorf("a 320-byte request line: %d, want 414", st)
	}
	if st, _ := get(addr, "/?"+strings.Repeat("a", 150), "10.0.0.1"); st != 200 {
		t.Errorf("a 170-byte request line: %d, want 200", st)
	}
	var wg sync.WaitGroup
	codes := make(chan int, 4)
	for _, ip := range []string{"10.0.0.7", "10.0.0.7", "10.0.0.7", "10.0.0.8"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _ := get(addr, "/slow", ip)
			codes <- st
		}()
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	close(codes)
	n := map[int]int{}
	for c := range codes {
		n[c]++
	}
	if n[200] != 3 || n[429] != 1 {
		t.Errorf("three slow requests from one client and one from another: %v, want 3×200 and 1×429", n)
	}

	// Slowloris.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, bufio.NewReader(c))
		closed <- time.Since(start)
	}()
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n"))
	for i := 0; i < 20; i++ {
		if _, err := c.Write([]byte("X")); err != nil {
			break
		}
		if i == 2 {
			if st, took := get(addr, "/", "10.0.0.9"); st != 200 || took > 500*time.Millisecond {
				t.Errorf("another client during the slowloris: %d after %v", st, took)
			}
		}
		select {
		case d := <-closed:
			if d > 3*time.Second {
				t.Errorf("slowloris connection closed after %v, want about read_header_timeout (1s)", d)
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Errorf("the slowloris connection was still open after %v", time.Since(start))
}

package differential

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// The two legacy configurations the reload test swaps between: B opens
// /open/ to everyone; both keep the same "Allow from 10.0.0.0/8" line.
const (
	reloadA = `<Directory "@DOCROOT@">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
`
	reloadB = reloadA + `<Directory "@DOCROOT@/open">
    Order allow,deny
    Allow from all
</Directory>
`
	reloadBad = reloadA + `<Directory "@DOCROOT@/open">
    Order sideways
</Directory>
`
)

// TestReloadUnderLoad runs orderly in front of real Apache with traffic
// from several clients while the legacy rules are swapped back and forth
// by SIGHUP and POST /-/reload, with a broken configuration in between.
// No request fails or gets an answer neither configuration gives; after
// each good reload the new rules are in force, after the broken one the
// previous rules keep serving and a metric says the reload failed; and
// the counter of a rule both configurations keep counts every request
// across all reloads.
func TestReloadUnderLoad(t *testing.T) {
	apachetest.Require(t)
	_, l := inlineCase(t, "reload", "-- legacy.conf --\n"+reloadA+
		"-- docroot/index.html --\nhome\n-- docroot/open/index.html --\nopen\n-- requests --\nGET /index.html 10.1.2.3 want=200\n")
	setLegacy := func(conf string) {
		t.Helper()
		if err := os.WriteFile(l.Legacy, []byte(strings.ReplaceAll(conf, "@DOCROOT@", l.DocRoot)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	backend := apachetest.Start(t, backendOptions(l))
	metrics, admin := freePort(t), freePort(t)
	addr, stop := orderlyFront{metrics: metrics, admin: admin, access: true}.start(t, l, backend.Addr)
	defer stop()
	orderlyPid := int(pid.Load())

	scrape := func() string { return scrapeMetrics(t, metrics) }
	metric := func(text, series string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no series %s in:\n%s", series, text)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	allowID := regexp.MustCompile(`orderly_rule_info\{directive="Allow from 10.0.0.0/8",file="[^"]*",line="4",rule_id="([^"]+)"\}`).FindStringSubmatch(scrape())
	if allowID == nil {
		t.Fatal("no rule info for Allow from 10.0.0.0/8")
	}
	allowSeries := `orderly_rule_matches_total{rule_id="` + allowID[1] + `"}`

	lan := apachetest.Request{Method: "GET", Target: "/index.html", ClientIP: "10.1.2.3"}
	open := apachetest.Request{Method: "GET", Target: "/open/index.html", ClientIP: "8.8.8.8"}
	status := func(rq apachetest.Request) int {
		t.Helper()
		r, err := apachetest.Do(addr, rq)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status
	}
	// Matches of the kept rule per LAN request, measured before any reload.
	base := metric(scrape(), allowSeries)
	for range 10 {
		status(lan)
	}
	perRequest := (metric(scrape(), allowSeries) - base) / 10
	if perRequest < 1 {
		t.Fatalf("the Allow line matched %v times per request, want at least 1", perRequest)
	}

	reloadHTTP := func() (int, string) {
		t.Helper()
		resp, err := http.Post("http://"+admin+"/-/reload", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	reloadHUP := func(wantGen float64) {
		t.Helper()
		if err := syscall.Kill(orderlyPid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for metric(scrape(), "orderly_config_generation") < wantGen {
			if time.Now().After(deadline) {
				t.Fatalf("SIGHUP: generation %v never reached", wantGen)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// Load: clients that each accept only the answers of the two good
	// configurations.
	var lanSent, openSent atomic.Int64
	var failures atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				rq, ok := lan, map[int]bool{200: true}
				if i%2 == 1 {
					rq, ok = open, map[int]bool{200: true, 403: true}
				}
				r, err := apachetest.Do(addr, rq)
				if rq.ClientIP == lan.ClientIP && err == nil {
					lanSent.Add(1)
				} else if err == nil {
					openSent.Add(1)
				}
				if err != nil || !ok[r.Status] {
					if failures.Add(1) <= 5 {
						t.Errorf("%s during reloads: %v %v", rq, r.Status, err)
					}
				}
			}
		}()
	}

	// Traffic on every generation: wait for answers to /open/ after each
	// swap (they were decided by it or a later one).
	traffic := func() {
		t.Helper()
		from := openSent.Load()
		deadline := time.Now().Add(10 * time.Second)
		for openSent.Load() < from+5 {
			if time.Now().After(deadline) {
				t.Fatal("no traffic")
			}
			time.Sleep(time.Millisecond)
		}
	}
	traffic()
	gen := 1.0
	for i := range 10 {
		conf, want := reloadB, 200
		if i%2 == 1 {
			conf, want = reloadA, 403
		}
		setLegacy(conf)
		gen++
		if i%2 == 0 {
			if code, body := reloadHTTP(); code != 200 || !strings.Contains(body, fmt.Sprintf("generation %d", int(gen))) {
				t.Fatalf("POST /-/reload: %d %s", code, body)
			}
		} else {
			reloadHUP(gen)
		}
		if got := status(open); got != want {
			t.Fatalf("reload %d: /open/ from outside answers %d, want %d", i, got, want)
		}
		traffic()
	}
	// A broken configuration: rejected with file:line, the previous one
	// keeps serving, and the metrics say so.
	setLegacy(reloadBad)
	code, body := reloadHTTP()
	if code != 400 || !strings.Contains(body, "legacy.conf:7: unknown order") {
		t.Errorf("POST /-/reload of a broken configuration: %d %s", code, body)
	}
	if got := status(open); got != 403 {
		t.Errorf("after a rejected reload /open/ answers %d, want 403 (the previous rules)", got)
	}
	close(done)
	wg.Wait()

	text := scrape()
	if v := metric(text, "orderly_config_last_reload_successful"); v != 0 {
		t.Errorf("orderly_config_last_reload_successful %v after a rejected reload, want 0", v)
	}
	if v := metric(text, `orderly_config_reloads_total{result="failure"}`); v != 1 {
		t.Errorf("failed reloads %v, want 1", v)
	}
	if v := metric(text, `orderly_config_reloads_total{result="success"}`); v != 10 {
		t.Errorf("successful reloads %v, want 10", v)
	}
	if v := metric(text, "orderly_config_generation"); v != gen {
		t.Errorf("generation %v, want %v", v, gen)
	}
	lanTotal := float64(10+lanSent.Load()) * perRequest
	if got := metric(text, allowSeries) - base; got != lanTotal {
		t.Errorf("kept rule counted %v matches across reloads, want %v (%d LAN requests)", got, lanTotal, 10+lanSent.Load())
	}
	// Each request was decided by one policy from start to end: the
	// access log names its generation, and the answer is that
	// generation's (odd: A refuses /open/ from outside; even: B allows).
	// The log has a line for every answer to /open/ the traffic counted,
	// once orderly's log writer has caught up.
	line := regexp.MustCompile(`(?m)^8\.8\.8\.8 .* "GET /open/index\.html HTTP/1\.1" (\d+) .* generation=(\d+) scope=\S+ policy=\S+$`)
	logText := waitLog(func() string { return readLog(filepath.Join(l.Dir, "access.log")) }, func(s string) bool {
		return int64(len(line.FindAllString(s, -1))) >= openSent.Load()
	})
	if n := len(line.FindAllString(logText, -1)); int64(n) < openSent.Load() {
		t.Errorf("access log: %d lines for /open/ from outside, want at least the %d answers counted", n, openSent.Load())
	}
	seen := map[int]int{}
	for _, m := range line.FindAllStringSubmatch(logText, -1) {
		st, _ := strconv.Atoi(m[1])
		g, _ := strconv.Atoi(m[2])
		seen[g]++
		if want := map[bool]int{true: 200, false: 403}[g%2 == 0]; st != want {
			t.Errorf("access log: /open/ answered %d by generation %d, whose rules answer %d", st, g, want)
		}
	}
	if len(seen) < 11 {
		t.Errorf("access log: /open/ requests seen in generations %v, want all 11", seen)
	}
	// logrotate: the log moved away, SIGUSR1, and orderly writes a new one.
	logPath := filepath.Join(l.Dir, "access.log")
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(orderlyPid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status(lan)
		if b, _ := os.ReadFile(logPath); strings.Contains(string(b), `"GET /index.html HTTP/1.1" 200`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("SIGUSR1: no new access log at the configured path")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("reload: 10 reloads (5 SIGHUP, 5 POST) and 1 rejected under load, %d LAN requests counted on the kept rule, %d failures\n", 10+lanSent.Load(), failures.Load())
}

package differential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestRetirePrometheus feeds Debian's Prometheus from a running orderly
// in front of real Apache and asks orderly retire for its verdicts over a
// window: the Allow the traffic needed is "needed", the Deny whose
// deletion would change none of its section's requests "can-go", the
// lines of the section no request reached "not-seen" (its Order, a
// setting, is not reported).
func TestRetirePrometheus(t *testing.T) {
	apachetest.Require(t)
	prom := apachetest.RequireTool(t, "prometheus", "prometheus")
	c, l := inlineCase(t, "retire", `-- legacy.conf --
<Directory "@DOCROOT@/admin">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
<Directory "@DOCROOT@/old">
    Order deny,allow
    Deny from all
    Allow from 192.0.2.0/24
</Directory>
-- docroot/index.html --
home
-- docroot/admin/index.html --
admin
-- docroot/old/index.html --
old
-- requests --
GET /admin/ 10.1.2.3 want=200
`)
	backend := apachetest.Start(t, backendOptions(l))
	metrics := freePort(t)
	addr, stop := orderlyFront{metrics: metrics}.start(t, l, backend.Addr)
	defer stop()

	// Prometheus scraping orderly every second, on loopback, stopped by pid.
	pdir := filepath.Join(l.Dir, "prometheus")
	os.MkdirAll(pdir, 0o755)
	conf := filepath.Join(pdir, "prometheus.yml")
	os.WriteFile(conf, []byte(fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: orderly\n    static_configs:\n      - targets: [%q]\n", metrics)), 0o644)
	web := freePort(t)
	var plog bytes.Buffer
	cmd := exec.Command(prom, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(pdir, "data"), "--web.listen-address="+web)
	cmd.Stdout, cmd.Stderr = &plog, &plog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	query := func(q string) string {
		resp, err := http.Get("http://" + web + "/api/v1/query?query=" + q)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(query("up"), `"value":[`) || !strings.Contains(query("up"), `,"1"]`) {
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus never scraped orderly:\n%s", plog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The rules are now older than a 4s window; then traffic, then a few
	// scrapes of it.
	time.Sleep(5 * time.Second)
	for range 3 {
		if _, err := apachetest.Do(addr, c.Requests[0]); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2500 * time.Millisecond)

	out, err := exec.Command(binary, "retire", "-config", filepath.Join(l.Dir, "orderly.hcl"),
		"-prometheus", "http://"+web, "-window", "4s", "-format", "json").Output()
	if err != nil {
		t.Fatalf("orderly retire -prometheus: %v\n%s", err, out)
	}
	var findings []struct{ Kind, Directive string }
	var raw []map[string]any
	json.Unmarshal(out, &raw)
	for _, f := range raw {
		findings = append(findings, struct{ Kind, Directive string }{fmt.Sprint(f["kind"]), fmt.Sprint(f["directive"]) + "@" + fmt.Sprint(f["line"])})
	}
	got := map[string]string{}
	for _, f := range findings {
		got[f.Directive] = f.Kind
	}
	for directive, want := range map[string]string{
		"Allow from 10.0.0.0/8@4":   "needed", // deleting it refuses 10.1.2.3
		"Deny from all@3":           "can-go", // the Allow admits 10.1.2.3 with or without it
		"Allow from 192.0.2.0/24@9": "not-seen",
		"Deny from all@8":           "not-seen",
		// A setting never matches: its silence is no evidence.
		"Order deny,allow@7": "",
	} {
		if got[directive] != want {
			t.Errorf("%s: %q, want %q\n%s", directive, got[directive], want, out)
		}
	}
	fmt.Printf("retire: Prometheus %s over a 4s window: %d findings\n", web, len(findings))
}

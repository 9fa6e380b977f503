package differential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestMetricsScrape runs orderly in front of real Apache, sends traffic,
// scrapes /metrics and has Prometheus's promtool check the exposition.
// Every legacy rule has its series from start-up, at zero until it fires.
func TestMetricsScrape(t *testing.T) {
	apachetest.Require(t)
	promtool := apachetest.RequireTool(t, "promtool", "prometheus")
	cases, err := apachetest.LoadCorpus(*corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var c *apachetest.Case
	for _, x := range cases {
		if x.Name == "001-localhost-admin" {
			c = x
		}
	}
	if c == nil {
		t.Fatal("case 001-localhost-admin missing")
	}
	if !useNames(t, c) {
		t.Skip("case 001-localhost-admin looks up host names and there is no private name service")
	}
	l, err := c.Materialize(filepath.Join(apachetest.TempDir(t), c.Name))
	if err != nil {
		t.Fatal(err)
	}
	backend := apachetest.Start(t, backendOptions(l))
	metrics := freePort(t)
	addr, stop := orderlyFront{metrics: metrics}.start(t, l, backend.Addr)
	defer stop()

	scrape := func() string { return scrapeMetrics(t, metrics) }
	before := scrape()
	ruleID := regexp.MustCompile(`orderly_rule_info\{directive="([^"]*)",file="[^"]*",line="(\d+)",rule_id="([^"]+)"\} 1`)
	ids := map[string]string{} // directive -> id
	for _, m := range ruleID.FindAllStringSubmatch(before, -1) {
		ids[m[1]] = m[3]
	}
	allow, deny := ids["Allow from 127.0.0.1 10.0.0.0/8"], ids["Deny from all"]
	if allow == "" || deny == "" {
		t.Fatalf("rule info missing for the case's rules:\n%s", before)
	}
	for _, id := range []string{allow, deny} {
		if !strings.Contains(before, `orderly_rule_matches_total{rule_id="`+id+`"} 0`) {
			t.Errorf("rule %s has no zero series at start-up", id)
		}
	}
	for _, ip := range []string{"10.1.2.3", "8.8.8.8", "8.8.4.4", "127.0.0.1"} {
		if _, err := apachetest.Do(addr, apachetest.Request{Method: "GET", Target: "/admin/", ClientIP: ip}); err != nil {
			t.Fatal(err)
		}
	}
	after := scrape()
	for _, want := range []string{
		`orderly_rule_decisive_hits_total{rule_id="` + allow + `"} 2`,
		`orderly_rule_decisive_hits_total{rule_id="` + deny + `"} 2`,
		`orderly_rule_matches_total{rule_id="` + deny + `"} 4`,
		`orderly_requests_total{decision="deny",layer="compat",mode="enforce"} 2`,
		`orderly_requests_total{decision="allow",layer="compat",mode="enforce"} 2`,
	} {
		if !strings.Contains(after, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if regexp.MustCompile(`orderly_rule_last_hit_timestamp_seconds\{rule_id="` + allow + `"\} 0\n`).MatchString(after) {
		t.Error("last-hit time of a rule that fired is still 0")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(after)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != "" {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
	// orderly retire on the live scrape: every rule fired, so none is
	// reported as not fired; a synthetic default that never decided is.
	cmd = exec.Command(binary, "retire", "-config", filepath.Join(l.Dir, "orderly.hcl"), "-metrics", "http://"+metrics+"/metrics", "-format", "json")
	var rout, rerr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &rout, &rerr
	if err := cmd.Run(); err != nil {
		t.Fatalf("orderly retire: %v\n%s", err, rerr.String())
	}
	var findings []struct{ Kind, RuleID string }
	if err := json.Unmarshal(rout.Bytes(), &findings); err != nil {
		t.Fatalf("orderly retire -format json: %v\n%s", err, rout.String())
	}
	for _, f := range findings {
		if f.RuleID == allow || f.RuleID == deny {
			t.Errorf("orderly retire reports %s on a rule that decided requests", f.Kind)
		}
	}
	fmt.Printf("metrics: promtool check metrics clean on a scrape of %d bytes, %d rules exported\n", len(after), strings.Count(after, "orderly_rule_matches_total{"))
}

// inlineCase parses a case written in the test (txtar, corpus format) and
// lays it out in a temporary directory.
func inlineCase(t *testing.T, name, txtar string) (*apachetest.Case, apachetest.Layout) {
	t.Helper()
	c, err := apachetest.ParseCase(name+".txtar", []byte(txtar))
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Materialize(filepath.Join(apachetest.TempDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return c, l
}

// scrapeMetrics returns orderly's /metrics at addr.
func scrapeMetrics(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

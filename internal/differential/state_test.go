package differential

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestStateFile: with state_file, a rule's counters and first and last
// hit survive a restart of orderly (in front of real Apache); a rule that
// never fired stays at zero.
func TestStateFile(t *testing.T) {
	apachetest.Require(t)
	c, l := inlineCase(t, "state", `-- legacy.conf --
<Directory "@DOCROOT@/admin">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
-- docroot/admin/index.html --
admin
-- requests --
GET /admin/ 10.1.2.3 want=200
`)
	backend := apachetest.Start(t, backendOptions(l))
	front := orderlyFront{metrics: freePort(t), state: filepath.Join(l.Dir, "state.json")}
	scrape := func() string { return scrapeMetrics(t, front.metrics) }
	series := func(text, name, directive string) string {
		id := regexp.MustCompile(`orderly_rule_info\{directive="` + regexp.QuoteMeta(directive) + `",[^}]*rule_id="([^"]+)"\}`).FindStringSubmatch(text)
		if id == nil {
			t.Fatalf("no rule %q", directive)
		}
		m := regexp.MustCompile(`(?m)^` + name + `\{rule_id="` + id[1] + `"\} (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no %s for %q", name, directive)
		}
		return m[1]
	}

	addr, stop := front.start(t, l, backend.Addr)
	for range 3 {
		if _, err := apachetest.Do(addr, c.Requests[0]); err != nil {
			t.Fatal(err)
		}
	}
	before := scrape()
	first := series(before, "orderly_rule_first_hit_timestamp_seconds", "Allow from 10.0.0.0/8")
	if first == "0" || series(before, "orderly_rule_decisive_hits_total", "Allow from 10.0.0.0/8") != "3" {
		t.Fatalf("before the restart:\n%s", before)
	}
	stop() // SIGTERM: orderly saves its state

	_, stop = front.start(t, l, backend.Addr)
	defer stop()
	after := scrape()
	for _, tt := range []struct{ name, directive, want string }{
		{"orderly_rule_decisive_hits_total", "Allow from 10.0.0.0/8", "3"},
		{"orderly_rule_matches_total", "Allow from 10.0.0.0/8", "3"},
		{"orderly_rule_first_hit_timestamp_seconds", "Allow from 10.0.0.0/8", first},
		{"orderly_rule_last_hit_timestamp_seconds", "Allow from 10.0.0.0/8", series(before, "orderly_rule_last_hit_timestamp_seconds", "Allow from 10.0.0.0/8")},
		{"orderly_rule_decisive_hits_total", "Deny from all", "0"},
	} {
		if got := series(after, tt.name, tt.directive); got != tt.want {
			t.Errorf("after a restart, %s for %q = %s, want %s", tt.name, tt.directive, got, tt.want)
		}
	}
}

package differential

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestShadowMode runs orderly in shadow mode in front of real Apache that
// still enforces the legacy rules itself. Every answer is the backend's
// (shadow never changes a response); with the same rules on both sides
// nothing disagrees, and with different rules in orderly each request
// where they differ is counted once, in the right direction, under the
// rule that decided.
func TestShadowMode(t *testing.T) {
	apachetest.Require(t)
	c, l := inlineCase(t, "shadow", `-- legacy.conf --
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
GET /admin/ 10.9.9.9 want=200
GET /admin/index.html 10.9.9.9 want=200
GET /admin/ 192.0.2.5 want=403
GET /admin/ 8.8.8.8 want=403
GET /index.html 8.8.8.8 want=200
`)
	backend := apachetest.Start(t, l.OracleOptions())
	// orderly's own copy of the rules, changed: 10.9/16 no longer allowed
	// (would newly deny), 192.0.2.0/24 now allowed (would newly allow).
	changed := filepath.Join(l.Dir, "changed.conf")
	b, _ := os.ReadFile(l.Legacy)
	os.WriteFile(changed, []byte(strings.Replace(string(b), "Allow from 10.0.0.0/8", "Allow from 10.1.0.0/16 192.0.2.0/24", 1)), 0o644)

	for _, tt := range []struct {
		name, legacy string
		want         map[string]string // direction -> count
	}{
		{"same rules", "", map[string]string{"would_newly_allow": "", "would_newly_deny": ""}},
		{"changed rules", changed, map[string]string{"would_newly_allow": "1", "would_newly_deny": "2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			metrics := freePort(t)
			addr, stop := orderlyFront{metrics: metrics, mode: "shadow", legacy: tt.legacy}.start(t, l, backend.Addr)
			defer stop()
			for _, rq := range c.Requests {
				direct, err := apachetest.Do(backend.Addr, rq)
				if err != nil {
					t.Fatal(err)
				}
				got, err := apachetest.Do(addr, rq)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != direct.Status || !got.Matches(rq.Want) {
					t.Errorf("%s: through orderly in shadow %d, backend alone %d, want %s", rq, got.Status, direct.Status, rq.Want)
				}
			}
			text := scrapeMetrics(t, metrics)
			for dir, n := range tt.want {
				re := regexp.MustCompile(`(?m)^orderly_shadow_disagreements_total\{against="backend",direction="` + dir + `",rule_id="[0-9a-f]+",scope="default"\} (\d+)$`)
				m := re.FindStringSubmatch(text)
				switch {
				case n == "" && m != nil:
					t.Errorf("%s counted %s, want none", dir, m[1])
				case n != "" && (m == nil || m[1] != n):
					t.Errorf("%s: %v, want %s\n%s", dir, m, n, grepLines(text, "orderly_shadow"))
				}
			}
			if !strings.Contains(text, `orderly_requests_total{decision="deny",layer="compat",mode="shadow"}`) {
				t.Errorf("no shadow-mode request series:\n%s", grepLines(text, "orderly_requests_total"))
			}
		})
	}
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

package differential

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// scopesCase is a site moving /admin from its legacy rules to a native
// 2.4 configuration that differs on purpose: 172.16/12 loses access, and
// 192.168/16 gains it.
const scopesCase = `-- legacy.conf --
<Directory "@DOCROOT@/admin">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8 172.16.0.0/12 203.0.113.0/24
</Directory>
-- extra/native.conf --
<Directory "@DOCROOT@/admin">
    <RequireAny>
        Require ip 10.0.0.0/8
        Require ip 192.168.0.0/16
    </RequireAny>
</Directory>
-- docroot/index.html --
home
-- docroot/admin/index.html --
admin
-- requests --
GET /admin/ 10.1.2.3 want=200
`

// scopeClients are the addresses each scope test sends from: every
// cohort of the two policies, and enough of 192.168/16 for a share.
func scopeClients() []string {
	out := []string{"10.1.2.3", "10.200.0.1", "172.16.5.5", "172.20.0.1", "8.8.8.8"}
	for i := range 200 {
		out = append(out, fmt.Sprintf("192.168.%d.%d", i/50, 1+i%50))
	}
	return out
}

// TestScopesNativeRollout moves /admin from the legacy rules to the
// native 2.4 configuration, with real Apache running that native
// configuration as the backend and the oracle:
//   - at enforce_percent = 100 every answer through orderly is the one
//     Apache gives with the native configuration, and every request is
//     still decided by the legacy rules beside it (their counters move,
//     disagreements are counted by direction);
//   - at 30 and then 60 percent each client is decided by one policy as
//     the access log says, about that share by native, and no client of
//     the 30% cohort leaves it at 60%;
//   - the rest of the site, outside the scope, is decided by the legacy
//     rules.
func TestScopesNativeRollout(t *testing.T) {
	apachetest.Require(t)
	_, l := inlineCase(t, "scopes", scopesCase)
	native := filepath.Join(l.Extra, "native.conf")
	backend := apachetest.Start(t, apachetest.Options{DocumentRoot: l.DocRoot, Include: []string{native}, RemoteIP: true})
	metrics, admin := freePort(t), freePort(t)
	scope := func(percent int) string {
		return fmt.Sprintf(`native {
  files = [%q]
}
scope "admin" {
  path            = "/admin"
  enforce         = "native"
  shadow          = "legacy"
  enforce_percent = %d
}
`, native, percent)
	}
	front := orderlyFront{metrics: metrics, admin: admin, access: true, extra: scope(100)}
	addr, stop := front.start(t, l, backend.Addr)
	defer stop()
	clients := scopeClients()

	// 100%: orderly answers as Apache with the native configuration.
	for _, ip := range clients {
		rq := apachetest.Request{Method: "GET", Target: "/admin/", ClientIP: ip}
		direct, err := apachetest.Do(backend.Addr, rq)
		if err != nil {
			t.Fatal(err)
		}
		got, err := apachetest.Do(addr, rq)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != direct.Status {
			t.Errorf("%s at 100%%: orderly %d, Apache with the native configuration %d", ip, got.Status, direct.Status)
		}
	}
	text := scrapeMetrics(t, metrics)
	// 172.16.5.5 and 172.20.0.1 lose access; the 200 of 192.168/16 gain it.
	wantSeries(t, text, `orderly_shadow_disagreements_total{against="policy",direction="would_newly_deny",rule_id="[0-9a-f]+",scope="admin"}`, 2)
	wantSeries(t, text, `orderly_shadow_disagreements_total{against="policy",direction="would_newly_allow",rule_id="[0-9a-f]+",scope="admin"}`, 200)
	wantSeries(t, text, `orderly_scope_requests_total{decision="allow",policy="native",scope="admin"}`, 202)
	wantSeries(t, text, `orderly_scope_enforce_ratio{scope="admin"}`, 1)
	// The legacy rules were evaluated on every request: Deny from all
	// matches each one, and each Allow word counts its own clients.
	deny := ruleID(t, text, "Deny from all")
	allow := ruleID(t, text, "Allow from 10.0.0.0/8 172.16.0.0/12 203.0.113.0/24")
	wantSeries(t, text, `orderly_rule_matches_total{rule_id="`+deny+`"}`, float64(len(clients)))
	wantSeries(t, text, `orderly_rule_part_matches_total{part="10.0.0.0/8",rule_id="`+allow+`"}`, 2)
	wantSeries(t, text, `orderly_rule_part_matches_total{part="172.16.0.0/12",rule_id="`+allow+`"}`, 2)
	wantSeries(t, text, `orderly_rule_part_matches_total{part="203.0.113.0/24",rule_id="`+allow+`"}`, 0)

	// Outside the scope the legacy rules decide, as the default scope.
	if got, _ := apachetest.Do(addr, apachetest.Request{Method: "GET", Target: "/index.html", ClientIP: "8.8.8.8"}); got.Status != 200 {
		t.Errorf("/index.html: %d, want 200", got.Status)
	}

	// The access log is emptied before each percentage: first orderly's
	// log writer catches up, every request so far having its line (one
	// for each client, one outside the scope; then the previous
	// percentage's, waited for below).
	waitLog(func() string { return readLog(filepath.Join(l.Dir, "access.log")) }, func(s string) bool { return strings.Count(s, "\n") >= len(clients)+1 })

	// 30%, then 60%: each client's answer is its cohort's policy's.
	var prev map[string]bool
	for _, percent := range []int{30, 60} {
		front.extra = scope(percent)
		writeFrontConfig(t, front, l, backend.Addr, addr, nil)
		reload(t, admin)
		os.Truncate(filepath.Join(l.Dir, "access.log"), 0)
		inNative := map[string]bool{}
		for _, ip := range clients[5:] {
			got, err := apachetest.Do(addr, apachetest.Request{Method: "GET", Target: "/admin/", ClientIP: ip})
			if err != nil {
				t.Fatal(err)
			}
			// 192.168/16: native allows, legacy refuses.
			inNative[ip] = got.Status == 200
			if got.Status != 200 && got.Status != 403 {
				t.Errorf("%s at %d%%: %d", ip, percent, got.Status)
			}
		}
		log := waitLog(func() string { return readLog(filepath.Join(l.Dir, "access.log")) }, func(s string) bool { return strings.Count(s, "\n") >= len(clients)-5 })
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if len(lines) != len(clients)-5 {
			t.Fatalf("%d access log lines, want %d", len(lines), len(clients)-5)
		}
		for _, line := range lines {
			ip, _, _ := strings.Cut(line, " ")
			want := "policy=legacy"
			if inNative[ip] {
				want = "policy=native"
			}
			if !strings.HasSuffix(line, " scope=admin "+want) {
				t.Errorf("%s answered as by %s, but the access log says: %s", ip, want, line)
			}
		}
		n := 0
		for _, in := range inNative {
			if in {
				n++
			}
		}
		// 200 clients: a binomial share is within ±15 points of the target
		// with overwhelming probability, and the hash is fixed anyway.
		if share := n * 100 / (len(clients) - 5); share < percent-15 || share > percent+15 {
			t.Errorf("at %d%% native decided %d%% of the clients", percent, share)
		}
		for ip := range prev {
			if prev[ip] && !inNative[ip] {
				t.Errorf("%s left the native cohort when the share went up to %d%%", ip, percent)
			}
		}
		prev = inNative
		text := scrapeMetrics(t, metrics)
		wantSeries(t, text, `orderly_scope_enforce_ratio{scope="admin"}`, float64(percent)/100)
	}
}

// TestDemoteRule demotes a legacy rule to shadow-only: it is no longer
// enforced (the request it used to refuse reaches the backend), still
// evaluated and counted, and each request its deletion lets through is a
// would_newly_allow disagreement against the policy with it.
func TestDemoteRule(t *testing.T) {
	apachetest.Require(t)
	_, l := inlineCase(t, "demote", scopesCase)
	// A backend with no access rules: what orderly forwards, it serves.
	backend := apachetest.Start(t, apachetest.Options{DocumentRoot: l.DocRoot, RemoteIP: true})
	metrics, admin := freePort(t), freePort(t)
	front := orderlyFront{metrics: metrics, admin: admin}
	addr, stop := front.start(t, l, backend.Addr)
	defer stop()
	get := func(ip string) int {
		t.Helper()
		got, err := apachetest.Do(addr, apachetest.Request{Method: "GET", Target: "/admin/", ClientIP: ip})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	if s := get("8.8.8.8"); s != 403 {
		t.Fatalf("before demotion: %d, want 403", s)
	}
	text := scrapeMetrics(t, metrics)
	deny := ruleID(t, text, "Deny from all")
	wantSeries(t, text, `orderly_rule_enforced{rule_id="`+deny+`"}`, 1)

	writeFrontConfig(t, front, l, backend.Addr, addr, func(hcl string) string {
		return strings.Replace(hcl, `semantics     = "2.4-compat"`, `semantics     = "2.4-compat"
  demote        = ["`+deny+`"]`, 1)
	})
	reload(t, admin)
	for _, ip := range []string{"8.8.8.8", "8.8.4.4", "10.1.2.3"} {
		if s := get(ip); s != 200 {
			t.Errorf("%s with Deny from all demoted: %d, want 200", ip, s)
		}
	}
	text = scrapeMetrics(t, metrics)
	wantSeries(t, text, `orderly_rule_enforced{rule_id="`+deny+`"}`, 0)
	// Still counted: once before, three times since.
	wantSeries(t, text, `orderly_rule_matches_total{rule_id="`+deny+`"}`, 4)
	wantSeries(t, text, `orderly_shadow_disagreements_total{against="demoted",direction="would_newly_allow",rule_id="`+deny+`",scope="default"}`, 2)
}

// wantSeries checks the value of the series whose name and labels match
// pattern (regexp metacharacters of the braces quoted for it).
func wantSeries(t *testing.T, text, pattern string, want float64) {
	t.Helper()
	re := strings.NewReplacer("{", `\{`, "}", `\}`).Replace(pattern)
	m := regexp.MustCompile(`(?m)^`+re+` (\S+)$`).FindAllStringSubmatch(text, -1)
	sum := 0.0
	for _, x := range m {
		v, _ := strconv.ParseFloat(x[1], 64)
		sum += v
	}
	if len(m) == 0 && want != 0 || sum != want {
		name, _, _ := strings.Cut(pattern, "{")
		t.Errorf("%s: %v (%d series), want %v\n%s", pattern, sum, len(m), want, grepLines(text, name))
	}
}

// ruleID finds the ID of the rule written as directive in orderly_rule_info.
func ruleID(t *testing.T, text, directive string) string {
	t.Helper()
	m := regexp.MustCompile(`orderly_rule_info\{directive="` + regexp.QuoteMeta(directive) + `",[^}]*rule_id="([0-9a-f]+)"`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no rule %q:\n%s", directive, grepLines(text, "orderly_rule_info"))
	}
	return m[1]
}

// reload asks the orderly at admin to reload its configuration.
func reload(t *testing.T, admin string) {
	t.Helper()
	resp, err := http.Post("http://"+admin+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reload: %d", resp.StatusCode)
	}
}

package retire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// TestVerdicts: with necessity in the scrape, each access line is needed
// or can go by its own counter, over the requests decided with its
// section in force (its methods by count, then name); a SetEnvIf line
// goes with the lines that read its variable, and gets no verdict when
// one of them has none (trusted: Require env) or tests its absence
// (robot: Require not env); a section gets no verdict (its settings may
// decide); the only line of a section is judged with it; a dead line is
// Static's.
func TestVerdicts(t *testing.T) {
	cfg := load(t, `SetEnvIf Remote_Addr ^192\.0\.2\. trusted
SetEnvIf User-Agent curl robot
SetEnvIf User-Agent bot !known
SetEnvIf Referer x unread
<Directory @DOCROOT@/a>
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
    Allow from env=trusted
    Allow from env=!known
</Directory>
<Directory @DOCROOT@/b>
    Order allow,deny
    Allow from 172.16.0.0/12
    Deny from env=robot
</Directory>
<Directory @DOCROOT@/c>
    Deny from all
</Directory>
<Directory @DOCROOT@/d>
    Order allow,deny
    Allow from all
    Allow from 10.0.0.0/8
</Directory>
<Directory @DOCROOT@/e>
    Order allow,deny
    Allow from 10.0.0.0/8
</Directory>
<Directory @DOCROOT@/f>
    <RequireAll>
        Require env trusted
        Require not env robot
    </RequireAll>
</Directory>
SetEnvIf Remote_Addr ^10\. lan
<Directory @DOCROOT@/g>
    Require env lan
    Require ip 10.0.0.0/8
</Directory>
SetEnvIf Remote_Addr ^10\.1\. ok
<Directory @DOCROOT@/h>
    <RequireAll>
        Require env ok
        Require ip 10.0.0.0/8
    </RequireAll>
</Directory>
`)
	at := map[int]string{}
	sec := map[string]string{}
	for _, r := range cfg.Rules {
		if r.Default {
			sec[r.Text[strings.LastIndex(r.Text, "/")+1:]] = r.ID
			continue
		}
		at[r.Line] = r.ID
	}
	var b strings.Builder
	fmt.Fprintln(&b, "# TYPE orderly_rule_necessary_total counter")
	for line, n := range map[int]int{7: 5, 8: 3, 9: 0, 10: 1, 14: 0, 15: 0, 18: 0, 22: 9, 23: 0, 27: 0, 31: 0, 32: 0, 37: 0, 38: 0, 43: 0, 44: 0} {
		fmt.Fprintf(&b, "orderly_rule_necessary_total{rule_id=%q} %d\n", at[line], n)
	}
	fmt.Fprintln(&b, "# TYPE orderly_rule_matches_total counter")
	fmt.Fprintf(&b, "orderly_rule_matches_total{rule_id=%q} 0\n", at[7])
	fmt.Fprintln(&b, "# TYPE orderly_section_decisions_total counter")
	for _, c := range []struct {
		sec, method string
		n           int
	}{{"a>", "GET", 10}, {"a>", "POST", 2}, {"a>", "PUT", 1}, {"a>", "DELETE", 0}, {"b>", "GET", 4}, {"d>", "GET", 9}, {"g>", "GET", 6}, {"h>", "GET", 1}} {
		fmt.Fprintf(&b, "orderly_section_decisions_total{rule_id=%q,method=%q} %d\n", sec[c.sec], c.method, c.n)
	}
	fs, err := FromMetrics(cfg.Rules, IndexOf(cfg), strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%d %s [%s] %s: %s", f.Line, f.Text, f.Verdict, f.Kind, f.Why))
	}
	want := []string{
		`4 SetEnvIf Referer x unread [can go] can-go: sets unread, which no access line reads (other modules, such as CustomLog env= or mod_rewrite, may)`,
		`7 Deny from all [needed] needed: necessary to 5 requests since orderly started: deleting it would have changed their answer`,
		`8 Allow from 10.0.0.0/8 [needed] needed: necessary to 3 requests since orderly started: deleting it would have changed their answer`,
		`9 Allow from env=trusted [can go] can-go: deleting it would have changed none of the 13 requests decided with its section in force since orderly started (GET 10, POST 2, PUT 1); traffic not seen is not covered`,
		`10 Allow from env=!known [needed] needed: necessary to 1 requests since orderly started: deleting it would have changed their answer`,
		`14 Allow from 172.16.0.0/12 [can go] can-go: deleting it would have changed none of the 4 requests decided with its section in force since orderly started (GET 4); traffic not seen is not covered`,
		`15 Deny from env=robot [can go] can-go: deleting it would have changed none of the 4 requests decided with its section in force since orderly started (GET 4); traffic not seen is not covered`,
		`18 Deny from all [] with-section: deleting it would change how its section merges (the section's only line of its kind, or one whose <Limit> widens its container): it is judged with its section`,
		`22 Allow from all [needed] needed: necessary to 9 requests since orderly started: deleting it would have changed their answer`,
		`27 Allow from 10.0.0.0/8 [] not-seen: no request was decided with its section in force since orderly started: no evidence either way`,
		`31 Require env trusted [] with-section: deleting it would change how its section merges (the section's only line of its kind, or one whose <Limit> widens its container): it is judged with its section`,
		`32 Require not env robot [] not-seen: no request was decided with its section in force since orderly started: no evidence either way`,
		`35 SetEnvIf Remote_Addr ^10\. lan [can go] can-go: sets lan, and every access line that reads it can go since orderly started`,
		`37 Require env lan [can go] can-go: deleting it would have changed none of the 6 requests decided with its section in force since orderly started (GET 6); traffic not seen is not covered`,
		`38 Require ip 10.0.0.0/8 [can go] can-go: deleting it would have changed none of the 6 requests decided with its section in force since orderly started (GET 6); traffic not seen is not covered`,
		`40 SetEnvIf Remote_Addr ^10\.1\. ok [can go] can-go: sets ok, and every access line that reads it can go since orderly started`,
		`43 Require env ok [can go] can-go: deleting it would have changed none of the 1 requests decided with its section in force since orderly started (GET 1); traffic not seen is not covered`,
		`44 Require ip 10.0.0.0/8 [can go] can-go: deleting it would have changed none of the 1 requests decided with its section in force since orderly started (GET 1); traffic not seen is not covered`,
	}
	if g, w := strings.Join(normalizeDocroot(got), "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("findings\n%s\nwant\n%s", g, w)
	}
}

// normalizeDocroot writes the temporary document root of a section
// header as @DOCROOT@.
func normalizeDocroot(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if a := strings.Index(l, "<Directory "); a >= 0 {
			if b := strings.Index(l[a:], "/docroot/"); b >= 0 {
				l = l[:a] + "<Directory @DOCROOT@/" + l[a+b+len("/docroot/"):]
			}
		}
		out[i] = l
	}
	return out
}

// FromCounters judges live rules by their own counters, as the admin
// page does: coverage by method name from the registry.
func TestFromCounters(t *testing.T) {
	cfg := load(t, `<Directory @DOCROOT@/a>
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
`)
	for _, r := range cfg.Rules {
		switch {
		case r.Default && strings.HasSuffix(r.Text, "/a>"):
			r.AddCovered(policy.MethodGet, 3)
			r.AddCovered(2, 0)
		case r.Text == "Allow from 10.0.0.0/8":
			r.AddNecessary(2)
		}
	}
	var got []string
	for _, f := range FromCounters(cfg.Rules, IndexOf(cfg), "in the test", cfg.Methods) {
		got = append(got, fmt.Sprintf("%s [%s] %s", f.Text, f.Verdict, f.Why))
	}
	want := []string{
		"<Directory " + cfg.DocumentRoot + "/a> [section can go] deleting its access lines (2, 3, 4) together would have changed none of the 3 requests decided with it in force in the test (GET 3); traffic not seen is not covered",
		"Deny from all [can go] deleting it would have changed none of the 3 requests decided with its section in force in the test (GET 3); traffic not seen is not covered",
		"Allow from 10.0.0.0/8 [needed] necessary to 2 requests in the test: deleting it would have changed their answer",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A demoted rule's traffic verdicts give way to "demoted" with its
// against="demoted" disagreements, read from a scrape; static findings
// stay; without traffic it is listed demoted all the same.
func TestMarkDemoted(t *testing.T) {
	cfg := load(t, `<Directory @DOCROOT@/a>
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
    Allow from 10.1.0.0/16
</Directory>
`)
	ids := map[string]string{}
	for _, r := range cfg.Rules {
		ids[r.Text] = r.ID
	}
	deny, wide, narrow := ids["Deny from all"], ids["Allow from 10.0.0.0/8"], ids["Allow from 10.1.0.0/16"]
	scrape := `# TYPE orderly_shadow_disagreements_total counter
orderly_shadow_disagreements_total{against="demoted",direction="would_newly_allow",rule_id="` + deny + `",scope="default"} 4
orderly_shadow_disagreements_total{against="demoted",direction="would_newly_deny",rule_id="` + deny + `",scope="site"} 1
orderly_shadow_disagreements_total{against="policy",direction="would_newly_allow",rule_id="` + wide + `",scope="default"} 9
`
	against, err := DemotedDisagreements(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	if len(against) != 1 || against[deny] != 5 {
		t.Fatalf("against: %v", against)
	}
	findings := append(Static(cfg), Finding{Kind: "can-go", Verdict: CanGo, RuleID: deny, Text: "Deny from all"})
	demoted := map[string]bool{deny: true, wide: true, narrow: true}
	var got []string
	for _, f := range MarkDemoted(findings, cfg.Rules, demoted, against, "since orderly started") {
		got = append(got, fmt.Sprintf("%s [%s/%s] %s", f.Text, f.Kind, f.Verdict, f.Why))
	}
	want := []string{
		"Allow from 10.1.0.0/16 [never-decides/dead] " + findings[0].Why,
		`Deny from all [demoted/demoted] demoted (legacy.demote): 5 disagreements since orderly started between the legacy policy without it and with it (against="demoted"): its deletion changes answers, keep it (or fix what depends on it)`,
		`Allow from 10.0.0.0/8 [demoted/demoted] demoted (legacy.demote): 0 disagreements since orderly started between the legacy policy without it and with it (against="demoted"): deleting it changed no answer seen; traffic not seen is not covered`,
		`Allow from 10.1.0.0/16 [demoted/demoted] demoted (legacy.demote): 0 disagreements since orderly started between the legacy policy without it and with it (against="demoted"): deleting it changed no answer seen; traffic not seen is not covered`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if out := MarkDemoted(nil, cfg.Rules, map[string]bool{deny: true}, nil, ""); len(out) != 1 || out[0].Verdict != Demoted || !strings.Contains(out[0].Why, "read a scrape") {
		t.Errorf("without traffic: %+v", out)
	}
	if out := MarkDemoted(findings, cfg.Rules, nil, against, ""); len(out) != len(findings) {
		t.Errorf("nothing demoted, findings changed: %+v", out)
	}
}

// A scrape says since when its counters count
// (orderly_counters_since_timestamp_seconds), and carries the sections'
// necessity (orderly_section_necessary_total): the verdicts say both.
func TestFromMetricsSinceAndSections(t *testing.T) {
	cfg := load(t, `<Directory @DOCROOT@/a>
    Order deny,allow
    Deny from all
</Directory>
<Directory @DOCROOT@/b>
    Order allow,deny
    Allow from all
</Directory>
<Directory @DOCROOT@/c>
    Deny from all
</Directory>
`)
	sec := map[string]string{}
	for _, r := range cfg.Rules {
		if r.Default {
			sec[r.Text[strings.LastIndex(r.Text, "/")+1:]] = r.ID
		}
	}
	// c: counted, but no request decided with it: no verdict.
	scrape := fmt.Sprintf(`# TYPE orderly_counters_since_timestamp_seconds gauge
orderly_counters_since_timestamp_seconds 1.7950e+09
# TYPE orderly_rule_necessary_total counter
orderly_rule_necessary_total{rule_id="x"} 0
# TYPE orderly_rule_matches_total counter
orderly_rule_matches_total{rule_id="x"} 0
# TYPE orderly_section_necessary_total counter
orderly_section_necessary_total{rule_id=%[1]q} 4
orderly_section_necessary_total{rule_id=%[2]q} 0
orderly_section_necessary_total{rule_id=%[3]q} 0
# TYPE orderly_section_decisions_total counter
orderly_section_decisions_total{rule_id=%[1]q,method="GET"} 4
orderly_section_decisions_total{rule_id=%[2]q,method="GET"} 7
orderly_section_decisions_total{rule_id=%[3]q,method="GET"} 0
`, sec["a>"], sec["b>"], sec["c>"])
	fs, err := FromMetrics(cfg.Rules, IndexOf(cfg), strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		if strings.HasPrefix(f.Kind, "section-") {
			got = append(got, fmt.Sprintf("%d [%s] %s", f.Line, f.Verdict, f.Why))
		}
	}
	want := []string{
		"1 [section needed] deleting its access lines (2, 3) together would have changed the answer to 4 requests since 2026-11-18T11:06:40Z",
		"5 [section can go] deleting its access lines (6, 7) together would have changed none of the 7 requests decided with it in force since 2026-11-18T11:06:40Z (GET 7); traffic not seen is not covered",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("section findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s, err := Since(strings.NewReader(scrape)); err != nil || s != "since 2026-11-18T11:06:40Z" {
		t.Errorf("Since: %q %v", s, err)
	}
	if s, _ := Since(strings.NewReader("# TYPE x counter\nx 1\n")); s != "since orderly started" {
		t.Errorf("Since without the gauge: %q", s)
	}
	if s, _ := Since(strings.NewReader("# TYPE orderly_counters_since_timestamp_seconds gauge\norderly_counters_since_timestamp_seconds 0\n")); s != "since orderly started" {
		t.Errorf("Since with the gauge at 0: %q", s)
	}
	if _, err := Since(strings.NewReader("not { an exposition")); err == nil {
		t.Error("Since of no exposition: no error")
	}
}

package retire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// FromMetrics on rules of every kind: only the lines that match requests
// (Allow, Deny, Require, SetEnvIf and its kin) can be "not fired", only
// those that grant or refuse (Allow, Deny, Require) "not decisive".
func TestFromMetricsKinds(t *testing.T) {
	var b strings.Builder
	fmt.Fprintln(&b, "# TYPE orderly_rule_matches_total counter")
	for _, s := range []struct{ id, v string }{
		{"deny", "3"}, {"silent", "0"}, {"words", "12"}, {"quietwords", "0"}, {"require", "4"}, {"requireused", "4"},
		{"setenv", "3"}, {"setenvquiet", "0"}, {"order", "0"}, {"default", "0"}, {"nodecisive", "0"},
	} {
		fmt.Fprintf(&b, "orderly_rule_matches_total{rule_id=%q,scope=\"a\"} %s\n", s.id, s.v)
	}
	// A rule in two scopes: its counts are summed. A rule the scrape does
	// not know (unscraped) is left out.
	fmt.Fprintln(&b, `orderly_rule_matches_total{rule_id="silent",scope="b"} 0`)
	fmt.Fprintln(&b, `orderly_rule_matches_total{rule_id="deny",scope="b"} 2`)
	fmt.Fprintln(&b, `orderly_rule_matches_total{rule_id="young",scope="b"} 0`)
	fmt.Fprintln(&b, "# TYPE orderly_rule_decisive_hits_total counter")
	for _, s := range []struct{ id, v string }{
		{"deny", "0"}, {"silent", "0"}, {"words", "12"}, {"quietwords", "0"}, {"require", "0"}, {"requireused", "1"},
		{"setenv", "0"}, {"setenvquiet", "0"}, {"order", "0"}, {"default", "0"},
	} {
		fmt.Fprintf(&b, "orderly_rule_decisive_hits_total{scope=\"a\",rule_id=%q} %s\n", s.id, s.v)
	}
	fmt.Fprintln(&b, `orderly_rule_decisive_hits_total{scope="b",rule_id="young"} 2`)
	fmt.Fprintln(&b, "# TYPE orderly_rule_part_matches_total counter")
	for _, s := range []struct{ id, part, v string }{
		{"words", "10.0.0.0/8", "12"}, {"words", "172.16.0.0/12", "0"}, {"words", "10.0.0.0/8#2", "0"},
		{"quietwords", "198.51.100.0/24", "0"}, {"quietwords", "203.0.113.0/24", "0"}, {"deny", "192.0.2.0/24", "5"},
	} {
		fmt.Fprintf(&b, "orderly_rule_part_matches_total{part=%q,rule_id=%q} %s\n", s.part, s.id, s.v)
	}

	fs, err := FromMetrics(promRules, nil, strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s:%d %s %s %s: %s", f.File, f.Line, f.RuleID, f.Kind, f.Severity, f.Why))
	}
	want := []string{
		`a.conf:5 require not-decisive info: matched 4 times but never decided a request since orderly started`,
		`a.conf:8 setenvquiet not-fired info: has neither matched nor decided a request since orderly started`,
		`a.conf:20 words part-not-matched info: the word "172.16.0.0/12" never matched since orderly started, while the line did by its other words: it can go from the line`,
		`a.conf:20 words part-not-matched info: the word "10.0.0.0/8" never matched since orderly started, while the line did by its other words: it can go from the line`,
		`a.conf:30 quietwords not-fired info: has neither matched nor decided a request since orderly started`,
		`a.conf:42 nodecisive not-fired info: has neither matched nor decided a request since orderly started`,
		`b.conf:3 silent not-fired info: has neither matched nor decided a request since orderly started`,
		`b.conf:9 deny not-decisive info: matched 5 times but never decided a request since orderly started`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFromMetricsErrors(t *testing.T) {
	for _, text := range []string{
		"# TYPE up gauge\nup 1\n",
		"orderly_rule_matches_total{rule_id=\"x\"} one\n",
		"# TYPE orderly_rule_part_matches_total counter\norderly_rule_part_matches_total{rule_id=\"x\",part=\"all\"} 1\n",
	} {
		if fs, err := FromMetrics(promRules, nil, strings.NewReader(text)); err == nil || fs != nil {
			t.Errorf("FromMetrics(%q) = %v, %v, want an error", text, fs, err)
		}
	}
	// Only the decisive counter: still a scrape of orderly.
	fs, err := FromMetrics(promRules, nil, strings.NewReader("# TYPE orderly_rule_decisive_hits_total counter\norderly_rule_decisive_hits_total{rule_id=\"deny\"} 0\n"))
	if err != nil || len(fs) != 1 || fs[0].Kind != "not-fired" {
		t.Errorf("decisive counts alone: %v, %v, want deny not fired", fs, err)
	}
}

// Findings come in file, then line order; findings of one line keep the
// order they were found in.
func TestSortFindings(t *testing.T) {
	fs := []Finding{
		{File: "b.conf", Line: 2, Kind: "1"},
		{File: "a.conf", Line: 10, Kind: "2"},
		{File: "b.conf", Line: 1, Kind: "3"},
		{File: "a.conf", Line: 9, Kind: "4"},
		{File: "a.conf", Line: 10, Kind: "5"},
		{File: "a.conf", Line: 10, Kind: "6"},
		{File: "b.conf", Line: 2, Kind: "7"},
		{File: "a.conf", Line: 1, Kind: "8"},
	}
	sortFindings(fs)
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s:%d/%s", f.File, f.Line, f.Kind))
	}
	if want := "a.conf:1/8 a.conf:9/4 a.conf:10/2 a.conf:10/5 a.conf:10/6 b.conf:1/3 b.conf:2/1 b.conf:2/7"; strings.Join(got, " ") != want {
		t.Errorf("sorted %s, want %s", strings.Join(got, " "), want)
	}
}

// RewriteRule lines are reported by their hits, with or without the
// necessity counters: one that never applied has not fired.
func TestFromMetricsRewrite(t *testing.T) {
	rules := []*policy.Rule{
		{ID: "rwused", File: "a.conf", Line: 3, Text: "RewriteRule .* - [F]"},
		{ID: "rwquiet", File: "a.conf", Line: 4, Text: "RewriteRule ^/old - [G]"},
		{ID: "rwcond", File: "a.conf", Line: 2, Text: "RewriteCond %{HTTP_USER_AGENT} bot"},
		{ID: "deny", File: "a.conf", Line: 9, Text: "Deny from 192.0.2.0/24"},
	}
	base := "# TYPE orderly_rule_matches_total counter\n" +
		"orderly_rule_matches_total{rule_id=\"rwused\"} 3\norderly_rule_matches_total{rule_id=\"rwquiet\"} 0\n" +
		"orderly_rule_matches_total{rule_id=\"rwcond\"} 0\norderly_rule_matches_total{rule_id=\"deny\"} 0\n" +
		"# TYPE orderly_rule_decisive_hits_total counter\n" +
		"orderly_rule_decisive_hits_total{rule_id=\"rwused\"} 0\norderly_rule_decisive_hits_total{rule_id=\"rwquiet\"} 0\n" +
		"orderly_rule_decisive_hits_total{rule_id=\"rwcond\"} 0\norderly_rule_decisive_hits_total{rule_id=\"deny\"} 0\n"
	necessity := "# TYPE orderly_rule_necessary_total counter\norderly_rule_necessary_total{rule_id=\"deny\"} 0\n"
	for _, text := range []string{base, base + necessity} {
		fs, err := FromMetrics(rules, nil, strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range fs {
			if strings.HasPrefix(f.RuleID, "rw") {
				got = append(got, f.RuleID+" "+f.Kind)
			}
		}
		if strings.Join(got, ", ") != "rwquiet not-fired" {
			t.Errorf("necessity %v: %v, want rwquiet not-fired alone", strings.Contains(text, "necessary"), got)
		}
	}
}

// TestCoverageOrder: a section's requests by method print the most
// requested first, and methods with as many requests by name, whatever
// the map's order.
func TestCoverageOrder(t *testing.T) {
	ev := &evidence{covered: map[string]map[string]float64{
		"s1": {"POST": 3, "GET": 3, "HEAD": 5, "PUT": 0, "DELETE": 3, "OPTIONS": 1},
	}}
	for range 20 { // map order varies from run to run
		total, methods := ev.coverage(&policy.Rule{ID: "s1"})
		if total != 15 || methods != "HEAD 5, DELETE 3, GET 3, POST 3, OPTIONS 1" {
			t.Fatalf("coverage: %v, %q", total, methods)
		}
	}
}

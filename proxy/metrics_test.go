package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderly-proxy/orderly/policy"
)

func TestMetricsLint(t *testing.T) {
	rules := []*policy.Rule{{ID: "a1", File: "httpd.conf", Line: 3, Text: "Deny from all"}, {ID: "d1", Text: "(default) server", Default: true}}
	m := NewMetrics(func() []*policy.Rule { return rules })
	m.observe(&policy.Decision{Status: 403, Layer: policy.LayerCompat}, time.Now(), ModeEnforce)
	problems, err := testutil.GatherAndLint(m.Registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("deny", "compat", "enforce")); got != 1 {
		t.Errorf("deny/compat = %v, want 1", got)
	}
}

func TestRuleMetricsExposition(t *testing.T) {
	rules := []*policy.Rule{
		{ID: "a1", File: "httpd.conf", Line: 3, Text: "Deny from all"},
		{ID: "b2", File: "conf.d/x.conf", Line: 7, Text: "Allow from 10.0.0.0/8"},
		{ID: "d1", Text: "(default) server", Default: true},
	}
	rules[0].AddStats(5, 4, time.Unix(1764000000, 500000000))
	rules[0].AddNecessary(2)
	rules[2].AddCovered(policy.MethodGet, 6)
	rules[2].AddCovered(2, 1)
	m := NewMetrics(func() []*policy.Rule { return rules })
	want := `
# HELP orderly_rule_necessary_total Requests whose answer the legacy rule was necessary to: deleting the line would have changed it (a counterfactual, unlike decisive hits). Lines whose deletion changes their section's merge are not counted; their section's verdict covers them.
# TYPE orderly_rule_necessary_total counter
orderly_rule_necessary_total{rule_id="a1"} 2
orderly_rule_necessary_total{rule_id="b2"} 0
# HELP orderly_section_decisions_total Requests decided with the section's access lines in force, by method: the traffic its rules' necessity was measured over. rule_id is the section's synthetic (default) rule.
# TYPE orderly_section_decisions_total counter
orderly_section_decisions_total{method="GET",rule_id="d1"} 6
orderly_section_decisions_total{method="POST",rule_id="d1"} 1
# HELP orderly_rule_decisive_hits_total Requests whose decision the legacy rule made (synthetic default rules count decisions no directive made).
# TYPE orderly_rule_decisive_hits_total counter
orderly_rule_decisive_hits_total{rule_id="a1"} 4
orderly_rule_decisive_hits_total{rule_id="b2"} 0
orderly_rule_decisive_hits_total{rule_id="d1"} 0
# HELP orderly_rule_info Where each legacy rule is written; always 1.
# TYPE orderly_rule_info gauge
orderly_rule_info{directive="(default) server",file="",line="0",rule_id="d1"} 1
orderly_rule_info{directive="Allow from 10.0.0.0/8",file="conf.d/x.conf",line="7",rule_id="b2"} 1
orderly_rule_info{directive="Deny from all",file="httpd.conf",line="3",rule_id="a1"} 1
# HELP orderly_rule_last_hit_timestamp_seconds When the legacy rule last matched or decided, in seconds since the epoch; 0 if never.
# TYPE orderly_rule_last_hit_timestamp_seconds gauge
orderly_rule_last_hit_timestamp_seconds{rule_id="a1"} 1.7640000005e+09
orderly_rule_last_hit_timestamp_seconds{rule_id="b2"} 0
orderly_rule_last_hit_timestamp_seconds{rule_id="d1"} 0
# HELP orderly_rule_matches_total Times the legacy rule's condition held when it was evaluated.
# TYPE orderly_rule_matches_total counter
orderly_rule_matches_total{rule_id="a1"} 5
orderly_rule_matches_total{rule_id="b2"} 0
orderly_rule_matches_total{rule_id="d1"} 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"orderly_rule_matches_total", "orderly_rule_decisive_hits_total", "orderly_rule_last_hit_timestamp_seconds", "orderly_rule_info",
		"orderly_rule_necessary_total", "orderly_section_decisions_total"); err != nil {
		t.Error(err)
	}
}

package proxy

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderly-proxy/orderly/internal/logwriter"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
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

// TestLDAPMetricsExposition: the LDAP cache metrics are there from
// start-up at zero, per cache kind, and read the stats SetLDAPStats
// gives at each scrape.
func TestLDAPMetricsExposition(t *testing.T) {
	m := NewMetrics(nil)
	zero := `
# HELP orderly_ldap_cache_entries Entries the LDAP caches of the configuration in force hold, by cache.
# TYPE orderly_ldap_cache_entries gauge
orderly_ldap_cache_entries{cache="compare"} 0
orderly_ldap_cache_entries{cache="dn_compare"} 0
orderly_ldap_cache_entries{cache="search"} 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(zero), "orderly_ldap_cache_entries"); err != nil {
		t.Error(err)
	}
	stats := ldapauth.CacheStats{
		Search:    ldapauth.CacheCounters{Hits: 7, Misses: 3, Inserts: 3, Removes: 1, Purges: 0, Entries: 2},
		Compare:   ldapauth.CacheCounters{Hits: 1, Misses: 2, Inserts: 2, Entries: 2},
		DNCompare: ldapauth.CacheCounters{Purges: 4},
	}
	m.SetLDAPStats(func() ldapauth.CacheStats { return stats })
	want := `
# HELP orderly_ldap_cache_hits_total LDAP cache lookups that found a usable entry, by cache (search: LDAPCacheEntries, user searches and binds; compare and dn_compare: LDAPOpCacheEntries), as Apache's ldap-status page counts them.
# TYPE orderly_ldap_cache_hits_total counter
orderly_ldap_cache_hits_total{cache="compare"} 1
orderly_ldap_cache_hits_total{cache="dn_compare"} 0
orderly_ldap_cache_hits_total{cache="search"} 7
# HELP orderly_ldap_cache_misses_total LDAP cache lookups that found no entry, or an expired one, by cache.
# TYPE orderly_ldap_cache_misses_total counter
orderly_ldap_cache_misses_total{cache="compare"} 2
orderly_ldap_cache_misses_total{cache="dn_compare"} 0
orderly_ldap_cache_misses_total{cache="search"} 3
# HELP orderly_ldap_cache_inserts_total Entries added to the LDAP caches, by cache.
# TYPE orderly_ldap_cache_inserts_total counter
orderly_ldap_cache_inserts_total{cache="compare"} 2
orderly_ldap_cache_inserts_total{cache="dn_compare"} 0
orderly_ldap_cache_inserts_total{cache="search"} 3
# HELP orderly_ldap_cache_removes_total Entries dropped from the LDAP caches, found expired or purged, by cache.
# TYPE orderly_ldap_cache_removes_total counter
orderly_ldap_cache_removes_total{cache="compare"} 0
orderly_ldap_cache_removes_total{cache="dn_compare"} 0
orderly_ldap_cache_removes_total{cache="search"} 1
# HELP orderly_ldap_cache_purges_total Purges of a full LDAP cache (util_ald_cache_purge), by cache.
# TYPE orderly_ldap_cache_purges_total counter
orderly_ldap_cache_purges_total{cache="compare"} 0
orderly_ldap_cache_purges_total{cache="dn_compare"} 4
orderly_ldap_cache_purges_total{cache="search"} 0
# HELP orderly_ldap_cache_entries Entries the LDAP caches of the configuration in force hold, by cache.
# TYPE orderly_ldap_cache_entries gauge
orderly_ldap_cache_entries{cache="compare"} 2
orderly_ldap_cache_entries{cache="dn_compare"} 0
orderly_ldap_cache_entries{cache="search"} 2
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "orderly_ldap_cache_hits_total", "orderly_ldap_cache_misses_total",
		"orderly_ldap_cache_inserts_total", "orderly_ldap_cache_removes_total", "orderly_ldap_cache_purges_total", "orderly_ldap_cache_entries"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(m.Registry, "orderly_ldap_cache_hits_total", "orderly_ldap_cache_entries"); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// TestLogLinesDropped: the lines a log writer drops (here after Close)
// move its log's orderly_log_lines_dropped_total, which every log shows
// from the start.
func TestLogLinesDropped(t *testing.T) {
	m := NewMetrics(nil)
	w := logwriter.New(io.Discard, 0, m.LogLinesDropped("access"))
	w.Close()
	w.Write([]byte("one\ntwo\n"))
	const want = `# HELP orderly_log_lines_dropped_total Log lines not written, by log (error, access, shadow): the log's writer queue was full, its output failed, or serve was stopping.
# TYPE orderly_log_lines_dropped_total counter
orderly_log_lines_dropped_total{log="access"} 2
orderly_log_lines_dropped_total{log="error"} 0
orderly_log_lines_dropped_total{log="shadow"} 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "orderly_log_lines_dropped_total"); err != nil {
		t.Error(err)
	}
}

package proxy

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderly-proxy/orderly/policy"
)

// ruleCollector exports every legacy rule of the policy in force, from
// start-up on: a rule that never fired is a series at zero, not a missing
// one. The counters live in the rules themselves (policy.Rule), so
// collecting reads atomics and never blocks the request path.
type ruleCollector struct {
	rules   func() []*policy.Rule
	demoted func(id string) bool
	methods func(num int) string // a method number's name

	matches, decisive, necessary, secNecessary, covered, firstHit, lastHit, info, parts, enforced *prometheus.Desc
}

func newRuleCollector(rules func() []*policy.Rule, demoted func(string) bool, methods func(int) string) *ruleCollector {
	return &ruleCollector{
		rules:   rules,
		demoted: demoted,
		methods: methods,
		necessary: prometheus.NewDesc("orderly_rule_necessary_total",
			"Requests whose answer the legacy rule was necessary to: deleting the line would have changed it (a counterfactual, unlike decisive hits). Lines whose deletion changes their section's merge are not counted; their section's verdict covers them.", []string{"rule_id"}, nil),
		secNecessary: prometheus.NewDesc("orderly_section_necessary_total",
			"Requests whose answer the section's access configuration (its Order, Allow, Deny, Satisfy, Require and Auth* lines together) was necessary to: deleting them all would have changed it. rule_id is the section's synthetic (default) rule.", []string{"rule_id"}, nil),
		covered: prometheus.NewDesc("orderly_section_decisions_total",
			"Requests decided with the section's access lines in force, by method: the traffic its rules' necessity was measured over. rule_id is the section's synthetic (default) rule.", []string{"rule_id", "method"}, nil),
		enforced: prometheus.NewDesc("orderly_rule_enforced",
			"Whether the rule is enforced (1) or demoted to shadow-only (0: still evaluated and counted, its absence decides).", []string{"rule_id"}, nil),
		matches: prometheus.NewDesc("orderly_rule_matches_total",
			"Times the legacy rule's condition held when it was evaluated.", []string{"rule_id"}, nil),
		decisive: prometheus.NewDesc("orderly_rule_decisive_hits_total",
			"Requests whose decision the legacy rule made (synthetic default rules count decisions no directive made).", []string{"rule_id"}, nil),
		firstHit: prometheus.NewDesc("orderly_rule_first_hit_timestamp_seconds",
			"When the legacy rule first matched or decided, in seconds since the epoch (kept across restarts with state_file); 0 if never.", []string{"rule_id"}, nil),
		lastHit: prometheus.NewDesc("orderly_rule_last_hit_timestamp_seconds",
			"When the legacy rule last matched or decided, in seconds since the epoch; 0 if never.", []string{"rule_id"}, nil),
		parts: prometheus.NewDesc("orderly_rule_part_matches_total",
			"Times each word of an Allow or Deny line (an address, a host, env=, all) was the one that matched; a word at zero never did.", []string{"rule_id", "part"}, nil),
		info: prometheus.NewDesc("orderly_rule_info",
			"Where each legacy rule is written; always 1.", []string{"rule_id", "file", "line", "directive"}, nil),
	}
}

func (c *ruleCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.matches
	ch <- c.decisive
	ch <- c.necessary
	ch <- c.secNecessary
	ch <- c.covered
	ch <- c.firstHit
	ch <- c.lastHit
	ch <- c.info
	ch <- c.parts
	ch <- c.enforced
}

func (c *ruleCollector) Collect(ch chan<- prometheus.Metric) {
	seen := map[string]bool{}
	for _, r := range c.rules() {
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		m, d, last := r.Stats()
		ch <- prometheus.MustNewConstMetric(c.matches, prometheus.CounterValue, float64(m), r.ID)
		ch <- prometheus.MustNewConstMetric(c.decisive, prometheus.CounterValue, float64(d), r.ID)
		if !r.Default {
			ch <- prometheus.MustNewConstMetric(c.necessary, prometheus.CounterValue, float64(r.Necessary()), r.ID)
		}
		if r.Default {
			ch <- prometheus.MustNewConstMetric(c.secNecessary, prometheus.CounterValue, float64(r.Necessary()), r.ID)
			// A section's GET series exists from start-up, at 0 until a
			// request comes, so that increase() over a window sees its
			// first requests; other methods appear as they come.
			cov := r.Covered()
			if cov == nil {
				cov = make([]uint64, policy.MaxMethods)
			}
			for num, n := range cov {
				if n > 0 || num == policy.MethodGet {
					ch <- prometheus.MustNewConstMetric(c.covered, prometheus.CounterValue, float64(n), r.ID, c.methods(num))
				}
			}
		}
		ch <- prometheus.MustNewConstMetric(c.firstHit, prometheus.GaugeValue, seconds(r.FirstHit()), r.ID)
		ch <- prometheus.MustNewConstMetric(c.lastHit, prometheus.GaugeValue, seconds(last), r.ID)
		ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, r.ID, r.File, strconv.Itoa(r.Line), r.Text)
		enforced := 1.0
		if c.demoted(r.ID) {
			enforced = 0
		}
		ch <- prometheus.MustNewConstMetric(c.enforced, prometheus.GaugeValue, enforced, r.ID)
		for i, p := range r.Parts {
			ch <- prometheus.MustNewConstMetric(c.parts, prometheus.CounterValue, float64(p.Matches()), r.ID, r.PartLabel(i))
		}
	}
}

// seconds is t in seconds since the epoch, 0 for the zero time.
func seconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

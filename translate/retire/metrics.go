package retire

import (
	"fmt"
	"io"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/orderly-proxy/orderly/policy"
)

// FromMetrics reads a scrape of orderly's /metrics (the text exposition)
// and finds, among rules, those that have not fired (no match and no
// decision) and those that matched but never decided, since the process
// that exported it started. Rules the scrape does not know (added since)
// are left out.
//
// When the scrape has orderly_rule_necessary_total (orderly since it
// counts necessity), access and SetEnvIf lines are judged by it instead
// (verdicts): needed or can go, with the requests decided with each
// line's section in force (ix: nil judges without sections).
func FromMetrics(rules []*policy.Rule, ix *Index, exposition io.Reader) ([]Finding, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(exposition)
	if err != nil {
		return nil, fmt.Errorf("reading the metrics: %w", err)
	}
	counts := func(name string) map[string]float64 {
		out := map[string]float64{}
		f := fams[name]
		if f == nil {
			return out
		}
		for _, m := range f.GetMetric() {
			if id, ok := label(m, "rule_id"); ok {
				out[id] += m.GetCounter().GetValue()
			}
		}
		return out
	}
	matches, decisive := counts("orderly_rule_matches_total"), counts("orderly_rule_decisive_hits_total")
	parts := map[string]float64{}
	if f := fams["orderly_rule_part_matches_total"]; f != nil {
		for _, m := range f.GetMetric() {
			id, _ := label(m, "rule_id")
			part, _ := label(m, "part")
			parts[id+"\x00"+part] += m.GetCounter().GetValue()
		}
	}
	if len(matches) == 0 && len(decisive) == 0 {
		return nil, fmt.Errorf("the metrics hold no orderly_rule_matches_total or orderly_rule_decisive_hits_total series: not a scrape of orderly")
	}
	var out []Finding
	var ev *evidence
	if f := fams["orderly_rule_necessary_total"]; f != nil {
		ev = &evidence{when: sinceOf(fams), necessary: counts("orderly_rule_necessary_total"), covered: map[string]map[string]float64{}}
		if fams["orderly_section_necessary_total"] != nil {
			ev.sections = counts("orderly_section_necessary_total")
		}
		if f := fams["orderly_section_decisions_total"]; f != nil {
			for _, m := range f.GetMetric() {
				id, _ := label(m, "rule_id")
				method, _ := label(m, "method")
				if ev.covered[id] == nil {
					ev.covered[id] = map[string]float64{}
				}
				ev.covered[id][method] += m.GetCounter().GetValue()
			}
		}
		out = verdicts(rules, ix, ev)
	}
	for _, r := range rules {
		m, okm := matches[r.ID]
		d, okd := decisive[r.ID]
		if !okm && !okd {
			continue
		}
		if m > 0 {
			out = append(out, partFindings(r, parts, "since orderly started")...)
		}
		switch {
		case ev != nil && !isRewriteRule(r):
			// judged by necessity above (a RewriteRule has no necessity:
			// its hits are the evidence)
		case !fires(r):
		case m == 0 && d == 0:
			out = append(out, Finding{Kind: "not-fired", Severity: Info, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text,
				Why: "has neither matched nor decided a request since orderly started"})
		case d == 0 && decides(r):
			out = append(out, Finding{Kind: "not-decisive", Severity: Info, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text,
				Why: fmt.Sprintf("matched %.0f times but never decided a request since orderly started", m)})
		}
	}
	sortFindings(out)
	return out, nil
}

// partFindings reports the words of an Allow or Deny line that never
// matched while the line did (by others of its words): each can go from
// the line. parts holds the counts by "rule_id\x00part"; words the counts
// do not know are left out.
func partFindings(r *policy.Rule, parts map[string]float64, when string) []Finding {
	var out []Finding
	for i, p := range r.Parts {
		if v, ok := parts[r.ID+"\x00"+r.PartLabel(i)]; ok && v == 0 {
			out = append(out, Finding{Kind: "part-not-matched", Severity: Info, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text,
				Why: fmt.Sprintf("the word %q never matched %s, while the line did by its other words: it can go from the line", p.Word, when)})
		}
	}
	return out
}

// fires reports whether a rule's counters say something about whether it
// can go: the lines that match requests (Allow, Deny, Require, SetEnvIf
// and its kin, RewriteRule). Settings (Order, Satisfy, Auth*) and a scope's synthetic
// default rule never match; their silence is not evidence.
func fires(r *policy.Rule) bool {
	if r.Default {
		return false
	}
	name, _, _ := strings.Cut(strings.ToLower(r.Text), " ")
	switch name {
	case "allow", "deny", "require", "setenvif", "setenvifnocase", "browsermatch", "browsermatchnocase", "rewriterule":
		return true
	}
	return false
}

// isRewriteRule reports a RewriteRule line: it matches requests (its
// pattern and conditions held) and decides some ([F], [G], [R]), but
// necessity does not judge it, so its hits are what retire reports.
func isRewriteRule(r *policy.Rule) bool {
	name, _, _ := strings.Cut(strings.ToLower(r.Text), " ")
	return name == "rewriterule"
}

// decides reports whether a rule's decisive hits are evidence: only the
// lines that grant or refuse do (SetEnvIf only sets a variable).
func decides(r *policy.Rule) bool {
	name, _, _ := strings.Cut(strings.ToLower(r.Text), " ")
	return !r.Default && (name == "allow" || name == "deny" || name == "require")
}

// label returns the value of a series' label, and whether it has it.
func label(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}

// sinceOf says over what a scrape's counters count: since the time its
// orderly_counters_since_timestamp_seconds gives (the process's start, or
// the first one its state_file recorded), else "since orderly started".
func sinceOf(fams map[string]*dto.MetricFamily) string {
	f := fams["orderly_counters_since_timestamp_seconds"]
	if f == nil || len(f.GetMetric()) == 0 || f.GetMetric()[0].GetGauge().GetValue() <= 0 {
		return "since orderly started"
	}
	sec := f.GetMetric()[0].GetGauge().GetValue()
	return "since " + time.Unix(int64(sec), 0).UTC().Format(time.RFC3339)
}

// Since says over what a scrape's counters count ("since
// 2026-11-26T20:50:41Z"), for findings made from it beside FromMetrics'.
func Since(exposition io.Reader) (string, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(exposition)
	if err != nil {
		return "", fmt.Errorf("reading the metrics: %w", err)
	}
	return sinceOf(fams), nil
}

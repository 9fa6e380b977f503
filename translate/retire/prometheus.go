package retire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/orderly-proxy/orderly/policy"
)

// FromPrometheus asks a Prometheus server (its HTTP API at base) which of
// rules have not fired, or not decided anything, over the window, fleet
// wide (the counters of every orderly it scrapes, summed by rule). Only
// rules older than the window count: those whose orderly_rule_info series
// existed a window ago.
//
// With orderly_rule_necessary_total in the fleet's series, access and
// SetEnvIf lines are judged by necessity over the window (verdicts), as
// FromMetrics does for one scrape.
func FromPrometheus(ctx context.Context, base string, window string, rules []*policy.Rule, ix *Index) ([]Finding, error) {
	if _, err := model.ParseDuration(window); err != nil {
		return nil, fmt.Errorf("window %q: %v", window, err)
	}
	old, err := query(ctx, base, "count by (rule_id) (orderly_rule_info offset "+window+")")
	if err != nil {
		return nil, err
	}
	matches, err := query(ctx, base, "sum by (rule_id) (increase(orderly_rule_matches_total["+window+"]))")
	if err != nil {
		return nil, err
	}
	decisive, err := query(ctx, base, "sum by (rule_id) (increase(orderly_rule_decisive_hits_total["+window+"]))")
	if err != nil {
		return nil, err
	}
	parts, err := query(ctx, base, "sum by (rule_id, part) (increase(orderly_rule_part_matches_total["+window+"]))")
	if err != nil {
		return nil, err
	}
	necessary, err := query(ctx, base, "sum by (rule_id) (increase(orderly_rule_necessary_total["+window+"]))")
	if err != nil {
		return nil, err
	}
	var out []Finding
	var ev *evidence
	if len(necessary) > 0 {
		covered, err := query(ctx, base, "sum by (rule_id, method) (increase(orderly_section_decisions_total["+window+"]))")
		if err != nil {
			return nil, err
		}
		sections, err := query(ctx, base, "sum by (rule_id) (increase(orderly_section_necessary_total["+window+"]))")
		if err != nil {
			return nil, err
		}
		ev = &evidence{when: "in the last " + window, necessary: map[string]float64{}, covered: map[string]map[string]float64{}}
		for id, n := range necessary {
			if _, ok := old[id]; ok { // only rules older than the window
				ev.necessary[id] = n
			}
		}
		if len(sections) > 0 {
			ev.sections = map[string]float64{}
			for id, n := range sections {
				if _, ok := old[id]; ok {
					ev.sections[id] = n
				}
			}
		}
		for k, n := range covered {
			id, method, _ := strings.Cut(k, "\x00")
			if ev.covered[id] == nil {
				ev.covered[id] = map[string]float64{}
			}
			ev.covered[id][method] += n
		}
		out = verdicts(rules, ix, ev)
	}
	for _, r := range rules {
		if _, ok := old[r.ID]; !ok {
			continue // younger than the window
		}
		if m := matches[r.ID]; m > 0 {
			out = append(out, partFindings(r, parts, "in the last "+window)...)
		}
		m, okm := matches[r.ID]
		d, okd := decisive[r.ID]
		if !okm || !okd {
			continue // too few samples to tell
		}
		switch {
		case ev != nil && !isRewriteRule(r):
			// judged by necessity above (a RewriteRule has no necessity:
			// its hits are the evidence)
		case !fires(r):
		case m == 0 && d == 0:
			out = append(out, Finding{Kind: "not-fired", Severity: Info, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text,
				Why: "has neither matched nor decided a request in the last " + window + ", on any orderly Prometheus scrapes"})
		case d == 0 && decides(r):
			out = append(out, Finding{Kind: "not-decisive", Severity: Info, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text,
				Why: fmt.Sprintf("matched about %.0f times but decided no request in the last %s", m, window)})
		}
	}
	sortFindings(out)
	return out, nil
}

// query runs an instant query and returns its vector by rule_id (and
// part, as "rule_id\x00part", when the series have one).
func query(ctx context.Context, base, q string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", base, resp.Status, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s: query %s: %s", base, q, body.Error)
	}
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: query %s: value %v", base, q, r.Value[1])
		}
		key := r.Metric["rule_id"]
		if part, ok := r.Metric["part"]; ok {
			key += "\x00" + part
		} else if method, ok := r.Metric["method"]; ok {
			key += "\x00" + method
		}
		out[key] = v
	}
	return out, nil
}

package retire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// promAPI is a Prometheus HTTP API on 127.0.0.1 that answers the four
// instant queries FromPrometheus makes from fixed vectors, and records the
// queries it saw.
type promAPI struct {
	mu      sync.Mutex
	queries []string
	answer  func(q string) (status int, body string)
}

func (p *promAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query().Get("query")
	p.mu.Lock()
	p.queries = append(p.queries, q)
	p.mu.Unlock()
	status, body := p.answer(q)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// vector renders an instant-query answer whose samples are given as
// {labels, value}, the value as Prometheus writes it: a string.
func vector(samples ...sample) string {
	type result struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	res := []result{}
	for _, s := range samples {
		res = append(res, result{Metric: s.labels, Value: [2]any{1.7e9, s.value}})
	}
	b, _ := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": res}})
	return string(b)
}

type sample struct {
	labels map[string]string
	value  string
}

func byRule(id, v string) sample { return sample{map[string]string{"rule_id": id}, v} }
func byPart(id, part, v string) sample {
	return sample{map[string]string{"rule_id": id, "part": part}, v}
}

func rule(id, file string, line int, text string, parts ...string) *policy.Rule {
	r := &policy.Rule{ID: id, File: file, Line: line, Text: text}
	for _, p := range parts {
		r.NewPart(p)
	}
	return r
}

// The rules of the fleet, and the vectors a Prometheus scraping it would
// answer over a 7d window.
var (
	promRules = []*policy.Rule{
		rule("deny", "b.conf", 9, "Deny from 192.0.2.0/24", "192.0.2.0/24"),
		rule("silent", "b.conf", 3, "Allow from 10.0.0.0/8", "10.0.0.0/8"),
		rule("words", "a.conf", 20, "Allow from 10.0.0.0/8 172.16.0.0/12 10.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "10.0.0.0/8"),
		rule("quietwords", "a.conf", 30, "Allow from 198.51.100.0/24 203.0.113.0/24", "198.51.100.0/24", "203.0.113.0/24"),
		rule("require", "a.conf", 5, "Require valid-user"),
		rule("requireused", "a.conf", 6, "require user alice"),
		rule("setenv", "a.conf", 7, "SetEnvIf Remote_Addr ^10 lan"),
		rule("setenvquiet", "a.conf", 8, "BrowserMatch ^curl curl"),
		rule("order", "a.conf", 2, "Order deny,allow"),
		{ID: "default", File: "a.conf", Line: 1, Text: "Deny from all", Default: true},
		rule("young", "a.conf", 40, "Allow from 192.168.0.0/16"),
		rule("unscraped", "a.conf", 41, "Deny from 198.18.0.0/15"),
		rule("nodecisive", "a.conf", 42, "Deny from 198.19.0.0/16"),
	}
	promAnswers = map[string]string{
		"count by (rule_id) (orderly_rule_info offset 7d)": vector(
			byRule("deny", "2"), byRule("silent", "2"), byRule("words", "2"), byRule("quietwords", "2"),
			byRule("require", "2"), byRule("requireused", "2"), byRule("setenv", "2"), byRule("setenvquiet", "2"),
			byRule("order", "2"), byRule("default", "2"), byRule("unscraped", "1"), byRule("nodecisive", "1")),
		"sum by (rule_id) (increase(orderly_rule_matches_total[7d]))": vector(
			byRule("deny", "5.2"), byRule("silent", "0"), byRule("words", "12"), byRule("quietwords", "0"),
			byRule("require", "4"), byRule("requireused", "4"), byRule("setenv", "3"), byRule("setenvquiet", "0"),
			byRule("order", "0"), byRule("default", "0"), byRule("young", "0"), byRule("nodecisive", "0")),
		"sum by (rule_id) (increase(orderly_rule_decisive_hits_total[7d]))": vector(
			byRule("deny", "0"), byRule("silent", "0"), byRule("words", "12"), byRule("quietwords", "0"),
			byRule("require", "0"), byRule("requireused", "1"), byRule("setenv", "0"), byRule("setenvquiet", "0"),
			byRule("order", "0"), byRule("default", "0"), byRule("young", "0")),
		// A fleet of orderly that does not count necessity yet.
		"sum by (rule_id) (increase(orderly_rule_necessary_total[7d]))": vector(),
		"sum by (rule_id, part) (increase(orderly_rule_part_matches_total[7d]))": vector(
			byPart("words", "10.0.0.0/8", "12"), byPart("words", "172.16.0.0/12", "0"), byPart("words", "10.0.0.0/8#2", "0"),
			byPart("quietwords", "198.51.100.0/24", "0"), byPart("quietwords", "203.0.113.0/24", "0"),
			byPart("deny", "192.0.2.0/24", "5.2")),
	}
)

// answering serves the instant queries of answers, and refuses any other.
func answering(t *testing.T, answers map[string]string) (*promAPI, *httptest.Server) {
	api := &promAPI{answer: func(q string) (int, string) {
		if a, ok := answers[q]; ok {
			return http.StatusOK, a
		}
		return http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"unexpected query"}`
	}}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, srv
}

func TestFromPrometheus(t *testing.T) {
	api, srv := answering(t, promAnswers)

	fs, err := FromPrometheus(context.Background(), srv.URL, "7d", promRules, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s:%d %s %s %s: %s", f.File, f.Line, f.RuleID, f.Kind, f.Severity, f.Why))
	}
	// In file and line order. "words" matched, so its words at zero can go
	// (the second 10.0.0.0/8 by its label "10.0.0.0/8#2"); "quietwords"
	// never matched: that is the line's finding, not its words'. Settings,
	// default rules, rules younger than the window and rules without a
	// sample of each counter say nothing; SetEnvIf lines never decide, so
	// only their silence counts.
	want := []string{
		`a.conf:5 require not-decisive info: matched about 4 times but decided no request in the last 7d`,
		`a.conf:8 setenvquiet not-fired info: has neither matched nor decided a request in the last 7d, on any orderly Prometheus scrapes`,
		`a.conf:20 words part-not-matched info: the word "172.16.0.0/12" never matched in the last 7d, while the line did by its other words: it can go from the line`,
		`a.conf:20 words part-not-matched info: the word "10.0.0.0/8" never matched in the last 7d, while the line did by its other words: it can go from the line`,
		`a.conf:30 quietwords not-fired info: has neither matched nor decided a request in the last 7d, on any orderly Prometheus scrapes`,
		`b.conf:3 silent not-fired info: has neither matched nor decided a request in the last 7d, on any orderly Prometheus scrapes`,
		`b.conf:9 deny not-decisive info: matched about 5 times but decided no request in the last 7d`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(api.queries) != 5 {
		t.Errorf("%d queries, want 5: %q", len(api.queries), api.queries)
	}
}

func TestFromPrometheusErrors(t *testing.T) {
	ok := func(q string) (int, string) { return http.StatusOK, promAnswers[q] }
	// failing answers the one query that contains fail with body.
	failing := func(fail string, status int, body string) func(string) (int, string) {
		return func(q string) (int, string) {
			if strings.Contains(q, fail) {
				return status, body
			}
			return ok(q)
		}
	}
	tests := []struct {
		name   string
		base   string // "" for the test server
		window string
		answer func(string) (int, string)
		want   string // in the error
	}{
		{"bad window", "", "a week", ok, `window "a week"`},
		{"bad base", "http://[::1", "7d", ok, "missing ']'"},
		{"bad query", "", "7d", failing("orderly_rule_info", http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"parse error at char 3"}`), "parse error at char 3"},
		{"matches fail", "", "7d", failing("orderly_rule_matches_total", http.StatusServiceUnavailable, `{"status":"error","error":"too many samples"}`), "too many samples"},
		{"decisive fail", "", "7d", failing("orderly_rule_decisive_hits_total", http.StatusUnprocessableEntity, `{"status":"error","error":"query timed out"}`), "query timed out"},
		{"parts fail", "", "7d", failing("orderly_rule_part_matches_total", http.StatusOK, `{"status":"error","error":"out of bounds"}`), "out of bounds"},
		{"not JSON", "", "7d", failing("orderly_rule_info", http.StatusBadGateway, `<html>bad gateway</html>`), "502 Bad Gateway"},
		{"bad value", "", "7d", failing("orderly_rule_matches_total", http.StatusOK, vector(byRule("deny", "many"))), "value many"},
		{"value not a string", "", "7d", failing("orderly_rule_matches_total", http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"rule_id":"deny"},"value":[1.7e9,3]}]}}`), "value 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &promAPI{answer: tt.answer}
			srv := httptest.NewServer(api)
			defer srv.Close()
			base := tt.base
			if base == "" {
				base = srv.URL
			}
			fs, err := FromPrometheus(context.Background(), base, tt.window, promRules, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v (findings %v), want one with %q", err, fs, tt.want)
			}
			if fs != nil {
				t.Errorf("findings %v with the error", fs)
			}
			if tt.window == "a week" && len(api.queries) != 0 {
				t.Errorf("a bad window still queried %q", api.queries)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		base := srv.URL
		srv.Close()
		if _, err := FromPrometheus(context.Background(), base, "7d", promRules, nil); err == nil {
			t.Error("a closed server gave no error")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		srv := httptest.NewServer(&promAPI{answer: ok})
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := FromPrometheus(ctx, srv.URL, "7d", promRules, nil); err == nil {
			t.Error("a cancelled context gave no error")
		}
	})
}

// With necessity in the fleet's series, lines are judged by it over the
// window, rules younger than the window left out.
func TestFromPrometheusNecessity(t *testing.T) {
	answers := map[string]string{}
	for q, a := range promAnswers {
		answers[q] = a
	}
	answers["sum by (rule_id) (increase(orderly_rule_necessary_total[7d]))"] = vector(byRule("deny", "0"), byRule("require", "2.5"), byRule("young", "0"))
	answers["sum by (rule_id, method) (increase(orderly_section_decisions_total[7d]))"] = vector(sample{map[string]string{"rule_id": "default", "method": "GET"}, "3"})
	answers["sum by (rule_id) (increase(orderly_section_necessary_total[7d]))"] = vector(byRule("default", "0"))
	_, srv := answering(t, answers)
	fs, err := FromPrometheus(context.Background(), srv.URL, "7d", promRules, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		if f.Kind != "part-not-matched" {
			got = append(got, fmt.Sprintf("%s %s [%s]", f.RuleID, f.Kind, f.Verdict))
		}
	}
	if want := "require needed [needed],deny not-seen []"; strings.Join(got, ",") != want {
		t.Errorf("findings %q, want %s", got, want)
	}
}

// The fleet's section necessity judges each section's access lines as a
// whole, for sections older than the window.
func TestFromPrometheusSections(t *testing.T) {
	cfg := load(t, `<Directory @DOCROOT@/a>
    Order deny,allow
    Deny from all
</Directory>
<Directory @DOCROOT@/b>
    Order allow,deny
    Allow from all
</Directory>
`)
	sec := map[string]string{}
	var info []sample
	for _, r := range cfg.Rules {
		info = append(info, byRule(r.ID, "1"))
		if r.Default {
			sec[r.Text[strings.LastIndex(r.Text, "/")+1:]] = r.ID
		}
	}
	a, b := sec["a>"], sec["b>"]
	answers := map[string]string{
		"count by (rule_id) (orderly_rule_info offset 7d)":                         vector(info...),
		"sum by (rule_id) (increase(orderly_rule_matches_total[7d]))":              vector(),
		"sum by (rule_id) (increase(orderly_rule_decisive_hits_total[7d]))":        vector(),
		"sum by (rule_id, part) (increase(orderly_rule_part_matches_total[7d]))":   vector(),
		"sum by (rule_id) (increase(orderly_rule_necessary_total[7d]))":            vector(byRule("x", "0")),
		"sum by (rule_id, method) (increase(orderly_section_decisions_total[7d]))": vector(sample{map[string]string{"rule_id": a, "method": "GET"}, "5"}, sample{map[string]string{"rule_id": b, "method": "GET"}, "2"}),
		"sum by (rule_id) (increase(orderly_section_necessary_total[7d]))":         vector(byRule(a, "5"), byRule(b, "0")),
	}
	_, srv := answering(t, answers)
	fs, err := FromPrometheus(context.Background(), srv.URL, "7d", cfg.Rules, IndexOf(cfg))
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
		"1 [section needed] deleting its access lines (2, 3) together would have changed the answer to 5 requests in the last 7d",
		"5 [section can go] deleting its access lines (6, 7) together would have changed none of the 2 requests decided with it in force in the last 7d (GET 2); traffic not seen is not covered",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("section findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without the series (an orderly that does not count sections), no
	// section verdict.
	answers["sum by (rule_id) (increase(orderly_section_necessary_total[7d]))"] = vector()
	fs, err = FromPrometheus(context.Background(), srv.URL, "7d", cfg.Rules, IndexOf(cfg))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if strings.HasPrefix(f.Kind, "section-") {
			t.Errorf("a section verdict without its series: %+v", f)
		}
	}
}

// The fleet's demoted disagreements over a window, by rule; a window
// Prometheus does not read is refused before any query.
func TestDemotedFromPrometheus(t *testing.T) {
	api, srv := answering(t, map[string]string{
		`sum by (rule_id) (increase(orderly_shadow_disagreements_total{against="demoted"}[7d]))`: vector(byRule("a", "3"), byRule("b", "0")),
	})
	got, err := DemotedFromPrometheus(context.Background(), srv.URL, "7d")
	if err != nil || len(got) != 2 || got["a"] != 3 || got["b"] != 0 {
		t.Errorf("%v %v", got, err)
	}
	n := len(api.queries)
	if _, err := DemotedFromPrometheus(context.Background(), srv.URL, "a week"); err == nil || !strings.Contains(err.Error(), "a week") || len(api.queries) != n {
		t.Errorf("a bad window: %v, %d queries", err, len(api.queries)-n)
	}
}

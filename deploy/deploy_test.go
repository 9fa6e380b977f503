package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy"
)

const (
	rulesFile     = "prometheus/orderly-rules.yml"
	rulesTestFile = "prometheus/orderly-rules.test.yml"
	dashboardFile = "grafana/orderly-dashboard.json"
	analysisFile  = "rollouts/analysis-template.yaml"
)

// scrapeLabels are the labels a series gets from its scrape rather than
// from orderly: job and instance from Prometheus, rollouts_pod_template_hash
// from the relabelling the analysis template documents.
var scrapeLabels = []string{"job", "instance", "rollouts_pod_template_hash"}

// promtool returns the path of promtool, or ends the test: fatally under
// CI=true, where a missing tool must not pass unnoticed, skipped elsewhere.
func promtool(t *testing.T) string {
	t.Helper()
	return apachetest.RequireTool(t, "promtool", "prometheus")
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("promtool %s: %v", strings.Join(args, " "), err)
	}
}

func TestPromtoolCheckRules(t *testing.T) {
	runPromtool(t, "check", "rules", rulesFile)
}

func TestPromtoolTestRules(t *testing.T) {
	runPromtool(t, "test", "rules", rulesTestFile)
}

// exported lists the metric families orderly exports, as its registry
// gathers them with one legacy rule in force.
type exported map[string]*family

type family struct {
	typ    string // COUNTER, GAUGE, HISTOGRAM, SUMMARY, UNTYPED
	labels []string
}

func exportedMetrics(t *testing.T) exported {
	t.Helper()
	rules := []*policy.Rule{{ID: "x", File: "f", Line: 1, Text: "Deny from all"}, {ID: "d", Text: "(default) server", Default: true}}
	rules[1].Cover(policy.MethodGet) // a section's coverage exists once it decided a request
	m := proxy.NewMetrics(func() []*policy.Rule { return rules })
	// Series that exist once traffic has made them: a shadow disagreement.
	m.Compare("default", &policy.Decision{Status: 403, Rule: rules[0]}, 200)
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	e := exported{}
	for _, mf := range mfs {
		f := &family{typ: mf.GetType().String()}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if !slices.Contains(f.labels, lp.GetName()) {
					f.labels = append(f.labels, lp.GetName())
				}
			}
		}
		e[mf.GetName()] = f
	}
	for _, want := range []string{"orderly_requests_total", "orderly_rule_info", "orderly_request_duration_seconds", "orderly_shadow_disagreements_total"} {
		if e[want] == nil {
			t.Fatalf("the registry does not gather %s: the check would prove nothing", want)
		}
	}
	return e
}

// family returns the family a series name belongs to: the name itself, or
// a histogram's or summary's _bucket, _sum or _count series.
func (e exported) family(name string) *family {
	if f := e[name]; f != nil {
		return f
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		f := e[base]
		if f == nil {
			continue
		}
		switch f.typ {
		case "HISTOGRAM", "GAUGE_HISTOGRAM":
			return f
		case "SUMMARY":
			if suffix != "_bucket" {
				return f
			}
		}
	}
	return nil
}

// labels returns the label names a series of name may carry.
func (e exported) labels(name string) []string {
	f := e.family(name)
	if f == nil {
		return nil
	}
	ls := append(slices.Clone(scrapeLabels), f.labels...)
	if strings.HasSuffix(name, "_bucket") {
		ls = append(ls, "le")
	}
	return ls
}

var (
	// identifier is a PromQL metric name, recording-rule names (with ':')
	// included, so that job:orderly_requests:rate5m is one token and not
	// the non-metric orderly_requests.
	identifier = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	metricName = regexp.MustCompile(`^orderly_[a-z_]+$`)
	// selector is a metric name with its label matchers; template
	// placeholders ({{args.x}}) are replaced before matching.
	selector = regexp.MustCompile(`(orderly_[a-z_]+)\{([^{}]*)\}`)
	matcher  = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)`)
	argRef   = regexp.MustCompile(`\{\{\s*args\.([A-Za-z0-9_-]+)\s*\}\}`)
)

// unknownMetrics returns the orderly_* metric names in text that orderly
// does not export. Names with ':' are recording rules and are left to
// TestRecordingRulesDefined.
func unknownMetrics(e exported, text string) []string {
	var bad []string
	for _, tok := range identifier.FindAllString(text, -1) {
		if strings.Contains(tok, ":") || !metricName.MatchString(tok) {
			continue
		}
		if e.family(tok) == nil && !slices.Contains(bad, tok) {
			bad = append(bad, tok)
		}
	}
	return bad
}

// unknownLabels returns name{label} for every label matcher in text that
// names a label the metric does not carry.
func unknownLabels(e exported, text string) []string {
	text = strings.ReplaceAll(text, `\"`, `"`) // JSON-escaped PromQL
	text = argRef.ReplaceAllString(text, "ARG")
	var bad []string
	for _, sm := range selector.FindAllStringSubmatch(text, -1) {
		name, known := sm[1], e.labels(sm[1])
		if known == nil {
			continue // unknownMetrics reports it
		}
		for _, mm := range matcher.FindAllStringSubmatch(sm[2], -1) {
			if l := mm[1]; !slices.Contains(known, l) {
				if s := name + "{" + l + "}"; !slices.Contains(bad, s) {
					bad = append(bad, s)
				}
			}
		}
	}
	return bad
}

// deployFiles returns the text of every file under deploy/ but the Go
// ones (this test names metrics that do not exist on purpose).
func deployFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".go") {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rulesFile, rulesTestFile, dashboardFile, analysisFile, composeFile, unitFile, "README.md"} {
		if _, ok := files[f]; !ok {
			t.Fatalf("%s missing", f)
		}
	}
	return files
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// readmeQueries are the ```promql blocks of the top-level README.
func readmeQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range promqlBlock.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	if len(out) < 3 {
		t.Fatalf("README.md has %d promql blocks, want at least 3", len(out))
	}
	return out
}

var promqlBlock = regexp.MustCompile("(?s)```promql\n(.*?)```")

// TestReadmeQueries: the metrics and labels the README's queries name
// are orderly's.
func TestReadmeQueries(t *testing.T) {
	e := exportedMetrics(t)
	for _, q := range readmeQueries(t) {
		for _, name := range unknownMetrics(e, q) {
			t.Errorf("README.md names %s, which orderly does not export:\n%s", name, q)
		}
		for _, l := range unknownLabels(e, q) {
			t.Errorf("README.md selects %s, a label orderly's metric does not carry:\n%s", l, q)
		}
	}
}

// TestMetricsExist: every orderly metric the deploy files name, and every
// label they select it by, is one orderly exports.
func TestMetricsExist(t *testing.T) {
	e := exportedMetrics(t)
	files := deployFiles(t)
	for _, path := range sortedKeys(files) {
		t.Run(path, func(t *testing.T) {
			text := files[path]
			if path == rulesTestFile {
				// The input series are synthetic, but they stand for
				// orderly's: check them like the rest.
				text = strings.ReplaceAll(text, `\"`, `"`)
			}
			for _, name := range unknownMetrics(e, text) {
				t.Errorf("%s names %s, which orderly does not export", path, name)
			}
			for _, s := range unknownLabels(e, text) {
				t.Errorf("%s selects %s, a label orderly's metric does not carry", path, s)
			}
		})
	}
}

// TestChecker shows the checks above would catch a wrong name or label.
func TestChecker(t *testing.T) {
	e := exportedMetrics(t)
	for _, tc := range []struct {
		text          string
		metrics, lbls []string
	}{
		{text: `rate(orderly_requests_total{decision="deny"}[5m])`},
		{text: `histogram_quantile(0.99, rate(orderly_request_duration_seconds_bucket{le="+Inf",job="x"}[5m]))`},
		{text: `orderly_request_duration_seconds_sum / orderly_request_duration_seconds_count`},
		{text: `orderly_rule_info{rule_id="x",file="f",line="1",directive="d"}`},
		{text: `job:orderly_requests:rate5m and job:orderly_made_up:ratio`},
		{text: `"uid": "orderly-overview", orderly.hcl`},
		{text: `{"expr": "orderly_requests_total{decision=\"deny\"}"}`},
		{text: `orderly_requests_total{job="{{args.job}}",mode="enforce"}`},
		{text: `rate(orderly_shadow_made_up_total[5m])`, metrics: []string{"orderly_shadow_made_up_total"}},
		{text: `orderly_shadow_disagreements_total{direction="would_newly_allow",rule_id="x"}`},
		{text: `orderly_requests_total_bucket`, metrics: []string{"orderly_requests_total_bucket"}},
		{text: `orderly_backend_errors`, metrics: []string{"orderly_backend_errors"}},
		{text: `orderly_requests_total{result="deny"}`, lbls: []string{"orderly_requests_total{result}"}},
		{text: `{"expr": "orderly_rule_info{rule=\"x\"}"}`, lbls: []string{"orderly_rule_info{rule}"}},
		{text: `orderly_request_duration_seconds_sum{le="1"}`, lbls: []string{"orderly_request_duration_seconds_sum{le}"}},
	} {
		if got := unknownMetrics(e, tc.text); !slices.Equal(got, tc.metrics) {
			t.Errorf("unknownMetrics(%s) = %q, want %q", tc.text, got, tc.metrics)
		}
		if got := unknownLabels(e, tc.text); !slices.Equal(got, tc.lbls) {
			t.Errorf("unknownLabels(%s) = %q, want %q", tc.text, got, tc.lbls)
		}
	}
}

var recordLine = regexp.MustCompile(`(?m)^\s*- record:\s*(\S+)\s*$`)

// TestRecordingRulesDefined: every orderly recording rule the deploy files
// use is defined in the rules file.
func TestRecordingRulesDefined(t *testing.T) {
	files := deployFiles(t)
	defined := map[string]bool{}
	for _, m := range recordLine.FindAllStringSubmatch(files[rulesFile], -1) {
		defined[m[1]] = true
	}
	if len(defined) == 0 {
		t.Fatalf("%s defines no recording rule", rulesFile)
	}
	for _, path := range sortedKeys(files) {
		for _, tok := range identifier.FindAllString(files[path], -1) {
			if strings.Contains(tok, ":") && strings.Contains(tok, "orderly_") && !defined[tok] {
				t.Errorf("%s uses %s, which %s does not record", path, tok, rulesFile)
			}
		}
	}
}

var (
	ruleStart    = regexp.MustCompile(`^\s*- (alert|record):\s*(\S+)`)
	groupStart   = regexp.MustCompile(`^\s*- name:`)
	alertCase    = regexp.MustCompile(`alertname:\s*(\S+)\s*\n\s*exp_alerts:\s*(\[\])?`)
	alertInValue = regexp.MustCompile(`(?m)^\s*(severity|summary|description|runbook_url):`)
	runbookURL   = regexp.MustCompile(`(?m)^\s*runbook_url:\s*(\S+)\s*$`)
)

// runbookPage is the runbook page every alert's runbook_url points into,
// and runbookAnchors the sections of it they name: one an alert, as
// GitHub makes them from headings that are the alerts' names. The page
// must have them all.
const runbookPage = "https://github.com/orderly-proxy/orderly/blob/main/docs/operations.md"

var runbookAnchors = []string{
	"orderlydown",
	"orderlyreloadfailed",
	"orderlybackendunguarded",
	"orderlybackenderrors",
	"orderlydenyspike",
	"orderlyshadowwouldnewlyallow",
	"orderlyshadowevaluationerrors",
}

// alertBodies returns the alerts of the rules file in order, and the text
// of each rule after its "- alert:" line.
func alertBodies(rules string) (order []string, body map[string]string) {
	body = map[string]string{}
	var cur string
	for _, line := range strings.Split(rules, "\n") {
		switch m := ruleStart.FindStringSubmatch(line); {
		case m != nil && m[1] == "alert":
			cur = m[2]
			order = append(order, cur)
		case m != nil || groupStart.MatchString(line):
			cur = ""
		case cur != "":
			body[cur] += line + "\n"
		}
	}
	return order, body
}

// TestAlerts: every alert has a severity, a summary and a description, and
// the promtool tests show it both firing and not firing.
func TestAlerts(t *testing.T) {
	files := deployFiles(t)
	order, alerts := alertBodies(files[rulesFile])
	want := []string{"OrderlyDown", "OrderlyReloadFailed", "OrderlyBackendUnguarded", "OrderlyBackendErrors", "OrderlyDenySpike", "OrderlyShadowWouldNewlyAllow", "OrderlyShadowEvaluationErrors"}
	for _, a := range want {
		if !slices.Contains(order, a) {
			t.Errorf("%s has no alert %s", rulesFile, a)
		}
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, m := range alertCase.FindAllStringSubmatch(files[rulesTestFile], -1) {
		if m[2] == "" {
			fires[m[1]] = true
		} else {
			quiet[m[1]] = true
		}
	}
	for _, a := range order {
		t.Run(a, func(t *testing.T) {
			got := map[string]bool{}
			for _, m := range alertInValue.FindAllStringSubmatch(alerts[a], -1) {
				got[m[1]] = true
			}
			for _, k := range []string{"severity", "summary", "description", "runbook_url"} {
				if !got[k] {
					t.Errorf("no %s", k)
				}
			}
			if !fires[a] {
				t.Errorf("%s has no case where it fires", rulesTestFile)
			}
			if !quiet[a] {
				t.Errorf("%s has no case where it stays quiet", rulesTestFile)
			}
		})
	}
}

// TestRunbookURLs: every alert has one runbook_url, into runbookPage at
// an anchor of runbookAnchors, and each anchor is some alert's; and, once
// docs/operations.md exists, it has a heading for each anchor.
func TestRunbookURLs(t *testing.T) {
	files := deployFiles(t)
	order, alerts := alertBodies(files[rulesFile])
	if len(order) == 0 {
		t.Fatalf("%s has no alerts", rulesFile)
	}
	used := map[string]string{}
	for _, a := range order {
		urls := runbookURL.FindAllStringSubmatch(alerts[a], -1)
		if len(urls) != 1 {
			t.Errorf("%s: %d runbook_url annotations, want one", a, len(urls))
			continue
		}
		u := urls[0][1]
		page, anchor, ok := strings.Cut(u, "#")
		switch {
		case !ok || page != runbookPage:
			t.Errorf("%s: runbook_url %s, want %s#<anchor>", a, u, runbookPage)
		case !slices.Contains(runbookAnchors, anchor):
			t.Errorf("%s: runbook_url anchor #%s is not in runbookAnchors %q", a, anchor, runbookAnchors)
		case used[anchor] != "":
			t.Errorf("%s: runbook_url anchor #%s is %s's too", a, anchor, used[anchor])
		default:
			used[anchor] = a
		}
	}
	for _, anchor := range runbookAnchors {
		if used[anchor] == "" {
			t.Errorf("runbookAnchors lists #%s, which no alert uses", anchor)
		}
	}

	b, err := os.ReadFile("../docs/operations.md")
	if errors.Is(err, fs.ErrNotExist) {
		t.Logf("../docs/operations.md does not exist yet: its anchors are not checked")
		return
	} else if err != nil {
		t.Fatal(err)
	}
	have := markdownAnchors(string(b))
	for _, anchor := range runbookAnchors {
		if !have[anchor] {
			t.Errorf("docs/operations.md has no heading with anchor #%s (%s's runbook)", anchor, used[anchor])
		}
	}
}

var (
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```")
	htmlID    = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// markdownAnchors returns the anchors GitHub gives a Markdown page: its
// headings', lower-cased, without punctuation but '-' and '_', spaces made
// '-', and -1, -2... on repeats; and explicit <a id> or <a name> ones.
func markdownAnchors(md string) map[string]bool {
	md = mdFence.ReplaceAllString(md, "")
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(md, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range htmlID.FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	return out
}

func TestMarkdownAnchors(t *testing.T) {
	md := "# Operations\n\n## Alerts\n\n### OrderlyDown\n\n```sh\n# not a heading\n```\n### `OrderlyReloadFailed`: a reload rejected\n## Alerts\n<a id=\"custom\"></a>\n"
	got := markdownAnchors(md)
	for _, want := range []string{"operations", "alerts", "orderlydown", "orderlyreloadfailed-a-reload-rejected", "alerts-1", "custom"} {
		if !got[want] {
			t.Errorf("no anchor #%s in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block made an anchor")
	}
}

type dashboard struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasource     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name       string      `json:"name"`
			Expr       string      `json:"expr"`
			Datasource *datasource `json:"datasource"`
		} `json:"list"`
	} `json:"annotations"`
	Panels []panel `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	GridPos    struct{ H, W, X, Y int }
	Targets    []struct {
		Expr       string      `json:"expr"`
		RefID      string      `json:"refId"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // collapsed rows
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

const dsRef = "${DS_PROMETHEUS}"

func TestDashboard(t *testing.T) {
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Error("dashboard without uid or title")
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d: want 36 or later (datasource references by uid)", d.SchemaVersion)
	}
	var dsVar bool
	for _, v := range d.Templating.List {
		if v.Name == "DS_PROMETHEUS" && v.Type == "datasource" && string(v.Query) == `"prometheus"` {
			dsVar = true
		}
		if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != dsRef) {
			t.Errorf("variable %s does not query %s", v.Name, dsRef)
		}
	}
	if !dsVar {
		t.Errorf("no templating variable DS_PROMETHEUS of type datasource (prometheus)")
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" && (a.Datasource == nil || a.Datasource.UID != dsRef) {
			t.Errorf("annotation %s does not query %s", a.Name, dsRef)
		}
	}
	ids := map[int]bool{}
	titles := map[string]panel{}
	for _, p := range allPanels(d.Panels) {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		titles[p.Title] = p
		if p.Type == "row" {
			continue
		}
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
		}
		if p.Datasource == nil || p.Datasource.UID != dsRef {
			t.Errorf("panel %q: datasource is not %s", p.Title, dsRef)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("panel %q, query %s: empty", p.Title, tg.RefID)
			}
			if tg.Datasource != nil && tg.Datasource.UID != dsRef {
				t.Errorf("panel %q, query %s: datasource is not %s", p.Title, tg.RefID, dsRef)
			}
		}
	}
	// The panels issue 6 asks for, and the metric each must read.
	for _, tc := range []struct{ title, needs string }{
		{"Decisions / s by decision", "orderly_requests_total"},
		{"Deny ratio", `decision=\"deny\"`},
		{"Latency p50 / p99", "orderly_request_duration_seconds_bucket"},
		{"Backend errors", "orderly_backend_errors_total"},
		{"Configuration reloads", "orderly_config_reloads_total"},
		{"Last reload", "orderly_config_last_reload_successful"},
		{"Config generation", "orderly_config_generation"},
		{"Legacy rules", "orderly_rule_decisive_hits_total"},
		{"Legacy rules", "group_left (file, line, directive)"},
		{"Legacy rules", "orderly_rule_info"},
		{"Rules never fired (range)", "[$__range]"},
	} {
		p, ok := titles[tc.title]
		if !ok {
			t.Errorf("no panel %q", tc.title)
			continue
		}
		b, _ := json.Marshal(p.Targets)
		if !strings.Contains(string(b), tc.needs) && !strings.Contains(string(b), strings.ReplaceAll(tc.needs, `\"`, `\\\"`)) {
			t.Errorf("panel %q: no query with %s", tc.title, tc.needs)
		}
	}
}

// grafanaVars stands in for Grafana's variables, so promtool can parse the
// dashboard's queries.
var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "5m",
	"$__interval", "1m",
	"$__range", "1h",
	"$instance", ".*",
	"$job", "orderly",
)

// analysisArgs reads the template's args and their defaults from its text.
var (
	argDecl = regexp.MustCompile(`(?m)^    - name: ([A-Za-z0-9_-]+)\n(?:\s*#.*\n)*(?:      value: "?([^"\n]*)"?\n)?`)
	queryAt = regexp.MustCompile(`(?m)^(\s*)query: \|\n`)
)

func analysisTemplate(t *testing.T) (text string, args map[string]string, queries []string) {
	t.Helper()
	b, err := os.ReadFile(analysisFile)
	if err != nil {
		t.Fatal(err)
	}
	text = string(b)
	spec, metrics, ok := strings.Cut(text, "\n  metrics:\n")
	if !ok {
		t.Fatalf("%s: no spec.metrics", analysisFile)
	}
	_, argsText, ok := strings.Cut(spec, "\n  args:\n")
	if !ok {
		t.Fatalf("%s: no spec.args", analysisFile)
	}
	args = map[string]string{}
	for _, m := range argDecl.FindAllStringSubmatch(argsText+"\n", -1) {
		args[m[1]] = m[2]
	}
	// Each query is a literal block: the lines indented deeper than its key.
	for _, loc := range queryAt.FindAllStringSubmatchIndex(metrics, -1) {
		indent := loc[3] - loc[2]
		var q []string
		for _, line := range strings.Split(metrics[loc[1]:], "\n") {
			if strings.TrimSpace(line) != "" && len(line)-len(strings.TrimLeft(line, " ")) <= indent {
				break
			}
			q = append(q, line)
		}
		queries = append(queries, strings.TrimSpace(strings.Join(q, "\n")))
	}
	return text, args, queries
}

func TestAnalysisTemplate(t *testing.T) {
	text, args, queries := analysisTemplate(t)
	for _, want := range []string{"apiVersion: argoproj.io/v1alpha1\n", "kind: AnalysisTemplate\n", "prometheus:"} {
		if !strings.Contains(text, want) {
			t.Errorf("%s: no %q", analysisFile, strings.TrimSpace(want))
		}
	}
	// job is the one arg a Rollout must pass; the others have defaults.
	for name, def := range args {
		if (name == "job") != (def == "") {
			t.Errorf("%s: arg %s has default %q; want one for every arg but job", analysisFile, name, def)
		}
	}
	if _, ok := args["job"]; !ok {
		t.Errorf("%s: no job arg", analysisFile)
	}
	used := map[string]bool{}
	for _, m := range argRef.FindAllStringSubmatch(text, -1) {
		used[m[1]] = true
		if _, ok := args[m[1]]; !ok {
			t.Errorf("%s uses {{args.%s}}, which spec.args does not declare", analysisFile, m[1])
		}
	}
	for a := range args {
		if !used[a] {
			t.Errorf("%s declares arg %s and never uses it", analysisFile, a)
		}
	}
	if n := strings.Count(text, "successCondition:"); len(queries) == 0 || n != len(queries) {
		t.Errorf("%s: %d queries, %d successConditions", analysisFile, len(queries), n)
	}
}

// TestQueriesParse hands every query of the dashboard and the analysis
// template to promtool as recording rules, with Grafana's variables and the
// template's args filled in, so a PromQL syntax error fails here and not in
// front of an operator.
func TestQueriesParse(t *testing.T) {
	tool := promtool(t)
	type query struct{ where, expr string }
	var qs []query
	d := readDashboard(t)
	for _, p := range allPanels(d.Panels) {
		for _, tg := range p.Targets {
			qs = append(qs, query{fmt.Sprintf("%s: panel %q query %s", dashboardFile, p.Title, tg.RefID), grafanaVars.Replace(tg.Expr)})
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			qs = append(qs, query{fmt.Sprintf("%s: annotation %q", dashboardFile, a.Name), grafanaVars.Replace(a.Expr)})
		}
	}
	for i, q := range readmeQueries(t) {
		qs = append(qs, query{fmt.Sprintf("README.md: promql block %d", i+1), q})
	}
	_, args, aqs := analysisTemplate(t)
	for i, q := range aqs {
		q = argRef.ReplaceAllStringFunc(q, func(ref string) string {
			name := argRef.FindStringSubmatch(ref)[1]
			if v := args[name]; v != "" {
				return v
			}
			return "orderly" // the job arg, which has no default
		})
		qs = append(qs, query{fmt.Sprintf("%s: query %d", analysisFile, i+1), q})
	}
	var b strings.Builder
	b.WriteString("groups:\n  - name: deploy-queries\n    rules:\n")
	for i, q := range qs {
		expr, _ := json.Marshal(q.expr) // a JSON string is a YAML double-quoted scalar
		fmt.Fprintf(&b, "      - record: deploy_query_%d\n        expr: %s\n", i, expr)
	}
	path := filepath.Join(t.TempDir(), "queries.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "check", "rules", path).CombinedOutput()
	if err != nil {
		for i, q := range qs {
			if strings.Contains(string(out), fmt.Sprintf("deploy_query_%d\"", i)) || strings.Contains(string(out), fmt.Sprintf("deploy_query_%d:", i)) {
				t.Errorf("%s does not parse: %s", q.where, q.expr)
			}
		}
		t.Fatalf("promtool check rules on the %d queries: %v\n%s", len(qs), err, out)
	}
	t.Logf("%d queries parse (%d from the dashboard, %d from the analysis template)", len(qs), len(qs)-len(aqs), len(aqs))
}

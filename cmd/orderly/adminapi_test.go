package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/proxy"
)

// adminFixture is an orderly whose scope "site" enforces a native policy
// that forgot the legacy <Directory admin>, shadowing the legacy one, in
// front of a backend that answers 200, with the admin API beside it.
type adminFixture struct {
	h    *proxy.Handler
	api  *adminAPI
	mux  *http.ServeMux
	pols *proxy.Policies
}

func newAdminFixture(t *testing.T) *adminFixture {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(backend.Close)
	legacy := `<Directory @DIR@/docroot>
    Order allow,deny
    Allow from all
</Directory>
<Directory @DIR@/docroot/admin>
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
<FilesMatch "\.sql$">
    Order allow,deny
    Deny from all
</FilesMatch>
`
	native := "<Directory @DIR@/docroot>\n    Require all granted\n</Directory>\n"
	hcl := strings.Replace(goodHCL, "http://127.0.0.1:1", backend.URL, 1) + nativeSiteScope
	dir := writeFiles(t, map[string]string{"orderly.hcl": hcl, "legacy.conf": legacy, "native.conf": native,
		"docroot/index.html": "x", "docroot/admin/index.html": "x", "docroot/dump.sql": "x"})
	path := filepath.Join(dir, "orderly.hcl")
	rc, pols, ok := setup(path, io.Discard)
	if !ok {
		t.Fatal("setup failed")
	}
	u, _ := url.Parse(backend.URL)
	metrics := proxy.NewMetrics(pols.Rules)
	h := proxy.NewWith(proxy.Config{Backend: u, TrustedProxies: rc.TrustedProxies, Metrics: metrics}, pols)
	rl := &reloader{path: path, h: h, metrics: metrics, logger: slog.New(slog.NewTextHandler(io.Discard, nil)), rc: rc, generation: 1, loaded: time.Now()}
	api := &adminAPI{h: h, rl: rl, hist: newScopeHistory(metrics, h), started: time.Now()}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", adminPage{})
	api.register(mux)
	return &adminFixture{h: h, api: api, mux: mux, pols: pols}
}

func (f *adminFixture) request(t *testing.T, client, target string) int {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("X-Forwarded-For", client)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w.Code
}

func (f *adminFixture) get(t *testing.T, target string, v any) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	f.mux.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
	if v != nil && w.Code == http.StatusOK {
		dec := json.NewDecoder(w.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
	}
	return w.Code, w.Body.String()
}

// The API answers what the traffic did: per-scope requests and
// disagreements and their series, the disagreements grouped with a
// sample, every rule in its section with its verdict, and an explanation
// of a rule's example request.
func TestAdminAPI(t *testing.T) {
	f := newAdminFixture(t)
	for _, c := range []string{"8.8.8.8", "8.8.4.4", "10.1.2.3"} {
		f.request(t, c, "/admin/")
		f.request(t, c, "/")
	}
	f.api.hist.step(time.Now())
	f.request(t, "8.8.8.8", "/dump.sql")

	var sc apiScopes
	f.get(t, "/api/v1/scopes", &sc)
	if sc.Generation != 1 || !sc.ReloadOK || len(sc.Scopes) != 1 {
		t.Fatalf("scopes: %+v", sc)
	}
	s := sc.Scopes[0]
	if s.Name != "site" || s.Mode != "enforce" || s.Enforce != "native" || s.Shadow != "legacy" || s.Percent != 100 ||
		s.Requests != 7 || s.Disagreements != 3 || s.HourRequests != 7 || s.HourDisagrees != 3 {
		t.Errorf("scope: %+v", s)
	}
	// One step taken, and the step in progress: the .sql request.
	if len(s.Series) != 2 || s.Series[0].Requests != 6 || s.Series[0].Enforced != 6 || s.Series[0].Disagreements != 2 ||
		s.Series[1].Requests != 1 || s.Series[1].Disagreements != 1 || s.Series[1].Percent != 100 || s.StepSeconds != 10 {
		t.Errorf("series: %+v", s.Series)
	}

	var dis apiDisagreements
	f.get(t, "/api/v1/disagreements", &dis)
	if dis.Total != 3 || len(dis.Groups) != 2 {
		t.Fatalf("disagreements: %+v", dis)
	}
	byRule := map[string]proxy.DisagreementGroup{}
	for _, g := range dis.Groups {
		byRule[g.RuleID] = g
		if g.Scope != "site" || g.Against != proxy.AgainstPolicy || g.Direction != "would_newly_allow" || g.Generation != 1 ||
			g.Sample == nil || g.First.After(g.Last) || g.Sample.Other == nil {
			t.Errorf("group: %+v", g)
		}
	}
	// The latest first: the .sql request's group.
	if dis.Groups[0].Count != 1 || dis.Groups[0].Sample.URI != "/dump.sql" || dis.Groups[1].Count != 2 || dis.Groups[1].Sample.URI != "/admin/" {
		t.Errorf("groups: %+v", dis.Groups)
	}

	var rules apiRules
	f.get(t, "/api/v1/rules", &rules)
	lines := map[string]apiRule{}
	var admin *apiSection
	for i, sec := range rules.Sections {
		for _, r := range sec.Rules {
			lines[r.Where+" "+r.Text] = r
		}
		if strings.HasSuffix(sec.Section, "/docroot/admin>") && sec.Policy == "legacy" {
			admin = &rules.Sections[i]
		}
	}
	if admin == nil {
		t.Fatalf("no legacy <Directory admin> section: %+v", rules.Sections)
	}
	var kinds []string
	for _, r := range admin.Rules {
		kinds = append(kinds, r.Kind+":"+r.Verdict)
	}
	// Order is a setting (no verdict); Deny was necessary to the two
	// refusals, Allow to the grant; the section's default last.
	if got := strings.Join(kinds, " "); got != "setting: access:needed access:needed default:" || admin.Requests != 3 || admin.Methods != "GET 3" {
		t.Errorf("admin section: %s, %d requests (%s)", got, admin.Requests, admin.Methods)
	}
	// Deleting its three lines together lets 8.8.8.8 in: needed as a
	// whole too.
	if admin.Verdict != "section needed" || !strings.Contains(admin.Why, "its access lines (6, 7, 8) together would have changed the answer to 2 requests") {
		t.Errorf("admin section's verdict: %s (%s)", admin.Verdict, admin.Why)
	}
	deny := lines["legacy.conf:7 Deny from all"]
	if deny.Necessary != 2 || deny.Matches != 3 || deny.Decisive != 2 || deny.Example == nil || deny.Example.Target != "/admin/" {
		t.Errorf("Deny from all: %+v", deny)
	}
	// The <FilesMatch>'s Deny from all is necessary to nothing: Order
	// allow,deny refuses without it.
	if sql := lines["legacy.conf:12 Deny from all"]; sql.Verdict != "can go" || !strings.Contains(sql.Why, "since orderly started") {
		t.Errorf("the <FilesMatch>'s Deny from all: %+v", sql)
	}
	if rules.Verdicts["needed"] < 3 || rules.Verdicts["can go"] != 1 {
		t.Errorf("verdicts: %v", rules.Verdicts)
	}

	code, text := f.get(t, "/api/v1/explain?rule="+deny.ID, nil)
	if code != 200 || !strings.Contains(text, "request:  GET /admin/ from ") || !strings.Contains(text, "decision: DENY 403") || !strings.Contains(text, "legacy.conf:7 Deny from all") {
		t.Errorf("explain %s: %d\n%s", deny.ID, code, text)
	}
	if code, _ := f.get(t, "/api/v1/explain?rule=nope", nil); code != http.StatusNotFound {
		t.Errorf("explain of no rule: %d", code)
	}

	w := httptest.NewRecorder()
	f.mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") || !strings.Contains(csp, "default-src 'none'") ||
		!strings.Contains(w.Body.String(), `get("/api/v1/rules")`) {
		t.Errorf("page: %s\n%.200s", csp, w.Body.String())
	}
}

// A series keeps HistoryPoints steps, and a scope in shadow enforces
// nothing: its points say 0%.
func TestScopeHistory(t *testing.T) {
	f := newAdminFixture(t)
	now := time.Unix(1_800_000_000, 0)
	for i := range HistoryPoints + 5 {
		f.request(t, "10.1.2.3", "/")
		f.api.hist.step(now.Add(time.Duration(i) * HistoryStep))
	}
	ser := f.api.hist.snapshot(now.Add(time.Hour))["site"]
	if len(ser) != HistoryPoints+1 || ser[0].Time != now.Add(5*HistoryStep).Unix() || ser[0].Requests != 1 || ser[len(ser)-1].Requests != 0 {
		t.Errorf("%d points, the first %+v, the last %+v", len(ser), ser[0], ser[len(ser)-1])
	}
}

// docs/admin-api.md's examples are answers of the API (no field it does
// not have), and every field of an answer is documented.
func TestAdminAPIDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/admin-api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(doc, -1)
	answers := []any{&apiScopes{}, &apiDisagreements{}, &apiRules{}}
	if len(blocks) != len(answers) {
		t.Fatalf("%d JSON examples, want %d (scopes, disagreements, rules)", len(blocks), len(answers))
	}
	for i, v := range answers {
		dec := json.NewDecoder(strings.NewReader(blocks[i][1]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Errorf("example %d (%T): %v", i+1, v, err)
		}
	}
	seen := map[reflect.Type]bool{}
	var fields func(t reflect.Type, out map[string]bool)
	fields = func(typ reflect.Type, out map[string]bool) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() == "time" {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out[name] = true
			}
			fields(f.Type, out)
		}
	}
	names := map[string]bool{}
	for _, v := range answers {
		fields(reflect.TypeOf(v), names)
	}
	for n := range names {
		if !regexp.MustCompile("[`.]" + regexp.QuoteMeta(n) + "`").MatchString(doc) {
			t.Errorf("field %q of the API is not documented in docs/admin-api.md", n)
		}
	}
}

// nativeSiteScope is the HCL that enforces native.conf over the whole site,
// the legacy rules in its shadow: the admin API's tests and the metrics
// reference's scrape share it.
const nativeSiteScope = `native {
  files = ["native.conf"]
}
scope "site" {
  path            = "/"
  enforce         = "native"
  shadow          = "legacy"
  enforce_percent = 100
}
`

package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// Shadow and observe forward what orderly would refuse, as received, and
// write no refusal to the error log; the request counters carry the mode.
// Shadow compares with the backend's answer (here, a backend that serves
// everything: each refusal is a would_newly_deny).
func TestModes(t *testing.T) {
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.RawPath+"|"+r.URL.Path+"|"+r.Header.Get(DefaultUserHeader))
		io.WriteString(w, "backend")
	}))
	defer backend.Close()
	cfg, _ := privateDir(t, "Order deny,allow\nDeny from all\n")
	u, _ := url.Parse(backend.URL)
	for _, mode := range []Mode{ModeShadow, ModeObserve} {
		t.Run(string(mode), func(t *testing.T) {
			seen = nil
			var errlog bytes.Buffer
			m := NewMetrics(nil)
			h := New(Config{Backend: u, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
				ErrorLog: &errlog, Metrics: m, Mode: mode, UserHeader: DefaultUserHeader}, walk.New(cfg, walk.OS, NewIdentity()))
			front := httptest.NewServer(h)
			defer front.Close()
			resp, err := http.Get(front.URL + "/private/a.txt")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "backend" || len(seen) != 1 {
				t.Fatalf("%s: %d %q, backend saw %v", mode, resp.StatusCode, b, seen)
			}
			if errlog.Len() != 0 {
				t.Errorf("%s wrote to the error log:\n%s", mode, errlog.String())
			}
			if v := testutil.ToFloat64(m.requests.WithLabelValues("deny", "compat", string(mode))); v != 1 {
				t.Errorf("requests{deny,compat,%s} = %v, want 1", mode, v)
			}
			if n := disagreements(t, m); mode == ModeObserve && n != 0 || mode == ModeShadow && n != 1 {
				t.Fatalf("%s: %v disagreements", mode, n)
			}
			if mode == ModeShadow {
				deny := ""
				for _, r := range cfg.Rules {
					if r.Text == "Deny from all" {
						deny = r.ID
					}
				}
				if v := testutil.ToFloat64(m.disagree.WithLabelValues(DefaultScope, AgainstBackend, "would_newly_deny", deny)); v != 1 {
					t.Errorf("would_newly_deny under Deny from all: %v, want 1", v)
				}
			}
			if !strings.HasSuffix(seen[0], "|") {
				t.Errorf("a user header was set on a refused request: %q", seen[0])
			}
		})
	}
}

// The shadow log writes each disagreement as a JSON line with both
// decisions, credentials and cookies redacted, and at most
// ShadowSampleRate a second (the rest counted as dropped).
func TestShadowLog(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "backend") }))
	defer backend.Close()
	cfg, _ := privateDir(t, "Order deny,allow\nDeny from all\n")
	u, _ := url.Parse(backend.URL)
	var slog bytes.Buffer
	m := NewMetrics(nil)
	h := New(Config{Backend: u, Metrics: m, Mode: ModeShadow, ShadowLog: &slog}, walk.New(cfg, walk.OS, NewIdentity()))
	front := httptest.NewServer(h)
	defer front.Close()
	n := ShadowSampleRate + 5
	for range n {
		req, _ := http.NewRequest("GET", front.URL+"/private/a.txt", nil)
		req.Header.Set("Authorization", "Basic YWxpY2U6c2VjcmV0")
		req.Header.Set("Cookie", "session=abc")
		req.Header.Set("User-Agent", "probe")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	lines := strings.Split(strings.TrimSpace(slog.String()), "\n")
	if len(lines) < ShadowSampleRate || len(lines) >= n {
		t.Fatalf("%d samples for %d disagreements in well under a second, want about %d", len(lines), n, ShadowSampleRate)
	}
	if dropped := testutil.ToFloat64(m.dropped); int(dropped)+len(lines) != n {
		t.Errorf("%d written + %v dropped, want %d", len(lines), dropped, n)
	}
	var s Sample
	if err := json.Unmarshal([]byte(lines[0]), &s); err != nil {
		t.Fatal(err)
	}
	if s.Direction != "would_newly_deny" || s.Orderly.Decision != "deny" || s.Orderly.Status != 403 || s.Backend.Status != 200 ||
		!strings.HasSuffix(s.Orderly.Rule, "Deny from all") || s.URI != "/private/a.txt" || s.Generation != 1 {
		t.Errorf("sample: %+v", s)
	}
	if strings.Contains(slog.String(), "YWxpY2U6c2VjcmV0") || strings.Contains(slog.String(), "session=abc") ||
		s.Header["Authorization"][0] != "[redacted]" || s.Header["Cookie"][0] != "[redacted]" || s.Header["User-Agent"][0] != "probe" {
		t.Errorf("headers: %v", s.Header)
	}
	// Every disagreement is in its group, sampled or not; the group keeps
	// the latest sample.
	groups, over := h.DisagreementGroups()
	if len(groups) != 1 || over != 0 {
		t.Fatalf("groups %+v, %d beyond", groups, over)
	}
	g := groups[0]
	if g.Scope != DefaultScope || g.Against != AgainstBackend || g.Direction != "would_newly_deny" || g.RuleID != s.Orderly.RuleID ||
		g.Count != uint64(n) || g.Generation != 1 || g.First.After(g.Last) || g.Sample == nil || g.Sample.URI != "/private/a.txt" ||
		g.Sample.Time.Before(s.Time) || g.Sample.Header["Cookie"][0] != "[redacted]" {
		t.Errorf("group: %+v", g)
	}
	if tot := m.ScopeTotals()[DefaultScope]; tot.Requests[PolicyLegacy] != uint64(n) || tot.Disagreements != uint64(n) || len(tot.Requests) != 1 {
		t.Errorf("scope totals: %+v", tot)
	}
	// The deciding rule keeps one example a second: the first request.
	var deny *policy.Rule
	for _, r := range h.Engine().Rules() {
		if r.ID == s.Orderly.RuleID {
			deny = r
		}
	}
	ex := deny.Example()
	if ex == nil || ex.Method != "GET" || ex.Target != "/private/a.txt" || ex.Client != "127.0.0.1" || ex.Header["Authorization"][0] != "[redacted]" ||
		ex.Header["User-Agent"][0] != "probe" || ex.Time.After(g.First) {
		t.Errorf("example: %+v", ex)
	}
}

// Groups are bounded: past MaxDisagreementGroups a new group's
// disagreements are only counted, the groups kept still count theirs.
func TestDisagreementGroupsBounded(t *testing.T) {
	var l shadowLog
	now := time.Unix(1_800_000_000, 0)
	for i := range MaxDisagreementGroups {
		if g := l.count(now.Add(time.Duration(i)*time.Second), groupKey{Scope: "s", RuleID: strconv.Itoa(i)}, 1); g == nil || g.Count != 1 {
			t.Fatalf("group %d: %+v", i, g)
		}
	}
	if g := l.count(now, groupKey{Scope: "s", RuleID: "new"}, 2); g != nil {
		t.Errorf("a group beyond the bound: %+v", g)
	}
	if g := l.count(now.Add(time.Hour), groupKey{Scope: "s", RuleID: "7"}, 3); g == nil || g.Count != 2 || g.Generation != 3 || !g.First.Equal(now.Add(7*time.Second)) {
		t.Errorf("a kept group: %+v", g)
	}
	groups, over := l.Groups()
	if len(groups) != MaxDisagreementGroups || over != 1 || groups[0].RuleID != "7" || groups[1].RuleID != "999" {
		t.Errorf("%d groups, %d beyond, first %+v, second %+v", len(groups), over, groups[0], groups[1])
	}
}

// disagreements sums orderly_shadow_disagreements_total over its series.
func disagreements(t *testing.T, m *Metrics) float64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "orderly_shadow_disagreements_total" {
			for _, s := range mf.GetMetric() {
				sum += s.GetCounter().GetValue()
			}
		}
	}
	return sum
}

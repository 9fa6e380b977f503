package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/walk"
)

// The limits step refuses, through the handler, what Apache refuses while
// it reads the request, by the legacy server's limits: a request line
// over LimitRequestLine (414) and more fields than LimitRequestFields
// (400); within them the request goes on.
func TestLimitsStep(t *testing.T) {
	f := newLimitsFront(t, "LimitRequestLine 60\nLimitRequestFields 4\n")
	for _, tt := range []struct {
		name, text string
		want       int
	}{
		{"within", "GET /open/a.html HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", 200},
		{"line", "GET /open/" + strings.Repeat("a", 60) + " HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", 414},
		{"fields", "GET /open/a.html HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nConnection: close\r\n\r\n", 400},
	} {
		if got, _ := f.raw(t, tt.text); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// policyFront is a Handler deciding with p in front of a backend that
// answers 200, and get the status of a GET of /private/a.txt from it.
func policyFront(t *testing.T, p *Policies) func() int {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "backend") }))
	t.Cleanup(backend.Close)
	u, _ := url.Parse(backend.URL)
	front := httptest.NewServer(NewWith(Config{Backend: u}, p))
	t.Cleanup(front.Close)
	return func() int {
		resp, err := http.Get(front.URL + "/private/a.txt")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
}

// The scope step puts a client outside the enforce cohort (Percent 0
// here: every client) under the scope's shadow policy, which then decides.
func TestScopeStepCohort(t *testing.T) {
	open, _ := privateDir(t, "Order allow,deny\nAllow from all\n")
	closed, _ := privateDir(t, "Order deny,allow\nDeny from all\n")
	for _, tt := range []struct {
		percent float64
		want    int
	}{
		{0, 200},   // the native policy decides: it allows
		{100, 403}, // the legacy policy decides: it refuses
	} {
		get := policyFront(t, &Policies{
			Legacy: walk.New(closed, walk.OS, NewIdentity()),
			Native: walk.New(open, walk.OS, NewIdentity()),
			Scopes: []Scope{{Name: "private", Path: "/private", Enforce: PolicyLegacy, Shadow: PolicyNative, Percent: tt.percent}},
		})
		if got := get(); got != tt.want {
			t.Errorf("enforce percent %v: %d, want %d", tt.percent, got, tt.want)
		}
	}
}

// The decide step decides a legacy request with the legacy policy
// without its demoted rules (LegacyEnforced), not with the full one,
// which only counts.
func TestDecideStepDemoted(t *testing.T) {
	open, _ := privateDir(t, "Order allow,deny\nAllow from all\n")
	closed, _ := privateDir(t, "Order deny,allow\nDeny from all\n")
	get := policyFront(t, &Policies{
		Legacy:         walk.New(closed, walk.OS, NewIdentity()),
		LegacyEnforced: walk.New(open, walk.OS, NewIdentity()),
	})
	if got := get(); got != 200 {
		t.Errorf("%d, want 200: the demoted Deny no longer refuses", got)
	}
}

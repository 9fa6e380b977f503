package proxy

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderly-proxy/orderly/translate/walk"
)

// A request belongs to its most specific scope: a host's before any
// host's, a longer prefix before a shorter, prefixes on whole segments
// of the normalised path, and the default scope when none takes it.
func TestScopeLookup(t *testing.T) {
	p := &Policies{Scopes: []Scope{
		{Name: "api", Path: "/api"},
		{Name: "api-v2", Path: "/api/v2/"},
		{Name: "shop", Host: "shop.example"},
		{Name: "shop-admin", Host: "shop.example", Path: "/admin"},
		{Name: "v6", Host: "::1"},
	}}
	p.prepare(ModeEnforce)
	for _, tt := range []struct {
		host, path string
		ok         bool
		want       string
	}{
		{"www.example", "/api", true, "api"},
		{"www.example", "/api/x", true, "api"},
		{"www.example", "/apix", true, DefaultScope},
		{"www.example", "/api/v2", true, "api"},
		{"www.example", "/api/v2/x", true, "api-v2"},
		{"SHOP.example:8080", "/api/x", true, "shop"},
		{"shop.example.", "/admin/x", true, "shop-admin"},
		{"shop.example", "/Admin/x", true, "shop"},
		{"www.example", "/", true, DefaultScope},
		// A target Apache refuses is in no path scope.
		{"www.example", "", false, DefaultScope},
		{"shop.example", "", false, "shop"},
		// The host is the name Apache's virtual-host selection reads
		// (walk.HostName, TestHostNameApache): an IPv6 literal without
		// its brackets; a Host Apache refuses (400) names no host.
		{"[::1]:8080", "/", true, "v6"},
		{"[::1]", "/api", true, "v6"},
		{"[::1%eth0]", "/", true, DefaultScope},
		{"shop.example:0", "/", true, DefaultScope},
		{"shop.example..", "/api/x", true, "api"},
		{"shop.example:", "/", true, DefaultScope}, // Apache's host name is "shop.example:"
	} {
		if got := p.scope(tt.host, tt.path, tt.ok).Name; got != tt.want {
			t.Errorf("scope(%q, %q) = %s, want %s", tt.host, tt.path, got, tt.want)
		}
	}
}

// The enforce cohort holds about the share asked for, depends on the
// scope, and only grows as the share does.
func TestEnforceCohort(t *testing.T) {
	const n = 10000
	clients := make([]netip.Addr, n)
	for i := range clients {
		clients[i] = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
	}
	prev := make([]bool, n)
	for _, pct := range []float64{0, 1, 10, 25, 50, 90, 100} {
		s := &Scope{Name: "api", Shadow: PolicyLegacy, Percent: pct}
		in := 0
		for i, c := range clients {
			got := s.inEnforceCohort(c, "")
			if prev[i] && !got {
				t.Fatalf("%v left the cohort at %v%%", c, pct)
			}
			prev[i] = got
			if got {
				in++
			}
		}
		if share := float64(in) * 100 / n; share < pct-2 || share > pct+2 {
			t.Errorf("%v%%: %v%% of clients in the cohort", pct, share)
		}
	}
	// Another scope salts the hash: the cohorts differ.
	a, b := &Scope{Name: "a", Percent: 50, Shadow: PolicyLegacy}, &Scope{Name: "b", Percent: 50, Shadow: PolicyLegacy}
	same := 0
	for _, c := range clients {
		if a.inEnforceCohort(c, "") == b.inEnforceCohort(c, "") {
			same++
		}
	}
	if same > n*6/10 {
		t.Errorf("scopes a and b agree on %d of %d clients: the scope does not salt the hash", same, n)
	}
	// By user: the user decides, whatever the address.
	u := &Scope{Name: "u", Percent: 50, Shadow: PolicyLegacy, ByUser: true}
	for i := range 20 {
		user := fmt.Sprint("user", i)
		first := u.inEnforceCohort(clients[0], user)
		for _, c := range clients[1:50] {
			if u.inEnforceCohort(c, user) != first {
				t.Fatalf("%s moved between cohorts with the client address", user)
			}
		}
	}
}

// panicFS fails every file-system call by panicking: a policy decided
// with it blows up.
type panicFS struct{}

func (panicFS) Stat(string) (fs.FileInfo, error)  { panic("panicFS") }
func (panicFS) Lstat(string) (fs.FileInfo, error) { panic("panicFS") }
func (panicFS) ReadFile(string) ([]byte, error)   { panic("panicFS") }

// A shadow evaluation cannot change a response, even when it fails: the
// enforced policy's answer goes out, and the failure is counted.
func TestShadowFailureHarmless(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "backend") }))
	defer backend.Close()
	cfg, _ := privateDir(t, "Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n")
	u, _ := url.Parse(backend.URL)
	m := NewMetrics(nil)
	h := NewWith(Config{Backend: u, Metrics: m, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, &Policies{
		Legacy: walk.New(cfg, walk.OS, NewIdentity()),
		Native: walk.New(cfg, panicFS{}, NewIdentity()),
		Scopes: []Scope{{Name: "private", Path: "/private", Enforce: PolicyLegacy, Shadow: PolicyNative, Percent: 100}},
	})
	front := httptest.NewServer(h)
	defer front.Close()
	for ip, want := range map[string]int{"10.1.2.3": 200, "8.8.8.8": 403} {
		req, _ := http.NewRequest("GET", front.URL+"/private/a.txt", nil)
		req.Header.Set("X-Forwarded-For", ip)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d (the enforced legacy policy's answer)", ip, resp.StatusCode, want)
		}
	}
	if v := testutil.ToFloat64(m.shadowErrors); v != 2 {
		t.Errorf("orderly_shadow_errors_total %v, want 2", v)
	}
	if n := disagreements(t, m); n != 0 {
		t.Errorf("%v disagreements counted from a failed evaluation, want 0", n)
	}
}

// With cohorts by user, a user name nobody verified cannot pick the
// policy that lets the request through: where the cohort's policy allows
// without authenticating and the other refuses, the request is refused.
func TestUserCohortUnverified(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "backend") }))
	defer backend.Close()
	open, _ := privateDir(t, "Order allow,deny\nAllow from all\n")
	closed, _ := privateDir(t, "Order deny,allow\nDeny from all\n")
	// Each configuration has its own document root with the same files.
	u, _ := url.Parse(backend.URL)
	sc := Scope{Name: "private", Host: "www.example", Enforce: PolicyNative, Shadow: PolicyLegacy, Percent: 50, ByUser: true}
	var inNative, inLegacy string
	for i := 0; inNative == "" || inLegacy == ""; i++ {
		name := fmt.Sprint("user", i)
		if sc.inEnforceCohort(netip.Addr{}, name) {
			inNative = name
		} else {
			inLegacy = name
		}
	}
	h := NewWith(Config{Backend: u}, &Policies{
		Legacy: walk.New(open, walk.OS, NewIdentity()),
		Native: walk.New(open, walk.OS, NewIdentity()),
		Scopes: []Scope{sc},
	})
	// Same configuration on both sides: a user in either cohort passes.
	front := httptest.NewServer(h)
	defer front.Close()
	get := func(user string) int {
		req, _ := http.NewRequest("GET", front.URL+"/private/a.txt", nil)
		req.Host = "www.example"
		if user != "" {
			req.SetBasicAuth(user, "x")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if a, b := get(inNative), get(inLegacy); a != 200 || b != 200 {
		t.Fatalf("both policies allow: %d %d", a, b)
	}
	// Now the native policy refuses everyone: its cohort's users are
	// refused, and so are the legacy cohort's, whose name nothing verified.
	h.SetPolicies(&Policies{
		Legacy: walk.New(open, walk.OS, NewIdentity()),
		Native: walk.New(closed, walk.OS, NewIdentity()),
		Scopes: []Scope{sc},
	})
	if a, b := get(inNative), get(inLegacy); a != 403 || b != 403 {
		t.Errorf("native refuses: user in the native cohort %d, in the legacy cohort %d; want 403 for both", a, b)
	}
	// Without credentials the cohort is the client address's.
	if s := get(""); s != 200 && s != 403 {
		t.Errorf("no credentials: %d", s)
	}
}

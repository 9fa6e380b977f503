package proxy

import (
	"fmt"
	"net/netip"
	"testing"
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

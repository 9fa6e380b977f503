package policy

import (
	"fmt"
	"net/netip"
	"testing"
)

// benchLayers builds the merged configuration of a scope with n address
// rules: "Order deny,allow", "Deny from all" and n "Allow from" words
// (ten a line, as operators write them: /32 hosts, /24 and /16 networks,
// and one in a hundred with a non-contiguous mask), followed by a Require
// tree of n/10 "Require ip" lines under Satisfy All.
func benchLayers(n int) (*Layers, []netip.Addr) {
	c := &Compat{}
	deny := &Rule{ID: "deny", Text: "Deny from all"}
	c.Denys = []AccessRule{{Kind: AccessAll, Methods: AllMethods, Word: "all", Rule: deny}}
	var rule *Rule
	var probes []netip.Addr
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			rule = &Rule{ID: fmt.Sprint("allow", i), Text: "Allow from ..."}
		}
		a := netip.AddrFrom4([4]byte{10 + byte(i>>16), byte(i >> 8), byte(i), 1})
		var s Subnet
		switch {
		case i%100 == 99:
			s, _ = ParseSubnet(a.String(), "255.255.0.255", true)
		case i%10 == 5:
			s, _ = ParseSubnet(a.String(), "24", true)
		default:
			s, _ = ParseSubnet(a.String(), "", false)
		}
		c.Allows = append(c.Allows, AccessRule{Kind: AccessIP, Methods: AllMethods, Subnet: s, Word: a.String(), Rule: rule})
		probes = append(probes, a)
	}
	c.Compile()
	root := &Node{Kind: Any, Methods: AllMethods}
	for i := 0; i < max(n/10, 1); i++ {
		s, _ := ParseSubnet(netip.AddrFrom4([4]byte{10 + byte(i>>16), byte(i >> 8), byte(i), 0}).String(), "8", true)
		root.Children = append(root.Children, &Node{Kind: Leaf, Provider: ProvIP, Methods: AllMethods, Subnets: []Subnet{s}, Rule: &Rule{ID: fmt.Sprint("req", i)}})
	}
	return &Layers{Compat: c, Authz: root.Compile(), Default: &Rule{ID: "default", Default: true}}, probes
}

func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{10, 1000, 10000, 100000} {
		l, probes := benchLayers(n)
		outside := netip.MustParseAddr("203.0.113.9")
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			r := Request{Method: MethodGet}
			i := 0
			for b.Loop() {
				// Alternate clients inside (the last rules, the worst case
				// for a scan) and outside the lists.
				if i&1 == 0 {
					r.Addr = probes[len(probes)-1-(i>>1)%len(probes)]
				} else {
					r.Addr = outside
				}
				i++
				d := Decide(l, &r, nil, nil)
				if d.Status != 0 && d.Status != 403 {
					b.Fatal(d.Status)
				}
			}
		})
	}
}

// TestDecideDoesNotAllocate: a decision reads the compiled policy without
// allocating, whatever the number of rules, under 2.4's and 2.2's
// combination of the layers alike.
func TestDecideDoesNotAllocate(t *testing.T) {
	for _, n := range []int{10, 10000, -10, -10000} {
		l, probes := benchLayers(max(n, -n))
		if n < 0 {
			l.Authz = nil
			l.Legacy = &Legacy22{Requires: []Require22{{Methods: AllMethods, Words: []string{"valid-user"}, Rule: &Rule{ID: "r"}}},
				UserAuthoritative: true, GroupAuthoritative: true}
			l.Legacy.Satisfy[MethodGet] = SatisfyAny
		}
		r := Request{Method: MethodGet, Now: 1}
		i := 0
		allocs := testing.AllocsPerRun(1000, func() {
			r.Addr = probes[i%len(probes)]
			i++
			Decide(l, &r, nil, nil)
		})
		if allocs != 0 {
			t.Errorf("rules=%d: %v allocations per decision, want 0", n, allocs)
		}
	}
}

// TestCompiledMatchesLinear: the compiled lists decide as a scan in
// configuration order does, rule for rule.
func TestCompiledMatchesLinear(t *testing.T) {
	l, probes := benchLayers(2000)
	c := l.Compat
	for i, a := range append(probes, netip.MustParseAddr("10.0.200.77"), netip.MustParseAddr("8.8.8.8")) {
		r := &Request{Method: MethodGet, Addr: a}
		var want *AccessRule
		for j := range c.Allows {
			if c.Allows[j].match(r) {
				want = &c.Allows[j]
				break
			}
		}
		if got := c.allows.find(c.Allows, r); got != want {
			t.Fatalf("probe %d (%s): compiled found %v, scan %v", i, a, got, want)
		}
	}
}

package policy

import (
	"math/rand/v2"
	"net/netip"
	"strconv"
	"testing"
)

// The prefix table gives the same first match as a scan in order.
func TestAddrSetMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		var subnets []Subnet
		var idx []int32
		for i := 0; i < 200; i++ {
			a := netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(4)), byte(rng.IntN(8))})
			var s Subnet
			var err error
			switch rng.IntN(4) {
			case 0:
				s, err = ParseSubnet(a.String(), "", false)
			case 1:
				s, err = ParseSubnet(a.String(), "255.0.255.0", true)
			default:
				s, err = ParseSubnet(a.String(), strconv.Itoa(8+rng.IntN(25)), true)
			}
			if err != nil {
				t.Fatal(err)
			}
			subnets = append(subnets, s)
			idx = append(idx, int32(i))
		}
		set := newAddrSet(subnets, idx)
		for q := 0; q < 200; q++ {
			a := netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(4)), byte(rng.IntN(8))})
			want := int32(-1)
			for i, s := range subnets {
				if s.Contains(a) {
					want = int32(i)
					break
				}
			}
			if got := set.first(a); got != want {
				t.Fatalf("round %d: first(%s) = %d, linear scan %d", round, a, got, want)
			}
		}
	}
}

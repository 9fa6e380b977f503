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
		// Lines of one to four words, written in runs or interleaved:
		// the first match of another line is what deleting the first
		// match's line leaves.
		owner := make([]int32, len(subnets))
		for i := range owner {
			if round%2 == 0 {
				owner[i] = int32(i / (1 + round%4))
			} else {
				owner[i] = int32(rng.IntN(40))
			}
		}
		set := newAddrSet(subnets, idx, owner)
		for q := 0; q < 200; q++ {
			a := netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(4)), byte(rng.IntN(8))})
			want := pair{-1, -1}
			for i, s := range subnets {
				switch {
				case !s.Contains(a):
				case want.first < 0:
					want.first = int32(i)
				case want.other < 0 && owner[i] != owner[want.first]:
					want.other = int32(i)
				}
			}
			if got := set.lookup(a); got != want {
				t.Fatalf("round %d: lookup(%s) = %v, linear scan %v", round, a, got, want)
			}
			if got := set.first(a); got != want.first {
				t.Fatalf("round %d: first(%s) = %d, linear scan %d", round, a, got, want.first)
			}
		}
	}
}

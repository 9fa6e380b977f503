package policy

import (
	"net/netip"

	"github.com/gaissmai/bart"
)

// addrSet answers, for a list of subnets in configuration order, "which is
// the first subnet that contains this address?" in time that does not
// grow with the list: contiguous subnets sit in a prefix table whose value
// at each prefix is the lowest index among that prefix and all its
// supernets, so one longest-prefix lookup gives the first match. Subnets
// with non-contiguous masks (legal in Apache) are kept beside it.
//
// Each subnet also has an owner (the line it was written on), and the set
// answers "which is the first subnet of another owner than the first
// match's?" as cheaply: each value holds the lowest index and the lowest
// index of another owner. That is what deleting the first match's line
// would leave (necessity, necessity.go).
type addrSet struct {
	table  *bart.Table[pair]
	odd    []oddMask // one per distinct non-contiguous (IPv4) mask
	owners []int32   // by index
}

// pair is the lowest index of a set of subnets, and the lowest index of
// an owner other than the first's (-1 when there is none).
type pair struct{ first, other int32 }

var noPair = pair{-1, -1}

// oddMask holds the subnets of one non-contiguous mask: the masked
// address maps to the lowest indexes.
type oddMask struct {
	mask uint32
	subs map[uint32]pair
}

// newAddrSet builds the set; subnets[i] has index idx[i] and belongs to
// owner[i] (nil: each subnet its own owner).
func newAddrSet(subnets []Subnet, idx, owner []int32) *addrSet {
	s := &addrSet{table: new(bart.Table[pair])}
	for i, ix := range idx {
		for int(ix) >= len(s.owners) {
			s.owners = append(s.owners, -1)
		}
		if owner != nil {
			s.owners[ix] = owner[i]
		} else {
			s.owners[ix] = ix
		}
	}
	for i, sn := range subnets {
		p, ok := sn.Prefix()
		if !ok {
			s.addOdd(sn, idx[i])
			continue
		}
		old, exists := s.table.Get(p)
		if !exists {
			old = noPair
		}
		s.table.Insert(p, s.merge(old, pair{idx[i], -1}))
	}
	// Push each prefix's value down to its subnets: in CIDR order a
	// supernet comes before its subnets, so its value is final by then.
	type entry struct {
		p netip.Prefix
		v pair
	}
	var all []entry
	for p, v := range s.table.AllSorted() {
		all = append(all, entry{p, v})
	}
	for _, e := range all {
		if e.p.Bits() == 0 {
			continue
		}
		parent := netip.PrefixFrom(e.p.Addr(), e.p.Bits()-1).Masked()
		if _, pv, ok := s.table.LookupPrefixLPM(parent); ok {
			if v := s.merge(e.v, pv); v != e.v {
				s.table.Insert(e.p, v)
			}
		}
	}
	return s
}

// merge is the pair of the union of two sets of subnets.
func (s *addrSet) merge(a, b pair) pair {
	// The union's first is the lower of the two firsts; its other is,
	// on each side, that side's first when another owner's, else that
	// side's other.
	c := [...]int32{a.first, a.other, b.first, b.other}
	out := noPair
	for _, i := range c {
		if i >= 0 && (out.first < 0 || i < out.first) {
			out.first = i
		}
	}
	if out.first < 0 {
		return out
	}
	o := s.owners[out.first]
	for _, i := range c {
		if i >= 0 && s.owners[i] != o && (out.other < 0 || i < out.other) {
			out.other = i
		}
	}
	return out
}

func (s *addrSet) addOdd(sn Subnet, idx int32) {
	mask := be32(sn.mask)
	sub := be32(sn.sub)
	for i := range s.odd {
		if s.odd[i].mask == mask {
			old, ok := s.odd[i].subs[sub]
			if !ok {
				old = noPair
			}
			s.odd[i].subs[sub] = s.merge(old, pair{idx, -1})
			return
		}
	}
	s.odd = append(s.odd, oddMask{mask: mask, subs: map[uint32]pair{sub: {idx, -1}}})
}

func be32(b [16]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// first returns the lowest index of a subnet containing a, or -1.
func (s *addrSet) first(a netip.Addr) int32 {
	return s.lookup(a).first
}

// lookup returns the pair of the subnets containing a.
func (s *addrSet) lookup(a netip.Addr) pair {
	a = a.Unmap()
	best := noPair
	if v, ok := s.table.Lookup(a); ok {
		best = v
	}
	if a.Is4() && len(s.odd) > 0 {
		a4 := a.As4()
		v := uint32(a4[0])<<24 | uint32(a4[1])<<16 | uint32(a4[2])<<8 | uint32(a4[3])
		for i := range s.odd {
			if p, ok := s.odd[i].subs[v&s.odd[i].mask]; ok {
				best = s.merge(best, p)
			}
		}
	}
	return best
}

// owner returns the owner of index i.
func (s *addrSet) owner(i int32) int32 { return s.owners[i] }

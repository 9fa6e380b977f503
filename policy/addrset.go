package policy

import (
	"net/netip"
	"slices"

	"github.com/gaissmai/bart"
)

// addrSet answers, for a list of subnets in configuration order, "which is
// the first subnet that contains this address?" in time that does not
// grow with the list: contiguous subnets sit in a prefix table whose value
// at each prefix is the lowest index among that prefix and all its
// supernets, so one longest-prefix lookup gives the first match. Subnets
// with non-contiguous masks (legal in Apache) are kept beside it.
type addrSet struct {
	table *bart.Table[int32]
	odd   []oddSubnet // ascending index
}

type oddSubnet struct {
	s   Subnet
	idx int32
}

// newAddrSet builds the set; subnets[i] has index idx[i].
func newAddrSet(subnets []Subnet, idx []int32) *addrSet {
	s := &addrSet{table: new(bart.Table[int32])}
	for i, sn := range subnets {
		p, ok := sn.Prefix()
		if !ok {
			s.odd = append(s.odd, oddSubnet{sn, idx[i]})
			continue
		}
		if old, exists := s.table.Get(p); exists && old <= idx[i] {
			continue
		}
		s.table.Insert(p, idx[i])
	}
	// Push each prefix's value down to its subnets: in CIDR order a
	// supernet comes before its subnets, so its value is final by then.
	type entry struct {
		p netip.Prefix
		v int32
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
		if _, pv, ok := s.table.LookupPrefixLPM(parent); ok && pv < e.v {
			s.table.Insert(e.p, pv)
		}
	}
	slices.SortFunc(s.odd, func(a, b oddSubnet) int { return int(a.idx - b.idx) })
	return s
}

// first returns the lowest index of a subnet containing a, or -1.
func (s *addrSet) first(a netip.Addr) int32 {
	a = a.Unmap()
	best := int32(-1)
	if v, ok := s.table.Lookup(a); ok {
		best = v
	}
	for _, o := range s.odd {
		if best >= 0 && o.idx >= best {
			break
		}
		if o.s.Contains(a) {
			return o.idx
		}
	}
	return best
}

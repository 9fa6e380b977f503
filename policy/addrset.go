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
type addrSet struct {
	table *bart.Table[int32]
	odd   []oddMask // one per distinct non-contiguous (IPv4) mask
}

// oddMask holds the subnets of one non-contiguous mask: the masked
// address maps to the lowest index.
type oddMask struct {
	mask uint32
	subs map[uint32]int32
}

// newAddrSet builds the set; subnets[i] has index idx[i].
func newAddrSet(subnets []Subnet, idx []int32) *addrSet {
	s := &addrSet{table: new(bart.Table[int32])}
	for i, sn := range subnets {
		p, ok := sn.Prefix()
		if !ok {
			s.addOdd(sn, idx[i])
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
	return s
}

func (s *addrSet) addOdd(sn Subnet, idx int32) {
	mask := be32(sn.mask)
	sub := be32(sn.sub)
	for i := range s.odd {
		if s.odd[i].mask == mask {
			if old, ok := s.odd[i].subs[sub]; !ok || idx < old {
				s.odd[i].subs[sub] = idx
			}
			return
		}
	}
	s.odd = append(s.odd, oddMask{mask: mask, subs: map[uint32]int32{sub: idx}})
}

func be32(b [16]byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// first returns the lowest index of a subnet containing a, or -1.
func (s *addrSet) first(a netip.Addr) int32 {
	a = a.Unmap()
	best := int32(-1)
	if v, ok := s.table.Lookup(a); ok {
		best = v
	}
	if a.Is4() {
		a4 := a.As4()
		v := uint32(a4[0])<<24 | uint32(a4[1])<<16 | uint32(a4[2])<<8 | uint32(a4[3])
		for i := range s.odd {
			if idx, ok := s.odd[i].subs[v&s.odd[i].mask]; ok && (best < 0 || idx < best) {
				best = idx
			}
		}
	}
	return best
}

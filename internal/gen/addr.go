package gen

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"strings"
)

// A subnet is an address rule as Apache reads it (apr_ipsubnet_create,
// apache-access-semantics.md §6.2): an IPv4 network with a mask of any bit
// pattern, or an IPv6 prefix.
type subnet struct {
	v6    bool
	net4  uint32
	mask4 uint32
	hi    uint64 // IPv6 network, high and low halves
	lo    uint64
	bits6 int
}

func v4String(a uint32) string {
	return fmt.Sprintf("%d.%d.%d.%d", a>>24, a>>16&0xff, a>>8&0xff, a&0xff)
}

func v6String(hi, lo uint64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return netip.AddrFrom16(b).String()
}

func prefixMask(n int) uint32 {
	if n == 0 {
		return 0
	}
	return ^uint32(0) << (32 - n)
}

// anchor4 returns an IPv4 address that the rules of a configuration are
// built around, so that they nest and overlap.
func (g *generator) anchor4() uint32 {
	var a, b, c byte
	switch g.intn(6) {
	case 0, 1:
		a, b, c = 10, byte(g.intn(3)), byte(g.intn(3))
	case 2:
		a, b, c = 192, 168, byte(g.intn(3))
	case 3:
		a, b, c = 172, byte(16+g.intn(2)), byte(g.intn(2))
	case 4:
		a, b, c = 203, 0, 113
	default:
		a, b, c = 127, 0, 0
	}
	return uint32(a)<<24 | uint32(b)<<16 | uint32(c)<<8 | uint32(1+g.intn(254))
}

func (g *generator) anchor6() netip.Addr {
	var b [16]byte
	if g.chance(0.8) {
		b[0], b[1], b[2], b[3] = 0x20, 0x01, 0x0d, 0xb8
		b[5] = byte(g.intn(3))
		b[7] = byte(g.intn(2))
	} else {
		b[0] = 0xfd
		b[1] = byte(g.intn(2))
	}
	b[15] = byte(1 + g.intn(254))
	if g.chance(0.3) {
		b[13] = byte(g.intn(4))
	}
	return netip.AddrFrom16(b)
}

var (
	v4Bits      = []int{8, 12, 16, 20, 22, 24, 25, 26, 28, 30, 31, 32}
	v6Bits      = []int{16, 32, 48, 56, 64, 96, 112, 120, 126, 127, 128}
	oddNetmasks = []string{"255.0.255.0", "255.255.0.255", "255.0.0.255", "0.255.255.0", "255.255.254.255", "255.255.255.253"}
)

// subnetWord returns one address word for Allow/Deny from or Require ip
// (the grammars are the same, §6.5), records the subnet and returns it:
// a full address, a partial one (10, 10.1, 10.1., 10.1.2), a CIDR, a
// netmask (contiguous or not), a leading-zero address, or IPv6. Never /0,
// never a partial address with a mask, never a v4-mapped subnet.
func (g *generator) subnetWord() string {
	a := pick(g, g.anchors4)
	switch x := g.intn(100); {
	case x < 28: // CIDR
		n := pick(g, v4Bits)
		m := prefixMask(n)
		addr := a
		if g.chance(0.5) {
			addr = a & m // otherwise host bits are set, and cleared by Apache
		}
		g.nets = append(g.nets, subnet{net4: a & m, mask4: m})
		return fmt.Sprintf("%s/%d", v4String(addr), n)
	case x < 43: // partial
		k := 1 + g.intn(3)
		oct := []string{fmt.Sprint(a >> 24), fmt.Sprint(a >> 16 & 0xff), fmt.Sprint(a >> 8 & 0xff)}
		w := strings.Join(oct[:k], ".")
		if k < 3 && g.chance(0.3) {
			w += "."
		}
		m := prefixMask(8 * k)
		g.nets = append(g.nets, subnet{net4: a & m, mask4: m})
		return w
	case x < 55: // full address
		if g.chance(0.3) {
			a += uint32(g.intn(3)) - 1
		}
		g.nets = append(g.nets, subnet{net4: a, mask4: ^uint32(0)})
		if g.chance(0.15) {
			return fmt.Sprintf("%03d.%03d.%03d.%03d", a>>24, a>>16&0xff, a>>8&0xff, a&0xff)
		}
		return v4String(a)
	case x < 67: // netmask
		var ms string
		var m uint32
		if g.chance(0.5) {
			m = prefixMask(pick(g, v4Bits))
			ms = v4String(m)
		} else {
			ms = pick(g, oddNetmasks)
			p := netip.MustParseAddr(ms).As4()
			m = binary.BigEndian.Uint32(p[:])
		}
		g.nets = append(g.nets, subnet{net4: a & m, mask4: m})
		return v4String(a) + "/" + ms
	default: // IPv6
		a6 := pick(g, g.anchors6)
		b := a6.As16()
		hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
		if g.chance(0.3) {
			g.nets = append(g.nets, subnet{v6: true, hi: hi, lo: lo, bits6: 128})
			return a6.String()
		}
		n := pick(g, v6Bits)
		mh, ml := mask6(n)
		g.nets = append(g.nets, subnet{v6: true, hi: hi & mh, lo: lo & ml, bits6: n})
		if g.chance(0.5) {
			return fmt.Sprintf("%s/%d", v6String(hi&mh, lo&ml), n)
		}
		return fmt.Sprintf("%s/%d", a6, n)
	}
}

func mask6(n int) (hi, lo uint64) {
	switch {
	case n >= 128:
		return ^uint64(0), ^uint64(0)
	case n >= 64:
		return ^uint64(0), ^uint64(0) << (128 - n)
	case n == 0:
		return 0, 0
	default:
		return ^uint64(0) << (64 - n), 0
	}
}

// edges returns client addresses at the boundaries of s: its first and
// last address, the addresses just outside, one inside; for a
// non-contiguous mask, a matching address and one that differs in a masked
// bit.
func (g *generator) edges(s subnet) []string {
	if !s.v6 {
		contiguous := bits.OnesCount32(s.mask4) == bits.LeadingZeros32(^s.mask4)
		if !contiguous {
			in := s.net4 | (g.r.Uint32() & ^s.mask4)
			bit := uint32(1) << bits.TrailingZeros32(s.mask4)
			if g.chance(0.5) {
				bit = uint32(1) << (31 - bits.LeadingZeros32(s.mask4))
			}
			return []string{v4String(in), v4String(in ^ bit), v4String(s.net4)}
		}
		first, last := s.net4, s.net4|^s.mask4
		out := []string{v4String(first), v4String(last), v4String(first + (g.r.Uint32() & ^s.mask4))}
		if first > 0 {
			out = append(out, v4String(first-1))
		}
		if last < ^uint32(0) {
			out = append(out, v4String(last+1))
		}
		return out
	}
	mh, ml := mask6(s.bits6)
	fh, fl := s.hi, s.lo
	lh, ll := s.hi|^mh, s.lo|^ml
	out := []string{v6String(fh, fl), v6String(lh, ll)}
	bh, bl := fh, fl-1
	if fl == 0 {
		bh--
	}
	ah, al := lh, ll+1
	if al == 0 {
		ah++
	}
	return append(out, v6String(bh, bl), v6String(ah, al))
}

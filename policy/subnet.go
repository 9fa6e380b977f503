package policy

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
)

// Subnet is an address range as APR's apr_ipsubnet_t holds it: an address
// and a mask of the same family. The mask may be non-contiguous (an IPv4
// dotted netmask such as 255.0.255.0 is accepted as written), so a Subnet is
// not always a CIDR prefix.
type Subnet struct {
	v6   bool
	sub  [16]byte // IPv4 in the first four bytes
	mask [16]byte
}

// Errors returned by ParseSubnet. They carry APR's wording, which is what
// Apache prints at start-up.
var (
	// ErrNotIP means the text does not look like an address at all
	// (APR_EINVAL); Allow/Deny then read the word as a host name.
	ErrNotIP = errors.New("not an IP address")
	// ErrBadIP is APR_EBADIP.
	ErrBadIP = errors.New("The specified IP address is invalid.")
	// ErrBadMask is APR_EBADMASK.
	ErrBadMask = errors.New("The specified network mask is invalid.")
)

// ParseSubnet parses an address and an optional mask exactly as
// apr_ipsubnet_create does (apache/apr network_io/unix/sockaddr.c; see
// apache-access-semantics.md §6.2). hasMask tells a present but empty mask
// ("10.1.2.3/") from none. Partial IPv4 forms ("10.1", "10.1.") are accepted
// only without a mask; leading zeros are decimal; IPv4-mapped IPv6 addresses
// and zone identifiers are refused; host bits outside the mask are cleared.
func ParseSubnet(addr, mask string, hasMask bool) (Subnet, error) {
	var s Subnet
	if !looksLikeIP(addr) {
		return s, ErrNotIP
	}
	if b, ok := parseIPv6(addr); ok {
		if isV4Mapped(b) {
			return s, ErrBadIP
		}
		s.v6 = true
		s.sub = b
		for i := range s.mask {
			s.mask[i] = 0xff
		}
	} else if b, ok := parseIPv4(addr); ok {
		copy(s.sub[:4], b[:])
		s.mask[0], s.mask[1], s.mask[2], s.mask[3] = 0xff, 0xff, 0xff, 0xff
	} else {
		if hasMask {
			return s, ErrBadIP
		}
		if !parseNetwork(&s, addr) {
			return s, ErrBadIP
		}
	}
	if hasMask {
		maxBits := 32
		if s.v6 {
			maxBits = 128
		}
		if bits, ok := strtolWhole(mask); ok && bits > 0 && bits <= int64(maxBits) {
			s.mask = [16]byte{}
			for i := 0; i < int(bits); i++ {
				s.mask[i/8] |= 0x80 >> (i % 8)
			}
		} else if m, ok := parseIPv4(mask); !s.v6 && ok {
			s.mask = [16]byte{}
			copy(s.mask[:4], m[:])
		} else {
			return s, ErrBadMask
		}
	}
	for i := range s.sub {
		s.sub[i] &= s.mask[i]
	}
	return s, nil
}

// Contains reports whether addr is in the subnet, as apr_ipsubnet_test
// decides: IPv4 clients (and IPv4-mapped IPv6 clients, by their embedded
// IPv4 address) match IPv4 subnets only, other IPv6 clients IPv6 subnets only.
func (s Subnet) Contains(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.Is4() {
		if s.v6 {
			return false
		}
		a := addr.As4()
		return a[0]&s.mask[0] == s.sub[0] && a[1]&s.mask[1] == s.sub[1] &&
			a[2]&s.mask[2] == s.sub[2] && a[3]&s.mask[3] == s.sub[3]
	}
	if !s.v6 || !addr.Is6() {
		return false
	}
	a := addr.As16()
	for i := range a {
		if a[i]&s.mask[i] != s.sub[i] {
			return false
		}
	}
	return true
}

// IsIPv6 reports whether the subnet is an IPv6 one.
func (s Subnet) IsIPv6() bool { return s.v6 }

// Prefix returns the subnet as a CIDR prefix, and false when its mask is not
// contiguous.
func (s Subnet) Prefix() (netip.Prefix, bool) {
	n := 4
	if s.v6 {
		n = 16
	}
	bits, ended := 0, false
	for i := 0; i < n; i++ {
		for j := 7; j >= 0; j-- {
			set := s.mask[i]&(1<<j) != 0
			switch {
			case set && ended:
				return netip.Prefix{}, false
			case set:
				bits++
			default:
				ended = true
			}
		}
	}
	var a netip.Addr
	if s.v6 {
		a = netip.AddrFrom16(s.sub)
	} else {
		a = netip.AddrFrom4([4]byte(s.sub[:4]))
	}
	return netip.PrefixFrom(a, bits), true
}

// String renders the subnet as address/mask (CIDR bits when contiguous).
func (s Subnet) String() string { return string(s.AppendTo(nil)) }

// AppendTo appends the subnet as String renders it.
func (s Subnet) AppendTo(b []byte) []byte {
	if p, ok := s.Prefix(); ok {
		return p.AppendTo(b)
	}
	b = netip.AddrFrom4([4]byte(s.sub[:4])).AppendTo(b)
	b = append(b, '/')
	return netip.AddrFrom4([4]byte(s.mask[:4])).AppendTo(b)
}

// looksLikeIP is APR's looks_like_ip: non-empty, and either holds a ':' or
// consists of digits and dots only.
func looksLikeIP(s string) bool {
	if s == "" {
		return false
	}
	if strings.IndexByte(s, ':') >= 0 {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// parseIPv4 is APR's inet_pton4: exactly four decimal parts of at most 255,
// leading zeros allowed and read as decimal.
func parseIPv4(s string) ([4]byte, bool) {
	var out [4]byte
	octets, sawDigit := 0, false
	cur := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			cur = cur*10 + int(c-'0')
			if cur > 255 {
				return out, false
			}
			if !sawDigit {
				octets++
				if octets > 4 {
					return out, false
				}
				sawDigit = true
			}
			out[octets-1] = byte(cur)
		case c == '.' && sawDigit:
			if octets == 4 {
				return out, false
			}
			sawDigit = false
			cur = 0
		default:
			return out, false
		}
	}
	return out, octets == 4
}

// parseIPv6 is APR's inet_pton6 (after BIND): hex groups of at most four
// digits, one "::", an optional dotted IPv4 tail read by parseIPv4. Zone
// identifiers are not accepted.
func parseIPv6(s string) ([16]byte, bool) {
	var out [16]byte
	tp, colonp := 0, -1
	i := 0
	if strings.HasPrefix(s, ":") {
		if !strings.HasPrefix(s, "::") {
			return out, false
		}
		i = 1
	}
	curtok := i
	sawXDigit := false
	val, digits := 0, 0
	for ; i < len(s); i++ {
		c := s[i]
		if d := hexVal(c); d >= 0 {
			val = val<<4 | d
			if digits++; digits > 4 {
				return out, false
			}
			sawXDigit = true
			continue
		}
		if c == ':' {
			curtok = i + 1
			if !sawXDigit {
				if colonp >= 0 {
					return out, false
				}
				colonp = tp
				continue
			}
			if i+1 == len(s) {
				return out, false
			}
			if tp+2 > 16 {
				return out, false
			}
			out[tp], out[tp+1] = byte(val>>8), byte(val)
			tp += 2
			sawXDigit = false
			val, digits = 0, 0
			continue
		}
		if c == '.' && tp+4 <= 16 {
			v4, ok := parseIPv4(s[curtok:])
			if !ok {
				return out, false
			}
			copy(out[tp:], v4[:])
			tp += 4
			sawXDigit = false
			break
		}
		return out, false
	}
	if sawXDigit {
		if tp+2 > 16 {
			return out, false
		}
		out[tp], out[tp+1] = byte(val>>8), byte(val)
		tp += 2
	}
	if colonp >= 0 {
		n := tp - colonp
		if tp == 16 {
			return out, false
		}
		for j := 1; j <= n; j++ {
			out[16-j] = out[colonp+n-j]
			out[colonp+n-j] = 0
		}
		tp = 16
	}
	return out, tp == 16
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isV4Mapped(b [16]byte) bool {
	for i := 0; i < 10; i++ {
		if b[i] != 0 {
			return false
		}
	}
	return b[10] == 0xff && b[11] == 0xff
}

// parseNetwork is APR's parse_network: the legacy partial IPv4 form, one to
// four decimal octets separated by dots, with an optional trailing dot; the
// mask covers the octets given.
func parseNetwork(s *Subnet, text string) bool {
	if len(text) >= len("255.255.255.255")+1 {
		return false
	}
	shift := 24
	var sub, mask uint32
	rest := text
	for rest != "" {
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 {
			return false
		}
		digits := rest[:j]
		rest = rest[j:]
		if rest != "" {
			if rest[0] != '.' {
				return false
			}
			rest = rest[1:]
		}
		if shift < 0 {
			return false
		}
		octet, _ := strconv.Atoi(digits)
		if octet > 255 {
			return false
		}
		sub |= uint32(octet) << shift
		mask |= 0xff << shift
		shift -= 8
	}
	s.v6 = false
	s.sub = [16]byte{byte(sub >> 24), byte(sub >> 16), byte(sub >> 8), byte(sub)}
	s.mask = [16]byte{byte(mask >> 24), byte(mask >> 16), byte(mask >> 8), byte(mask)}
	return true
}

// strtolWhole reads s as C's strtol(s, &end, 10) does and reports whether
// the whole string was consumed.
func strtolWhole(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, s == "" // strtol("") consumes nothing: end == s, *end == '\0'
	}
	var v int64
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v < 1<<40 {
			v = v*10 + int64(c-'0')
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

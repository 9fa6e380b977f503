package policy

import (
	"net/netip"
	"testing"
)

// The grammar of apr_ipsubnet_create, apache-access-semantics.md §6.2.
func TestParseSubnet(t *testing.T) {
	tests := []struct {
		addr, mask string
		hasMask    bool
		want       string // String() of the subnet, or the error
	}{
		{"10.1.2.3", "", false, "10.1.2.3/32"},
		{"010.001.002.003", "", false, "10.1.2.3/32"}, // leading zeros are decimal [V]
		{"10", "", false, "10.0.0.0/8"},
		{"10.1", "", false, "10.1.0.0/16"},
		{"10.1.", "", false, "10.1.0.0/16"},
		{"10.1.2", "", false, "10.1.2.0/24"},
		{"10.1.2.", "", false, "10.1.2.0/24"},
		{"10.0", "", false, "10.0.0.0/16"},
		{"10.0.", "", false, "10.0.0.0/16"},
		{"10.255.", "", false, "10.255.0.0/16"},
		{"10.1.2.3.", "", false, "10.1.2.3/32"},
		{"100.100.100.10.", "", false, "100.100.100.10/32"},
		{"255.255.255.255.", "", false, ErrBadIP.Error()}, // 16 bytes: longer than parse_network's buffer
		{"::1::2", "", false, ErrBadIP.Error()},
		{"::ffff:10.1.2.3", "", false, ErrBadIP.Error()}, // IPv4-mapped: refused
		{"1::2:", "", false, ErrBadIP.Error()},
		{"1:2:3:4:5:6:7:8:9", "", false, ErrBadIP.Error()},
		{"1:2:3:4:5:6:7:1.2.3.4", "", false, ErrBadIP.Error()},
		{"1:2:3:4:5:6:1.2.3.4", "", false, "1:2:3:4:5:6:102:304/128"},
		{"10..1", "", false, ErrBadIP.Error()},
		{".10", "", false, ErrBadIP.Error()},
		{"1.2.3.4.5", "", false, ErrBadIP.Error()},
		{"256", "", false, ErrBadIP.Error()},
		{"10.1", "16", true, ErrBadIP.Error()},  // partial with a mask [V]
		{"10.1.2.3", "16", true, "10.1.0.0/16"}, // host bits cleared [V]
		{"10.1.2.3", "255.255.0.0", true, "10.1.0.0/16"},
		{"10.1.2.3", "255.0.255.0", true, "10.0.2.0/255.0.255.0"}, // non-contiguous [V]
		{"10.1.2.3", "0", true, ErrBadMask.Error()},               // /0 is invalid [V]
		{"10.1.2.3", "33", true, ErrBadMask.Error()},
		{"10.1.2.3", "", true, ErrBadMask.Error()},
		{"10.1.2.3", "+8", true, "10.0.0.0/8"}, // strtol accepts a sign
		{"10.1.2.3", "8x", true, ErrBadMask.Error()},
		{"2001:db8::", "32", true, "2001:db8::/32"},
		{"2001:db8::1", "", false, "2001:db8::1/128"},
		{"::1", "", false, "::1/128"},
		{"::", "0", true, ErrBadMask.Error()},
		{"2001:db8", "", false, ErrBadIP.Error()},        // partial IPv6 [V]
		{"::ffff:10.1.2.3", "", false, ErrBadIP.Error()}, // v4-mapped refused
		{"fe80::1%eth0", "", false, ErrBadIP.Error()},
		{"2001:db8::", "255.255.0.0", true, ErrBadMask.Error()},
		{"::10.1.2.3", "", false, "::a01:203/128"},
		{"1:2:3:4:5:6:7:8", "", false, "1:2:3:4:5:6:7:8/128"},
		{"1:2:3:4:5:6:7:8:9", "", false, ErrBadIP.Error()},
		{"1::2::3", "", false, ErrBadIP.Error()},
		{"12345::", "", false, ErrBadIP.Error()},
		{"00001::", "", false, ErrBadIP.Error()},
		{"1:2:", "", false, ErrBadIP.Error()},
		{"example.com", "", false, ErrNotIP.Error()},
		{"", "", false, ErrNotIP.Error()},
		{"10.1.2.3a", "", false, ErrNotIP.Error()},
		// inet_pton6's hex digits, both cases, and the bytes around them.
		{"fA::Af:a0", "", false, "fa::af:a0/128"},
		{"Ff:fF::", "", false, "ff:ff::/128"},
		{"::a:A", "", false, "::a:a/128"},
		{"9:99::0", "", false, "9:99::/128"},
		{"g::1", "", false, ErrBadIP.Error()}, // a ':': looks_like_ip says IPv6
		{"::`", "", false, ErrBadIP.Error()},
		{"::@", "", false, ErrBadIP.Error()},
		{"::G", "", false, ErrBadIP.Error()},
		// A ':' or a dotted tail with no room left: refused, not written
		// past the sixteen bytes.
		{"1:2:3:4:5:6:7:8:9:a", "", false, ErrBadIP.Error()},
		{"1::2:3:4:5:6:7:1.2.3.4", "", false, ErrBadIP.Error()},
		// Only ::ffff:0:0/96 is IPv4-mapped.
		{"ffff:ffff:ffff:ffff:ffff:ffff:1.2.3.4", "", false, "ffff:ffff:ffff:ffff:ffff:ffff:102:304/128"},
		{"1::ffff:10.1.2.3", "", false, "1::ffff:a01:203/128"},
		{"10.1.2.3", "-8", true, ErrBadMask.Error()}, // strtol reads -8: not a mask
		{"10.9", "", false, "10.9.0.0/16"},
		{"10.1.2.3", " 8", true, "10.0.0.0/8"}, // strtol skips leading blanks
		{"10.1.2.3", " ", true, ErrBadMask.Error()},
	}
	for _, tt := range tests {
		s, err := ParseSubnet(tt.addr, tt.mask, tt.hasMask)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = s.String()
		}
		if got != tt.want {
			t.Errorf("ParseSubnet(%q, %q, %v) = %s, want %s", tt.addr, tt.mask, tt.hasMask, got, tt.want)
		}
	}
}

func TestSubnetContains(t *testing.T) {
	tests := []struct {
		addr, mask string
		client     string
		want       bool
	}{
		{"10.1", "", "10.1.2.3", true},
		{"10.1", "", "10.10.2.3", false},
		{"10.1", "", "110.1.2.3", false},
		{"10.1", "", "::ffff:10.1.2.3", true}, // v4-mapped clients test IPv4 rules [V]
		{"10.0.0.0", "255.0.255.0", "10.9.0.7", true},
		{"10.0.0.0", "255.0.255.0", "10.9.1.7", false},
		{"2001:db8::", "32", "2001:db8::5", true},
		{"2001:db8::", "32", "2001:db9::5", false},
		{"2001:db8::", "32", "10.1.2.3", false},
		{"10.1.2.3", "", "2001:db8::1", false},
	}
	for _, tt := range tests {
		s, err := ParseSubnet(tt.addr, tt.mask, tt.mask != "")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Contains(netip.MustParseAddr(tt.client)); got != tt.want {
			t.Errorf("%s/%s contains %s = %v, want %v", tt.addr, tt.mask, tt.client, got, tt.want)
		}
	}
}

func TestInDomain(t *testing.T) {
	tests := []struct {
		pattern, host string
		want          bool
	}{
		{"apache.org", "apache.org", true},
		{"apache.org", "www.apache.org", true},
		{"apache.org", "fooapache.org", false},
		{".apache.org", "www.apache.org", true},
		{".apache.org", "apache.org", false},
		{"org", "x.org", true},
		{"LOCALHOST", "localhost", true},
		{"calhost", "localhost", false},
		{"www", "www.apache.org", false},
		{"", "apache.org", false},
		{"www.apache.org", "apache.org", false},
		{"pache.org", "a.pache.org", true},
	}
	for _, tt := range tests {
		if got := InDomain(tt.pattern, tt.host); got != tt.want {
			t.Errorf("InDomain(%q, %q) = %v, want %v", tt.pattern, tt.host, got, tt.want)
		}
	}
}

// FuzzParseSubnet checks that the parser never panics and agrees with
// net/netip on the addresses both accept.
func FuzzParseSubnet(f *testing.F) {
	for _, s := range []string{"10.1.2.3", "10.1", "010.001.002.003", "2001:db8::/32", "10.1.2.3/255.0.255.0", "::ffff:1.2.3.4", "1::2:3.4.5.6", "10.1./8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		addr, mask, has := cut(in)
		s, err := ParseSubnet(addr, mask, has)
		if err != nil {
			return
		}
		if has {
			return
		}
		ref, rerr := netip.ParseAddr(addr)
		if rerr != nil || ref.Zone() != "" || ref.Is4In6() {
			return
		}
		if !s.Contains(ref) {
			t.Fatalf("ParseSubnet(%q) = %s does not contain itself", addr, s)
		}
		if p, ok := s.Prefix(); !ok || p.Bits() != ref.BitLen() || p.Addr() != ref {
			t.Fatalf("ParseSubnet(%q) = %s, netip reads %s", addr, s, ref)
		}
	})
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

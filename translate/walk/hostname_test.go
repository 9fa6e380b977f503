package walk

import "testing"

// fixHostname is server/vhost.c's fix_hostname over apr_parse_addr_port:
// the port (1 to 65535) goes, a bracketed IPv6 literal loses its
// brackets, other names are lower-cased and lose a trailing dot; "..",
// "/" and "\" are refused, and an empty header is no host. Under Strict
// (HttpProtocolOptions) strict_hostname_check refuses what RFC 3986 and
// RFC 1123 do not allow, and a purely numeric name (AH02416).
func TestFixHostname(t *testing.T) {
	tests := []struct {
		in     string
		strict bool
		want   string
		ok     bool
	}{
		{"", true, "", true},
		{"Example.TEST", true, "example.test", true},
		{"AZ.Za", false, "az.za", true},
		{"A.b", false, "a.b", true},
		{"EXAMPLE", false, "example", true},
		{"EXAMPLE.TEST.", true, "example.test", true},
		{"a.Z", false, "a.z", true},
		{"x.\xc3\x89", false, "x.\xc3\x89", true}, // apr_tolower is ASCII only
		{"x.\xc3\x89A", false, "x.\xc3\x89a", true},
		{"a@Z", false, "a@z", true},
		{"example.test.", true, "example.test", true},
		{"example.test:1", true, "example.test", true},
		{"example.test:65535", true, "example.test", true},
		{"example.test:65536", true, "", false},
		{"example.test:0", false, "", false},
		{":80", false, "", false},
		{"a.b:", false, "a.b:", true}, // a lone ":" is no port
		{"a.b:", true, "", false},
		{"a..b", false, "", false},
		{"..", false, "", false},
		{"/", false, "", false},
		{"a/b", false, "", false},
		{`a\b`, false, "", false},
		{"123", true, "", false},
		{"123", false, "123", true},
		{"[::1]", true, "::1", true},
		{"[::1]:8080", true, "::1", true},
		{"[::FFFF:1.2.3.4]", true, "::ffff:1.2.3.4", true},
		{"[09af:AF::1]", true, "09af:af::1", true},
		{"[::@]", false, "", false},
		{"[::`]", false, "", false},
		{"[::/]", false, "", false},
		{"[::G]", false, "", false},
		{"[::g]:80", false, "", false},
		{"example.test:9", true, "example.test", true},
		{"example.test:10", true, "example.test", true},
		{"example.test:0080", true, "example.test", true},
		{"[::1", false, "", false},
		{"[::1]x", false, "", false},
		{"[::1]]", false, "", false},
		{"[fe80::1%eth0]", false, "", false},
		{"[1.2.3.4]", false, "", false},
		{"[::g]", false, "", false},
		{"[1::2::3]", false, "", false},
		{"[1:.2]", false, "", false},
		{"[1..2::]", false, "", false},
		{"[1.:2]", false, "", false},
		// strict_hostname_check
		{"1.2.3.4", true, "1.2.3.4", true},
		{"1.2.3.0", true, "1.2.3.0", true},
		{"1.2.3", true, "", false},
		{"1.2.3.4.5", true, "", false},
		{"01.2.3.4", true, "", false},
		{"1.02.3.4", true, "", false},
		{"1.0.3.4", true, "1.0.3.4", true},
		{"0.1.2.3", true, "0.1.2.3", true},
		{"00.1.2.3", true, "", false},
		{".1.2.3", true, "", false},
		{"foo.123", true, "", false},
		{"foo.1a", true, "", false},
		{"foo.a1", true, "foo.a1", true},
		{"foo.z", true, "foo.z", true},
		{"foo.Z", true, "foo.z", true},
		{"foo_bar-1.example", true, "foo_bar-1.example", true},
		{"nodots", true, "nodots", true},
		{"a,b", true, "", false},
		{"a,b", false, "a,b", true},
		{"1.2.3.4:80", true, "1.2.3.4", true},
	}
	for _, tt := range tests {
		got, ok := fixHostname(tt.in, tt.strict)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("fixHostname(%q, strict %v) = %q, %v; want %q, %v", tt.in, tt.strict, got, ok, tt.want, tt.ok)
		}
	}
}

// HostName is fix_hostname without Strict, as Apache 2.4 answered each
// of these (internal/differential TestHostNameApache sends them to it):
// an IPv6 literal loses its brackets and is lower-cased; apr_inet_pton
// decides which literals are IPv6, with its quirks (a group of more than
// four digits whose value fits, "1::2:", leading zeros in an embedded
// IPv4 address); a zone ID is refused; the port is read by C's atoi.
func TestHostName(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		// IPv6 literals, ports.
		{"[::1]", "::1", true},
		{"[::1]:8080", "::1", true},
		{"[::1]:0080", "::1", true},
		{"[::1]:65535", "::1", true},
		{"[::1]:65536", "", false},
		{"[::1]:0", "", false},
		{"[::1]:", "", false},
		{"[::1]:4294967376", "::1", true}, // (int)strtol: 2^32 + 80 is port 80
		{"[::1]:99999999999999999999", "", false},
		{"[::1]:80:80", "", false},
		{"[::FFFF:1.2.3.4]", "::ffff:1.2.3.4", true},
		{"[ABCD::EF]:81", "abcd::ef", true},
		{"[::]", "::", true},
		{"[1:2:3:4:5:6:7:8]", "1:2:3:4:5:6:7:8", true},
		{"[1:2:3:4:5:6:1.2.3.4]", "1:2:3:4:5:6:1.2.3.4", true},
		{"[::1.2.3.4]", "::1.2.3.4", true},
		{"[1:2:3:4:5:6:7::8]", "1:2:3:4:5:6:7::8", true},
		{"[1:2:3:4:5:6:7:8:9]", "", false},
		{"[1:2:3:4:5:6:7:1.2.3.4]", "", false},
		{"[1:2:3:4:5:6:7]", "", false},
		{"[12345::]", "", false},
		{"[00001::]", "00001::", true},
		{"[000000000001::]", "000000000001::", true},
		{"[::ffff:1.2.3.04]", "::ffff:1.2.3.04", true},
		{"[::ffff:001.2.3.4]", "::ffff:001.2.3.4", true},
		{"[::ffff:1.2.3.256]", "", false},
		{"[::ffff:1.2.3.255]", "::ffff:1.2.3.255", true},
		{"[::ffff:1.2.3.9]", "::ffff:1.2.3.9", true},
		{"[a000::]", "a000::", true},
		{"[FFFF::]", "ffff::", true},
		{"[a0000::]", "", false},
		{"[A0000::]", "", false},
		{"[::1.2.3]", "", false},
		{"[1.2.3.4::]", "", false},
		{"[::1.2.3.4.5]", "", false},
		{"[::1.2.3.4.]", "", false},
		{"[::1..2.3]", "", false},
		{"[::a.2.3.4]", "", false},
		{"[1::2:]", "1::2:", true},
		{"[::1:]", "::1:", true},
		{"[1:]", "", false},
		{"[:1]", "", false},
		{"[1::2::3]", "", false},
		{"[:::]", "", false},
		{"[:]", "", false},
		{"[]", "", false},
		{"[1.2.3.4]", "", false},
		{"[::g]", "", false},
		{"[::1 ]", "", false},
		{"[fe80::1%eth0]", "", false},
		{"[fe80::1%25eth0]", "", false},
		{"[fe80::1%]", "", false},
		{"[fe80::1%eth0]:80", "", false},
		{"[::1]x", "", false},
		{"[::1", "", false},
		{"[::1]]", "", false},
		{"[[::1]]", "", false},
		{"::1", ":", true}, // no brackets: ":1" is a port
		{"::1]", "::1]", true},
		// Names: case, trailing dots, ports.
		{"", "", true},
		{"Example.TEST", "example.test", true},
		{"example.test.", "example.test", true},
		{"EXAMPLE.test.:80", "example.test", true},
		{"example.test..", "", false},
		{"example.test:", "example.test:", true},
		{"example.test:0", "", false},
		{"example.test:65536", "", false},
		{"example.test:4294967376", "example.test", true},
		{"example.test:-1", "example.test:-1", true},
		{"a:b:80", "a:b", true},
		{"a:b", "a:b", true},
		{"123:80", "123", true},
		{".", "", true},
		{"..", "", false},
	} {
		got, ok := HostName(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("HostName(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

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

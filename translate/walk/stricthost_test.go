package walk

import "testing"

// TestStrictHostname holds strictHostname to httpd's strict_hostname_check
// (server/vhost.c): letters, digits, '-', '_' and dots; a name of digits and
// dots is an IPv4 address in four parts without leading zeros; any other
// name's last label must start with a letter.
func TestStrictHostname(t *testing.T) {
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"example.com", true},
		{"a_b-c.d", true},
		{"a.z", true}, {"a.a", true}, {"a.Z", true}, {"a.A", true},
		{"Z.b", true}, {"z9.b", true}, {"a9.b", true}, {"a0.b", true},
		{"a.0", false}, {"a.9", false}, {"a.9b", false},
		{"a.", true}, // a trailing dot: no label after it to check
		{".a", true},
		{"a,b", false}, {"a.@", false}, {"a.[", false}, {"a.`", false}, {"a.{", false}, {"a:b", false}, {"a/b", false},
		{"1.2.3.4", true}, {"1.2.3.0", true}, {"1.2.3.9", true},
		{"1.2.3", false}, {"1.2.3.4.5", false},
		{"01.2.3.4", false}, {"1.02.3.4", false}, {"1.2.3.09", false}, {".1.2.3", false},
		{"0.2.3.4", true}, {"0", false},
		{"1.00.3.4", false}, {"09.1.2.3", false}, {"00.1.2.3", false},
		{".9a", false}, // the last label starts at the first byte
	} {
		if got := strictHostname(c.host); got != c.ok {
			t.Errorf("strictHostname(%q) = %v, want %v", c.host, got, c.ok)
		}
	}
}

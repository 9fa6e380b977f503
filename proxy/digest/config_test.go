package digest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestConfigSet(t *testing.T) {
	tests := []struct {
		directive string
		args      []string
		err       string // "" if accepted
		check     func(Config) bool
	}{
		{"AuthDigestQop", []string{"auth"}, "", nil},
		{"authdigestqop", []string{"AUTH", "Auth"}, "", nil},
		{"AuthDigestQop", []string{"none"}, "AuthDigestQop is deprecated: only 'auth' is supported", nil},
		{"AuthDigestQop", []string{"auth", "auth-int"}, "AuthDigestQop is deprecated: only 'auth' is supported", nil},
		{"AuthDigestQop", nil, "AuthDigestQop requires at least one argument, A list of quality-of-protection options", nil},
		{"AuthDigestAlgorithm", []string{"md5"}, "", nil},
		{"AuthDigestAlgorithm", []string{"MD5-sess"}, "Unsupported algorithm in AuthDigestAlgorithm: MD5-sess", nil},
		{"AuthDigestAlgorithm", []string{"a", "b"}, "AuthDigestAlgorithm takes one argument, The algorithm used for the hash calculation", nil},
		{"AuthDigestNonceLifetime", []string{"60"}, "", func(c Config) bool { return c.NonceLifetime == time.Minute }},
		{"AuthDigestNonceLifetime", []string{"-1"}, "", func(c Config) bool { return c.NonceLifetime == -time.Second }},
		{"AuthDigestNonceLifetime", []string{"0"}, "", func(c Config) bool { return c.NonceLifetime == 0 }},
		{"AuthDigestNonceLifetime", []string{"1m"}, "Invalid time in AuthDigestNonceLifetime: 1m", nil},
		{"AuthDigestNcCheck", []string{"ON"}, "", func(c Config) bool { return c.NcCheck }},
		{"AuthDigestNcCheck", []string{"off"}, "", func(c Config) bool { return !c.NcCheck }},
		{"AuthDigestNcCheck", []string{"1"}, "AuthDigestNcCheck must be On or Off", nil},
		{"AuthDigestDomain", []string{"/a/", "/b/"}, "", func(c Config) bool { return strings.Join(c.Domain, " ") == "/a/ /b/" }},
		{"AuthDigestProvider", []string{"file", "dbm"}, "", func(c Config) bool { return strings.Join(c.Providers, " ") == "file dbm" }},
		{"AuthDigestShmemSize", []string{"1000"}, "digest: AuthDigestShmemSize is not a per-directory directive of mod_auth_digest", nil},
		{"AuthName", []string{"x"}, "digest: AuthName is not a per-directory directive of mod_auth_digest", nil},
	}
	for _, tt := range tests {
		c := NewConfig("R")
		c.NcCheck = true
		err := c.Set(tt.directive, tt.args...)
		if fmt.Sprint(err) != map[bool]string{true: "<nil>", false: tt.err}[tt.err == ""] {
			t.Errorf("%s %v: error %v, want %q", tt.directive, tt.args, err, tt.err)
		}
		if tt.check != nil && !tt.check(c) {
			t.Errorf("%s %v: %+v", tt.directive, tt.args, c)
		}
	}
	// Domains and providers accumulate over directives.
	c := NewConfig("R")
	c.Set("AuthDigestDomain", "/a/")
	c.Set("AuthDigestDomain", "/b/", "/c/")
	if strings.Join(c.Domain, " ") != "/a/ /b/ /c/" {
		t.Errorf("domains %v", c.Domain)
	}
}

func TestParseNonceLifetime(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		want time.Duration
		ok   bool
	}{
		{"300", 300 * time.Second, true}, {" 5", 5 * time.Second, true}, {"+5", 5 * time.Second, true},
		{"5 s", 5 * time.Second, true}, {"", 0, true}, {"-10", -10 * time.Second, true},
		{"5s", 0, false}, {"x", 0, false}, {"0x10", 0, false},
		// strtol clamps to LONG_MAX, and apr_time_from_sec's multiplication
		// wraps to -1000000 microseconds: nonces that never expire.
		{"99999999999999999999", -time.Second, true},
		{"10000000000", time.Duration(1<<63 - 1), true},   // beyond a Duration, not an apr_time_t
		{"10000000000000", time.Duration(-1 << 63), true}, // the microseconds wrap
	} {
		got, err := ParseNonceLifetime(tt.arg)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("%q: %v %v, want %v %v", tt.arg, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseShmemSize(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		want int64
		err  string
	}{
		{"1000", 1000, ""}, {"1024K", 1048576, ""}, {"1M", 1048576, ""}, {"2 m", 2097152, ""},
		{"512b", 512, ""}, {"1kx", 1024, ""}, {"88", 88, ""},
		{"87", 0, "size in AuthDigestShmemSize too small: 87 < 88"},
		{"0", 0, "size in AuthDigestShmemSize too small: 0 < 88"},
		{"1G", 0, "Invalid size in AuthDigestShmemSize: 1G"},
	} {
		got, err := ParseShmemSize(tt.arg)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("%q: %d %v, want %d %q", tt.arg, got, err, tt.want, tt.err)
		}
	}
	if n := ClientsForShmemSize(1000); n < 10 || n > 16 {
		t.Errorf("1000 bytes: %d clients (Apache: about 12)", n)
	}
	if a, b := ClientsForShmemSize(1<<20), ClientsForShmemSize(2<<20); a < 10000 || b < 2*a-10 || b > 2*a+10 {
		t.Errorf("1M: %d, 2M: %d", a, b)
	}
	if n := ClientsForShmemSize(88); n != 1 {
		t.Errorf("88 bytes: %d", n)
	}
}

func TestStrtol(t *testing.T) {
	for _, tt := range []struct {
		s    string
		base int
		v    int64
		end  int
		erng bool
	}{
		{"", 16, 0, 0, false}, {"  ", 16, 0, 0, false}, {"1f", 16, 31, 2, false}, {"0x1f", 16, 31, 4, false},
		{" -0X1Fz", 16, -31, 6, false}, {"0x", 16, 0, 1, false}, {"0xz", 16, 0, 1, false}, {"+", 16, 0, 0, false},
		{"g", 16, 0, 0, false}, {"7fffffffffffffff", 16, 1<<63 - 1, 16, false},
		{"8000000000000000", 16, 1<<63 - 1, 16, true}, {"-8000000000000000", 16, -1 << 63, 17, false},
		{"-8000000000000001", 16, -1 << 63, 17, true}, {"123456789012345678901234567890", 10, 1<<63 - 1, 30, true},
		{"0x10", 10, 0, 1, false}, {"\v\f\r\n\t42 ", 10, 42, 7, false},
	} {
		v, end, erng := strtol(tt.s, tt.base)
		if v != tt.v || end != tt.end || erng != tt.erng {
			t.Errorf("strtol(%q, %d) = %d %d %v, want %d %d %v", tt.s, tt.base, v, end, erng, tt.v, tt.end, tt.erng)
		}
	}
}

func TestEscapeQuotes(t *testing.T) {
	for in, want := range map[string]string{
		`plain`: `plain`, `a"b`: `a\"b`, `a\"b`: `a\"b`, `a\b"`: `a\b\"`, `"`: `\"`, `a\`: `a\`, `\\"`: `\\\"`, `x\`: `x\`,
	} {
		if got := escapeQuotes(in); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

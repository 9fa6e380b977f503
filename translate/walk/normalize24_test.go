package walk

import (
	"strings"
	"testing"
	"unicode"
)

// normalize is ap_normalize_path with AP_NORMALIZE_NOT_ABOVE_ROOT: the
// expected values are what httpd's own C function (server/util.c, 2.4)
// gives for each input, with and without MERGE_SLASHES and
// DECODE_UNRESERVED.
func TestNormalizeDifferential(t *testing.T) {
	for _, tt := range []struct {
		in            string
		merge, decode bool
		want          string
		ok            bool
	}{
		{"/a/b", false, false, "/a/b", true},
		{"/a/b", false, true, "/a/b", true},
		{"/a/b", true, false, "/a/b", true},
		{"/a/b", true, true, "/a/b", true},
		{"//a//b", false, false, "//a//b", true},
		{"//a//b", false, true, "//a//b", true},
		{"//a//b", true, false, "/a/b", true},
		{"//a//b", true, true, "/a/b", true},
		{"/a/./b", false, false, "/a/b", true},
		{"/a/./b", false, true, "/a/b", true},
		{"/a/./b", true, false, "/a/b", true},
		{"/a/./b", true, true, "/a/b", true},
		{"/a/../b", false, false, "/b", true},
		{"/a/../b", false, true, "/b", true},
		{"/a/../b", true, false, "/b", true},
		{"/a/../b", true, true, "/b", true},
		{"/..", false, false, "/", false},
		{"/..", false, true, "/", false},
		{"/..", true, false, "/", false},
		{"/..", true, true, "/", false},
		{"/../a", false, false, "/a", false},
		{"/../a", false, true, "/a", false},
		{"/../a", true, false, "/a", false},
		{"/../a", true, true, "/a", false},
		{"/a/..", false, false, "/", true},
		{"/a/..", false, true, "/", true},
		{"/a/..", true, false, "/", true},
		{"/a/..", true, true, "/", true},
		{"/a/.", false, false, "/a/", true},
		{"/a/.", false, true, "/a/", true},
		{"/a/.", true, false, "/a/", true},
		{"/a/.", true, true, "/a/", true},
		{"/.", false, false, "/", true},
		{"/.", false, true, "/", true},
		{"/.", true, false, "/", true},
		{"/.", true, true, "/", true},
		{"/a/%2e%2e/b", false, false, "/a/%2e%2e/b", true},
		{"/a/%2e%2e/b", false, true, "/b", true},
		{"/a/%2e%2e/b", true, false, "/a/%2e%2e/b", true},
		{"/a/%2e%2e/b", true, true, "/b", true},
		{"/a/%2E%2e/b", false, false, "/a/%2E%2e/b", true},
		{"/a/%2E%2e/b", false, true, "/b", true},
		{"/a/%2E%2e/b", true, false, "/a/%2E%2e/b", true},
		{"/a/%2E%2e/b", true, true, "/b", true},
		{"/a/.%2e/b", false, false, "/a/.%2e/b", true},
		{"/a/.%2e/b", false, true, "/b", true},
		{"/a/.%2e/b", true, false, "/a/.%2e/b", true},
		{"/a/.%2e/b", true, true, "/b", true},
		{"/a/.%2E", false, false, "/a/.%2E", true},
		{"/a/.%2E", false, true, "/", true},
		{"/a/.%2E", true, false, "/a/.%2E", true},
		{"/a/.%2E", true, true, "/", true},
		{"/a/%2e/b", false, false, "/a/%2e/b", true},
		{"/a/%2e/b", false, true, "/a/b", true},
		{"/a/%2e/b", true, false, "/a/%2e/b", true},
		{"/a/%2e/b", true, true, "/a/b", true},
		{"/%2e%2e", false, false, "/%2e%2e", true},
		{"/%2e%2e", false, true, "/", false},
		{"/%2e%2e", true, false, "/%2e%2e", true},
		{"/%2e%2e", true, true, "/", false},
		{"/a/%41%7a%30%2d%5f%7e%2F", false, false, "/a/%41%7a%30%2d%5f%7e%2F", true},
		{"/a/%41%7a%30%2d%5f%7e%2F", false, true, "/a/Az0-_~%2F", true},
		{"/a/%41%7a%30%2d%5f%7e%2F", true, false, "/a/%41%7a%30%2d%5f%7e%2F", true},
		{"/a/%41%7a%30%2d%5f%7e%2F", true, true, "/a/Az0-_~%2F", true},
		{"/a/%zz", false, false, "/a/%zz", true},
		{"/a/%zz", false, true, "/a/%zz", false},
		{"/a/%zz", true, false, "/a/%zz", true},
		{"/a/%zz", true, true, "/a/%zz", false},
		{"/a/%2", false, false, "/a/%2", true},
		{"/a/%2", false, true, "/a/%2", false},
		{"/a/%2", true, false, "/a/%2", true},
		{"/a/%2", true, true, "/a/%2", false},
		{"/a/%", false, false, "/a/%", true},
		{"/a/%", false, true, "/a/%", false},
		{"/a/%", true, false, "/a/%", true},
		{"/a/%", true, true, "/a/%", false},
		{"/a//../b", false, false, "/a/b", true},
		{"/a//../b", false, true, "/a/b", true},
		{"/a//../b", true, false, "/b", true},
		{"/a//../b", true, true, "/b", true},
		{"/a/b/c/../../d", false, false, "/a/d", true},
		{"/a/b/c/../../d", false, true, "/a/d", true},
		{"/a/b/c/../../d", true, false, "/a/d", true},
		{"/a/b/c/../../d", true, true, "/a/d", true},
		{"/a/b/../../../c", false, false, "/c", false},
		{"/a/b/../../../c", false, true, "/c", false},
		{"/a/b/../../../c", true, false, "/c", false},
		{"/a/b/../../../c", true, true, "/c", false},
		{"///", false, false, "///", true},
		{"///", false, true, "///", true},
		{"///", true, false, "/", true},
		{"///", true, true, "/", true},
		{"/a/.../b", false, false, "/a/.../b", true},
		{"/a/.../b", false, true, "/a/.../b", true},
		{"/a/.../b", true, false, "/a/.../b", true},
		{"/a/.../b", true, true, "/a/.../b", true},
		{"/a/..b", false, false, "/a/..b", true},
		{"/a/..b", false, true, "/a/..b", true},
		{"/a/..b", true, false, "/a/..b", true},
		{"/a/..b", true, true, "/a/..b", true},
		{"/a/.b", false, false, "/a/.b", true},
		{"/a/.b", false, true, "/a/.b", true},
		{"/a/.b", true, false, "/a/.b", true},
		{"/a/.b", true, true, "/a/.b", true},
		{"/%2e./a", false, false, "/%2e./a", true},
		{"/%2e./a", false, true, "/a", false},
		{"/%2e./a", true, false, "/%2e./a", true},
		{"/%2e./a", true, true, "/a", false},
		{"/a/%2e%2", false, false, "/a/%2e%2", true},
		{"/a/%2e%2", false, true, "/a/.%2", false},
		{"/a/%2e%2", true, false, "/a/%2e%2", true},
		{"/a/%2e%2", true, true, "/a/.%2", false},
		{"/x/.%2e%2f", false, false, "/x/.%2e%2f", true},
		{"/x/.%2e%2f", false, true, "/x/..%2f", true},
		{"/x/.%2e%2f", true, false, "/x/.%2e%2f", true},
		{"/x/.%2e%2f", true, true, "/x/..%2f", true},
		{"/a/./../b", false, false, "/b", true},
		{"/a/./../b", false, true, "/b", true},
		{"/a/./../b", true, false, "/b", true},
		{"/a/./../b", true, true, "/b", true},
		{"/a./b", false, false, "/a./b", true},
		{"/a./b", false, true, "/a./b", true},
		{"/a./b", true, false, "/a./b", true},
		{"/a./b", true, true, "/a./b", true},
		{"/a../b", false, false, "/a../b", true},
		{"/a../b", false, true, "/a../b", true},
		{"/a../b", true, false, "/a../b", true},
		{"/a../b", true, true, "/a../b", true},
		{"/a.", false, false, "/a.", true},
		{"/a.", false, true, "/a.", true},
		{"/a.", true, false, "/a.", true},
		{"/a.", true, true, "/a.", true},
		{"/a..", false, false, "/a..", true},
		{"/a..", false, true, "/a..", true},
		{"/a..", true, false, "/a..", true},
		{"/a..", true, true, "/a..", true},
		{"/.a/", false, false, "/.a/", true},
		{"/.a/", false, true, "/.a/", true},
		{"/.a/", true, false, "/.a/", true},
		{"/.a/", true, true, "/.a/", true},
		{"/a%2e/b", false, false, "/a%2e/b", true},
		{"/a%2e/b", false, true, "/a./b", true},
		{"/a%2e/b", true, false, "/a%2e/b", true},
		{"/a%2e/b", true, true, "/a./b", true},
		{"/a.%2e/b", false, false, "/a.%2e/b", true},
		{"/a.%2e/b", false, true, "/a../b", true},
		{"/a.%2e/b", true, false, "/a.%2e/b", true},
		{"/a.%2e/b", true, true, "/a../b", true},
		{"/a/b%2e%2e/c", false, false, "/a/b%2e%2e/c", true},
		{"/a/b%2e%2e/c", false, true, "/a/b../c", true},
		{"/a/b%2e%2e/c", true, false, "/a/b%2e%2e/c", true},
		{"/a/b%2e%2e/c", true, true, "/a/b../c", true},
		{"/%2e", false, false, "/%2e", true},
		{"/%2e", false, true, "/", true},
		{"/%2e", true, false, "/%2e", true},
		{"/%2e", true, true, "/", true},
		{"/%2E/a", false, false, "/%2E/a", true},
		{"/%2E/a", false, true, "/a", true},
		{"/%2E/a", true, false, "/%2E/a", true},
		{"/%2E/a", true, true, "/a", true},
		{"/a/%2e%2E", false, false, "/a/%2e%2E", true},
		{"/a/%2e%2E", false, true, "/", true},
		{"/a/%2e%2E", true, false, "/a/%2e%2E", true},
		{"/a/%2e%2E", true, true, "/", true},
		{"/./", false, false, "/", true},
		{"/./", false, true, "/", true},
		{"/./", true, false, "/", true},
		{"/./", true, true, "/", true},
		{"/.//a", false, false, "//a", true},
		{"/.//a", false, true, "//a", true},
		{"/.//a", true, false, "/a", true},
		{"/.//a", true, true, "/a", true},
		{"//./a", false, false, "//a", true},
		{"//./a", false, true, "//a", true},
		{"//./a", true, false, "/a", true},
		{"//./a", true, true, "/a", true},
		{"/abc/def/../g", false, false, "/abc/g", true},
		{"/abc/def/../g", false, true, "/abc/g", true},
		{"/abc/def/../g", true, false, "/abc/g", true},
		{"/abc/def/../g", true, true, "/abc/g", true},
		{"/abc/../../x", false, false, "/x", false},
		{"/abc/../../x", false, true, "/x", false},
		{"/abc/../../x", true, false, "/x", false},
		{"/abc/../../x", true, true, "/x", false},
		{"/abc/def/%2e%2e/g", false, false, "/abc/def/%2e%2e/g", true},
		{"/abc/def/%2e%2e/g", false, true, "/abc/g", true},
		{"/abc/def/%2e%2e/g", true, false, "/abc/def/%2e%2e/g", true},
		{"/abc/def/%2e%2e/g", true, true, "/abc/g", true},
		{"/abc//def/../g", false, false, "/abc//g", true},
		{"/abc//def/../g", false, true, "/abc//g", true},
		{"/abc//def/../g", true, false, "/abc/g", true},
		{"/abc//def/../g", true, true, "/abc/g", true},
	} {
		got, ok := normalize([]byte(tt.in), tt.merge, tt.decode)
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("normalize(%q, merge=%v, decode=%v) = %q, %v; want %q, %v", tt.in, tt.merge, tt.decode, got, ok, tt.want, tt.ok)
		}
	}
}

// isHex and unhex are apr_isxdigit and x2c's digit values, for every byte.
func TestHexDigits(t *testing.T) {
	const digits = "0123456789abcdef"
	for c := 0; c < 256; c++ {
		v := strings.IndexByte(digits, byte(unicode.ToLower(rune(c))))
		if c >= 128 {
			v = -1
		}
		if got := isHex(byte(c)); got != (v >= 0) {
			t.Errorf("isHex(%q) = %v", byte(c), got)
		}
		if v >= 0 && unhex(byte(c)) != byte(v) {
			t.Errorf("unhex(%q) = %d, want %d", byte(c), unhex(byte(c)), v)
		}
	}
}

// unescape is ap_unescape_url_ex: a bad escape is 400 (whatever else is
// wrong), %00 404, %2F 404 when forbidden, kept encoded when kept, and
// under KEEP_UNRESERVED the unreserved characters stay encoded.
func TestUnescape(t *testing.T) {
	for _, tt := range []struct {
		in                           string
		forbid, keep, keepUnreserved bool
		want                         string
		status                       int
	}{
		{"/a", false, false, false, "/a", 0},
		{"/a%41%7a%30%39", false, false, false, "/aAz09", 0},
		{"/a%41%7A%2d%2E%5f%7e", false, false, true, "/a%41%7A%2d%2E%5f%7e", 0},
		{"/a%40%20", false, false, true, "/a@ ", 0},
		{"/a%2f", true, false, false, "", 404},
		{"/a%2F", false, true, false, "/a%2F", 0},
		{"/a%2f", false, false, false, "/a/", 0},
		{"/a%00", false, false, false, "", 404},
		{"/a%zz%2f", true, false, false, "", 400},
		{"/a%2f%zz", true, false, false, "", 400},
		{"/a%", false, false, false, "", 400},
		{"/a%4", false, false, false, "", 400},
		{"/a%4g", false, false, false, "", 400},
		{"/a%g4", false, false, false, "", 400},
		{"/a%41%", false, false, false, "", 400},
		{"%41", false, false, false, "A", 0},
		{"/%e9t%C3%A9", false, false, false, "/\xe9t\xc3\xa9", 0},
	} {
		got, st := unescape([]byte(tt.in), tt.forbid, tt.keep, tt.keepUnreserved)
		if string(got) != tt.want || st != tt.status {
			t.Errorf("unescape(%q, %v, %v, %v) = %q, %d; want %q, %d", tt.in, tt.forbid, tt.keep, tt.keepUnreserved, got, st, tt.want, tt.status)
		}
	}
}

// no2slash is ap_no2slash: every run of slashes becomes one.
func TestNo2slash(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b": "/a/b", "//a///b//": "/a/b/", "////": "/", "a//": "a/", "": "", "/": "/", "a//b/c//d": "a/b/c/d",
	} {
		if got := no2slash(in); got != want {
			t.Errorf("no2slash(%q) = %q, want %q", in, got, want)
		}
	}
}

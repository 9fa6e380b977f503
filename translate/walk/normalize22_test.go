package walk

import "testing"

// getparents is ap_getparents (server/util.c): the expected values are
// what httpd's own C function gives for each input (compiled from
// util.c), RFC 1808's steps a to d, a path above the root left relative.
func TestGetparents(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/a/b", "/a/b"},
		{"/a/./b", "/a/b"},
		{"/./a", "/a"},
		{"/.", "/"},
		{"/a/.", "/a/"},
		{"/a/..", "/"},
		{"/a/../b", "/b"},
		{"/a/b/../../c", "/c"},
		{"/../a", "a"},
		{"/a/../../b", "b"},
		{"/..", ""},
		{".", ""},
		{"..", ""},
		{"./a", "a"},
		{"../a", "a"},
		{"/a/b/..", "/a/"},
		{"/a/b/.", "/a/b/"},
		{"/a/.b/c", "/a/.b/c"},
		{"/a/..b/c", "/a/..b/c"},
		{"/a/b../c", "/a/b../c"},
		{"/a/b./c", "/a/b./c"},
		{"/a//../b", "/a/b"},
		{"//../a", "/a"},
		{"/a/./../b", "/b"},
		{"/a/.././b", "/b"},
		{"/./../a", "a"},
		{"/x/y/z/../../w", "/x/w"},
		{"/a/b/c/..", "/a/b/"},
		{"/ab/..", "/"},
		{"/.a", "/.a"},
		{"/a./", "/a./"},
		{"/a/...", "/a/..."},
		{"/a/.../b", "/a/.../b"},
		{"a/../b", "b"},
		{"/a/./././b", "/a/b"},
		{"/a/b/./.", "/a/b/"},
		{"/a/b/../.", "/a/"},
		{"/.././a", "a"},
		{"/a/b/c/../../..", "/"},
		{"/a/b/c/../../../..", ""},
		// A trailing ".." whose parent is the first segment, slash or not
		// (ap_getparents step d at index 0).
		{"//..", "/"},
		{"/../ab/..", ""},
	} {
		if got := getparents(tt.in); got != tt.want {
			t.Errorf("getparents(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Apache 2.2's path (apache-access-semantics.md §5, the 2.2 rows):
// everything decoded, "%2F" kept encoded under AllowEncodedSlashes and
// 404 otherwise, "%00" 404, a bad escape 400, then ap_getparents; "//"
// stays; a path that climbs above the root is 400.
func TestNormalizePath22(t *testing.T) {
	for _, tt := range []struct {
		in     string
		allow  bool
		want   string
		status int
	}{
		{"/sub/x", false, "/sub/x", 0},
		{"/%73ub/x", false, "/sub/x", 0},
		{"//sub/x", false, "//sub/x", 0},
		{"/a/%2e%2e/sub", false, "/sub", 0},
		{"/%2e%2e/sub", false, "", 400},
		{"/../sub/", false, "", 400},
		{"/a/../sub/", false, "/sub/", 0},
		{"/a/./b", false, "/a/b", 0},
		{"/sub%2ffile", false, "", 404},
		{"/sub%2Ffile", true, "/sub%2Ffile", 0},
		{"/a%2f..%2fb", true, "/a%2f..%2fb", 0},
		{"/x%00", true, "", 404},
		{"/x%zz", false, "", 400},
		{"/x%2", false, "", 400},
		{"/x%", false, "", 400},
		{"/x%252e", false, "/x%2e", 0},
		{"/x%7E", false, "/x~", 0},
		{"*", false, "*", 0},
		{"/", false, "/", 0},
	} {
		got, st := NormalizePath22(tt.in, tt.allow)
		if got != tt.want || st != tt.status {
			t.Errorf("NormalizePath22(%q, %v) = %q, %d; want %q, %d", tt.in, tt.allow, got, st, tt.want, tt.status)
		}
	}
}

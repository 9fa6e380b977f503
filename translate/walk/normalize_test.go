package walk

import (
	"strings"
	"testing"
)

// apache-access-semantics.md §5, the 2.4 rows.
func TestNormalizePath(t *testing.T) {
	tests := []struct {
		in     string
		merge  bool
		enc    uint8
		want   string
		status int
	}{
		{"/sub/x", true, 0, "/sub/x", 0},
		{"/%73ub/x", true, 0, "/sub/x", 0},
		{"/su%62/x", true, 0, "/sub/x", 0},
		{"//sub/x", true, 0, "/sub/x", 0},
		{"//sub/x", false, 0, "//sub/x", 0},
		{"/./sub/x", true, 0, "/sub/x", 0},
		{"/x/../sub/x", true, 0, "/sub/x", 0},
		{"/sub/%2e/x", true, 0, "/sub/x", 0},
		{"/sub/.%2e/x", true, 0, "/x", 0},
		{"/sub/%2E%2e/x", true, 0, "/x", 0},
		{"/sub/..", true, 0, "/", 0},
		{"/sub/.", true, 0, "/sub/", 0},
		{"/..", true, 0, "", 400},
		{"/%2e%2e/sub", true, 0, "", 400},
		{"/a/../../b", true, 0, "", 400},
		{"/sub%2ffile", true, 0, "", 404},
		{"/sub%2Ffile", true, 2, "/sub%2Ffile", 0},
		{"/sub%2ffile", true, 1, "/sub/file", 0},
		{"/a%2f..%2fb", true, 1, "/b", 0},
		{"/x%00", true, 0, "", 404},
		{"/x%zz", true, 0, "", 400},
		{"/x%2", true, 0, "", 400},
		{"/x%20y", true, 0, "/x y", 0},
		{"/x%252e", true, 0, "/x%2e", 0},
		{"/caf%C3%A9", true, 0, "/caf\xc3\xa9", 0},
		{"x", true, 0, "", 400},
		{"*", true, 0, "*", 0},
		{"/a/./b/../c/", true, 0, "/a/c/", 0},
		{"/a//../b", true, 0, "/b", 0},
		{"/a//../b", false, 0, "/a/b", 0},
	}
	for _, tt := range tests {
		got, st := NormalizePath(tt.in, tt.merge, tt.enc)
		if got != tt.want || st != tt.status {
			t.Errorf("NormalizePath(%q, merge=%v, enc=%d) = %q, %d; want %q, %d", tt.in, tt.merge, tt.enc, got, st, tt.want, tt.status)
		}
	}
}

// FuzzNormalizePath checks that the normaliser never panics and that what
// it accepts has no dot segment, no doubled slash (with MergeSlashes) and
// normalises to itself.
func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{"/a/../b", "//x", "/%2e%2e/", "/a/.%2E/b", "/x%2fy", "/%zz", "/./.././", "/a%00"} {
		f.Add(s, true, uint8(0))
	}
	f.Fuzz(func(t *testing.T, in string, merge bool, enc uint8) {
		enc %= 3
		got, st := NormalizePath(in, merge, enc)
		if st != 0 || got == "*" {
			return
		}
		if !strings.HasPrefix(got, "/") {
			t.Fatalf("%q -> %q: not absolute", in, got)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("%q -> %q: dot segment left", in, got)
			}
		}
		if merge && strings.Contains(got, "//") {
			t.Fatalf("%q -> %q: doubled slash left", in, got)
		}
		if !strings.Contains(got, "%") {
			again, st2 := NormalizePath(got, merge, enc)
			if st2 != 0 || again != got {
				t.Fatalf("%q -> %q -> %q (%d): not idempotent", in, got, again, st2)
			}
		}
	})
}

package walk

import (
	"strings"
	"testing"
)

// FuzzNormalizePath22 checks Apache 2.2's path handling (decode, then
// ap_getparents) as FuzzNormalizePath checks 2.4's: it never panics, it
// answers 0, 400 or 404, and what it accepts is absolute, has no dot
// segment and, decoded once more (when nothing is left to decode),
// normalises to itself.
func FuzzNormalizePath22(f *testing.F) {
	for _, s := range []string{"/a/../b", "//x/./y", "/%2e%2e/", "/a/.%2E/b", "/x%2fy", "/%zz", "/./.././", "/a%00", "/a/b/..", "/a/..", "/.", "/a//../b", "/%252F"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, in string, allow bool) {
		got, st := NormalizePath22(in, allow)
		switch {
		case st == 400 || st == 404:
			return
		case st != 0:
			t.Fatalf("%q: status %d", in, st)
		case got == "*":
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
		if !strings.Contains(got, "%") {
			again, st2 := NormalizePath22(got, allow)
			if st2 != 0 || again != got {
				t.Fatalf("%q -> %q -> %q (%d): not idempotent", in, got, again, st2)
			}
		}
	})
}

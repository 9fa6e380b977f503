package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// AliasMatches is mod_alias's alias_matches (mod_alias.c), byte for byte.
func TestAliasMatches(t *testing.T) {
	tests := []struct {
		uri, alias string
		want       int
	}{
		{"/icons/x", "/icons/", 7},
		{"/icons", "/icons/", 0},
		{"/icons", "/icons", 6},
		{"/icons/x", "/icons", 6},
		{"/iconsx", "/icons", 0},
		{"/ic", "/icons", 0},
		{"/a///b", "//a//", 5},
		{"/a", "//a//", 0},
		{"x/a", "/a", 0},
		{"/x", "/", 1},
		{"//x", "/", 2},
		{"/", "/", 1},
		{"/x", "", 0}, // Alias "" matches nothing (Apache would read before the string)
	}
	for _, tt := range tests {
		if got := AliasMatches(tt.uri, tt.alias); got != tt.want {
			t.Errorf("AliasMatches(%q, %q) = %d, want %d", tt.uri, tt.alias, got, tt.want)
		}
	}
}

// A <Directory> of a <Location>'s own path gives its access rules to every
// URL below it only where that path is an existing directory: for a file
// Apache's walk merges it for the file's own URL alone, for a missing path
// never (corpus 955).
func TestOwnLevelVaries(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file.php"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	access := func(c *DirConf) bool { return c.Compat != nil }
	depth := strings.Count(root+"/*/", "/") // as the builder counts a <Directory>'s
	withAccess := &DirConf{Compat: &policy.Compat{}}
	for _, c := range []struct {
		name  string
		dir   string
		chain []*Section
		want  bool
	}{
		{"a file, a wildcard at its level", root + "/file.php/", []*Section{{Path: root + "/*/", Fnmatch: true, Depth: depth, Conf: withAccess}}, true},
		{"a file, its own section", root + "/file.php/", []*Section{{Path: root + "/file.php/", Depth: depth, Conf: withAccess}}, true},
		{"a missing path", root + "/none/", []*Section{{Path: root + "/*/", Fnmatch: true, Depth: depth, Conf: withAccess}}, true},
		{"a directory", root + "/dir/", []*Section{{Path: root + "/*/", Fnmatch: true, Depth: depth, Conf: withAccess}}, false},
		{"a file, a section above it", root + "/file.php/", []*Section{{Path: root + "/", Depth: depth - 1, Conf: withAccess}}, false},
		{"a file, a section without access rules", root + "/file.php/", []*Section{{Path: root + "/*/", Fnmatch: true, Depth: depth, Conf: &DirConf{}}}, false},
		{"a file, <Directory />", root + "/file.php/", []*Section{{Path: "/", Depth: 0, Conf: withAccess}}, false},
	} {
		if got := ownLevelVaries(c.chain, c.dir, access); got != c.want {
			t.Errorf("%s: ownLevelVaries = %v, want %v", c.name, got, c.want)
		}
	}
}

// dirPath is filepath.Join(root, p) + "/", whatever needs cleaning.
func TestDirPath(t *testing.T) {
	roots := []string{"", "/", "/a", "/a/", "a", "a/b", "/a/../b", "//x", ".", "/a/./b/"}
	paths := []string{"", "/", "/x", "//x", "/x/", "/x/../y", "x", "/./", "/..", "/x//y/", "/~u"}
	for _, r := range roots {
		for _, p := range paths {
			if got, want := dirPath(r, p), filepath.Join(r, p)+"/"; got != want {
				t.Errorf("dirPath(%q, %q) = %q, want %q", r, p, got, want)
			}
		}
	}
}

// cleanAbs holds exactly the absolute paths filepath.Clean leaves as
// they are: every path of up to five bytes of "/", ".", "a", and longer
// ones with those elements.
func TestCleanAbs(t *testing.T) {
	check := func(s string) {
		if got, want := cleanAbs(s), strings.HasPrefix(s, "/") && filepath.Clean(s) == s; got != want {
			t.Errorf("cleanAbs(%q) = %v, want %v", s, got, want)
		}
	}
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		check(prefix)
		if n == 0 {
			return
		}
		for _, c := range []string{"/", ".", "a"} {
			gen(prefix+c, n-1)
		}
	}
	gen("", 5)
	for _, s := range []string{"/tmp/www/vh0/admin", "/tmp/www/vh0/admin/", "/tmp/..a/b", "/tmp/a../b", "/tmp/.a", "/tmp/a./..", "/...", "/a/.../b"} {
		check(s)
	}
}

// prefixOfSlashed is strings.HasPrefix(r+"/", p).
func TestPrefixOfSlashed(t *testing.T) {
	words := []string{"", "/", "/a", "/a/", "/ab", "/a/b", "/a/b/", "/a//", "a", "a/"}
	for _, r := range words {
		for _, p := range words {
			if got, want := prefixOfSlashed(r, p), strings.HasPrefix(r+"/", p); got != want {
				t.Errorf("prefixOfSlashed(%q, %q) = %v, want %v", r, p, got, want)
			}
		}
	}
}

// dirAtDepth is the directory of a path with the number of slashes
// asked, none for 0 or more than the path has.
func TestDirAtDepth(t *testing.T) {
	for _, tc := range []struct {
		path  string
		depth int
		want  string
		ok    bool
	}{
		{"/a/b/c/", 0, "", false}, {"/a/b/c/", 1, "/", true}, {"/a/b/c/", 2, "/a/", true}, {"/a/b/c/", 4, "/a/b/c/", true},
		{"/a/b/c/", 5, "", false}, {"/a/b/c", 4, "", false}, {"a//b/", 2, "a//", true}, {"", 1, "", false}, {"/", -1, "", false},
	} {
		if got, ok := dirAtDepth(tc.path, tc.depth); got != tc.want || ok != tc.ok {
			t.Errorf("dirAtDepth(%q, %d) = %q, %v, want %q, %v", tc.path, tc.depth, got, ok, tc.want, tc.ok)
		}
	}
}

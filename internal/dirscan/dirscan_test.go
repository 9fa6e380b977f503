package dirscan

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// tree makes files (and, for names ending in "/", directories) under a
// new directory and returns it.
func tree(t testing.TB, paths ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range paths {
		full := filepath.Join(root, p)
		if p[len(p)-1] == '/' {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// walk is the reference: filepath.WalkDir in the order Find promises.
func walk(root string, names []string) []string {
	var files, dirs []string
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		switch {
		case e.IsDir():
			dirs = append(dirs, e.Name())
		case slices.Contains(names, e.Name()):
			files = append(files, filepath.Join(root, e.Name()))
		}
	}
	for _, d := range dirs {
		files = append(files, walk(filepath.Join(root, d), names)...)
	}
	return files
}

func TestFind(t *testing.T) {
	root := tree(t,
		".htaccess", "index.html",
		"a/.htaccess", "a/b/c/.htaccess", "a/b/other.txt", "a/.acl",
		"z/y/x/w/v/.htaccess", "empty/", "m/.htaccess/", // a directory named .htaccess is not a file
		"n/.htaccess.bak", "n/x.htaccess",
	)
	// A link to a directory is not followed; a link named .htaccess is a
	// file as far as the search goes (httpd opens it).
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "a/.acl"), filepath.Join(root, "n/.htaccess")); err != nil {
		t.Fatal(err)
	}
	ht := []string{".htaccess"}
	tests := []struct {
		name  string
		roots []Root
	}{
		{"one root", []Root{{root, ht}}},
		{"two names", []Root{{root, []string{".htaccess", ".acl"}}}},
		{"nested roots", []Root{{filepath.Join(root, "a"), ht}, {root, ht}, {filepath.Join(root, "a/b"), ht}}},
		{"same root twice, other names", []Root{{root, ht}, {root, []string{".acl"}}}},
		{"trailing slash and dots", []Root{{root + "/a/../a/", ht}}},
		{"missing root", []Root{{filepath.Join(root, "nope"), ht}, {root, ht}}},
		{"file as root", []Root{{filepath.Join(root, "index.html"), ht}}},
		{"no names", []Root{{root, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Find(tt.roots, 0)
			if got.Truncated {
				t.Error("truncated without a limit")
			}
			for i, r := range tt.roots {
				fi, err := os.Stat(r.Dir)
				if isDir := err == nil && fi.IsDir(); got.Listed[i] != isDir {
					t.Errorf("root %s: listed %v, is a directory %v", r.Dir, got.Listed[i], isDir)
				}
				want := walk(filepath.Clean(r.Dir), r.Names)
				if !slices.Equal(got.Files[i], want) {
					t.Errorf("root %s %v:\n got %q\nwant %q", r.Dir, r.Names, got.Files[i], want)
				}
			}
		})
	}
	if got := Find([]Root{{root, ht}}, 0); len(got.Files[0]) != 5 {
		t.Errorf("found %q, want the 5 .htaccess files", got.Files[0])
	}
}

func TestFindLimit(t *testing.T) {
	var paths []string
	for i := range 50 {
		paths = append(paths, fmt.Sprintf("d%02d/e/.htaccess", i))
	}
	root := tree(t, paths...)
	all := Find([]Root{{root, []string{".htaccess"}}}, 0)
	if all.Dirs != 101 || all.Truncated || len(all.Files[0]) != 50 {
		t.Fatalf("no limit: %d dirs, truncated %v, %d files; want 101, false, 50", all.Dirs, all.Truncated, len(all.Files[0]))
	}
	some := Find([]Root{{root, []string{".htaccess"}}}, 10)
	if some.Dirs != 10 || !some.Truncated || len(some.Files[0]) >= 10 {
		t.Errorf("limit 10: %d dirs, truncated %v, %d files", some.Dirs, some.Truncated, len(some.Files[0]))
	}
}

// TestFindWide lists a directory of many subdirectories, more than fit in
// one getdents buffer, with many roots at once.
func TestFindWide(t *testing.T) {
	var paths []string
	var roots []Root
	for i := range 600 {
		paths = append(paths, fmt.Sprintf("a-rather-long-directory-name-%04d/.htaccess", i))
	}
	root := tree(t, paths...)
	for i := range 600 {
		roots = append(roots, Root{fmt.Sprintf("%s/a-rather-long-directory-name-%04d", root, i), []string{".htaccess"}})
	}
	roots = append(roots, Root{root, []string{".htaccess"}})
	got := Find(roots, 0)
	if len(got.Files[600]) != 600 || got.Dirs != 601 {
		t.Fatalf("found %d files in %d directories, want 600 in 601", len(got.Files[600]), got.Dirs)
	}
	for i := range 600 {
		if want := []string{paths[i]}; len(got.Files[i]) != 1 || got.Files[i][0] != filepath.Join(root, want[0]) {
			t.Fatalf("root %d: %q", i, got.Files[i])
		}
	}
}

// BenchmarkFindRoots searches 1,000 document roots, each a directory with
// no subdirectory and no .htaccess file, as make bench-translate's
// configuration has.
func BenchmarkFindRoots(b *testing.B) {
	var paths []string
	for i := range 1000 {
		paths = append(paths, fmt.Sprintf("www/vh%d/index.html", i))
	}
	root := tree(b, paths...)
	var roots []Root
	for i := range 1000 {
		roots = append(roots, Root{fmt.Sprintf("%s/www/vh%d", root, i), []string{".htaccess"}})
	}
	for b.Loop() {
		if got := Find(roots, 0); got.Dirs != 1000 {
			b.Fatalf("%d directories listed", got.Dirs)
		}
	}
}

// TestCache: searches through one Cache find what searches without it
// find, run at the same time or one after the other, and a directory is
// listed once for all of them: a file made after the first search is
// not seen by a later one through the same cache, but is without it.
func TestCache(t *testing.T) {
	root := tree(t,
		".htaccess", "a/.htaccess", "a/b/c/.htaccess", "a/b/other.txt",
		"v1/", "v2/.htaccess", "v3/sub/.htaccess", "w/.acl",
	)
	roots := []Root{
		{Dir: root, Names: []string{".htaccess"}},
		{Dir: filepath.Join(root, "a"), Names: []string{".htaccess"}},
		{Dir: filepath.Join(root, "v3"), Names: []string{".htaccess"}},
		{Dir: filepath.Join(root, "missing"), Names: []string{".htaccess"}},
	}
	want := Find(roots, 0)
	c := new(Cache)
	got := make([]Result, 4)
	done := make(chan int)
	for i := range got {
		go func() {
			got[i] = c.Find(roots, 0)
			done <- i
		}()
	}
	for range got {
		<-done
	}
	for i, g := range got {
		if !slices.EqualFunc(g.Files, want.Files, slices.Equal) || !slices.Equal(g.Listed, want.Listed) || g.Dirs != want.Dirs {
			t.Errorf("search %d through the cache: %+v, want %+v", i, g, want)
		}
	}
	// Other names are another listing: w/.acl is found.
	acl := c.Find([]Root{{Dir: root, Names: []string{".acl"}}}, 0)
	if len(acl.Files) != 1 || !slices.Equal(acl.Files[0], []string{filepath.Join(root, "w", ".acl")}) {
		t.Errorf("a search for .acl through the cache found %v", acl.Files)
	}
	if err := os.WriteFile(filepath.Join(root, "v1", ".htaccess"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if again := c.Find(roots, 0); !slices.EqualFunc(again.Files, want.Files, slices.Equal) {
		t.Errorf("the cache listed a directory again: %v, want %v", again.Files, want.Files)
	}
	fresh := Find(roots, 0)
	if !slices.Contains(fresh.Files[0], filepath.Join(root, "v1", ".htaccess")) {
		t.Errorf("Find without the cache missed the new file: %v", fresh.Files[0])
	}
	// The limit counts the directories a search reaches, listed by it or
	// taken from the cache, as without one.
	if lim, ref := c.Find(roots, 3), Find(roots[:3], 3); lim.Truncated != ref.Truncated || lim.Dirs != 3 {
		t.Errorf("limit 3 through the cache: truncated %v after %d directories, without: truncated %v", lim.Truncated, lim.Dirs, ref.Truncated)
	}
}

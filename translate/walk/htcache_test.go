package walk

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Apache reads .htaccess files on every request; orderly keeps a parsed
// file while its modification time, size and inode stay the same, and
// only once it is older than the clock's resolution allows to trust. Any
// change of the three, and any rewrite of a recent file, is seen on the
// next request.
func TestHtaccessChanges(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@/d>\nAllowOverride All\n</Directory>\n", "d/index.html")
	ht := filepath.Join(root, "d", ".htaccess")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	recent := time.Now()
	steps := []struct {
		what, content string
		mtime         time.Time
		rename        bool
		want          int
	}{
		{"an old file", "Require all denied\n", old, false, 403},
		{"again, unchanged", "Require all denied\n", old, false, 403},
		{"another mtime, same size", "Require ip 8.8.8.8\n", old.Add(time.Second), false, 0},
		{"another size, same mtime", "Require ip 8.8.8.88\n", old.Add(time.Second), false, 403},
		{"another inode, same size and mtime", "Require ip 8.8.8.8 \n", old.Add(time.Second), true, 0},
		{"a recent file", "Require all denied \n", recent, false, 403},
		{"a recent file rewritten, same size and mtime", "Require all granted\n", recent, false, 0},
	}
	for _, s := range steps {
		p := ht
		if s.rename {
			p = ht + ".new"
		}
		if err := os.WriteFile(p, []byte(s.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, s.mtime, s.mtime); err != nil {
			t.Fatal(err)
		}
		if s.rename {
			if err := os.Rename(p, ht); err != nil {
				t.Fatal(err)
			}
		}
		if res := decide(e, req{target: "/d/index.html", ip: "8.8.8.8"}); res.Status != s.want {
			t.Errorf("%s (%q): %d, want %d", s.what, s.content, res.Status, s.want)
		}
	}
}

// AllowOverrideList (2.4.13): with AllowOverride None, the directives it
// lists are allowed in .htaccess files and every other is a 500 (the
// example of its documentation); a deeper <Directory> that sets it again
// replaces the list.
func TestAllowOverrideList(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@/d>\nAllowOverride None\nAllowOverrideList Redirect RedirectMatch\n</Directory>\n"+
		"<Directory @DOCROOT@/d/deny>\nAllowOverrideList Require\n</Directory>\n",
		"d/index.html", "d/ok/index.html", "d/bad/index.html", "d/deny/index.html")
	for f, text := range map[string]string{
		"d/ok/.htaccess":   "Redirect /d/ok/x http://example.com/x\n",
		"d/bad/.htaccess":  "Require all denied\n",
		"d/deny/.htaccess": "Require all denied\n",
	} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for target, want := range map[string]int{"/d/ok/x": 302, "/d/ok/index.html": 0, "/d/bad/index.html": 500, "/d/deny/index.html": 403} {
		if res := decide(e, req{target: target, ip: "8.8.8.8"}); res.Status != want {
			t.Errorf("%s: %d, want %d", target, res.Status, want)
		}
	}
}

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

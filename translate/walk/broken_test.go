package walk

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// The rule of a broken .htaccess file names it relative to the
// configuration's base directory (so that its ID survives a move of the
// whole tree), by its path where it lies outside or there is no base; its
// line and message are those of the first error Apache meets, and a
// single error that is not a list is read the same way.
func TestBrokenFileName(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n", "a/index.html")
	if err := os.WriteFile(filepath.Join(root, "a", ".htaccess"), []byte("Dney from all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := decide(e, req{target: "/a/index.html", ip: "8.8.8.8"}); res.Rule == nil || res.Rule.File != "docroot/a/.htaccess" {
		t.Errorf("rule %+v, want one for docroot/a/.htaccess", res.Rule)
	}
	one := &apacheconf.Error{Pos: apacheconf.Pos{File: "/x/.htaccess", Line: 3}, Msg: "bad"}
	for _, tt := range []struct {
		path, base string
		err        error
		file       string
		line       int
		text       string
	}{
		{"/elsewhere/.htaccess", "/base", os.ErrNotExist, "/elsewhere/.htaccess", 0, "(does not load) file does not exist"},
		{"/base/d/.htaccess", "/base", os.ErrNotExist, "d/.htaccess", 0, "(does not load) file does not exist"},
		{"/base/d/.htaccess", "", os.ErrNotExist, "/base/d/.htaccess", 0, "(does not load) file does not exist"},
		{"/x/.htaccess", "", fmt.Errorf("reading: %w", one), "/x/.htaccess", 3, "(does not load) bad"},
	} {
		b := newBrokenFile(tt.path, tt.err, tt.base)
		if b.rule.File != tt.file || b.rule.Line != tt.line || b.rule.Text != tt.text || b.alert != tt.path+": "+tt.err.Error() && tt.line == 0 {
			t.Errorf("newBrokenFile(%q, %v, %q) = %+v, alert %q", tt.path, tt.err, tt.base, b.rule, b.alert)
		}
	}
}

// The rule of a broken .htaccess file keeps its counters across edits
// that leave the file broken (the proxy counts the 500s under it).
func TestBrokenFileCountsAcrossEdits(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n", "a/index.html")
	p := filepath.Join(root, "a", ".htaccess")
	for i, text := range []string{"Dney from all\n", "Order deny,allow\nDney from all\n", "Alow from all\n"} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Duration(10-i) * time.Minute)
		os.Chtimes(p, old, old)
		res := decide(e, req{target: "/a/index.html", ip: "8.8.8.8"})
		if res.Status != 500 || res.Rule == nil {
			t.Fatalf("edit %d: %d by %v", i, res.Status, res.Rule)
		}
		if m, _, _ := res.Rule.Stats(); m != uint64(i) {
			t.Errorf("edit %d: the broken file's rule has %d matches, want the %d before the edit", i, m, i)
		}
		res.Rule.Hit(0)
	}
}

// An empty error list (no position to name) still makes a rule for the
// file, at line 0, with Apache's alert line.
func TestBrokenFileEmptyList(t *testing.T) {
	err := apacheconf.ErrorList{}
	b := newBrokenFile("/x/.htaccess", err, "")
	if b.rule.File != "/x/.htaccess" || b.rule.Line != 0 || b.rule.Text != "(does not load) "+err.Error() || b.alert != "/x/.htaccess: "+err.Error() {
		t.Errorf("newBrokenFile with an empty list: %+v, alert %q", b.rule, b.alert)
	}
}

package walk

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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

package walk

import (
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// Roots are the document roots and the Alias targets (not a regex
// alias's with a back-reference), each once, sorted.
func TestRoots(t *testing.T) {
	root := tree(t, "index.html", "pics/", "other/")
	conf := "Alias /p @DOCROOT@/pics/\nAlias /q @DOCROOT@/pics\nAliasMatch ^/y(.*) /nonexistent/z$1\nAliasMatch ^/w /nonexistent/w\n" +
		"<VirtualHost *:80>\nServerName v.test\nDocumentRoot @DOCROOT@/other\n</VirtualHost>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	want := []string{"/nonexistent/w", root, root + "/other", root + "/pics"}
	if got := e.Roots(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Roots() = %q, want %q", got, want)
	}
}

// checkTree makes a document root with access files (those of more, and
// the entries of extra besides) and an engine that allows every override
// but below n/.
func checkTree(t *testing.T, more map[string]string, extra ...string) (string, *Engine) {
	root := tree(t, append([]string{"index.html", "a/", "b/", "c/d/", "n/", "zz/"}, extra...)...)
	files := map[string]string{
		"a/.htaccess":   "Frobnicate on\n",
		"b/.htaccess":   "Require all denied\n",
		"c/d/.htaccess": "Require all denied\nBogus directive\n",
		"n/.htaccess":   "Frobnicate on\n", // not read: AllowOverride None
		"c/htaccess":    "Frobnicate on\n", // not an access file
	}
	maps.Copy(files, more)
	for f, text := range files {
		if err := os.WriteFile(filepath.Join(root, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, optEngine(t, translate.Compat24, root, "<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n<Directory @DOCROOT@/n>\nAllowOverride None\n</Directory>\n", nil)
}

// CheckHtaccess reads every access file below the roots, as the walk to
// its directory would with the AllowOverride in force there, and reports
// the errors Apache would answer 500 for; it does not follow symbolic
// links to directories, visits a directory once, and stops after limit
// directories.
func TestCheckHtaccess(t *testing.T) {
	root, e := checkTree(t, nil, "link -> @DOCROOT@/a")
	files := func(errs []string) string { return strings.Join(errs, " ") }
	for _, tt := range []struct {
		roots     []string
		limit     int
		want      string
		truncated bool
	}{
		{[]string{root}, 0, "a/.htaccess:1 c/d/.htaccess:2", false},
		{[]string{root, root, root + "/a"}, 0, "a/.htaccess:1 c/d/.htaccess:2", false},
		{[]string{root}, 7, "a/.htaccess:1 c/d/.htaccess:2", false}, // docroot, a, b, c, c/d, n, zz (empty)
		{[]string{root}, 6, "a/.htaccess:1 c/d/.htaccess:2", true},
		{[]string{root}, 5, "a/.htaccess:1 c/d/.htaccess:2", true},
		{[]string{root}, 2, "a/.htaccess:1", true},
	} {
		errs, truncated := e.CheckHtaccess(tt.roots, tt.limit)
		var got []string
		for _, x := range errs {
			rel, _ := filepath.Rel(root, x.Pos.File)
			got = append(got, rel+":"+strconv.Itoa(x.Pos.Line))
		}
		if files(got) != tt.want || truncated != tt.truncated {
			t.Errorf("CheckHtaccess(%d roots, limit %d) = %q, %v; want %q, %v", len(tt.roots), tt.limit, got, truncated, tt.want, tt.truncated)
		}
	}
}

// CheckHtaccessFound reads the access files a search found as
// CheckHtaccess reads those it finds: only those below the roots, each
// directory once, files of other names left out.
func TestCheckHtaccessFound(t *testing.T) {
	root, e := checkTree(t, map[string]string{"zz/.htaccess": "Bogus\n"})
	all := []string{root + "/a/.htaccess", root + "/a/.htaccess", root + "/b/.htaccess", root + "/c/d/.htaccess", root + "/c/htaccess", root + "/n/.htaccess", root + "/zz/.htaccess"}
	for _, tt := range []struct {
		roots []string
		want  string
	}{
		{[]string{root}, "a/.htaccess:1 c/d/.htaccess:2 zz/.htaccess:1"},
		{[]string{root + "/c"}, "c/d/.htaccess:2"},
		{[]string{root + "/a", root + "/z"}, "a/.htaccess:1"},
		{[]string{root + "/c/d/"}, "c/d/.htaccess:2"},
		{nil, ""},
	} {
		var got []string
		for _, x := range e.CheckHtaccessFound(tt.roots, all) {
			rel, _ := filepath.Rel(root, x.Pos.File)
			got = append(got, rel+":"+strconv.Itoa(x.Pos.Line))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("CheckHtaccessFound(%q) = %q, want %q", tt.roots, got, tt.want)
		}
		if tt.roots != nil && tt.roots[0] == root {
			errs, _ := e.CheckHtaccess(tt.roots, 0)
			if len(errs) != len(got) {
				t.Errorf("CheckHtaccess finds %d errors, CheckHtaccessFound %d", len(errs), len(got))
			}
		}
	}
}

// A PathMap reads the paths the configuration names under the longest
// matching prefix's replacement, on a segment boundary: the engine then
// applies the legacy <Directory> paths to the tree where it really is.
func TestPathMap(t *testing.T) {
	m := NewPathMap(OS, map[string]string{"/srv/www/": "/mnt/a", "/srv/www/sub": "/mnt/b/", "/srv": "/x"})
	for in, want := range map[string]string{
		"/srv/www/index.html": "/mnt/a/index.html",
		"/srv/www/sub/x":      "/mnt/b/x",
		"/srv/www/subx":       "/mnt/a/subx",
		"/srv/www":            "/mnt/a",
		"/srv/wwwx":           "/x/wwwx",
		"/srv":                "/x",
		"/srvx":               "/srvx",
		"/other":              "/other",
	} {
		if got := m.Map(in); got != want {
			t.Errorf("Map(%q) = %q, want %q", in, got, want)
		}
	}
	root := tree(t, "index.html", "private/x.html", "a/")
	if err := os.WriteFile(filepath.Join(root, "a", ".htaccess"), []byte("Frobnicate on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const legacy = "/legacy/docroot"
	cf := filepath.Join(filepath.Dir(root), "legacy.conf")
	conf := "<Directory " + legacy + "/private>\nRequire all denied\n</Directory>\n<Directory " + legacy + ">\nAllowOverride All\n</Directory>\n"
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: legacy}})
	if err != nil {
		t.Fatal(err)
	}
	e := New(cfg, NewPathMap(OS, map[string]string{legacy: root}), users{})
	for target, want := range map[string]int{"/index.html": 0, "/private/x.html": 403, "/a/": 500} {
		if res := decide(e, req{target: target, ip: "8.8.8.8"}); res.Status != want {
			t.Errorf("%s: %d, want %d", target, res.Status, want)
		}
	}
	if errs, _ := e.CheckHtaccess(e.Roots(), 0); len(errs) != 1 || errs[0].Pos.File != legacy+"/a/.htaccess" {
		t.Errorf("CheckHtaccess through the map: %v", errs)
	}
}

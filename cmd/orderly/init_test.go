package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/golden"
)

// copyTree copies the test tree src to a fresh directory with @ROOT@
// replaced by it (and the other placeholders by repl), links kept as
// links, leaving out the case's args and want files; it returns the
// directory.
func copyTree(t *testing.T, src string, repl ...string) string {
	t.Helper()
	root := t.TempDir()
	r := strings.NewReplacer(append([]string{"@ROOT@", root}, repl...)...)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		switch {
		case rel == ".":
			return nil
		case rel == "args" || rel == "want" || rel == "requests" || rel == "requests-tls":
			return nil
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(r.Replace(string(b))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestInitGolden runs orderly init on each tree of testdata/init (its
// args file holds the arguments, @ROOT@ for the copy's directory) and
// compares the output, standard error and exit status with the case's
// want file. Run with -update to rewrite them, review the diff, and write
// the new hash with why in testdata/init/REVIEWED.
func TestInitGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/init/*/args")
	if len(cases) == 0 {
		t.Fatal("no init cases")
	}
	reviewed := golden.Load(t, "testdata/init")
	defer reviewed.Finish(t)
	// The goldens list the ${APACHE_*} variables as unset.
	for _, v := range os.Environ() {
		if name, _, _ := strings.Cut(v, "="); strings.HasPrefix(name, "APACHE_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	for _, c := range cases {
		dir := filepath.Dir(c)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			root := copyTree(t, dir)
			args, err := os.ReadFile(c)
			if err != nil {
				t.Fatal(err)
			}
			argv := strings.Fields(strings.ReplaceAll(string(args), "@ROOT@", root))
			var out, errb bytes.Buffer
			code := run(append([]string{"init"}, argv...), &out, &errb)
			got := "$ orderly init " + strings.TrimSpace(string(args)) + "\n" + out.String() +
				"-- stderr --\n" + errb.String() + "-- exit " + strconv.Itoa(code) + " --\n"
			got = strings.ReplaceAll(got, root, "@ROOT@")
			wantFile := filepath.Join(dir, "want")
			want, _ := os.ReadFile(wantFile)
			if reviewed.Check(t, name, []byte(got), want, *update) {
				os.WriteFile(wantFile, []byte(got), 0o644)
			}
		})
	}
}

// checkLines runs orderly check on the configuration: exit status and
// the refusals it reports, one a line.
func checkLines(t *testing.T, config string) (int, []string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run([]string{"check", "-config", config}, &out, &errb)
	var lines []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "orderly check: ") {
			lines = append(lines, l)
		}
	}
	return code, lines, out.String() + errb.String()
}

// initRefusalLines are the refusals listed at the end of a written file.
func initRefusalLines(text string) []string {
	_, list, ok := strings.Cut(text, "\n# What serve refuses, and why (")
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(list, "\n") {
		if r, ok := strings.CutPrefix(l, "#   "); ok {
			out = append(out, r)
		}
	}
	return out
}

// init, then check, then serve: the file init writes loads, and check
// refuses exactly what init listed (nothing, for a tree serve takes). The
// upgrade fixtures of testdata/upgrade, whole 2.2 configurations, are
// read too.
func TestInitThenCheck(t *testing.T) {
	tests := []struct {
		name, src string
		args      []string // before the path; @ROOT@ for the copy
		path      string   // below the copy
		clean     bool     // serve would start
	}{
		{"debian", "testdata/init/debian", []string{"-document-root", "@ROOT@/var/www"}, "etc/apache2", true},
		{"rhel", "testdata/init/rhel", nil, "etc/httpd", true},
		{"rhel main file", "testdata/init/rhel", nil, "etc/httpd/conf/httpd.conf", true},
		{"single", "testdata/init/single", nil, "site.conf", true},
		{"refused", "testdata/init/refused", nil, "", false},
		{"refused-load", "testdata/init/refused-load", nil, "httpd.conf", false},
		{"refused-address", "testdata/init/refused-address", nil, "httpd.conf", false},
		{"upgrade debian-split", "../../testdata/upgrade/debian-split", []string{"-document-root", "@ROOT@/var/www"}, "etc/apache2", false},
		{"upgrade stock22", "../../testdata/upgrade/stock22", nil, "httpd.conf", false},
	}
	ports := []string{"@PORT@", "8080", "@SSLPORT@", "8443", "@APPPORT1@", "8081", "@APPPORT2@", "8082"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyTree(t, tt.src, ports...)
			os.MkdirAll(filepath.Join(root, "var/www"), 0o755)
			hcl := filepath.Join(t.TempDir(), "orderly.hcl")
			var args []string
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "@ROOT@", root))
			}
			var out, errb bytes.Buffer
			code := run(append(append([]string{"init", "-o", hcl}, args...), filepath.Join(root, tt.path)), &out, &errb)
			if code != 0 {
				t.Fatalf("init: exit %d\n%s", code, errb.String())
			}
			text, err := os.ReadFile(hcl)
			if err != nil {
				t.Fatal(err)
			}
			listed := initRefusalLines(string(text))
			code, refused, all := checkLines(t, hcl)
			if tt.clean {
				if code != 0 || len(listed) != 0 {
					t.Fatalf("check: exit %d, init listed %q\n%s\n%s", code, listed, all, text)
				}
				return
			}
			if code != 2 || len(listed) == 0 {
				t.Fatalf("check: exit %d, init listed %d refusals\n%s", code, len(listed), all)
			}
			if !slices.Equal(listed, refused) {
				t.Errorf("init lists\n%s\ncheck reports\n%s", strings.Join(listed, "\n"), strings.Join(refused, "\n"))
			}
			if !strings.Contains(errb.String(), strconv.Itoa(len(listed))+" thing(s)") {
				t.Errorf("init's summary does not count the refusals:\n%s", errb.String())
			}
		})
	}
}

// init never overwrites a file unless told to, and writes nothing for a
// tree it cannot read.
func TestInitWrites(t *testing.T) {
	root := copyTree(t, "testdata/init/single")
	conf := filepath.Join(root, "site.conf")
	dir := t.TempDir()
	hcl := filepath.Join(dir, "orderly.hcl")
	os.WriteFile(hcl, []byte("keep\n"), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"init", "-o", hcl, conf}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-force") {
		t.Errorf("existing file: exit %d\n%s", code, errb.String())
	}
	if b, _ := os.ReadFile(hcl); string(b) != "keep\n" {
		t.Errorf("existing file changed without -force: %q", b)
	}
	errb.Reset()
	if code := run([]string{"init", "-force", "-o", hcl, conf}, &out, &errb); code != 0 {
		t.Errorf("-force: exit %d\n%s", code, errb.String())
	}
	if b, _ := os.ReadFile(hcl); !bytes.Contains(b, []byte(`mode       = "shadow"`)) {
		t.Errorf("-force did not write the file:\n%s", b)
	}
	if out.Len() != 0 {
		t.Errorf("-o FILE printed to standard output:\n%s", out.String())
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{filepath.Join(root, "nope")}, "nope: no such file or directory"},
		{"no main file", []string{dir}, "no apache2.conf, conf/httpd.conf or httpd.conf in the directory"},
		{"unparsable", []string{writeFiles(t, map[string]string{"httpd.conf": "<Directory /x>\n"}) + "/httpd.conf"}, "httpd.conf:1: <Directory> was not closed."},
		{"bad backend", []string{"-backend", "ftp://x", conf}, `Invalid backend URL: "ftp://x"`},
		{"bad listen", []string{"-listen", "80", conf}, "Invalid listen address"},
		{"bad semantics", []string{"-semantics", "2.3", conf}, "-semantics"},
		{"bad path map", []string{"-path-map", "www=/x", conf}, "-path-map"},
		{"two paths", []string{conf, conf}, "want one PATH"},
	} {
		out := filepath.Join(t.TempDir(), "orderly.hcl")
		var stdout, errb bytes.Buffer
		code := run(append([]string{"init", "-o", out}, tt.args...), &stdout, &errb)
		if code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", tt.name, code, tt.want, errb.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a file was written", tt.name)
		}
	}
}

// The written file documents itself: each attribute init sets is one the
// configuration reference knows, and the file parses with its comments.
func TestInitStdout(t *testing.T) {
	root := copyTree(t, "testdata/init/rhel")
	var out, errb bytes.Buffer
	if code := run([]string{"init", "-o", "-", filepath.Join(root, "etc/httpd")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	for _, want := range []string{
		`files = ["` + root + `/etc/httpd/conf/httpd.conf"]`,
		`server_root = "` + root + `/etc/httpd"`, // the layout's, the file sets none
		`document_root = "` + root + `/var/www/html"`,
		"WARNING: trusted proxies are left for you",
		"# path_map = {",
		"authz_host_module",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if regexp.MustCompile(`(?m)^\s*trusted_proxies = \[[^\]]`).MatchString(out.String()) {
		t.Errorf("init trusts proxies of its own:\n%s", out.String())
	}
}

// The address init suggests for an IP-based virtual host is the one that
// lets serve start.
func TestInitAddress(t *testing.T) {
	root := copyTree(t, "testdata/init/refused-address")
	hcl := filepath.Join(t.TempDir(), "orderly.hcl")
	var out, errb bytes.Buffer
	if code := run([]string{"init", "-o", hcl, filepath.Join(root, "httpd.conf")}, &out, &errb); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, errb.String())
	}
	text, _ := os.ReadFile(hcl)
	fixed := strings.Replace(string(text), "  # address = ", "  address = ", 1)
	if fixed == string(text) {
		t.Fatalf("init suggests no address:\n%s", text)
	}
	os.WriteFile(hcl, []byte(fixed), 0o644)
	if code, refused, all := checkLines(t, hcl); code != 0 {
		t.Errorf("check with the address init suggests: exit %d, %q\n%s", code, refused, all)
	}
}

// TestInitDocExample runs the example of docs/init.md, init then check,
// on its files and compares what they write with the document.
func TestInitDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/init.md")
	if err != nil {
		t.Fatal(err)
	}
	files := regexp.MustCompile("`(/etc/[^`]+)`:\n\n```apache\n(?s:(.*?))```").FindAllSubmatch(doc, -1)
	initRun := regexp.MustCompile("```text\n\\$ orderly init ([^\n]*)\n(?s:(.*?))```").FindSubmatch(doc)
	hcl := regexp.MustCompile("```hcl\n(?s:(.*?))```").FindSubmatch(doc)
	checkRun := regexp.MustCompile("```text\n\\$ orderly check ([^\n]*)\n(?s:(.*?))```").FindSubmatch(doc)
	if len(files) < 2 || initRun == nil || hcl == nil || checkRun == nil {
		t.Fatalf("docs/init.md: want the tree's files, an init run, the hcl it writes and a check run; found %d files", len(files))
	}
	root := t.TempDir()
	paths := strings.NewReplacer("/etc/httpd", root+"/etc/httpd", "/var/www", root+"/var/www")
	for _, f := range files {
		p := root + string(f[1])
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(paths.Replace(string(f[2]))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "var/www/html"), 0o755)
	os.WriteFile(filepath.Join(root, "var/www/html/index.html"), []byte("hello\n"), 0o644)
	work := filepath.Join(root, "work")
	os.Mkdir(work, 0o755)
	t.Chdir(work)
	strip := func(s string) string { return strings.ReplaceAll(s, root, "") }

	var out, errb bytes.Buffer
	code := run(append([]string{"init"}, strings.Fields(paths.Replace(string(initRun[1])))...), &out, &errb)
	if code != 0 || strip(out.String()+errb.String()) != string(initRun[2]) {
		t.Errorf("orderly init %s: exit %d; the document says\n%s\norderly says\n%s", initRun[1], code, initRun[2], strip(out.String()+errb.String()))
	}
	written, err := os.ReadFile("orderly.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if strip(string(written)) != string(hcl[1]) {
		t.Errorf("orderly.hcl: %s", golden.Diff(hcl[1], []byte(strip(string(written)))))
	}
	out.Reset()
	errb.Reset()
	code = run(append([]string{"check"}, strings.Fields(string(checkRun[1]))...), &out, &errb)
	if code != 0 || out.String()+errb.String() != string(checkRun[2]) {
		t.Errorf("orderly check %s: exit %d; the document says\n%s\norderly says\n%s", checkRun[1], code, checkRun[2], out.String()+errb.String())
	}
}

// A tree written for 2.4, read as 2.2 (the default): init says so, and
// with -semantics 2.4-compat the file it writes passes check.
func TestInitSemanticsHint(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"httpd.conf":     "DocumentRoot @DIR@/www\n<Directory @DIR@/www>\n    Require all granted\n</Directory>\n",
		"www/index.html": "x\n",
	})
	var out, errb bytes.Buffer
	if code := run([]string{"init", filepath.Join(dir, "httpd.conf")}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "-semantics 2.4-compat") ||
		!strings.Contains(out.String(), "run init again with -semantics 2.4-compat") {
		t.Errorf("exit %d, no hint:\n%s\n%s", code, out.String(), errb.String())
	}
	hcl := filepath.Join(t.TempDir(), "orderly.hcl")
	if code := run([]string{"init", "-semantics", "2.4-compat", "-o", hcl, filepath.Join(dir, "httpd.conf")}, &out, &errb); code != 0 {
		t.Fatalf("-semantics 2.4-compat: exit %d\n%s", code, errb.String())
	}
	if code, refused, all := checkLines(t, hcl); code != 0 {
		t.Errorf("check: exit %d, %q\n%s", code, refused, all)
	}
}

// A document root orderly cannot read where the configuration names it:
// init warns and lists serve's refusal; with -path-map it writes path_map
// and the file passes check.
func TestInitPathMap(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"httpd.conf":          "DocumentRoot /nonexistent/orderly-init/www\n<Directory /nonexistent/orderly-init/www>\n    Order allow,deny\n    Allow from all\n</Directory>\n",
		"copy/www/index.html": "x\n",
	})
	conf := filepath.Join(dir, "httpd.conf")
	var out, errb bytes.Buffer
	if code := run([]string{"init", conf}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "WARNING: /nonexistent/orderly-init/www is not a directory here") ||
		!strings.Contains(errb.String(), "document root /nonexistent/orderly-init/www: stat") {
		t.Errorf("exit %d:\n%s\n%s", code, out.String(), errb.String())
	}
	hcl := filepath.Join(t.TempDir(), "orderly.hcl")
	errb.Reset()
	if code := run([]string{"init", "-path-map", "/nonexistent/orderly-init=" + filepath.Join(dir, "copy"), "-o", hcl, conf}, &out, &errb); code != 0 {
		t.Fatalf("-path-map: exit %d\n%s", code, errb.String())
	}
	text, _ := os.ReadFile(hcl)
	if !strings.Contains(string(text), "  path_map = {\n    \"/nonexistent/orderly-init\" = ") || strings.Contains(string(text), "WARNING: /nonexistent") {
		t.Errorf("-path-map: no path_map, or a warning still:\n%s", text)
	}
	if code, refused, all := checkLines(t, hcl); code != 0 {
		t.Errorf("check: exit %d, %q\n%s", code, refused, all)
	}
}

package apacheconf

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	ds, err := Load("testdata/load/httpd.conf", Options{
		Defines: map[string]bool{"SSL": true},
		Modules: map[string]bool{"headers_module": true},
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	const want = `testdata/load/httpd.conf:2 LoadModule "rewrite_module" "modules/mod_rewrite.so"
testdata/load/conf.d/a.conf:1 FromA "1" <- testdata/load/httpd.conf:3
testdata/load/conf.d/b.conf:2 FromB "1" <- testdata/load/httpd.conf:3
testdata/load/inner/x.conf:1 Inner "x y" <- testdata/load/httpd.conf:3 <- testdata/load/conf.d/b.conf:3
testdata/load/conf.d/b.conf:4 FromB "2" <- testdata/load/httpd.conf:3
testdata/load/httpd.conf:9 RewriteBySource "on"
testdata/load/httpd.conf:12 RewriteById "on"
testdata/load/httpd.conf:18 HeadersFromOptions
testdata/load/httpd.conf:24 BuiltIn
testdata/load/httpd.conf:27 NoNothing
testdata/load/httpd.conf:35 LoadModule "status_module" "/usr/lib/apache2/modules/mod_status.so"
testdata/load/httpd.conf:37 StatusLoaded
testdata/load/httpd.conf:41 SSLOn
testdata/load/httpd.conf:48 NestedDefine
testdata/load/httpd.conf:54 Define "LOCAL"
testdata/load/httpd.conf:56 DefinedHere
testdata/load/httpd.conf:59 <VirtualHost "*:80"
  testdata/load/httpd.conf:60 ServerName "example.org"
  testdata/load/vhost.d/.dot:1 VhostDot <- testdata/load/httpd.conf:61
  testdata/load/vhost.d/10-first.conf:1 Vhost10 <- testdata/load/httpd.conf:61
  testdata/load/vhost.d/20-sub/z.conf:1 Vhost20Sub <- testdata/load/httpd.conf:61
  testdata/load/httpd.conf:62 <Directory "/var/www"
    testdata/load/httpd.conf:64 RewriteInDirectory "on"
testdata/load/mods/a/x.conf:1 ModA <- testdata/load/httpd.conf:68
testdata/load/mods/a.b/x.conf:1 ModAB <- testdata/load/httpd.conf:68
testdata/load/mods/b/x.conf:1 ModB <- testdata/load/httpd.conf:68
testdata/load/httpd.conf:69 Last
`
	if got := dump(ds); got != want {
		t.Errorf("Load:\n%s\nwant:\n%s", got, want)
	}
	Walk(ds, func(d *Directive, _ []*Directive) error {
		for _, name := range []string{"Include", "IncludeOptional", "IfModule", "IfDefine"} {
			if d.Is(name) {
				t.Errorf("%s: %s left in the tree", d.Pos, d.Name)
			}
		}
		return nil
	})
	checkRoundTrip(t, ds)
}

func TestLoadServerRoot(t *testing.T) {
	ds, err := Load("testdata/load/serverroot.conf", Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	const want = `testdata/load/serverroot.conf:1 ServerRoot "sub"
testdata/load/sub/inc.conf:1 FromSub <- testdata/load/serverroot.conf:2
testdata/load/serverroot.conf:3 <VirtualHost "*"
  testdata/load/serverroot.conf:4 ServerRoot "/ignored/in/a/section"
testdata/load/sub/inc.conf:1 FromSub <- testdata/load/serverroot.conf:6
`
	if got := dump(ds); got != want {
		t.Errorf("Load:\n%s\nwant:\n%s", got, want)
	}

	// Options.ServerRoot: the includes of cycle/a.conf are relative to
	// testdata/load, not to testdata/load/cycle.
	_, err = Load("testdata/load/cycle/a.conf", Options{ServerRoot: "testdata/load"})
	if got, want := errString(err), "testdata/load/cycle/b.conf:2: Include cycle: testdata/load/cycle/a.conf -> testdata/load/cycle/b.conf -> testdata/load/cycle/a.conf (included from testdata/load/cycle/a.conf:2)"; got != want {
		t.Errorf("Load cycle: error\n%s\nwant\n%s", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	ds, err := Load("testdata/load/errors.conf", Options{})
	const want = `testdata/load/broken/syntax.conf:2: <Directory> was not closed. (included from testdata/load/errors.conf:10)
testdata/load/errors.conf:1: Include/IncludeOptional: Could not open directory testdata/load/nodir: No such file or directory
testdata/load/errors.conf:2: Include/IncludeOptional: No matches for the wildcard '*.none' in 'testdata/load/conf.d', failing
testdata/load/errors.conf:3: Could not open configuration file testdata/load/missing.conf: No such file or directory
testdata/load/errors.conf:4: Include takes one argument, Name(s) of the config file(s) to be included; fails if the wildcard does not match at least one file
testdata/load/errors.conf:5: Include takes one argument, Name(s) of the config file(s) to be included; fails if the wildcard does not match at least one file
testdata/load/errors.conf:6: <IfModule> directive requires additional arguments
testdata/load/errors.conf:8: <IfDefine> directive requires additional arguments
testdata/load/errors.conf:11: LoadModule takes two arguments, a module name and the name of a shared object file to load it from
testdata/load/errors.conf:12: Invalid command 'IfModule', perhaps misspelled or defined by a module not included in the server configuration`
	if got := errString(err); got != want {
		t.Errorf("Load errors:\n%s\nwant:\n%s", got, want)
	}
	// What could be read is still there.
	const tree = `testdata/load/broken/syntax.conf:1 Fine <- testdata/load/errors.conf:10
testdata/load/broken/syntax.conf:2 <Directory "/x" <- testdata/load/errors.conf:10
testdata/load/errors.conf:11 LoadModule "only_one"
testdata/load/errors.conf:13 Still "here"
`
	if got := dump(ds); got != tree {
		t.Errorf("Load tree:\n%s\nwant:\n%s", got, tree)
	}

	_, err = Load("testdata/load/nosuch.conf", Options{})
	if got, want := errString(err), "Could not open configuration file testdata/load/nosuch.conf: No such file or directory"; got != want {
		t.Errorf("Load of a missing file: %q, want %q", got, want)
	}
}

// fsOptions returns Options that read the files of fsys, named by
// slash-separated paths relative to its root. Absolute and relative paths
// both name them.
func fsOptions(files fs.FS) Options {
	rel := func(name string) string {
		name = strings.TrimLeft(path.Clean(filepath.ToSlash(name)), "/")
		if name == "" {
			return "."
		}
		return name
	}
	return Options{
		ReadFile: func(name string) ([]byte, error) { return fs.ReadFile(files, rel(name)) },
		Stat:     func(name string) (fs.FileInfo, error) { return fs.Stat(files, rel(name)) },
		ReadDir:  func(name string) ([]fs.DirEntry, error) { return fs.ReadDir(files, rel(name)) },
		Glob: func(pattern string) ([]string, error) {
			ms, err := fs.Glob(files, rel(pattern))
			if strings.HasPrefix(pattern, "/") {
				for i := range ms {
					ms[i] = "/" + ms[i]
				}
			}
			return ms, err
		},
	}
}

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestLoadMem(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		opt   Options
		tree  string
		err   string
	}{
		{name: "absolute include",
			files: map[string]string{
				"etc/httpd.conf": "Include /etc/x.conf\nInclude /etc/d/*.conf\n",
				"etc/x.conf":     "X\n",
				"etc/d/1.conf":   "One\n",
			},
			tree: "/etc/x.conf:1 X <- /etc/httpd.conf:1\n/etc/d/1.conf:1 One <- /etc/httpd.conf:2\n"},
		{name: "self include",
			files: map[string]string{"etc/httpd.conf": "A\nInclude httpd.conf\n"},
			tree:  "/etc/httpd.conf:1 A\n",
			err:   "/etc/httpd.conf:2: Include cycle: /etc/httpd.conf -> /etc/httpd.conf"},
		{name: "directory including itself",
			files: map[string]string{"etc/httpd.conf": "Include d\n", "etc/d/a.conf": "A\nInclude d\n"},
			tree:  "/etc/d/a.conf:1 A <- /etc/httpd.conf:1\n",
			err:   "/etc/d/a.conf:2: Include cycle: /etc/d/a.conf -> /etc/d/a.conf (included from /etc/httpd.conf:1)"},
		{name: "the same file twice is no cycle",
			files: map[string]string{"etc/httpd.conf": "Include x.conf\nInclude x.conf\n", "etc/x.conf": "X\n"},
			tree:  "/etc/x.conf:1 X <- /etc/httpd.conf:1\n/etc/x.conf:1 X <- /etc/httpd.conf:2\n"},
		{name: "wildcard in a directory component",
			files: map[string]string{
				"etc/httpd.conf":      "Include sites-*/*.conf\nInclude sites-*/\n",
				"etc/sites-a/1.conf":  "A1\n",
				"etc/sites-a/2.conf":  "A2\n",
				"etc/sites-b/1.conf":  "B1\n",
				"etc/sites-c":         "not a directory\n",
				"etc/.sites-d/1.conf": "hidden\n",
			},
			tree: "/etc/sites-a/1.conf:1 A1 <- /etc/httpd.conf:1\n/etc/sites-a/2.conf:1 A2 <- /etc/httpd.conf:1\n/etc/sites-b/1.conf:1 B1 <- /etc/httpd.conf:1\n" +
				"/etc/sites-a/1.conf:1 A1 <- /etc/httpd.conf:2\n/etc/sites-a/2.conf:1 A2 <- /etc/httpd.conf:2\n/etc/sites-b/1.conf:1 B1 <- /etc/httpd.conf:2\n"},
		{name: "explicit dot pattern matches dot files",
			files: map[string]string{"etc/httpd.conf": "Include .*.conf\n", "etc/.a.conf": "A\n"},
			tree:  "/etc/.a.conf:1 A <- /etc/httpd.conf:1\n"},
		{name: "negated class",
			files: map[string]string{"etc/httpd.conf": "Include d/[!b]*.conf\n", "etc/d/a.conf": "A\n", "etc/d/b.conf": "B\n"},
			tree:  "/etc/d/a.conf:1 A <- /etc/httpd.conf:1\n"},
		{name: "a lone bracket is no wildcard",
			files: map[string]string{"etc/httpd.conf": "Include [a.conf\n", "etc/[a.conf": "A\n"},
			tree:  "/etc/[a.conf:1 A <- /etc/httpd.conf:1\n"},
		{name: "wildcard in a directory with wildcard characters",
			files: map[string]string{"etc/httpd.conf": "Include [d]/*.conf\n", "etc/[d]/a.conf": "A\n", "etc/d/b.conf": "B\n"},
			tree:  "/etc/d/b.conf:1 B <- /etc/httpd.conf:1\n"},
		{name: "wildcard matching no directory",
			files: map[string]string{"etc/httpd.conf": "Include x*/a.conf\nIncludeOptional x*/a.conf\n", "etc/xfile": "\n"},
			err:   "/etc/httpd.conf:1: Include/IncludeOptional: No matches for the wildcard 'x*' in '/etc', failing"},
		{name: "IncludeOptional wildcard below a file",
			files: map[string]string{"etc/httpd.conf": "IncludeOptional x/*.conf\n", "etc/x": "\n"},
			err:   "/etc/httpd.conf:1: Include/IncludeOptional: Could not open directory /etc/x: Not a directory"},
		{name: "IncludeOptional of a directory",
			files: map[string]string{"etc/httpd.conf": "IncludeOptional d\nIncludeOptional nod\n", "etc/d/a": "A\n"},
			tree:  "/etc/d/a:1 A <- /etc/httpd.conf:1\n"},
		{name: "the top file may be a directory",
			files: map[string]string{"etc/conf/b": "B\n", "etc/conf/a": "A\n"},
			tree:  "/etc/conf/a:1 A\n/etc/conf/b:1 B\n"},
		{name: "IfModule by derived names",
			files: map[string]string{"etc/httpd.conf": `LoadModule php5_module /usr/lib/libphp5.so
LoadModule mpm_prefork_module mod_mpm_prefork.so
<IfModule mod_php5.c>
Php
</IfModule>
<IfModule prefork.c>
Prefork
</IfModule>
<IfModule mod_mpm_prefork.c>
NotPrefork
</IfModule>
<IfModule MOD_PHP5.C>
CaseMatters
</IfModule>
<IfModule mod_ssl.c>
SSL
</IfModule>
<IfModule ldap_module>
LDAP
</IfModule>
<IfModule util_ldap.c>
UtilLDAP
</IfModule>
`},
			opt:  Options{Modules: map[string]bool{"mod_ssl.c": true, "util_ldap.c": true, "mod_x.c": false}},
			tree: "/etc/httpd.conf:1 LoadModule \"php5_module\" \"/usr/lib/libphp5.so\"\n/etc/httpd.conf:2 LoadModule \"mpm_prefork_module\" \"mod_mpm_prefork.so\"\n/etc/httpd.conf:4 Php\n/etc/httpd.conf:7 Prefork\n/etc/httpd.conf:16 SSL\n/etc/httpd.conf:19 LDAP\n/etc/httpd.conf:22 UtilLDAP\n"},
		{name: "UnDefine",
			files: map[string]string{"etc/httpd.conf": "UnDefine A\n<IfDefine A>\nA\n</IfDefine>\nDefine B:x\n"},
			opt:   Options{Defines: map[string]bool{"A": true}},
			tree:  "/etc/httpd.conf:1 UnDefine \"A\"\n/etc/httpd.conf:5 Define \"B:x\"\n",
			err:   "/etc/httpd.conf:5: Variable name must not contain ':'"},
		{name: "include in a section of an included file",
			files: map[string]string{
				"etc/httpd.conf": "<VirtualHost *>\nInclude v.conf\n</VirtualHost>\n",
				"etc/v.conf":     "<Directory /x>\nInclude d.conf\n</Directory>\n",
				"etc/d.conf":     "Deny from all\nServerRoot /elsewhere\nInclude e.conf\n",
				"etc/e.conf":     "E\n",
			},
			tree: "/etc/httpd.conf:1 <VirtualHost \"*\"\n  /etc/v.conf:1 <Directory \"/x\" <- /etc/httpd.conf:2\n" +
				"    /etc/d.conf:1 Deny \"from\" \"all\" <- /etc/httpd.conf:2 <- /etc/v.conf:2\n" +
				"    /etc/d.conf:2 ServerRoot \"/elsewhere\" <- /etc/httpd.conf:2 <- /etc/v.conf:2\n" +
				"    /etc/e.conf:1 E <- /etc/httpd.conf:2 <- /etc/v.conf:2 <- /etc/d.conf:3\n"},
		{name: "a section may not span files",
			files: map[string]string{"etc/httpd.conf": "<Directory /x>\nInclude end.conf\n", "etc/end.conf": "</Directory>\n"},
			tree:  "/etc/httpd.conf:1 <Directory \"/x\"\n",
			err:   "/etc/end.conf:1: </Directory> without matching <Directory> section (included from /etc/httpd.conf:2)\n/etc/httpd.conf:1: <Directory> was not closed."},
		{name: "misplaced Include section",
			files: map[string]string{"etc/httpd.conf": "<Include x>\n</Include>\n"},
			err:   "/etc/httpd.conf:1: Invalid command '<Include', perhaps misspelled or defined by a module not included in the server configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := fsOptions(mapFS(tt.files))
			opt.Defines, opt.Modules = tt.opt.Defines, tt.opt.Modules
			top := "/etc/httpd.conf"
			if _, ok := tt.files["etc/httpd.conf"]; !ok {
				top = "/etc/conf"
			}
			ds, err := Load(top, opt)
			if got := errString(err); got != tt.err {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tt.err)
			}
			if got := dump(ds); got != tt.tree {
				t.Errorf("tree:\n%s\nwant:\n%s", got, tt.tree)
			}
			checkRoundTrip(t, ds)
		})
	}
}

func TestLoadLimits(t *testing.T) {
	// A chain of 130 files: the 129th Include is one too many.
	files := map[string]string{}
	for i := 0; i < 130; i++ {
		files["etc/"+itoa(i)+".conf"] = "Include " + itoa(i+1) + ".conf\n"
	}
	_, err := Load("/etc/0.conf", fsOptions(mapFS(files)))
	if got := errString(err); !strings.HasPrefix(got, "/etc/128.conf:1: Exceeded maximum include depth of 128, There appears to be a recursion. (included from /etc/127.conf:1, ") {
		t.Errorf("deep chain: %.200s", got)
	}

	// Each file includes the next twice: 2^40 files, were it not for the
	// limit on reads.
	files = map[string]string{}
	for i := 0; i < 40; i++ {
		files["etc/"+itoa(i)+".conf"] = "Include " + itoa(i+1) + ".conf\nInclude " + itoa(i+1) + ".conf\n"
	}
	ds, err := Load("/etc/0.conf", fsOptions(mapFS(files)))
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 || !strings.HasPrefix(list[0].Msg, "too many configuration files") {
		t.Errorf("exponential includes: %.300v", err)
	}
	_ = ds
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return fmtInt(i/10) + string(rune('0'+i%10))
}

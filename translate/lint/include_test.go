package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// A layout spreads one configuration file over an included tree, as 2.2
// trees are laid out: it returns the main file to lint and where each
// line of the original went (index: line-1).
type layout func(t *testing.T, dir string, lines []string) (main string, moved []apacheconf.Pos)

// leadingLoads returns how many of the first lines are LoadModule lines
// (or blank): the part of a file a split may move ahead of the rest
// without changing what any <IfModule> after it sees.
func leadingLoads(lines []string) int {
	n := 0
	for n < len(lines) {
		f := strings.Fields(lines[n])
		if len(f) > 0 && !strings.EqualFold(f[0], "LoadModule") {
			break
		}
		n++
	}
	return n
}

func writeTestFile(t *testing.T, p string, lines []string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// layouts are the included trees every rule is checked in.
var layouts = map[string]layout{
	// conf.d: the main file loads the modules and includes conf.d/*.conf,
	// which holds the rest (Red Hat's layout).
	"conf.d": func(t *testing.T, dir string, lines []string) (string, []apacheconf.Pos) {
		main, rest := filepath.Join(dir, "main.conf"), filepath.Join(dir, "conf.d", "site.conf")
		k := leadingLoads(lines)
		moved := make([]apacheconf.Pos, len(lines))
		for i := range lines {
			if i < k {
				moved[i] = apacheconf.Pos{File: main, Line: i + 1}
			} else {
				moved[i] = apacheconf.Pos{File: rest, Line: i - k + 1}
			}
		}
		writeTestFile(t, main, append(lines[:k:k], "Include conf.d/*.conf"))
		writeTestFile(t, rest, lines[k:])
		return main, moved
	},
	// debian: apache2.conf holds nothing but Include lines; each
	// LoadModule is a mods-enabled/NAME.load file, the rest is
	// sites-enabled/000-default, included as a directory, each a link
	// to its file in mods-available or sites-available (Debian's
	// layout).
	"debian": func(t *testing.T, dir string, lines []string) (string, []apacheconf.Pos) {
		main, rest := filepath.Join(dir, "apache2.conf"), filepath.Join(dir, "sites-enabled", "000-default")
		k := leadingLoads(lines)
		moved := make([]apacheconf.Pos, len(lines))
		var inc []string
		for i := range lines {
			if i >= k {
				moved[i] = apacheconf.Pos{File: rest, Line: i - k + 1}
				continue
			}
			f := strings.Fields(lines[i])
			if len(f) == 0 {
				continue
			}
			name := strings.TrimSuffix(f[1], "_module") + ".load"
			writeTestFile(t, filepath.Join(dir, "mods-available", name), lines[i:i+1])
			load := filepath.Join(dir, "mods-enabled", name)
			symlink(t, filepath.Join("..", "mods-available", name), load)
			moved[i] = apacheconf.Pos{File: load, Line: 1}
			inc = []string{"Include mods-enabled/*.load"}
		}
		writeTestFile(t, main, append(inc, "Include sites-enabled/"))
		writeTestFile(t, filepath.Join(dir, "sites-available", "default"), lines[k:])
		symlink(t, filepath.Join("..", "sites-available", "default"), rest)
		return main, moved
	},
}

// wholeConfig are the rules about the configuration as a whole (a
// directive it never sets, a LoadModule line it does not have): they
// are reported at the start of the main file.
var wholeConfig = map[string]bool{"DIR-05": true, "DIR-06": true, "ORD-08": true}

// TestRulesIncluded runs every rule's testdata/rules/ID.txtar again with
// its httpd.conf spread over an included tree (each of layouts): fire/
// must report the rule where the condition now holds, the included file
// and line each directive moved to, and clean/ must not report it.
func TestRulesIncluded(t *testing.T) {
	for _, r := range Rules() {
		for name, split := range layouts {
			t.Run(r.ID+"/"+name, func(t *testing.T) {
				archive := filepath.Join("testdata", "rules", r.ID+".txtar")
				dir, _ := extract(t, archive)
				conf := filepath.Join(dir, "fire", "httpd.conf")
				want := ids(lintFile(t, conf, Options{}), r.ID)
				if len(want) == 0 {
					t.Fatalf("no %s in %s: see TestRules", r.ID, conf)
				}
				data, err := os.ReadFile(conf)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
				os.Remove(conf)
				main, moved := split(t, filepath.Join(dir, "fire"), lines)
				rep := lintFile(t, main, Options{})
				got := ids(rep, r.ID)
				for _, w := range want {
					at := w.Pos
					switch {
					case wholeConfig[r.ID]:
						at = posAtStart(main)
					case at.File == conf:
						at = moved[at.Line-1]
						at.Col = w.Pos.Col
					}
					found := false
					for _, g := range got {
						found = found || g.Directive == w.Directive && g.Pos == at
					}
					if !found {
						var b strings.Builder
						WriteText(&b, rep)
						t.Errorf("fire: no %s at %s (%s); got:\n%s", r.ID, at, w.Directive, b.String())
					}
				}

				conf = filepath.Join(dir, "clean", "httpd.conf")
				if data, err = os.ReadFile(conf); err != nil {
					t.Fatal(err)
				}
				os.Remove(conf)
				main, _ = split(t, filepath.Join(dir, "clean"), strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"))
				if got := ids(lintFile(t, main, Options{}), r.ID); len(got) > 0 {
					var b strings.Builder
					WriteText(&b, &Report{Findings: got})
					t.Errorf("clean: unexpected %s:\n%s", r.ID, b.String())
				}
			})
		}
	}
}

// TestIncludedTrees lints the trees of testdata/included/*.txtar, laid
// out as 2.2 installations are (Debian's apache2.conf with mods-enabled,
// conf.d and sites-enabled; Red Hat's conf.d), with the condition of a
// rule in an included file. The archive's comment names the main file
// ("main: FILE"), each finding the tree must have ("want: ID FILE:LINE")
// and each rule it must not report at all ("none: ID").
func TestIncludedTrees(t *testing.T) {
	archives, _ := filepath.Glob(filepath.Join("testdata", "included", "*.txtar"))
	if len(archives) == 0 {
		t.Fatal("no included trees")
	}
	for _, archive := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(archive), ".txtar"), func(t *testing.T) {
			dir, a := extract(t, archive)
			var main string
			var want []string
			var none []string
			for _, line := range strings.Split(string(a.Comment), "\n") {
				key, val, ok := strings.Cut(line, ": ")
				switch {
				case !ok:
				case key == "main":
					main = filepath.Join(dir, val)
				case key == "want":
					id, at, _ := strings.Cut(val, " ")
					want = append(want, id+" "+filepath.Join(dir, at))
				case key == "none":
					none = append(none, val)
				}
			}
			if main == "" || len(want)+len(none) == 0 {
				t.Fatalf("%s: no main, want or none line", archive)
			}
			rep := lintFile(t, main, Options{})
			got := map[string]bool{}
			for _, f := range rep.Findings {
				got[f.ID+" "+f.Pos.String()] = true
			}
			var b strings.Builder
			WriteText(&b, rep)
			for _, w := range want {
				if !got[w] {
					t.Errorf("no %s; got:\n%s", w, b.String())
				}
			}
			for _, id := range none {
				if fs := ids(rep, id); len(fs) > 0 {
					t.Errorf("unexpected %s at %s; got:\n%s", id, fs[0].Pos, b.String())
				}
			}
		})
	}
}

// TestFilesGiven: the files given are one configuration read in order, so
// what the first loads decides the <IfModule> sections of the next (a
// Debian site file given after apache2.conf). It was read as a fragment,
// with mod_ssl not loaded, and its SSLv2 not seen.
func TestFilesGiven(t *testing.T) {
	site := "<IfModule mod_ssl.c>\n<VirtualHost *:443>\nSSLProtocol SSLv2 TLSv1\n</VirtualHost>\n</IfModule>\n"
	for _, c := range []struct {
		name, main string
		want       int
	}{
		{"ssl loaded", "LoadModule authz_host_module m/mod_authz_host.so\nLoadModule ssl_module m/mod_ssl.so\n", 1},
		{"ssl not loaded", "LoadModule authz_host_module m/mod_authz_host.so\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			main, other := filepath.Join(dir, "apache2.conf"), filepath.Join(dir, "default-ssl")
			writeTestFile(t, main, []string{c.main})
			writeTestFile(t, other, []string{site})
			rep, err := Lint([]string{main, other}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(rep, "BEH-06")
			if len(got) != c.want || c.want == 1 && got[0].Pos.String() != other+":3" {
				var b strings.Builder
				WriteText(&b, rep)
				t.Errorf("BEH-06: %d findings, want %d at %s:3; got:\n%s", len(got), c.want, other, b.String())
			}
		})
	}
}

package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/convert"
)

// dir10Trees returns the main file of every lint testdata tree: each
// rule example's fire/ and clean/, each golden case, each included tree.
func dir10Trees(t *testing.T) map[string]string {
	t.Helper()
	trees := map[string]string{}
	rules, _ := filepath.Glob(filepath.Join("testdata", "rules", "*.txtar"))
	for _, archive := range rules {
		dir, _ := extract(t, archive)
		name := strings.TrimSuffix(filepath.Base(archive), ".txtar")
		trees["rules/"+name+"/fire"] = filepath.Join(dir, "fire", "httpd.conf")
		trees["rules/"+name+"/clean"] = filepath.Join(dir, "clean", "httpd.conf")
	}
	golden, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	for _, archive := range golden {
		dir, _ := extract(t, archive)
		trees["golden/"+filepath.Base(archive)] = filepath.Join(dir, "httpd.conf")
	}
	included, _ := filepath.Glob(filepath.Join("testdata", "included", "*.txtar"))
	for _, archive := range included {
		dir, a := extract(t, archive)
		for _, line := range strings.Split(string(a.Comment), "\n") {
			if main, ok := strings.CutPrefix(line, "main: "); ok {
				trees["included/"+filepath.Base(archive)] = filepath.Join(dir, main)
			}
		}
	}
	// Sections translate leaves as they are: two <Proxy> sections (which
	// of them merge depends on the request), an .htaccess file in a
	// <Directory> outside the document root, which translate does not
	// look in.
	for name, files := range map[string]map[string]string{
		"left/proxies": {"httpd.conf": "LoadModule authz_host_module m/mod_authz_host.so\nLoadModule proxy_module m/mod_proxy.so\n" +
			"<Proxy http://a/*>\n    Order deny,allow\n    Deny from all\n</Proxy>\n<Proxy http://b/*>\n    Order deny,allow\n    Deny from all\n    Allow from 10.0.0.0/8\n</Proxy>\n"},
		"left/htaccess": {
			"httpd.conf":      "LoadModule authz_host_module m/mod_authz_host.so\nDocumentRoot @ROOT@/www\n<Directory @ROOT@/other>\n    AllowOverride All\n</Directory>\n",
			"www/index.html":  "hello\n",
			"other/.htaccess": "Order deny,allow\nDeny from all\n",
		},
	} {
		dir := t.TempDir()
		for f, text := range files {
			writeTestFile(t, filepath.Join(dir, f), []string{strings.TrimSuffix(strings.ReplaceAll(text, "@ROOT@", dir), "\n")})
		}
		trees[name] = filepath.Join(dir, "httpd.conf")
	}
	if len(rules) == 0 || len(golden) == 0 || len(included) == 0 {
		t.Fatal("no lint testdata trees")
	}
	return trees
}

// The fix texts of DIR-10, and where in them the lines translate writes
// are (translated.go's dir10Fixes).
var (
	fixReplace = regexp.MustCompile(`^Replace the access directives of .* with: (.*?)(?:, and after the section: (.*))? \(and drop mod_access_compat once every scope is migrated\)\.$`)
	fixPart    = regexp.MustCompile(`^Part of .*, translated at \S+: (.*)\.$`)
	fixReview  = regexp.MustCompile(`: it writes (.*), refusing every request until the section is translated by hand\.$`)
	fixLeft    = regexp.MustCompile(`orderly translate leaves (it|.*) as it is`)
	fixRefused = regexp.MustCompile(`orderly translate .*refuses the configuration now|which it refuses now \(.*see ORD-14\)`)
)

// TestDIR10FixMatchesTranslate holds lint's DIR-10 fixes to orderly
// translate's text (issue 17): over every lint testdata tree with DIR-10
// findings, the Require lines of each finding's fix are, line for line,
// those convert.Convert wrote into the finding's section of the
// converted file; where translate leaves the section as it is, the
// converted file still has the finding's line; where it cannot read the
// configuration, the fix says so.
func TestDIR10FixMatchesTranslate(t *testing.T) {
	compared, left := 0, 0
	for name, main := range dir10Trees(t) {
		t.Run(name, func(t *testing.T) {
			rep := lintFile(t, main, Options{})
			found := ids(rep, "DIR-10")
			if len(found) == 0 {
				return
			}
			l, err := read([]string{main}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			lo := loadOptions(l.serveOptions())
			lo.ForwardUnfaithful = true // as orderly translate
			conv, cerr := convert.Convert([]string{main}, convert.Options{LoadOptions: lo})
			for _, f := range found {
				if cerr != nil {
					if !fixRefused.MatchString(f.Fix) {
						t.Errorf("%s: translate refuses the configuration (%v), the fix does not say so: %s", f.Pos, cerr, f.Fix)
					}
					continue
				}
				src, err := os.ReadFile(f.Pos.File)
				if err != nil {
					t.Fatal(err)
				}
				out, ok := conv.Files[f.Pos.File]
				if !ok && fixLeft.MatchString(f.Fix) {
					out = src // not written: left as it is
				} else if !ok {
					t.Errorf("%s: translate wrote no %s", f.Pos, f.Pos.File)
					continue
				}
				open, nth := enclosing(lines(src), f.Pos.Line)
				where := open
				if where == "" {
					where = f.Pos.File
				}
				section := sectionLines(lines(out), open, nth)
				if section == nil {
					t.Errorf("%s: section %s (%d) not in the converted file:\n%s", f.Pos, where, nth, out)
					continue
				}
				var want []string // what the fix says translate writes
				if m := fixReplace.FindStringSubmatch(f.Fix); m != nil {
					want = splitFixLines(m[1])
					if m[2] != "" {
						t.Errorf("%s: the lines written after the section are not compared: %s", f.Pos, f.Fix)
					}
				} else if m := fixPart.FindStringSubmatch(f.Fix); m != nil {
					want = splitFixLines(m[1])
				} else if m := fixReview.FindStringSubmatch(f.Fix); m != nil {
					want = splitFixLines(m[1])
				} else if fixLeft.MatchString(f.Fix) {
					left++
					if !containsLine(section, f.Directive) {
						t.Errorf("%s: the fix says translate leaves the section as it is, but %q is not in it:\n%s", f.Pos, f.Directive, strings.Join(section, "\n"))
					}
					continue
				} else {
					t.Errorf("%s: a DIR-10 fix of no known form: %s", f.Pos, f.Fix)
					continue
				}
				got := requireLines(section)
				if strings.Join(got, "\n") != strings.Join(requireLines(want), "\n") {
					t.Errorf("%s: the fix's Require lines are not what translate wrote into %s\nfix: %s\nfix's lines:\n\t%s\ntranslate wrote:\n\t%s",
						f.Pos, where, f.Fix, strings.Join(requireLines(want), "\n\t"), strings.Join(got, "\n\t"))
				}
				compared++
			}
		})
	}
	if compared == 0 {
		t.Error("no DIR-10 fix compared with translate's text")
	}
	if left == 0 {
		t.Error("no DIR-10 fix of a section translate leaves as it is")
	}
	t.Logf("%d DIR-10 fixes compared with translate's text, %d of sections it leaves as they are", compared, left)
}

func lines(b []byte) []string { return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") }

// scopeSection reports whether the line opens (or, close, closes) a
// section that is a scope of its own: the access lines in it are its,
// not the enclosing section's.
func scopeSection(l string, close bool) bool {
	l = strings.ToLower(strings.TrimSpace(l))
	prefix := "<"
	if close {
		prefix = "</"
	}
	rest, ok := strings.CutPrefix(l, prefix)
	if !ok || !close && strings.HasPrefix(l, "</") {
		return false
	}
	for _, k := range []string{"directorymatch", "directory", "filesmatch", "files", "locationmatch", "location", "proxymatch", "proxy", "if", "elseif", "else"} {
		if r, ok := strings.CutPrefix(rest, k); ok && (r == "" || r[0] == ' ' || r[0] == '>' || r[0] == '\t') {
			return true
		}
	}
	return false
}

// enclosing returns the opening line of the innermost section around
// line n (1-based) of a file, and which of the file's lines with that
// text it is (0: the first); "" for the file itself (.htaccess).
func enclosing(src []string, n int) (string, int) {
	var stack []int
	for i := 0; i < n-1 && i < len(src); i++ {
		switch {
		case scopeSection(src[i], true):
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case scopeSection(src[i], false):
			stack = append(stack, i)
		}
	}
	if len(stack) == 0 {
		return "", 0
	}
	at := stack[len(stack)-1]
	open, nth := strings.TrimSpace(src[at]), 0
	for _, l := range src[:at] {
		if strings.TrimSpace(l) == open {
			nth++
		}
	}
	return open, nth
}

// sectionLines returns the lines of the nth section opened by the line
// open ("": the whole file), those of the sections nested in it left
// out; nil if there is none.
func sectionLines(out []string, open string, nth int) []string {
	start := 0
	if open != "" {
		start = -1
		for i, l := range out {
			if strings.TrimSpace(l) == open {
				if nth == 0 {
					start = i + 1
					break
				}
				nth--
			}
		}
		if start < 0 {
			return nil
		}
	}
	section := []string{}
	depth := 0
	for _, l := range out[start:] {
		switch {
		case scopeSection(l, true):
			if depth == 0 {
				return section
			}
			depth--
		case scopeSection(l, false):
			depth++
		case depth == 0:
			section = append(section, l)
		}
	}
	return section
}

// splitFixLines splits a fix's one-line text of configuration lines
// (lines separated by " / ", a container's between its tags) into lines.
func splitFixLines(text string) []string {
	var out []string
	for _, piece := range strings.Split(text, " / ") {
		for piece = strings.TrimSpace(piece); piece != ""; piece = strings.TrimSpace(piece) {
			if strings.HasPrefix(piece, "<") {
				end := strings.IndexByte(piece, '>')
				if end < 0 {
					end = len(piece) - 1
				}
				out = append(out, piece[:end+1])
				piece = piece[end+1:]
				continue
			}
			end := strings.Index(piece, " <")
			if end < 0 {
				end = len(piece)
			}
			out = append(out, piece[:end])
			piece = piece[end:]
		}
	}
	return out
}

// requireLines returns the lines of mod_authz_core's: Require, its
// containers, <Limit> and <LimitExcept> and AuthMerging, without
// indentation and comments.
func requireLines(ls []string) []string {
	var out []string
	for _, l := range ls {
		l = strings.TrimSpace(l)
		w := strings.ToLower(strings.TrimLeft(strings.Fields(l + " x")[0], "</"))
		w = strings.TrimSuffix(w, ">")
		switch w {
		case "require", "requireall", "requireany", "requirenone", "limit", "limitexcept", "authmerging":
			out = append(out, l)
		}
	}
	return out
}

func containsLine(ls []string, text string) bool {
	for _, l := range ls {
		if strings.Join(strings.Fields(l), " ") == strings.Join(strings.Fields(text), " ") {
			return true
		}
	}
	return false
}

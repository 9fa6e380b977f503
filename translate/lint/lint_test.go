package lint

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/orderly-proxy/orderly/internal/golden"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

var update = flag.Bool("update", false, "update golden files")

// extract writes the files of a txtar archive under a new directory,
// with @ROOT@ in their contents replaced by that directory, and returns
// it.
func extract(t *testing.T, archive string) (string, *txtar.Archive) {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range a.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := bytes.ReplaceAll(f.Data, []byte("@ROOT@"), []byte(dir))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, a
}

func lintFile(t *testing.T, file string, opt Options) *Report {
	t.Helper()
	rep, err := Lint([]string{file}, opt)
	if err != nil {
		t.Fatalf("Lint(%s): %v", file, err)
	}
	return rep
}

func ids(rep *Report, id string) []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

// TestRules runs, for every rule of the table, testdata/rules/ID.txtar:
// fire/httpd.conf must report the rule, clean/httpd.conf must not.
func TestRules(t *testing.T) {
	for _, r := range Rules() {
		t.Run(r.ID, func(t *testing.T) {
			dir, _ := extract(t, filepath.Join("testdata", "rules", r.ID+".txtar"))
			fire := lintFile(t, filepath.Join(dir, "fire", "httpd.conf"), Options{})
			got := ids(fire, r.ID)
			if len(got) == 0 {
				var b strings.Builder
				WriteText(&b, fire)
				t.Errorf("fire: no %s finding; got:\n%s", r.ID, b.String())
			}
			for _, f := range got {
				if f.Severity != r.Severity || f.Change == "" || f.Fix == "" || f.Directive == "" || f.Pos.Line < 1 || f.Pos.Col < 1 {
					t.Errorf("fire: incomplete finding %+v", f)
				}
			}
			clean := lintFile(t, filepath.Join(dir, "clean", "httpd.conf"), Options{})
			if got := ids(clean, r.ID); len(got) > 0 {
				var b strings.Builder
				WriteText(&b, &Report{Findings: got})
				t.Errorf("clean: unexpected %s:\n%s", r.ID, b.String())
			}
		})
	}
}

// TestRuleTable checks the table: IDs, severities and texts.
func TestRuleTable(t *testing.T) {
	want := map[string]int{"BLD": 3, "DIR": 24, "BEH": 10, "AUTH": 6, "ERR": 5}
	got := map[string]int{}
	for _, r := range Rules() {
		prefix, _, _ := strings.Cut(r.ID, "-")
		got[prefix]++
		if r.Severity.Rank() == 0 || r.Name == "" || r.Short == "" || r.Change == "" || r.Fix == "" || r.Source == "" {
			t.Errorf("%s: incomplete rule %+v", r.ID, r)
		}
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%s rules: %d, want %d (every catalogue ID)", p, got[p], n)
		}
	}
	// Every catalogue ID of the rule catalogue (a copy of the project's
	// shared/docs/rule-catalogue.md in testdata: data a test needs lives
	// in the repository).
	cat, err := os.ReadFile(filepath.Join("testdata", "rule-catalogue.md"))
	if err != nil {
		t.Fatal(err)
	}
	ids := 0
	for _, line := range strings.Split(string(cat), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		id := strings.TrimSpace(strings.Split(line, "|")[1])
		if strings.Count(id, "-") != 1 || id == "ID" || strings.HasPrefix(id, "-") {
			continue
		}
		ids++
		if _, ok := RuleByID(id); !ok {
			t.Errorf("catalogue ID %s has no rule", id)
		}
	}
	if ids == 0 {
		t.Fatal("no catalogue ID read from testdata/rule-catalogue.md")
	}
}

// TestGolden renders every testdata/golden/*.txtar in the three formats
// and compares with the golden files (go test -update rewrites them).
func TestGolden(t *testing.T) {
	archives, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if len(archives) == 0 {
		t.Fatal("no golden cases")
	}
	reviewed := golden.Load(t, filepath.Join("testdata", "golden"))
	defer reviewed.Finish(t)
	for _, archive := range archives {
		name := strings.TrimSuffix(filepath.Base(archive), ".txtar")
		t.Run(name, func(t *testing.T) {
			dir, _ := extract(t, archive)
			rep := lintFile(t, filepath.Join(dir, "httpd.conf"), Options{})
			for _, format := range []string{"txt", "json", "sarif"} {
				var b bytes.Buffer
				var err error
				switch format {
				case "txt":
					err = WriteText(&b, rep)
				case "json":
					err = WriteJSON(&b, rep)
				case "sarif":
					err = WriteSARIF(&b, rep, SARIFOptions{BaseDir: dir})
				}
				if err != nil {
					t.Fatal(err)
				}
				got := strings.ReplaceAll(b.String(), dir, "$ROOT")
				file := filepath.Join("testdata", "golden", name+"."+format)
				want, err := os.ReadFile(file)
				if err != nil && !*update {
					t.Fatalf("%v (run with -update)", err)
				}
				if reviewed.Check(t, name+"."+format, []byte(got), want, *update) {
					if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// parseLines parses configuration lines.
func parseLines(t *testing.T, src string) []*dir {
	t.Helper()
	ds, err := apacheconf.Parse("x.conf", []byte(src+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestStock24 lints a configuration laid out like Debian's stock Apache
// 2.4 one: no error, and none of the 2.2-only findings.
func TestStock24(t *testing.T) {
	dir, _ := extract(t, filepath.Join("testdata", "golden", "stock24.txtar"))
	rep := lintFile(t, filepath.Join(dir, "httpd.conf"), Options{})
	if n := rep.Count(Error); n > 0 {
		var b strings.Builder
		WriteText(&b, rep)
		t.Errorf("%d errors on a stock 2.4 configuration:\n%s", n, b.String())
	}
	for _, f := range rep.Findings {
		switch f.ID {
		case "DIR-04", "DIR-05", "DIR-06", "DIR-10", "ERR-01", "ERR-02", "AUTH-02", "ORD-05", "ORD-08":
			t.Errorf("unexpected on 2.4: %s %s %s", f.Pos, f.ID, f.Directive)
		}
	}
}

// TestMixedDirectiveOutcomes reproduces the upgrade document's §5.3 as
// apache-access-semantics.md §9.3 describes real Apache: (a) is 403
// AH01797, (b) verbatim 403 AH01630, and (b) with the stock
// configuration's granted document root gives no finding.
func TestMixedDirectiveOutcomes(t *testing.T) {
	base := "LoadModule mpm_event_module modules/mod_mpm_event.so\nLoadModule authz_core_module modules/mod_authz_core.so\n" +
		"LoadModule authz_host_module modules/mod_authz_host.so\nLoadModule access_compat_module modules/mod_access_compat.so\nDocumentRoot /srv/www\n"
	cases := []struct {
		name, conf string
		want       []string // substrings of the AUTH-06 changes; nil: no AUTH-06
	}{
		{"a", "<Directory /srv/www>\n Order deny,allow\n Deny from all\n</Directory>\n<Location /server-status>\n SetHandler server-status\n Require ip 192.0.2.10\n</Location>\n",
			[]string{"AH01797"}},
		{"b-verbatim", "<Directory />\n Require all denied\n</Directory>\n<Location /server-status>\n SetHandler server-status\n Order deny,allow\n Deny from all\n Allow from 192.0.2.10\n</Location>\n",
			[]string{"AH01630", "Satisfy Any"}},
		{"b-stock", "<Directory />\n Require all denied\n</Directory>\n<Directory /srv/www>\n Require all granted\n</Directory>\n<Location /server-status>\n SetHandler server-status\n Order deny,allow\n Deny from all\n Allow from 192.0.2.10\n</Location>\n",
			nil},
		{"a-fixed", "<Directory /srv/www>\n Order deny,allow\n Deny from all\n</Directory>\n<Location /server-status>\n SetHandler server-status\n Order deny,allow\n Allow from 192.0.2.10\n Require ip 192.0.2.10\n</Location>\n",
			nil},
		{"b-satisfy-any", "<Directory />\n Require all denied\n</Directory>\n<Location /server-status>\n Order deny,allow\n Deny from all\n Allow from 192.0.2.10\n Satisfy Any\n</Location>\n",
			nil},
		{"htaccess-below-deny", "<Directory /srv/www>\n Order deny,allow\n Deny from all\n</Directory>\n<Directory /srv/www/pub>\n Require all granted\n</Directory>\n",
			[]string{"AH01797"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "httpd.conf")
			os.WriteFile(f, []byte(strings.ReplaceAll(base+c.conf, "/srv/www", filepath.Join(dir, "www"))), 0o644)
			got := ids(lintFile(t, f, Options{}), "AUTH-06")
			if c.want == nil {
				if len(got) > 0 {
					t.Errorf("unexpected AUTH-06: %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("AUTH-06 findings: %+v", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got[0].Change+got[0].Fix, w) {
					t.Errorf("AUTH-06 does not mention %q: %+v", w, got[0])
				}
			}
		})
	}
}

// TestFilterExpr checks the FilterProvider rewrite of DIR-17.
func TestFilterExpr(t *testing.T) {
	cases := []struct{ dispatch, match, want string }{
		{"resp=Content-Type", "$text/html", `%{CONTENT_TYPE} =~ m#text/html#`},
		{"Content-Type", "text/html", `%{CONTENT_TYPE} == 'text/html'`},
		{"req=User-Agent", "/MSIE [56]/", `%{req:User-Agent} =~ m#MSIE [56]#`},
		{"env=no-gzip", "*", `-n %{env:no-gzip}`},
		{"handler", "!cgi-script", `!(%{HANDLER} == 'cgi-script')`},
		{"resp=Content-Length", "<=1024", `%{resp:Content-Length} -le 1024`},
	}
	for _, c := range cases {
		if got := filterExpr(c.dispatch, c.match); got != c.want {
			t.Errorf("%s %s: got %s, want %s", c.dispatch, c.match, got, c.want)
		}
	}
}

// TestStockModulesMatchDebian checks the table of stock 2.4 modules
// against the modules Debian's apache2 installs, where it is installed.
func TestStockModulesMatchDebian(t *testing.T) {
	ents, err := os.ReadDir("/usr/lib/apache2/modules")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("apache2 is not installed: %v", err)
		}
		t.Skipf("apache2 is not installed: %v", err)
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "mod_") && strings.HasSuffix(n, ".so") && !stock24[n] {
			t.Errorf("%s is installed by Debian's apache2 but not in stock24", n)
		}
	}
	for so := range gone22 {
		if _, err := os.Stat(filepath.Join("/usr/lib/apache2/modules", so)); err == nil {
			t.Errorf("%s is listed as gone in 2.4 but exists", so)
		}
	}
}

// TestBadInput: a configuration that cannot be read is an error with
// file:line, never a report.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "httpd.conf")
	os.WriteFile(bad, []byte("LoadModule mime_module modules/mod_mime.so\n<Directory /srv>\nRequire all granted\n"), 0o644)
	if _, err := Lint([]string{bad}, Options{}); err == nil || !strings.Contains(err.Error(), bad+":2: <Directory> was not closed.") {
		t.Errorf("unclosed section: %v", err)
	}
	if _, err := Lint([]string{filepath.Join(dir, "missing.conf")}, Options{}); err == nil || !strings.Contains(err.Error(), "missing.conf") {
		t.Errorf("missing file: %v", err)
	}
	inc := filepath.Join(dir, "inc.conf")
	os.WriteFile(inc, []byte("Include nowhere/*.conf\n"), 0o644)
	if _, err := Lint([]string{inc}, Options{}); err == nil || !strings.Contains(err.Error(), inc+":1:") {
		t.Errorf("bad include: %v", err)
	}
	if _, err := Lint(nil, Options{}); err == nil {
		t.Error("no files: no error")
	}
}

// TestOptions: Defines, Modules, ServerRoot and DocumentRoot are used.
func TestOptions(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "www", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "www", "sub", ".htaccess"), []byte("Options -Indexes\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "conf"), 0o755)
	os.WriteFile(filepath.Join(dir, "conf", "extra.conf"), []byte("KeepAlive 5\n"), 0o644)
	f := filepath.Join(dir, "httpd.conf")
	os.WriteFile(f, []byte("LoadModule mime_module modules/mod_mime.so\n<IfDefine SSL>\nInclude conf/extra.conf\n</IfDefine>\n<IfModule mod_filter.c>\nAddOutputFilterByType DEFLATE text/html\n</IfModule>\n"), 0o644)
	rep := lintFile(t, f, Options{})
	if len(ids(rep, "DIR-07")) != 0 || len(ids(rep, "DIR-13")) != 0 || len(ids(rep, "DIR-04")) != 0 {
		t.Errorf("without options: %+v", rep.Findings)
	}
	rep = lintFile(t, f, Options{Defines: []string{"SSL"}, Modules: []string{"mod_filter.c"}, ServerRoot: dir, DocumentRoot: filepath.Join(dir, "www")})
	if len(ids(rep, "DIR-07")) != 1 || len(ids(rep, "DIR-13")) != 1 || len(ids(rep, "DIR-04")) != 1 {
		var b strings.Builder
		WriteText(&b, rep)
		t.Errorf("with options:\n%s", b.String())
	}
	if !strings.HasSuffix(ids(rep, "DIR-07")[0].Pos.File, filepath.Join("conf", "extra.conf")) {
		t.Errorf("included file position: %v", ids(rep, "DIR-07")[0].Pos)
	}
}

// TestMPMSections: a 2.2 configuration loads no MPM, so lint reads what
// <IfModule> on an MPM holds, wherever the section is: in the main file,
// in an included one the main file gives no hint of, or split over a
// continuation line.
func TestMPMSections(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"main file": {"httpd.conf": "LoadModule mime_module m.so\n<IfModule mpm_prefork_module>\nMaxClients 150\n</IfModule>\n"},
		"included": {
			"httpd.conf":     "LoadModule mime_module m.so\nInclude extra/*.conf\n",
			"extra/mpm.conf": "<IfModule prefork.c>\nMaxClients 150\n</IfModule>\n",
		},
		"continued": {"httpd.conf": "LoadModule mime_module m.so\n<IfModule mpm_pre\\\nfork_module>\nMaxClients 150\n</IfModule>\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, text := range files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
				os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644)
			}
			rep := lintFile(t, filepath.Join(dir, "httpd.conf"), Options{ServerRoot: dir})
			if len(ids(rep, "DIR-02")) != 1 {
				var b strings.Builder
				WriteText(&b, rep)
				t.Errorf("MaxClients in the MPM section not seen:\n%s", b.String())
			}
		})
	}
	for src, want := range map[string]bool{
		"LoadModule mime_module m.so\n<IfModule mod_mime.c>\n</IfModule>\n": false,
		"Alias /a\\b /c\n":              false,
		"<IfModule mpm_event_module>\n": true,
		"<IfModule !worker.c>\n":        true,
		"Foo \\\r\n bar\n":              true,
		"Foo \\":                        false,
		"Foo \\\n":                      true,
		"mpm_":                          true,
		"<IfModule prefork.c":           true,
		"worker.c":                      true,
		"xevent.c>":                     true,
		"pm_ _mpm mpm-":                 false,
		"prefork.d k.c orker.c":         false,
		"vent.c evenT.c event.":         false,
	} {
		if mentionsMPM([]byte(src)) != want {
			t.Errorf("mentionsMPM(%q) = %v", src, !want)
		}
	}
}

// TestLowerIs holds lowerIs to strings.ToLower: words that are, or are
// not, the lower-case words asked for, in every case, with letters that
// lower-case to ASCII or change length, and bytes that are not UTF-8.
func TestLowerIs(t *testing.T) {
	lows := []string{"includes", "includesnoexec", "on", "", "k"}
	words := []string{"Includes", "INCLUDES", "includes", "IncludesNOEXEC", "Include", "Includess", "+Includes",
		"", "On", "oN", "o", "on ", "K", "\u212a", "İncludes", "includeſ", "includes\xff", "\xffincludes", "Includes\u00e9",
		"ON\u0130", "\u0130", "i\u0307"}
	for _, w := range words {
		for _, low := range lows {
			if got, want := lowerIs(w, low), strings.ToLower(w) == low; got != want {
				t.Errorf("lowerIs(%q, %q) = %v, want %v", w, low, got, want)
			}
		}
	}
}

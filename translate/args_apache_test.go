package translate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// wrongArgs are argument texts that each args_how refuses, as written
// after the directive's name: too few, too many, and an empty quoted word
// where a word is needed (ap_getword_conf returns "" for it).
var wrongArgs = map[directive.Args][]string{
	directive.Take1:    {"", "a b", `""`},
	directive.Take2:    {"a", "a b c", `a ""`},
	directive.Take3:    {"a b", "a b c d", `a b ""`},
	directive.Take12:   {"", "a b c", `"" b`},
	directive.Take13:   {"a b", "a b c d", ""},
	directive.Take23:   {"a", "a b c d", `"" b`},
	directive.Take123:  {"", "a b c d", `"" b`},
	directive.Iterate:  {"", `""`},
	directive.Iterate2: {"a", "", `"" `},
	directive.Flag:     {"Maybe", "", `"of f"`, "1"},
	directive.NoArgs:   {"a"},
}

// apacheSyntaxError matches Apache's report of a configuration it refuses
// to start with: "AH00526: Syntax error on line N of FILE:" and the
// message on the next line, or, for a directive run while the file is
// read (EXEC_ON_READ), "apache2: Syntax error on line N of FILE: MESSAGE".
// The message runs to the end of the output (a help string may span
// lines: AuthLDAPURL's).
var apacheSyntaxError = regexp.MustCompile(`(?s)Syntax error on line (\d+) of [^:\n]+:[ \n](.*)`)

// TestArgsMatchApache24 holds the gate's argument checks to Apache: for
// every 2.4 row of the table that Debian's apache2 knows (every module it
// ships that the table knows loaded, the event MPM) and whose args_how Apache checks (not
// sections, RAW_ARGS or TAKE_ARGV), a configuration with the directive
// given arguments its args_how refuses, in a context it allows, must make
// apache2 -t refuse to start with the message orderly gives for it, at
// the same line. The wrong arguments cycle through wrongArgs by row. One
// apache2 -t per directive (it stops at the first error), run in
// parallel: some 600 runs.
func TestArgsMatchApache24(t *testing.T) {
	p := apachetest.Require(t)
	load, shipped := allModules(t, p)
	rows := directive.All()
	known := apacheKnows(t, p, load)
	type probe struct {
		row  *directive.Info
		line string // the directive as written
		at   int    // its line in the file
		text string // the file from line 5 on
	}
	var probes []probe
	for i := range rows {
		r := &rows[i]
		if r.In&directive.V24 == 0 || r.Section() || !shipped[r.Module] {
			continue
		}
		switch n := known[strings.ToLower(r.Name)]; {
		case n == 0:
			// A directive of the prefork or worker MPM (MinSpareServers):
			// the event MPM's Apache does not know it.
			continue
		case n > 1:
			// A name two loaded modules provide (HeartbeatStorage):
			// Apache asks the one loaded last first, orderly's table
			// the first row.
			continue
		}
		wrong := wrongArgs[r.Args]
		if len(wrong) == 0 {
			continue // RAW_ARGS, TAKE_ARGV: the directive counts its arguments itself
		}
		line := strings.TrimRight(r.Name+" "+wrong[i%len(wrong)], " ")
		// Lines 1-4 are the same for all: Include of the LoadModule
		// lines, ServerName, PidFile, ErrorLog.
		text, at := line+"\n", 5
		if !r.Where.Allows(directive.Server, 0) {
			text, at = "<Directory />\n"+line+"\n</Directory>\n", 6
		}
		probes = append(probes, probe{row: r, line: line, at: at, text: text})
	}
	if len(probes) < 500 {
		t.Fatalf("%d directives to check; expected the whole table", len(probes))
	}

	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, runtime.NumCPU()+1)
		mu   sync.Mutex
		same int
	)
	for _, pr := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			apache, ours := refusals(t, p, load, pr.text)
			mu.Lock()
			defer mu.Unlock()
			if ours != apache {
				t.Errorf("%s (%s, %s) at line %d:\n apache2: %s\n orderly: %s", pr.line, pr.row.Module, pr.row.Args, pr.at, apache, ours)
				return
			}
			same++
		}()
	}
	wg.Wait()
	t.Logf("%d directives given wrong arguments: apache2 -t and orderly refuse %d of them with the same message at the same line", len(probes), same)
}

// apacheKnows runs apache2 -L with the LoadModule lines load and returns
// how many of the loaded modules provide each directive (lower case).
func apacheKnows(t *testing.T, p apachetest.Paths, load string) map[string]int {
	t.Helper()
	dir := t.TempDir()
	cf := filepath.Join(dir, "l.conf")
	conf := fmt.Sprintf("%sServerName 127.0.0.1\nPidFile %s/pid\nErrorLog %s/error.log\n", load, dir, dir)
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p.Apache, "-f", cf, "-L")
	cmd.Env = append(os.Environ(), "APACHE_RUN_DIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -L: %v", p.Apache, err)
	}
	known := map[string]int{}
	for _, m := range listedDirective.FindAllStringSubmatch(string(out), -1) {
		known[strings.ToLower(m[1])]++
	}
	if len(known) < 500 {
		t.Fatalf("apache2 -L listed %d directives; expected the whole set", len(known))
	}
	return known
}

// listedDirective is a directive's line in apache2 -L: its name and its
// module's source file.
var listedDirective = regexp.MustCompile(`(?m)^(<?[A-Za-z0-9_]+) \([A-Za-z0-9_.]+\.c\)$`)

// errorLogEscape escapes s as Apache's error log does its messages
// (server/util.c ap_escape_errorlog_item): control characters and the
// backslash, not the double quote.
func errorLogEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\b':
			b.WriteString(`\b`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// refusals writes a configuration of the LoadModule lines load and then
// text, from its line 5 on (lines 1-4: an Include of load, ServerName,
// PidFile, ErrorLog), and returns what apache2 -t says of it and what
// orderly's Load does ("line N: MESSAGE", or how it starts), orderly's
// message escaped as Apache's error log escapes it.
func refusals(t *testing.T, p apachetest.Paths, load, text string) (apache, ours string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mods.conf"), []byte(load), 0o644); err != nil {
		t.Fatal(err)
	}
	cf := filepath.Join(dir, "t.conf")
	head := fmt.Sprintf("Include %s/mods.conf\nServerName 127.0.0.1\nPidFile %s/pid\nErrorLog %s/error.log\n", dir, dir, dir)
	if err := os.WriteFile(cf, []byte(head+text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p.Apache, "-f", cf, "-t")
	cmd.Env = append(os.Environ(), "APACHE_RUN_DIR="+dir)
	out, _ := cmd.CombinedOutput()
	if m := apacheSyntaxError.FindStringSubmatch(string(out)); m == nil {
		apache = "(starts: " + strings.TrimSpace(string(out)) + ")"
	} else {
		apache = "line " + m[1] + ": " + strings.TrimSuffix(m[2], "\n")
	}

	ours = "(loads)"
	_, err := Load([]string{cf}, LoadOptions{Options: Options{Semantics: Compat24, DocumentRoot: dir, ForwardUnfaithful: true}})
	var el apacheconf.ErrorList
	var one *apacheconf.Error
	switch {
	case errors.As(err, &el):
		for _, e := range el {
			if !e.Own {
				one = e
				break
			}
		}
	case errors.As(err, &one):
	}
	if one != nil {
		ours = fmt.Sprintf("line %d: %s", one.Pos.Line, errorLogEscape(one.Msg))
	} else if err != nil {
		ours = "(" + err.Error() + ")"
	}
	return apache, ours
}

// allModules returns the LoadModule lines of every module Debian ships
// that the table knows, with the event MPM, and the set of the modules
// (with core_module, http_module and mpm).
func allModules(t *testing.T, p apachetest.Paths) (string, map[string]bool) {
	t.Helper()
	mods, err := filepath.Glob(filepath.Join(p.ModulesDir, "mod_*.so"))
	if err != nil || len(mods) < 50 {
		t.Fatalf("modules of %s: %d found (%v)", p.ModulesDir, len(mods), err)
	}
	inTable := map[string]bool{}
	for _, r := range directive.All() {
		inTable[r.Module] = true
	}
	shipped := map[string]bool{"core_module": true, "http_module": true, "mpm": true}
	var load strings.Builder
	for _, m := range mods {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "mod_"), ".so")
		if strings.HasPrefix(name, "mpm_") && name != "mpm_event" || !strings.HasPrefix(name, "mpm_") && !inTable[name+"_module"] {
			continue // another MPM; an example module Debian builds (mod_bucketeer), which orderly refuses
		}
		shipped[name+"_module"] = true
		fmt.Fprintf(&load, "LoadModule %s_module %s\n", name, m)
	}
	return load.String(), shipped
}

// loadText is a configuration for compareRefusals: the LoadModule lines
// and the text after them.
type loadText struct{ load, text string }

// compareRefusals holds each configuration to apache2 -t (refusals), a
// few at a time: both must refuse it with the same message at the same
// line, or both load it. With own, orderly's own refusal of what Apache
// starts (what serve cannot evaluate) counts as loading it. It returns
// how many both refused and how many both loaded.
func compareRefusals(t *testing.T, p apachetest.Paths, cases []loadText, own bool) (refused, started int) {
	t.Helper()
	var (
		wg  sync.WaitGroup
		sem = make(chan struct{}, runtime.NumCPU()+1)
		mu  sync.Mutex
	)
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			apache, ours := refusals(t, p, c.load, c.text)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case strings.HasPrefix(apache, "(starts") && ours == "(loads)":
				started++
			case own && strings.HasPrefix(apache, "(starts") && strings.Contains(ours, "cannot be evaluated by orderly"):
				started++ // serve's own refusal of what Apache serves
			case apache != ours:
				t.Errorf("%q:\n apache2: %s\n orderly: %s", c.text, apache, ours)
			default:
				refused++
			}
		}()
	}
	wg.Wait()
	return refused, started
}

// TestValuesMatchApache24 holds to apache2 -t the values that orderly
// checks beyond the count of arguments (values.go): the keywords,
// FileETag, ForceLanguagePriority, RewriteOptions, Dav, LogLevel,
// ServerAlias outside <VirtualHost> and AddOutputFilterByType's
// providers (filters.go), refused with Apache's message at the same
// line, and accepted where Apache accepts them.
func TestValuesMatchApache24(t *testing.T) {
	p := apachetest.Require(t)
	load, _ := allModules(t, p)
	var tests []string
	for name, k := range keywords {
		row, _ := directive.Find(name, directive.V24, nil)
		if row == nil {
			t.Fatalf("%s: not in the table", name)
		}
		line := func(arg string) string {
			if !row.Where.Allows(directive.Server, 0) {
				return "<Directory />\n" + row.Name + " " + arg + "\n</Directory>\n"
			}
			return row.Name + " " + arg + "\n"
		}
		tests = append(tests, line("Maybe"), line(strings.ToUpper(k.words[len(k.words)-1])))
	}
	tests = append(tests,
		"FileETag None\n", "FileETag MTime Size gen\n", "FileETag +INode -mtime Digest lastmodified LMTime\n",
		"FileETag -None\n", "FileETag +all\n", "FileETag \"\"\n", "FileETag All +Foo\n",
		"ForceLanguagePriority Prefer Fallback\n", "ForceLanguagePriority None gen\n",
		"ForceLanguagePriority none prefer\n", "ForceLanguagePriority FALLBACK None\n", "ForceLanguagePriority None None\n",
		"ForceLanguagePriority prefer \"\" gen\n",
		"RewriteOptions Inherit InheritBefore InheritDown InheritDownBefore IgnoreInherit AllowNoSlash AllowAnyURI MergeBase IgnoreContextInfo LegacyPrefixDocRoot\n",
		"RewriteOptions UnsafePrefixStat\n", "RewriteOptions maxredirects=5 inherit\n", "RewriteOptions Inherit gen gen\n",
		"<Directory />\nRewriteOptions inherit \"\" gen\n</Directory>\n",
		"LogLevel info gen\n", "LogLevel TRACE8 rewrite:trace3 authz_core:crit mod_ssl.c:info core:debug http_module:info core.c:warn\n",
		"LogLevel gen:debug\n", "LogLevel rewrite:\n", "LogLevel rewrite:loud\n", "LogLevel mod_rewrite:debug\n",
		"LogLevel event.c:info mpm_event:debug mpm_event_module:warn http_core.c:error\n", "LogLevel Rewrite:info\n",
		"LogLevel a:b:info\n", "LogLevel info \"\" gen\n", "<Directory />\nLogLevel debug gen\n</Directory>\n",
		"ServerAlias www.example.com\n",
		"<VirtualHost *:80>\nServerName a.example\nServerAlias www.example.com b.example\n</VirtualHost>\n",
	)
	var cases []loadText
	for _, text := range tests {
		cases = append(cases, loadText{load, text})
	}
	// AddOutputFilterByType's providers, without the modules that
	// register filters of the configuration's names (which orderly
	// lets through), and without mod_deflate.
	without := func(mods ...string) string {
		var b strings.Builder
		for _, l := range strings.SplitAfter(load, "\n") {
			if !slices.ContainsFunc(mods, func(m string) bool { return strings.HasPrefix(l, "LoadModule "+m+" ") }) {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	filters := without("ext_filter_module", "lua_module")
	for _, names := range outputFilters {
		for _, n := range names {
			cases = append(cases, loadText{filters, fmt.Sprintf("AddOutputFilterByType %q text/html\n", strings.ToUpper(n))})
		}
	}
	for _, text := range []string{
		"AddOutputFilterByType NOPE text/html\n",
		"AddOutputFilterByType DEFLATE;Nope;INCLUDES text/html\n",
		"AddOutputFilterByType ;DEFLATE;;INCLUDES; text/html\n",
		"AddOutputFilterByType DEFLATE\n",
		"AddOutputFilterByType DEFLATE \"\"\n",
		"AddOutputFilterByType\n",
		"<Directory />\nAddOutputFilterByType nope text/html\n</Directory>\n",
	} {
		cases = append(cases, loadText{filters, text})
	}
	cases = append(cases, loadText{without("ext_filter_module", "lua_module", "deflate_module"), "AddOutputFilterByType DEFLATE text/html\n"})
	for _, arg := range []string{"On", "off", "filesystem", "Filesystem", "Maybe"} {
		cases = append(cases, loadText{load, "<Directory />\nDav " + arg + "\n</Directory>\n"})
	}
	cases = append(cases, loadText{without("dav_fs_module"), "<Directory />\nDav On\n</Directory>\n"})
	refused, started := compareRefusals(t, p, cases, false)
	t.Logf("%d configurations: %d refused by both with the same message, %d loaded by both", len(cases), refused, started)
}

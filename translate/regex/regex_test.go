package regex

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

// The options Apache compiles with: 2.2's ap_regcomp sets none of its
// own (server/util_pcre.c, 2.2.34 line 133: only AP_REG_ICASE and
// AP_REG_NEWLINE become PCRE options), 2.4's adds the default cflags,
// DOTALL and DOLLAR_ENDONLY (AP_REG_DEFAULT, include/ap_regex.h, since
// 2.4.42; core.c core_pre_config), and PCRE2_DUPNAMES.
var (
	opt22 = Options{}
	opt24 = Options{DotAll: true, DollarEndOnly: true, DupNames: true}
)

func TestMatch(t *testing.T) {
	type want struct{ v22, v24 bool }
	tests := []struct {
		name    string
		pattern string
		icase   bool
		subject string
		want    want
	}{
		// Drupal 7's root .htaccess.
		{"lookahead dot-file", `^(\.(?!well-known).*|Entries.*|Repository|Root|Tag|Template)$`, false, ".git", want{true, true}},
		{"lookahead well-known", `^(\.(?!well-known).*|Entries.*|Repository|Root|Tag|Template)$`, false, ".well-known", want{false, false}},
		{"lookbehind", `(?<!\.min)\.js$`, false, "app.min.js", want{false, false}},
		{"lookbehind plain", `(?<!\.min)\.js$`, false, "app.js", want{true, true}},
		{"backreference", `^(\w+)-\1\.txt$`, false, "ab-ab.txt", want{true, true}},
		{"possessive", `^a++b`, false, "aab", want{true, true}},
		{"possessive gives nothing back", `^a++a`, false, "aaa", want{false, false}},
		{"atomic", `^(?>a+)a`, false, "aaa", want{false, false}},
		{"\\A and \\Z", `\Aab\Z`, false, "ab\n", want{true, true}},
		{"\\z", `\Aab\z`, false, "ab\n", want{false, false}},
		{"(?x)", `(?x) ^ a \ b  # comment`, false, "a b", want{true, true}},
		// Case folds ASCII letters only.
		{"nocase ascii", `^bot`, true, "BOT", want{true, true}},
		{"nocase kelvin", `^k$`, true, "\xe2\x84\xaa", want{false, false}},
		{"nocase long s", `^s$`, true, "\xc5\xbf", want{false, false}},
		{"(?i) kelvin", `(?i)^[a-z]$`, false, "\xe2\x84\xaa", want{false, false}},
		{"nocase latin-1", `\xe9`, true, "\xc9", want{false, false}},
		// "." is one byte.
		{"dot bytes", `^a..c\.txt$`, false, "a\xc3\xa9c.txt", want{true, true}},
		{"dot rune", `^a.c\.txt$`, false, "a\xc3\xa9c.txt", want{false, false}},
		{"class bytes", `^caf[\x80-\xff]+$`, false, "caf\xc3\xa9", want{true, true}},
		{"utf-8 literal", `^caf\xc3\xa9$`, false, "caf\xc3\xa9", want{true, true}},
		// "$" before a final newline: 2.2 yes, 2.4 (DOLLAR_ENDONLY) no.
		{"dollar newline", `\.(bak|sql)$`, false, "backup.sql\n", want{true, false}},
		{"dollar end", `\.(bak|sql)$`, false, "backup.sql", want{true, true}},
		// "." and a newline: 2.4's DOTALL.
		{"dot newline", `^a.b$`, false, "a\nb", want{false, true}},
		{"NUL ends the subject", `b`, false, "a\x00b", want{false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []struct {
				name string
				opt  Options
				want bool
			}{{"2.2", opt22, tt.want.v22}, {"2.4", opt24, tt.want.v24}} {
				opt := v.opt
				opt.ICase = tt.icase
				re, err := Compile(tt.pattern, opt)
				if err != nil {
					t.Fatalf("%s: %v", v.name, err)
				}
				got, err := re.MatchString(tt.subject)
				if err != nil || got != v.want {
					t.Errorf("%s: %q on %q = %v, %v; want %v", v.name, tt.pattern, tt.subject, got, err, v.want)
				}
			}
		})
	}
}

func TestSubmatchIndex(t *testing.T) {
	re := MustCompile(`^/caf(.)(.)/(?<rest>.*)$`, opt24)
	m, err := re.FindStringSubmatchIndex("/caf\xc3\xa9/x\xe2\x84\xaay")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 12, 4, 5, 5, 6, 7, 12}; !slices.Equal(m, want) {
		t.Errorf("got %v, want %v", m, want)
	}
	if names := re.SubexpNames(); !slices.Equal(names, []string{"", "", "", "rest"}) {
		t.Errorf("names %q", names)
	}
	// The backtracking engine gives byte offsets too.
	re = MustCompile(`(?<=/)caf(..)(?!x)`, opt24)
	if !re.Backtracks() {
		t.Fatal("lookaround taken by RE2")
	}
	m, _ = re.FindStringSubmatchIndex("/caf\xc3\xa9/")
	if want := []int{1, 6, 4, 6}; !slices.Equal(m, want) {
		t.Errorf("got %v, want %v", m, want)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tt := range []struct {
		pattern     string
		opt         Options
		unsupported bool
	}{
		{`(a`, opt24, false},
		{`a)`, opt24, false},
		{`*a`, opt24, false},
		{`[z-a]`, opt24, false},
		{`\x{100}`, opt24, false},
		{`(?<=a+)b`, opt24, false},
		{`\q`, opt24, false},
		{`(?<n>a)(?<n>b)`, opt22, false}, // 2.2: no PCRE_DUPNAMES
		{`(?R)`, opt24, true},
		{`a\Kb`, opt24, true},
		{`(*UTF)a`, opt24, true},
		{`(?|(a)|(b))`, opt24, true},
	} {
		_, err := Compile(tt.pattern, tt.opt)
		var e *Error
		if !errors.As(err, &e) || e.Unsupported != tt.unsupported {
			t.Errorf("Compile(%q) = %v; want an error, unsupported %v", tt.pattern, err, tt.unsupported)
		}
	}
	if _, err := Compile(`(?<n>a)(?<n>b)`, opt24); err != nil {
		t.Errorf("2.4 has PCRE2_DUPNAMES: %v", err)
	}
}

// TestTimeout: a catastrophic pattern stops with a MatchError (the caller
// answers 500), and no goroutine is left matching.
func TestTimeout(t *testing.T) {
	re := MustCompile(`^(a|aa)+(?=x)$`, Options{Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := re.MatchString(strings.Repeat("a", 60) + "b")
	if !IsMatchError(err) {
		t.Fatalf("err = %v, want a MatchError", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	// A long subject within the limits still matches.
	re = MustCompile(`^(?:(a)|b)*(?=c)`, opt24)
	if ok, err := re.MatchString(strings.Repeat("ab", 4000) + "c"); !ok || err != nil {
		t.Errorf("long subject: %v, %v", ok, err)
	}
}

// corpusPatterns are the regexes of the differential corpus's
// configurations (FilesMatch, DirectoryMatch, LocationMatch, Files ~,
// SetEnvIf, BrowserMatch, AliasMatch) and of common CMS .htaccess files.
func corpusPatterns(t testing.TB) []string {
	pats := []string{
		`\.(engine|inc|info|install|make|module|profile|test|po|sh|.*sql|theme|twig|tpl(\.php)?|xtmpl|yml)(~|\.sw[op]|\.bak|\.orig|\.save)?$|^(\.(?!well-known).*|Entries.*|Repository|Root|Tag|Template|composer\.(json|lock)|web\.config)$|^#.*#$|\.php(~|\.sw[op]|\.bak|\.orig|\.save)$`,
		`^(wp-config\.php|xmlrpc\.php|readme\.html|license\.txt)$`,
		`\.(?:bak|config|sql|fla|psd|ini|log|sh|inc|swp|dist)$`,
		`(^#.*#|\.(bak|conf|dist|fla|in[ci]|log|orig|psd|sh|sql|sw[op])|~)$`,
		`^(?!index\.php).*\.php$`,
		`(?i)\.(php|phtml|php[345]?)$`,
		`^/(?:wp-admin|wp-login\.php)`,
		`^(.*?)(\.min)?\.(css|js)$`,
		`^(\w+)\.\1$`,
		`(?<=/)\.git(?:/|$)`,
		`"(?:[^"\\]++|\\.)*+"`,
	}
	files, _ := filepath.Glob("../../testdata/corpus/*.txtar")
	directive := regexp.MustCompile(`(?mi)^\s*<(?:FilesMatch|DirectoryMatch|LocationMatch|Files\s+~|Directory\s+~|Location\s+~)\s+(?:"([^"]+)"|([^\s">]+))|^\s*(?:SetEnvIf(?:NoCase)?\s+\S+|BrowserMatch(?:NoCase)?|AliasMatch)\s+(?:"([^"]*)"|(\S+))`)
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range a.Files {
			for _, m := range directive.FindAllStringSubmatch(string(file.Data), -1) {
				for _, g := range m[1:] {
					if g = strings.Trim(g, `"`); g != "" {
						pats = append(pats, strings.ReplaceAll(g, "@DOCROOT@", "/srv/www"))
					}
				}
			}
		}
	}
	slices.Sort(pats)
	return slices.Compact(pats)
}

// FuzzRegexEngines holds the two engines to each other through the
// wrapper: for every pattern that RE2 can take, and every subject,
// regexp2 (the engine for what RE2 cannot take) gives the same answer
// and the same group offsets, under 2.2's and 2.4's options, with and
// without case folding. TestPCRE2Oracle holds both to libpcre2 itself.
func FuzzRegexEngines(f *testing.F) {
	subjects := []string{"", "a", ".htaccess", "backup.sql\n", "caf\xc3\xa9.txt", "\xe2\x84\xaa", "/wp-admin/x", "Ab.Ab", "index.php", "x.min.js", "a\nb"}
	for _, p := range corpusPatterns(f) {
		for _, s := range subjects {
			f.Add(p, s, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, pattern, subject string, o uint8) {
		if len(pattern) > 512 || len(subject) > 1024 {
			return // Apache's lines are short; long inputs only slow the search
		}
		opt := Options{ICase: o&1 != 0, DotAll: o&2 != 0, DollarEndOnly: o&4 != 0, DupNames: o&8 != 0, Newline: o&16 != 0, Timeout: 20 * time.Millisecond}
		re, err := compile(pattern, opt, true)
		if err != nil || re.std == nil || re.bt == nil {
			return
		}
		var want []int
		if re.nl && strings.HasSuffix(cString(subject), "\n") {
			return // RE2 is not exact there, and not used
		}
		want = re.stdMatch(subject)
		got, err := re.btMatch(cString(subject), true)
		if err != nil {
			return // a timeout is not a disagreement
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%q %+v on %q: RE2 %v, regexp2 %v", pattern, opt, subject, want, got)
		}
	})
}

// TestCorpusPatterns: every regex of the corpus compiles (none is
// refused any more for want of an engine) and the engines agree on it.
func TestCorpusPatterns(t *testing.T) {
	if _, err := os.Stat("../../testdata/corpus"); err != nil {
		t.Skip(err)
	}
	pats := corpusPatterns(t)
	if len(pats) < 20 {
		t.Fatalf("only %d patterns found", len(pats))
	}
	for _, p := range pats {
		if _, err := Compile(p, opt24); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}

// FuzzPrefilter holds the prefilter to the engines: a subject it rejects
// is one that neither engine matches, under every option; and it rejects
// the subjects of the patterns access rules write without their words.
func FuzzPrefilter(f *testing.F) {
	subjects := []string{"", "MyBOT/1.0", "evil.test", "x\xe9y", "GLOBALS=1", "a\x00bot", "Scr\naper", "BaDbOt", "sCRIPT"}
	for _, p := range append(corpusPatterns(f), `(BadBot|Scraper)`, `evil\.test`, `GLOBALS(=|\[)`, `^/wp-(admin|login)`, `(?i)script`, `\xe9+`, `a{2,}b`, `(ab|cd)+e`) {
		for _, s := range subjects {
			f.Add(p, s, uint8(1))
		}
	}
	f.Fuzz(func(t *testing.T, pattern, subject string, o uint8) {
		if len(pattern) > 512 || len(subject) > 1024 {
			return
		}
		opt := Options{ICase: o&1 != 0, DotAll: o&2 != 0, DollarEndOnly: o&4 != 0, DupNames: o&8 != 0, Newline: o&16 != 0, Timeout: 20 * time.Millisecond}
		re, err := compile(pattern, opt, false)
		if err != nil || re.pre == nil || re.pre.mayMatch(cString(subject)) {
			return
		}
		re.pre = nil
		m, err := re.FindStringSubmatchIndex(subject)
		if err == nil && m != nil {
			t.Fatalf("%q %+v: the prefilter %q rejects %q, which matches at %v", pattern, opt, re.pre, subject, m)
		}
	})
}

func TestPrefilterRejects(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		icase   bool
		lits    string
	}{
		{`(BadBot|EvilScraper)`, true, "badbot|evilscraper"},
		{`^https?://(www\.)?example\.com/`, false, "example.com/"},
		{`GLOBALS(=|\[|\%[0-9A-Z]{0,2})`, false, "globals"},
		{`(<|%3C).*script.*(>|%3E)`, true, "script"},
		{`\.(php|inc)$`, false, "php|inc"},
		{`^/a`, false, "/a"},
		{`^a`, false, ""},
		{`(a|)bc`, false, "bc"},
		{`x*`, false, ""},
	} {
		re := MustCompile(tt.pattern, Options{ICase: tt.icase})
		got := ""
		if re.pre != nil {
			got = strings.Join(re.pre.any, "|")
		}
		if got != tt.lits {
			t.Errorf("%q: literals %q, want %q", tt.pattern, got, tt.lits)
		}
	}
}

// ".*" and "^.*" answer without an engine, as the engines do.
func TestDotStar(t *testing.T) {
	for _, p := range []string{".*", "^.*"} {
		for _, dotall := range []bool{false, true} {
			re, err := compile(p, Options{DotAll: dotall}, true)
			if err != nil || !re.dotStar {
				t.Fatalf("%q: %v %v", p, err, re)
			}
			for _, s := range []string{"", "abc", "a\nb", "\n", "x\x00y"} {
				got, _ := re.FindStringSubmatchIndex(s)
				want := re.stdMatch(s)
				if !slices.Equal(got, want) {
					t.Errorf("%q dotall %v on %q: %v, the engine %v", p, dotall, s, got, want)
				}
			}
		}
	}
}

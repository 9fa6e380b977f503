package rewrite

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/regex"
)

var testEnv = Env{
	Compile: func(p string, icase bool) (*regex.Regexp, error) {
		return regex.Compile(p, regex.Options{ICase: icase})
	},
	KnownStatus: func(s int) bool {
		return s == 301 || s == 302 || s == 303 || s == 403 || s == 404 || s == 410 || s == 451
	},
}

// What a rule's flags and substitution make of it.
func TestParseRule(t *testing.T) {
	for _, tt := range []struct {
		raw    string
		flags  RuleFlag
		status int
		subst  string
		check  func(*Rule) bool
	}{
		{raw: `^\. - [F]`, flags: FlagStatus | FlagNoSub, status: 403, subst: "-"},
		{raw: `^old$ /new [R=301,L]`, flags: FlagForceRedirect | FlagLast, status: 301, subst: "/new"},
		{raw: `^x /y [R=451]`, flags: FlagForceRedirect | FlagStatus | FlagNoSub, status: 451, subst: "/y"},
		{raw: `^x /y [R]`, flags: FlagForceRedirect, status: 302, subst: "/y"},
		{raw: `^x /y [R=foo]`, flags: FlagForceRedirect, status: 0, subst: "/y"},
		{raw: `^x - [G,NC]`, flags: FlagStatus | FlagNoSub | FlagNoCase, status: 410, subst: "-"},
		{raw: `!^/index\.php /index.php? [QSA]`, flags: FlagQSAppend | FlagQSLast, status: 302, subst: "/index.php?", check: func(r *Rule) bool { return r.Negate && r.Pattern == `^/index\.php` }},
		{raw: `^(.*)$ /a?`, flags: FlagQSNone, status: 302, subst: "/a"},
		{raw: `^ /a [QSD]`, flags: FlagQSDiscard | FlagQSNone, status: 302, subst: "/a"},
		{raw: `^ /a?b=1 [QSD]`, flags: FlagQSDiscard, status: 302, subst: "/a?b=1"},
		{raw: `"^a b" 'c d' [E=x:1,E=y,S=2,N=7,CO=k:v:d,T=text/plain,H=h]`, status: 302, subst: "c d", flags: FlagNewRound,
			check: func(r *Rule) bool {
				return r.Pattern == "^a b" && strings.Join(r.Env, "|") == "x:1|y" && r.Skip == 2 && r.MaxRounds == 7 &&
					r.Cookies[0] == "k:v:d" && r.MimeType == "text/plain" && r.Handler == "h"
			}},
		{raw: `^a\ b c "[ C , END ]"`, flags: FlagChain | FlagEnd, status: 302, subst: "c", check: func(r *Rule) bool { return r.Pattern == `^a\ b` }},
		{raw: `^a b [DX,B=/?,BNE=&]`, flags: FlagEscapeBackref, status: 302, subst: "b", check: func(r *Rule) bool { return r.Escapes == "/?" && r.NoEscapes == "&" }},
		{raw: `^a b [L] ignored`, flags: FlagLast, status: 302, subst: "b"},
	} {
		r, err := ParseRule(tt.raw, testEnv)
		if err != nil {
			t.Errorf("%s: %v", tt.raw, err)
			continue
		}
		if r.Flags != tt.flags || r.Status != tt.status || r.Subst != tt.subst || tt.check != nil && !tt.check(r) {
			t.Errorf("%s: flags %b status %d subst %q (%+v); want %b %d %q", tt.raw, r.Flags, r.Status, r.Subst, r, tt.flags, tt.status, tt.subst)
		}
		if r.MaxRounds == 0 || tt.flags&FlagNewRound == 0 && r.MaxRounds != DefaultMaxRounds {
			t.Errorf("%s: max rounds %d", tt.raw, r.MaxRounds)
		}
	}
	for raw, want := range map[string]string{
		`^a`:            "RewriteRule: bad argument line '^a'",
		`^a b [L`:       "RewriteRule: bad flag delimiters",
		`^a b [L,Q]`:    "RewriteRule: unknown flag 'Q'",
		`^a b [R=299]`:  "RewriteRule: invalid HTTP response code '299' for flag 'R'",
		`^a b [BNE]`:    "RewriteRule: flag 'BNE' wants a list of characters (i.e. [BNE=...])",
		`(a b`:          "RewriteRule: cannot compile regular expression '(a'",
		`^a b [L,,F]`:   "RewriteRule: unknown flag ''",
		`^a b [L, ,F]`:  "RewriteRule: bad flag delimiters",
		`^a b "[L,,F]"`: "RewriteRule: unknown flag ''",
	} {
		if _, err := ParseRule(raw, testEnv); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", raw, err, want)
		}
	}
	// Spaces around an empty flag make mod_rewrite read the rest of the
	// field as one flag's name.
	if _, err := ParseRule(`^a b "[L,  ,F,G]"`, testEnv); err == nil || err.Error() != "RewriteRule: unknown flag ',F,G,'" {
		t.Errorf("an empty flag between spaces: %v", err)
	}
}

// The condition pattern types, their prefixes and flags.
func TestParseCond(t *testing.T) {
	for _, tt := range []struct {
		raw     string
		typ     CondType
		pattern string
		negate  bool
		nocase  bool
		or      bool
	}{
		{`%{HTTP_HOST} ^www\. [NC,OR]`, CondRegex, `^www\.`, false, true, true},
		{`%{REQUEST_FILENAME} !-f`, CondFileExists, "-f", true, false, false},
		{`%{REQUEST_FILENAME} -d [NC]`, CondFileDir, "-d", false, false, false},
		{`%{REQUEST_FILENAME} -l`, CondFileLink, "-l", false, false, false},
		{`%{REQUEST_URI} -U`, CondLookupURL, "-U", false, false, false},
		{`%{TIME_HOUR} -lt12`, CondIntLT, "12", false, false, false},
		{`%{TIME_HOUR} !-ne12`, CondIntEQ, "12", false, false, false},
		{`%{TIME_HOUR} -ne12`, CondIntEQ, "12", true, false, false},
		{`%{TIME_HOUR} -lt`, CondRegex, "-lt", false, false, false},
		{`%{HTTP_REFERER} =""`, CondStrEQ, "", false, false, false},
		{`%{HTTP_REFERER} >=b [NC]`, CondStrGE, "b", false, true, false},
		{`%{HTTP_REFERER} <a`, CondStrLT, "a", false, false, false},
		{`%{HTTP_REFERER} =`, CondRegex, "=", false, false, false},
		{`expr "%{REMOTE_ADDR} -ipmatch '10.0.0.0/8'"`, CondExpr, "%{REMOTE_ADDR} -ipmatch '10.0.0.0/8'", false, false, false},
	} {
		c, err := ParseCond(tt.raw, testEnv)
		if err != nil {
			t.Errorf("%s: %v", tt.raw, err)
			continue
		}
		if c.Type != tt.typ || c.Pattern != tt.pattern || c.Negate != tt.negate || c.NoCase != tt.nocase || c.OrNext != tt.or || (c.Type == CondRegex) != (c.Regex != nil) {
			t.Errorf("%s: %+v", tt.raw, c)
		}
	}
	for raw, want := range map[string]string{
		`%{HTTP_HOST}`:  "RewriteCond: bad argument line '%{HTTP_HOST}'",
		`a b [NC,X]`:    "RewriteCond: unknown flag 'X'",
		`a b c`:         "RewriteCond: bad flag delimiters",
		`a !(b`:         "RewriteCond: cannot compile regular expression '(b'",
		`a b [nocase,]`: "RewriteCond: unknown flag ''",
		`a b [nocase]`:  "",
	} {
		_, err := ParseCond(raw, testEnv)
		if got := ""; err != nil && err.Error() != want || err == nil && want != got {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

func TestCheckBase(t *testing.T) {
	for _, tt := range []struct {
		arg    string
		perDir bool
		want   string
	}{
		{"/app/", true, ""},
		{"/app/", false, "RewriteBase: only valid in per-directory config files"},
		{"", true, "RewriteBase: empty URL not allowed"},
		{"app", true, "RewriteBase: argument is not a valid URL"},
	} {
		if got := CheckBase(tt.arg, tt.perDir); got != tt.want {
			t.Errorf("%q (per directory %v): %q, want %q", tt.arg, tt.perDir, got, tt.want)
		}
	}
}

// FuzzParseRule: any argument text is a rule or Apache's kind of error,
// never a panic; the same text reads the same way twice; a rule's
// pattern is the one compiled.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{`^\. - [F]`, `"^a b" 'c' [R=301,L,E=x:1]`, `^a b [L,  ,F]`, `a`, `^a b [BNE=x,N=3,S=2]`, `!^x y?`} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, raw string, cond bool) {
		if cond {
			c, err := ParseCond(raw, testEnv)
			c2, err2 := ParseCond(raw, testEnv)
			if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
				t.Fatalf("two reads differ: %v / %v", err, err2)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "RewriteCond: ") {
				t.Fatalf("error %q", err)
			}
			if err == nil && (c.Type == CondRegex) != (c.Regex != nil) || c2 != nil && c2.Pattern != c.Pattern {
				t.Fatalf("%+v", c)
			}
			return
		}
		r, err := ParseRule(raw, testEnv)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "RewriteRule: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if r.Regex == nil || r.Regex.String() == "" && r.Pattern != "" {
			t.Fatalf("rule %+v without its pattern", r)
		}
		// Its substitution expands in one pass, whatever it holds; with
		// no lookups and no captures a text without specials stays.
		src := Backrefs{Source: raw, Index: []int{0, len(raw), 0, len(raw) / 2}}
		out, _ := Expand(r.Subst, src, src, r, Lookups{})
		if !strings.ContainsAny(r.Subst, `\$%`) && out != r.Subst {
			t.Fatalf("%q expands to %q", r.Subst, out)
		}
	})
}

// 2.2.x does not know the flags 2.4 added.
func TestParseRule22(t *testing.T) {
	env22 := testEnv
	env22.V22 = true
	for _, raw := range []string{`^a - [END]`, `^a /b [QSD]`, `^a /b [qsl]`, `^a /b [B,BNP]`, `^a /b [UnsafePrefixStat]`, `^a /b [UNC]`} {
		if _, err := ParseRule(raw, env22); err == nil || !strings.Contains(err.Error(), "unknown flag") {
			t.Errorf("2.2 %s: %v, want unknown flag", raw, err)
		}
		if _, err := ParseRule(raw, testEnv); err != nil {
			t.Errorf("2.4 %s: %v", raw, err)
		}
	}
	for _, raw := range []string{`^a /b [L,NC,QSA,PT,DPI,NS,NE,C,S=1,E=x:1,T=text/plain,H=h,CO=a:b:c,R=301,B]`, `^a - [F]`, `^a - [G]`} {
		if _, err := ParseRule(raw, env22); err != nil {
			t.Errorf("2.2 %s: %v", raw, err)
		}
	}
}

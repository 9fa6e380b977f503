package regex

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// pat is a <Files>-style pattern for the tests: "~re" a regular
// expression, "=name" a literal, anything else a wildcard.
func patNames(t testing.TB, p string) Names {
	t.Helper()
	switch {
	case strings.HasPrefix(p, "~"):
		re, err := Compile(p[1:], Options{})
		if err != nil {
			t.Fatal(err)
		}
		return re.Names()
	case strings.HasPrefix(p, "="):
		return LiteralNames(p[1:])
	}
	return GlobNames(p, FnmPathname)
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		// Debian's "^\.ht" block and CMS patterns.
		{`~^\.ht`, `~\.(engine|inc|info|install|module|sql|theme)$|^(\..*|Entries.*|Repository)$`, true}, // ".htx.inc", ".ht"
		{`~^\.ht`, `~^(wp-config\.php|readme\.html|license\.txt)$`, false},
		{`~^\.ht`, `~\.(inc|sql)$`, true}, // ".ht.sql"
		{`~^\.ht`, `~^[a-z0-9_-]+\.(inc|sql)$`, false},
		{`~^\.ht`, `=.htaccess`, true},
		{`~^\.ht`, `=htaccess`, false},
		{`~^\.ht`, `*.php`, true}, // ".ht.php"
		{`~^\.ht`, `[!.]*`, false},
		{`~^\.ht`, `?ht*`, true},
		{`*.php`, `*.inc`, false},
		{`*.php`, `~\.inc$`, false},
		{`*.php`, `~\.php$`, true},
		{`*.php`, `~\.PHP$`, false},
		{`*.php`, `~(?i)\.PHP$`, true},
		{`a*`, `*b`, true},
		{`a?`, `???`, false},
		{`[abc]x`, `[!a]x`, true},
		{`[a]x`, `[!a]x`, false},
		{`=wp-config.php`, `*.php`, true},
		{`=wp-config.php`, `*.inc`, false},
		{`=x.php`, `=x.php`, true},
		{`=x.php`, `=x.phps`, false},
		// "$" before a final newline, and DOLLAR_ENDONLY.
		{`~\.php$`, `~\n$`, true},
		{`~\.php\z`, `~php\n\z`, false},
		{`~\.php\z`, `~php\n`, true}, // ".php\n.php"
		// A "/" in a wildcard matches no name.
		{`a/b`, `*`, false},
		// Counted repetitions.
		{`~^a{3}$`, `~^a{2}$`, false},
		{`~^a{2,4}$`, `~^a{4,}$`, true},
		{`~^(ab){1,3}$`, `~^abababab$`, false},
		// Not regular: read as matching more.
		{`~^(a)\1$`, `~^ab$`, true},
		{`~^(?!x)`, `~^x`, true},
		// Anchors.
		{`~^abc`, `~^abd`, false},
		{`~abc$`, `~abd$`, false},
		{`~abc`, `~abd`, true},
		{`~^$`, `=`, true},
		{`~.`, `=`, false},
	}
	for _, tt := range tests {
		if got := Overlap(patNames(t, tt.a), patNames(t, tt.b)); got != tt.want {
			t.Errorf("Overlap(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Overlap(patNames(t, tt.b), patNames(t, tt.a)); got != tt.want {
			t.Errorf("Overlap(%s, %s) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

// TestGlobNames holds GlobNames to Fnmatch: a name is in the set exactly
// when apr_fnmatch matches it.
func TestGlobNames(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 17))
	items := []string{"a", "b", ".", "*", "?", "[ab]", "[!a]", "[a-c]", `\*`, `\a`, "[", "]", "[]a]", "[^b.]", `[\]]`, "\xe9", "[\x80-\xff]"}
	names := []byte("ab.c*]\\[\xe9")
	for i := 0; i < 20000; i++ {
		var p strings.Builder
		for k := r.IntN(5); k >= 0; k-- {
			p.WriteString(items[r.IntN(len(items))])
		}
		var s strings.Builder
		for k := r.IntN(6); k > 0; k-- {
			s.WriteByte(names[r.IntN(len(names))])
		}
		pat, name := p.String(), s.String()
		want := Fnmatch(pat, name, FnmPathname)
		if got := Overlap(GlobNames(pat, FnmPathname), LiteralNames(name)); got != want {
			t.Fatalf("GlobNames(%q) holds %q: %v; Fnmatch: %v", pat, name, got, want)
		}
	}
}

// TestRegexNames holds Regexp.Names to MatchString: a name the pattern
// matches is in the set, and for a regular pattern every name in it is
// one it matches.
func TestRegexNames(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 29))
	items := []string{"a", "b", ".", "^", "$", "\\z", "(a|b)", "(ab)*", "[ab]", "[^a]", "a?", "b+", "a{2}", "(?:a|)", "x", `\.`, "(?i)A", `\d`, "(a|b.)"}
	looser := []string{`\b`, `(?=a)`, `(?!b)`, `(a)\1`, `(?m)^`}
	names := []byte("ab.xA1\n")
	for i := 0; i < 20000; i++ {
		var p strings.Builder
		regular := true
		for k := r.IntN(5); k >= 0; k-- {
			if r.IntN(8) == 0 {
				p.WriteString(looser[r.IntN(len(looser))])
				regular = false
				continue
			}
			p.WriteString(items[r.IntN(len(items))])
		}
		re, err := Compile(p.String(), Options{})
		if err != nil {
			continue
		}
		var s strings.Builder
		for k := r.IntN(6); k > 0; k-- {
			s.WriteByte(names[r.IntN(len(names))])
		}
		name := s.String()
		want, err := re.MatchString(name)
		if err != nil {
			t.Fatal(err)
		}
		got := Overlap(re.Names(), LiteralNames(name))
		if want && !got || regular && got != want {
			t.Fatalf("%q: Names holds %q: %v; MatchString: %v", p.String(), name, got, want)
		}
	}
}

// TestOverlapSound: two patterns that both match some short name are
// never reported disjoint (all names of up to 4 bytes over a small
// alphabet are tried).
func TestOverlapSound(t *testing.T) {
	res := []string{"^a", "a$", "b$", "\\n", "a\\z", "b", "^.b", "(a|b)$", "^[ab]{2}$", "a.*b", "^(?!a)", `\bb`, "^$", "(a)\\1"}
	globs := []string{"a*", "*b", "?", "??", "[ab]*", "*a*", "a", "[!a]b", "*"}
	var all []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		all = append(all, prefix)
		if n == 0 {
			return
		}
		for _, c := range "ab.\n" {
			gen(prefix+string(c), n-1)
		}
	}
	gen("", 4)
	type pattern struct {
		text  string
		names Names
		match func(string) bool
	}
	var pats []pattern
	for _, x := range res {
		re := MustCompile(x, Options{})
		pats = append(pats, pattern{"~" + x, re.Names(), func(s string) bool { ok, _ := re.MatchString(s); return ok }})
	}
	for _, g := range globs {
		pats = append(pats, pattern{g, GlobNames(g, FnmPathname), func(s string) bool { return Fnmatch(g, s, FnmPathname) }})
	}
	for _, a := range pats {
		for _, b := range pats {
			common := ""
			found := false
			for _, s := range all {
				if a.match(s) && b.match(s) {
					common, found = s, true
					break
				}
			}
			if found && !Overlap(a.names, b.names) {
				t.Errorf("Overlap(%s, %s) = false, but both match %q", a.text, b.text, common)
			}
		}
	}
}

// FuzzOverlap: two patterns (each a regular expression or a wildcard)
// that both match a name are never reported disjoint, and a name is in
// a wildcard's set exactly when apr_fnmatch matches it.
func FuzzOverlap(f *testing.F) {
	f.Add(`^\.ht`, `\.(inc|sql)$|^\..*`, true, false, ".ht.sql")
	f.Add(`*.php`, `\.php$`, false, false, "x.php")
	f.Add(`a?c`, `[!b]*`, false, true, "abc")
	f.Add(`x$`, `\n`, false, false, "x\n")
	f.Fuzz(func(t *testing.T, a, b string, aGlob, bGlob bool, name string) {
		if len(a) > 64 || len(b) > 64 || len(name) > 32 || strings.ContainsAny(name, "/\x00") {
			return
		}
		side := func(p string, glob bool) (Names, func(string) bool, bool) {
			if glob {
				return GlobNames(p, FnmPathname), func(s string) bool { return Fnmatch(p, s, FnmPathname) }, true
			}
			re, err := Compile(p, Options{})
			if err != nil {
				return Names{}, nil, false
			}
			return re.Names(), func(s string) bool { ok, err := re.MatchString(s); return ok || err != nil }, true
		}
		na, ma, ok := side(a, aGlob)
		if !ok {
			return
		}
		nb, mb, ok := side(b, bGlob)
		if !ok {
			return
		}
		if ma(name) && mb(name) && !Overlap(na, nb) {
			t.Fatalf("Overlap(%q, %q) = false, but both match %q", a, b, name)
		}
		if aGlob {
			if got, want := Overlap(na, LiteralNames(name)), ma(name); got != want {
				t.Fatalf("GlobNames(%q) holds %q: %v; Fnmatch: %v", a, name, got, want)
			}
		}
	})
}

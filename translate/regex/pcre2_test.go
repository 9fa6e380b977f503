package regex

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// genPattern writes a random pattern from the syntax PCRE2 and orderly
// share, and some they do not.
func genPattern(r *rand.Rand, depth int) string {
	var b strings.Builder
	n := 1 + r.IntN(4)
	for i := 0; i < n; i++ {
		b.WriteString(genPiece(r, depth))
	}
	if depth < 2 && r.IntN(6) == 0 {
		return b.String() + "|" + genPattern(r, depth+1)
	}
	return b.String()
}

var atoms = []string{
	"a", "b", "k", "K", "s", "S", "\n", ".", "\\.", "\\n", "\xc3", "\xa9", "\xc3\xa9", "\xe2\x84\xaa", "\xc5\xbf",
	"\\d", "\\w", "\\W", "\\s", "\\S", "\\x41", "\\xe9", "\\x{c3}", "\\101", "\\0", "\\e", "\\cA",
	"[ab]", "[^a]", "[a-c]", "[^\\n]", "[\\x80-\\xff]", "[[:alpha:]]", "[[:^digit:]]", "[\\w.]", "[]a]", "[a-]", "[\xc3\xa9]",
	"[k-s]", "[\\xc0-\\xdf]", "\\Qa.\\E", "\\N", "\\C", "\\R", "\\p{L}", "\\P{Lu}", "\\pN",
	"^", "$", "\\A", "\\z", "\\Z", "\\b", "\\B", "\\G", "[[:<:]]", "[[:>:]]",
	"\\1", "\\2", "\\g{1}", "\\g-1", "\\k<n>",
	"(?i)", "(?-i)", "(?s)", "(?m)", "(?x)", "(?U)", "(?^)", "(?#c)", " ", "#",
	"{", "}", "x{2}", "]", "(?J)", "a", "b", "k", ".", "[a-z]", "\\w",
}

// broken are atoms that make most patterns fail to compile, taken
// rarely.
var broken = []string{"\\", "*", "(", ")", "[", "[z-a]", "\\x{100}", "\\c\x01", "(?<=a+)", "\\L", "\\q", "[\\d-z]", "a{3,2}", "\\777", "\\8", "\\g0"}

func genPiece(r *rand.Rand, depth int) string {
	var s string
	if depth < 3 && r.IntN(4) == 0 {
		open := []string{"(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?i:", "(?s:", "(?m:", "(?<n>", "(?P<n>", "(?'m'", "(?(1)", "(?(?=a)", "(?(<n>)"}
		s = open[r.IntN(len(open))] + genPattern(r, depth+1) + ")"
	} else if r.IntN(40) == 0 {
		s = broken[r.IntN(len(broken))]
	} else {
		s = atoms[r.IntN(len(atoms))]
	}
	if r.IntN(3) == 0 {
		q := []string{"*", "+", "?", "*?", "+?", "??", "*+", "++", "{2}", "{1,3}", "{0,}", "{2,}?", "{,2}"}
		s += q[r.IntN(len(q))]
	}
	return s
}

var subjectBytes = []string{"a", "b", "k", "K", "s", "\n", ".", "A", "1", "_", " ", "\xc3", "\xa9", "\xe2\x84\xaa", "\xc5\xbf", "\xe9", "\x85", "\xa0", "\x0b", "\r", "x", "#", "-"}

func genSubject(r *rand.Rand) string {
	var b strings.Builder
	n := r.IntN(8)
	for i := 0; i < n; i++ {
		b.WriteString(subjectBytes[r.IntN(len(subjectBytes))])
	}
	return b.String()
}

var optionSets = []Options{
	{},
	{DollarEndOnly: true, DotAll: true, DupNames: true},
	{ICase: true},
	{ICase: true, DollarEndOnly: true, DupNames: true},
	{DotAll: true},
	{Newline: true},
}

// TestPCRE2Oracle holds orderly's evaluation of random patterns and
// subjects to libpcre2's: the same patterns compile (but for those
// orderly refuses as unsupported), and the same subjects match with the
// same group offsets, through each engine that can take the pattern.
func TestPCRE2Oracle(t *testing.T) {
	o := pcre2Oracle(t)
	r := rand.New(rand.NewPCG(13, 4))
	n := 30000
	if testing.Short() {
		n = 3000
	}
	var compiled, refusedOK, unsupported, std, bt, subjects, fails int
	for i := 0; i < n && fails < 20; i++ {
		pat := genPattern(r, 0)
		opt := optionSets[r.IntN(len(optionSets))]
		re, err := compile(pat, opt, true)
		probe := o.run(pat, "", opt)
		if err != nil {
			if e, ok := err.(*Error); ok && e.Unsupported {
				unsupported++
				continue
			}
			if probe.compiled {
				t.Errorf("%q %+v: orderly refuses (%v), PCRE2 compiles it", pat, opt, err)
				fails++
			}
			refusedOK++
			continue
		}
		if !probe.compiled {
			t.Errorf("%q %+v: PCRE2 refuses it, orderly compiles it", pat, opt)
			fails++
			continue
		}
		compiled++
		if re.std != nil {
			std++
		}
		if re.bt != nil {
			bt++
		}
		for k := 0; k < 6; k++ {
			subj := genSubject(r)
			want := o.run(pat, subj, opt)
			if want.failed {
				continue
			}
			subjects++
			got, err := re.FindStringSubmatchIndex(subj)
			if err != nil {
				t.Errorf("%q %+v on %q: %v", pat, opt, subj, err)
				fails++
				continue
			}
			if !sameMatch(got, want) {
				t.Errorf("%q %+v on %q: orderly %v, PCRE2 %v (std %v nl %v)", pat, opt, subj, got, want.m, re.std != nil, re.nl)
				fails++
			}
			// Each engine on its own, where it is exact.
			if re.std != nil && (!re.nl || !strings.HasSuffix(subj, "\n")) {
				if m := re.stdMatch(subj); !sameMatch(m, want) {
					t.Errorf("%q %+v on %q: RE2 %v, PCRE2 %v", pat, opt, subj, m, want.m)
					fails++
				}
			}
			if re.bt != nil {
				m, err := re.btMatch(cString(subj), true)
				if err == nil && !sameMatch(m, want) {
					t.Errorf("%q %+v on %q: regexp2 %v, PCRE2 %v", pat, opt, subj, m, want.m)
					fails++
				}
			}
		}
	}
	t.Logf("%d patterns: %d compiled (%d with RE2, %d with regexp2), %d refused as PCRE2 does, %d unsupported; %d subjects compared", n, compiled, std, bt, refusedOK, unsupported, subjects)
}

func sameMatch(got []int, want answer) bool {
	if !want.matched {
		return got == nil
	}
	if got == nil {
		return false
	}
	w := want.m
	if len(w) > len(got) {
		w = w[:len(got)]
	}
	return slices.Equal(got, w)
}

package lint

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendOneLine checks appendOneLine, whose fast path copies a text
// that is already on one line, against its definition: the words between
// runs of ASCII white space, joined by one space.
func TestAppendOneLine(t *testing.T) {
	isSpace := func(r rune) bool { return strings.ContainsRune(" \t\n\r\v\f", r) }
	check := func(s string) {
		t.Helper()
		want := strings.Join(strings.FieldsFunc(s, isSpace), " ")
		if got := string(appendOneLine([]byte("x"), s)); got != "x"+want {
			t.Errorf("appendOneLine(%q) = %q, want %q", s, got[1:], want)
		}
	}
	for _, s := range []string{"", " ", "a", "a b", " a", "a ", "a  b", "a\tb", "a\x01b", "a \x01 b", "é\u00a0b", "Order allow,deny"} {
		check(s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Random bytes, white space and not.
	alphabet := []string{"a", "b", "word", " ", " ", " ", "\t", "\n", "\r", "\v", "\f", "\x01", "\x00", "é", "\xff"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		check(b.String())
	}
	// Texts on one line, as most are, with one defect anywhere or none.
	words := []string{"a", "ab", "word", "Require", "é", "\xff"}
	defects := []string{" ", "\t", "\n", "\x01", "  "}
	for range 20000 {
		var b strings.Builder
		for i := range rng.IntN(30) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		s := b.String()
		if at := rng.IntN(len(s) + 2); at <= len(s) {
			s = s[:at] + defects[rng.IntN(len(defects))] + s[at:]
		}
		check(s)
	}
}

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
	alphabet := []string{"a", "b", " ", " ", "\t", "\n", "\r", "\v", "\f", "\x01", "\x00", "é", "\xff"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		check(b.String())
	}
}

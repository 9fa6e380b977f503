package regex

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

func TestFnmatch(t *testing.T) {
	tests := []struct {
		pat, s string
		flags  int
		want   bool
	}{
		// "?" is one byte: a two-byte UTF-8 letter takes two.
		{"a??c.txt", "a\xc3\xa9c.txt", FnmPathname, true},
		{"a?c.txt", "a\xc3\xa9c.txt", FnmPathname, false},
		{"*.txt", "caf\xc3\xa9.txt", FnmPathname, true},
		{"*", "a/b", FnmPathname, false},
		{"*", "a/b", 0, true},
		{"/home/*/public_html", "/home/bob/public_html", FnmPathname, true},
		{"[!a]bc", "xbc", FnmPathname, true},
		{"[^a]bc", "abc", FnmPathname, false},
		{"[]]x", "]x", 0, true},
		{"a[b", "a[b", 0, true}, // no "]": a literal "["
		{`a\*`, "a*", 0, true},
		{`a\*`, "ab", 0, false},
		// A range from below 0x80 to above is empty (signed char).
		{"[a-\xff]", "b", 0, false},
		{"[\x80-\xff]", "\xc3", 0, true},
		{"[[:alpha:]]", "a", 0, false}, // no POSIX classes: "[[:alph" then "a:]]"...
		{"*.PHP", "x.php", FnmCaseBlind, true},
		{"*.php", "x.PHP", 0, false},
		{"k*", "\xe2\x84\xaax", FnmCaseBlind, false},
	}
	for _, tt := range tests {
		if got := Fnmatch(tt.pat, tt.s, tt.flags); got != tt.want {
			t.Errorf("Fnmatch(%q, %q, %#x) = %v, want %v", tt.pat, tt.s, tt.flags, got, tt.want)
		}
	}
	for pat, want := range map[string]bool{"a": false, "a?": true, "*.x": true, "a[b": false, "a[b]": true, `a\*`: false, "a]": false, `a\`: false, `a\[b]`: false} {
		if got := FnmatchTest(pat); got != want {
			t.Errorf("FnmatchTest(%q) = %v, want %v", pat, got, want)
		}
	}
}

// TestFnmatchOracle holds Fnmatch to APR's apr_fnmatch (libapr1, built
// with cc from testdata/fnmatchoracle.c) on random patterns and names.
func TestFnmatchOracle(t *testing.T) {
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "apr-1").Output()
	if err != nil {
		skipOrFail(t, "apr_fnmatch oracle", fmt.Errorf("pkg-config apr-1 (needs libapr1-dev): %v", err))
	}
	in, out, err := startOracle("testdata/fnmatchoracle.c", "fnmatchoracle", strings.Fields(string(flags))...)
	if err != nil {
		skipOrFail(t, "apr_fnmatch oracle", err)
	}
	defer in.Close()
	r := rand.New(rand.NewPCG(7, 7))
	pieces := []string{"a", "b", "/", "*", "?", "[ab]", "[!a]", "[a-c]", "[", "]", "\\", "\\*", ".", "\xc3", "\xa9", "[\x80-\xff]", "[a-\xff]", "A", "-", "[]a]", "[a-]", "**"}
	strs := []string{"a", "b", "/", ".", "\xc3", "\xa9", "A", "-", "]", "[", "*", "c"}
	gen := func(src []string, n int) string {
		var b strings.Builder
		for i := r.IntN(n); i > 0; i-- {
			b.WriteString(src[r.IntN(len(src))])
		}
		return b.String()
	}
	hx := func(s string) string {
		if s == "" {
			return "-"
		}
		return hex.EncodeToString([]byte(s))
	}
	n, bad := 20000, 0
	for i := 0; i < n && bad < 10; i++ {
		pat, s := gen(pieces, 6), gen(strs, 7)
		fl := []int{0, FnmPathname, FnmPathname | FnmPeriod, FnmCaseBlind, FnmNoEscape | FnmPathname}[r.IntN(5)]
		fmt.Fprintf(in, "%d %s %s\n", fl, hx(pat), hx(s))
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := line == "1\n"; Fnmatch(pat, s, fl) != want {
			t.Errorf("Fnmatch(%q, %q, %#x) = %v, apr_fnmatch %v", pat, s, fl, !want, want)
			bad++
		}
	}
	t.Logf("%d patterns and names compared with apr_fnmatch", n)
}

func TestEqualFold(t *testing.T) {
	if !EqualFold("Referer", "rEFERER") || EqualFold("k", "\u212a") || EqualFold("Host", "Ho\u017ft") || EqualFold("\xc3\xa9", "\xc3\x89") {
		t.Error("EqualFold is not strcasecmp")
	}
}

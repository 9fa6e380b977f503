package translate

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var textCases = []string{
	"", "\n", "LoadModule a b\n", "  \tLoadModule   a_module  b.so  c d e f\r\n",
	"User www-data", "user\twww", "Group\v1", "  GROUP x\n", "Userx y", "User \n", "User\t\r\n",
	"#User x", "Group", "Users a", "a\u00a0b c", "\u2028User x", "x\x00y z",
	"LoadModule access_compat_module modules/mod_access_compat.so\n",
}

// FuzzFields holds fields to strings.Fields' answer, and userOrGroup to
// the regular expression it replaced.
func FuzzFields(f *testing.F) {
	for _, c := range textCases {
		f.Add(c)
	}
	userGroup := regexp.MustCompile(`(?m)^[ \t]*([Uu][Ss][Ee][Rr]|[Gg][Rr][Oo][Uu][Pp])[ \t]+\S`)
	f.Fuzz(func(t *testing.T, l string) {
		var buf [4]string
		want := strings.Fields(l)
		want = want[:min(len(want), 4)]
		if got := fields(l, &buf); !slices.Equal(got, want) {
			t.Fatalf("fields(%q) = %q, want %q", l, got, want)
		}
		if got, want := userOrGroup(l), userGroup.MatchString(l); got != want {
			t.Fatalf("userOrGroup(%q) = %v, want %v", l, got, want)
		}
		for _, w := range []string{"loadmodule", "x", "shmcb"} {
			if got, want := containsFold(l, w), strings.Contains(asciiLower(l), w); got != want {
				t.Fatalf("containsFold(%q, %q) = %v, want %v", l, w, got, want)
			}
		}
	})
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

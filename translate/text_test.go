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

func TestApplyEdits(t *testing.T) {
	end := func(text ...string) edit { return edit{from: atEnd, to: atEnd, text: text} }
	tests := []struct {
		name, src string
		es        []edit
		want      string
	}{
		{"none", "a\nb\n", nil, "a\nb\n"},
		{"replace", "a\nb\nc\n", []edit{{from: 2, to: 2, text: []string{"B1", "B2"}}}, "a\nB1\nB2\nc\n"},
		{"delete", "a\nb\nc\n", []edit{{from: 1, to: 2}}, "c\n"},
		{"out of order, overlapping", "a\nb\nc\nd\n", []edit{{from: 3, to: 4, text: []string{"x"}}, {from: 1, to: 3, text: []string{"y"}}}, "y\nd\n"},
		{"past the end", "a\n", []edit{{from: 1, to: 5, text: []string{"x"}}}, "a\n"},
		{"append", "a\nb\n", []edit{end("z")}, "a\nb\nz\n"},
		{"append, no final newline", "a\nb", []edit{end("z")}, "a\nb\nz\n"},
		{"append twice", "a", []edit{end("y"), end("z")}, "a\ny\nz\n"},
		{"append to empty", "", []edit{end("z")}, "z\n"},
		{"all deleted, then append", "a\nb", []edit{{from: 1, to: 2}, end("z")}, "z\n"},
		{"last line edited, no final newline", "a\nb", []edit{{from: 2, to: 2, text: []string{"B"}}}, "a\nB\n"},
		{"compat module", "LoadModule access_compat_module m.so\nx\n", nil, "# orderly DIR-10: mod_access_compat no longer needed: LoadModule access_compat_module m.so\nx\n"},
	}
	for _, tt := range tests {
		if got := applyEdits([]byte(tt.src), tt.es, false); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := applyEdits([]byte("LoadModule access_compat_module m.so\n"), nil, true); got != "LoadModule access_compat_module m.so\n" {
		t.Errorf("keepCompat: %q", got)
	}
}

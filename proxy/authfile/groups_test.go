package authfile

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseGroups(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		groups map[string][]string // user → GroupsOf(user)
		names  []string            // Names()
		errs   []error
	}{
		{
			name:   "basic",
			data:   "admins: alice bob\nstaff: bob carol\n",
			groups: map[string][]string{"alice": {"admins"}, "bob": {"admins", "staff"}, "carol": {"staff"}, "dave": nil},
			names:  []string{"admins", "staff"},
		},
		{
			name:   "a group on several lines",
			data:   "staff: alice\nadmins: root\nstaff: bob\nstaff: alice\n",
			groups: map[string][]string{"alice": {"staff"}, "bob": {"staff"}, "root": {"admins"}},
			names:  []string{"staff", "admins"},
		},
		{
			name:   "group names ignore ASCII case",
			data:   "Staff: alice\nSTAFF: bob\nstaff: alice\nÉquipe: carol\néquipe: dave\n",
			groups: map[string][]string{"alice": {"Staff"}, "bob": {"Staff"}, "carol": {"Équipe"}, "dave": {"équipe"}},
			names:  []string{"Staff", "Équipe", "équipe"},
		},
		{
			name:   "user names are case-sensitive",
			data:   "g: Alice",
			groups: map[string][]string{"Alice": {"g"}, "alice": nil, "ALICE": nil},
		},
		{
			name:   "white space",
			data:   "  admins \t:\talice   bob\t\r\nstaff:carol\n",
			groups: map[string][]string{"alice": {"admins"}, "bob": {"admins"}, "carol": {"staff"}},
			names:  []string{"admins", "staff"},
		},
		{
			name:   "white space inside a group name",
			data:   "web admins: alice",
			groups: map[string][]string{"alice": {"web admins"}},
		},
		{
			name:   "a run of colons",
			data:   "g::: alice",
			groups: map[string][]string{"alice": {"g"}},
		},
		{
			name:   "colons in member names",
			data:   "g: a:b c:",
			groups: map[string][]string{"a:b": {"g"}, "c:": {"g"}, "a": nil},
		},
		{
			name: "quoted members",
			data: `g: "John Smith" 'O\'Brien' "say \"hi\"" "back\\slash" plain\\x plain\y "x"y`,
			groups: map[string][]string{
				"John Smith": {"g"}, "O'Brien": {"g"}, `say "hi"`: {"g"}, `back\slash`: {"g"},
				`plain\x`: {"g"}, `plain\y`: {"g"}, "x": {"g"}, "y": {"g"}, "John": nil,
			},
		},
		{
			name:   "empty quoted member",
			data:   `g: "" a`,
			groups: map[string][]string{"": {"g"}, "a": {"g"}},
		},
		{
			name:   "unterminated quote",
			data:   "g: a \"John Smith\nh: b",
			groups: map[string][]string{"a": {"g"}, "John Smith": {"g"}, "b": {"h"}},
			errs:   []error{ErrUnterminatedQuote},
		},
		{
			name:   "comments and blank lines",
			data:   "# admins: root\n\n   # staff: bob\n\t\ng: alice # not a comment\n",
			groups: map[string][]string{"root": nil, "bob": nil, "alice": {"g"}, "#": {"g"}, "not": {"g"}},
			names:  []string{"g"},
		},
		{
			name:   "no colon",
			data:   "admins alice bob\nstaff: carol\n",
			groups: map[string][]string{"alice": nil, "admins": nil, "carol": {"staff"}},
			names:  []string{"staff"},
			errs:   []error{ErrNoColon},
		},
		{
			name:   "no members",
			data:   "empty:\nalso-empty: \nstaff: bob",
			groups: map[string][]string{"bob": {"staff"}},
			names:  []string{"staff"},
		},
		{
			name:   "empty group name",
			data:   ": alice",
			groups: map[string][]string{"alice": {""}},
		},
		{
			name:   "continued line",
			data:   "g: alice \\\n bob \\\r\n carol\nh: dave",
			groups: map[string][]string{"alice": {"g"}, "bob": {"g"}, "carol": {"g"}, "dave": {"h"}},
		},
		{
			name:   "continued at end of file",
			data:   "g: alice\nh: bob\\\n",
			groups: map[string][]string{"alice": {"g"}, "bob": nil},
			errs:   []error{ErrContinuedAtEOF},
		},
		{
			name:   "NUL",
			data:   "g: alice\x00 bob\nh: carol",
			groups: map[string][]string{"alice": {"g"}, "bob": nil, "carol": {"h"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, errs := ParseGroups("groups", []byte(tt.data))
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors = %q, want %v", errs, tt.errs)
			}
			for i, err := range errs {
				if !errors.Is(err, tt.errs[i]) || !strings.HasPrefix(err.Error(), "groups:") {
					t.Errorf("error %q, want groups:N: %v", err, tt.errs[i])
				}
			}
			for user, want := range tt.groups {
				got := g.GroupsOf(user)
				if !slices.Equal(got, want) {
					t.Errorf("GroupsOf(%q) = %q, want %q", user, got, want)
				}
				for _, group := range want {
					for _, name := range []string{group, asciiUpper(group), asciiLower(group)} {
						if !g.Member(user, name) {
							t.Errorf("Member(%q, %q) = false", user, name)
						}
					}
				}
				if g.Member(user, "nonexistent") {
					t.Errorf("Member(%q, nonexistent) = true", user)
				}
			}
			if tt.names != nil && !slices.Equal(g.Names(), tt.names) {
				t.Errorf("Names() = %q, want %q", g.Names(), tt.names)
			}
		})
	}
}

// TestGroupsCaseFolding checks that group names fold ASCII letters only,
// as strcasecmp does in the "C" locale.
func TestGroupsCaseFolding(t *testing.T) {
	g, _ := ParseGroups("g", []byte("Équipe: alice\nK: bob\n"))
	for _, tt := range []struct {
		user, group string
		want        bool
	}{
		{"alice", "Équipe", true},
		{"alice", "éQUIPE", false},
		{"alice", "équipe", false},
		{"bob", "k", true},
		{"bob", "\u212a", false}, // KELVIN SIGN, which Unicode folds to k
	} {
		if got := g.Member(tt.user, tt.group); got != tt.want {
			t.Errorf("Member(%q, %q) = %v, want %v", tt.user, tt.group, got, tt.want)
		}
	}
}

func TestGroupsLongLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("big:")
	for i := range 100000 {
		b.WriteString(" user")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteByte(byte('a' + i%26))
	}
	b.WriteString(" last\n")
	g, errs := ParseGroups("g", []byte(b.String()))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for _, user := range []string{"usera", "userxxxxxxz", "last"} {
		if !g.Member(user, "big") {
			t.Errorf("Member(%q, big) = false", user)
		}
	}
}

func TestGroupsOfIsACopy(t *testing.T) {
	g, _ := ParseGroups("g", []byte("a: bob\nb: bob\n"))
	got := g.GroupsOf("bob")
	got[0] = "changed"
	names := g.Names()
	names[0] = "changed"
	if !g.Member("bob", "a") || g.GroupsOf("bob")[0] != "a" || g.Names()[0] != "a" {
		t.Error("changing the slices changed the Groups")
	}
}

func TestNilGroups(t *testing.T) {
	var g *Groups
	if g.Member("a", "b") || g.GroupsOf("a") != nil || g.Names() != nil || g.Name() != "" {
		t.Error("nil Groups is not empty")
	}
}

// asciiUpper returns s with ASCII lower-case letters made upper-case.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

package translate

import "testing"

// AliasMatches is mod_alias's alias_matches (mod_alias.c), byte for byte.
func TestAliasMatches(t *testing.T) {
	tests := []struct {
		uri, alias string
		want       int
	}{
		{"/icons/x", "/icons/", 7},
		{"/icons", "/icons/", 0},
		{"/icons", "/icons", 6},
		{"/icons/x", "/icons", 6},
		{"/iconsx", "/icons", 0},
		{"/ic", "/icons", 0},
		{"/a///b", "//a//", 5},
		{"/a", "//a//", 0},
		{"x/a", "/a", 0},
		{"/x", "/", 1},
		{"//x", "/", 2},
		{"/", "/", 1},
		{"/x", "", 0}, // Alias "" matches nothing (Apache would read before the string)
	}
	for _, tt := range tests {
		if got := AliasMatches(tt.uri, tt.alias); got != tt.want {
			t.Errorf("AliasMatches(%q, %q) = %d, want %d", tt.uri, tt.alias, got, tt.want)
		}
	}
}

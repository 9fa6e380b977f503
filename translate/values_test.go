package translate

import (
	"testing"

	"github.com/orderly-proxy/orderly/translate/directive"
)

// TestValuesByVersion checks the values 2.2.34 refuses and 2.4 takes
// (TestValuesMatchApache24 holds the 2.4 side to apache2).
func TestValuesByVersion(t *testing.T) {
	tests := []struct {
		check    func([]string, directive.Version) string
		args     []string
		v22, v24 string
	}{
		{fileETag, []string{"MTime", "Digest"}, "Unknown keyword 'Digest' for FileETag directive", ""},
		{fileETag, []string{"-None"}, "FileETag keyword 'None' cannot be used with '+' or '-'", "FileETag keyword 'None' cannot be used with '+' or '-'"},
		{rewriteOptions, []string{"Inherit", "InheritBefore"}, "RewriteOptions: unknown option 'InheritBefore'", ""},
		{rewriteOptions, []string{"MaxRedirects=10", "AllowAnyURI"}, "", ""},
	}
	for _, tt := range tests {
		if got := tt.check(tt.args, directive.V22); got != tt.v22 {
			t.Errorf("%q in 2.2: %q, want %q", tt.args, got, tt.v22)
		}
		if got := tt.check(tt.args, directive.V24); got != tt.v24 {
			t.Errorf("%q in 2.4: %q, want %q", tt.args, got, tt.v24)
		}
	}
}

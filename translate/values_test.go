package translate

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
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

// TestLogLevel22 checks 2.2.34's LogLevel: one level, no trace levels,
// no module levels.
func TestLogLevel22(t *testing.T) {
	const bad = "LogLevel requires level keyword: one of emerg/alert/crit/error/warn/notice/info/debug"
	tests := []struct{ line, want string }{
		{"LogLevel warn", ""},
		{"LogLevel DEBUG", ""},
		{"LogLevel trace1", bad},
		{"LogLevel rewrite:debug", bad},
		{"LogLevel info debug", "LogLevel takes one argument, Level of verbosity in error logging"},
	}
	for _, tt := range tests {
		ds, err := apacheconf.Parse("t.conf", []byte(tt.line+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(ds, Options{Semantics: Legacy22, DocumentRoot: t.TempDir()})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestValueChecks: each of badValue's checks reaches the directives of
// its row (valueCheckOf), with Apache's message for a value it refuses,
// and none reaches another directive.
func TestValueChecks(t *testing.T) {
	mods := map[string]bool{"include_module": true, "rewrite_module": true, "ldap_module": true, "negotiation_module": true,
		"dav_module": true, "filter_module": true, "alias_module": true}
	tests := []struct{ line, want string }{
		{"XBitHack sometimes", "XBitHack must be set to Off, On, or Full"},
		{"RewriteOptions Nonsense", "RewriteOptions: unknown option 'Nonsense'"},
		{"LDAPTimeout five", "Timeout not numerical"},
		{"FileETag Bogus", "Unknown keyword 'Bogus' for FileETag directive"},
		{"ForceLanguagePriority Bogus", "Invalid ForceLanguagePriority option Bogus"},
		{"<Directory /x>\nDAV On\n</Directory>", "Unknown DAV provider: filesystem"},
		{"LogLevel loud", "Log level keyword must be one of"},
		{"AddOutputFilterByType NOSUCH text/html", "Unknown filter provider NOSUCH"},
		{"XBitHack full", ""},
		{"Alias /x /srv/x", ""},
	}
	for _, tt := range tests {
		ds, err := apacheconf.Parse("t.conf", []byte(tt.line+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(ds, Options{Semantics: Compat24, DocumentRoot: t.TempDir(), Modules: mods})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.line, got, tt.want)
		}
	}
}

package convert

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// TestConversionSections: Convert records, for each section it
// translated or refused for review, and for a lone <Proxy>, where it
// wrote what, and the record's lines, indented as the first access line
// was, stand in the converted file where that line stood.
func TestConversionSections(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "httpd.conf")
	text := `LoadModule access_compat_module modules/mod_access_compat.so
LoadModule authn_core_module modules/mod_authn_core.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule authz_host_module modules/mod_authz_host.so
LoadModule proxy_module modules/mod_proxy.so
<Directory /srv/www>
    Options None
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
<Directory /srv/www/auth>
    AuthType Basic
    AuthName x
    Order deny,allow
    Allow from 10.0.0.0/8
</Directory>
<Proxy *>
  Order deny,allow
  Deny from all
</Proxy>
`
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: "/srv/www", ForwardUnfaithful: true}}})
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Split(string(conv.Files[conf]), "\n")
	want := []struct {
		name       string
		line, at   int
		directives []string
		review     bool
	}{
		{"Directory", 6, 8, []string{"Require ip 10.0.0.0/8"}, false},
		{"Directory", 12, 15, []string{"Require all denied"}, true}, // AuthType, no Require: AH01627
		{"Proxy", 18, 19, []string{"Require all denied"}, false},
	}
	if len(conv.Sections) != len(want) {
		t.Fatalf("%d sections recorded, want %d: %+v", len(conv.Sections), len(want), conv.Sections)
	}
	for i, w := range want {
		s := conv.Sections[i]
		if s.Name != w.name || s.Pos.File != conf || s.Pos.Line != w.line || s.At.Line != w.at || (s.Review != "") != w.review {
			t.Errorf("section %d: %+v, want %s at line %d, written at %d, review %v", i, s, w.name, w.line, w.at, w.review)
		}
		if got := Directives(s.Lines); !slices.Equal(got, w.directives) {
			t.Errorf("section %d: directives %q, want %q", i, got, w.directives)
		}
		// The lines stand together in the file, after the section's
		// opening line, with its first access line's indentation.
		indent := "    "
		if w.name == "Proxy" {
			indent = "  "
		}
		found := false
		for j := range out {
			if j+len(s.Lines) <= len(out) && strings.TrimSpace(out[j]) == strings.TrimSpace(strings.Split(text, "\n")[w.line-1]) {
				for k := j + 1; k+len(s.Lines) <= len(out) && !found; k++ {
					ok := true
					for n, l := range s.Lines {
						ok = ok && out[k+n] == indent+l
					}
					found = ok
				}
			}
		}
		if !found {
			t.Errorf("section %d: lines %q not in the converted file:\n%s", i, s.Lines, conv.Files[conf])
		}
	}
}

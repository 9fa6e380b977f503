package translate

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/regex"
)

// TestRegexOptions: the options each regex of a configuration is
// compiled with (regexopts.go), by semantics and RegexDefaultOptions, and
// the messages of the patterns PCRE2 refuses.
func TestRegexOptions(t *testing.T) {
	match := func(t *testing.T, cfg *Config, kind SectionKind, subject string) bool {
		t.Helper()
		for _, list := range [][]*Section{cfg.Files, cfg.Locations, cfg.DirMatches} {
			for _, s := range list {
				if s.Kind == kind {
					ok, err := s.Regex.MatchString(subject)
					if err != nil {
						t.Fatal(err)
					}
					return ok
				}
			}
		}
		t.Fatalf("no %s section", kind)
		return false
	}
	tests := []struct {
		name    string
		sem     Semantics
		conf    string
		subject string
		want    bool
	}{
		// PCRE's "$" before a final newline in 2.2; DOLLAR_ENDONLY in 2.4.
		{"2.2 dollar", Legacy22, `<FilesMatch "\.(bak|sql)$">`, "backup.sql\n", true},
		{"2.4 dollar", Compat24, `<FilesMatch "\.(bak|sql)$">`, "backup.sql\n", false},
		{"2.4 -DOLLAR_ENDONLY", Compat24, "RegexDefaultOptions -DOLLAR_ENDONLY\n" + `<FilesMatch "\.(bak|sql)$">`, "backup.sql\n", true},
		// DOTALL: 2.4's default.
		{"2.2 dot", Legacy22, `<FilesMatch "^a.b$">`, "a\nb", false},
		{"2.4 dot", Compat24, `<FilesMatch "^a.b$">`, "a\nb", true},
		{"2.4 none", Compat24, "RegexDefaultOptions none\n" + `<FilesMatch "^a.b$">`, "a\nb", false},
		// A plain name replaces the flags: DOTALL goes.
		{"2.4 ICASE alone", Compat24, "RegexDefaultOptions ICASE\n" + `<FilesMatch "^a.b$">`, "A\nB", false},
		{"2.4 +ICASE", Compat24, "RegexDefaultOptions +ICASE\n" + `<FilesMatch "^a.b$">`, "A\nB", true},
		{"2.4 +icase kelvin", Compat24, "RegexDefaultOptions +icase\n" + `<FilesMatch "^k$">`, "\xe2\x84\xaa", false},
		// Sections before the directive keep the defaults they were
		// compiled with.
		{"2.4 before", Compat24, `<LocationMatch "^/A$">` + "\n</LocationMatch>\nRegexDefaultOptions +ICASE", "/a", false},
		// 2.2's <DirectoryMatch> matches with NOTEOL: "$" never matches.
		{"2.2 DirectoryMatch NOTEOL", Legacy22, `<DirectoryMatch "/srv/www/a$">`, "/srv/www/a", false},
		{"2.4 DirectoryMatch", Compat24, `<DirectoryMatch "/srv/www/a$">`, "/srv/www/a", true},
		// RE2 cannot express these; they are evaluated now.
		{"lookahead", Compat24, `<FilesMatch "^(\.(?!well-known).*|Entries.*)$">`, ".git", true},
		{"lookahead well-known", Compat24, `<FilesMatch "^(\.(?!well-known).*|Entries.*)$">`, ".well-known", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := tt.conf
			for _, sec := range []string{"FilesMatch", "LocationMatch", "DirectoryMatch"} {
				if strings.Contains(conf, "<"+sec) && !strings.Contains(conf, "</"+sec) {
					conf += "\n</" + sec + ">"
				}
			}
			cfg, err := buildText(t, conf, Options{Semantics: tt.sem})
			if err != nil {
				t.Fatal(err)
			}
			kind := KindFilesMatch
			switch {
			case strings.Contains(conf, "<LocationMatch"):
				kind = KindLocationMatch
			case strings.Contains(conf, "<DirectoryMatch"):
				kind = KindDirectoryMatch
			}
			if got := match(t, cfg, kind, tt.subject); got != tt.want {
				t.Errorf("%q on %q: %v, want %v", conf, tt.subject, got, tt.want)
			}
		})
	}
}

// TestRegexErrors: Apache's message for each directive whose pattern
// PCRE refuses, and the arguments RegexDefaultOptions refuses.
func TestRegexErrors(t *testing.T) {
	for _, tt := range []struct {
		sem  Semantics
		conf string
		want string
	}{
		{Compat24, "<FilesMatch \"(a\">\n</FilesMatch>", "legacy.conf:1: Regex could not be compiled"},
		{Compat24, "<Location ~ \"[z-a]\">\n</Location>", "legacy.conf:1: Regex could not be compiled"},
		{Legacy22, "<DirectoryMatch \"*x\">\n</DirectoryMatch>", "legacy.conf:1: Regex could not be compiled"},
		{Compat24, "AliasMatch \"^/(a\" /srv/x", "legacy.conf:1: Regular expression could not be compiled."},
		{Compat24, "SetEnvIfNoCase User-Agent \"(bot\" bad", "legacy.conf:1: SetEnvIfNoCase regex could not be compiled."},
		{Compat24, "BrowserMatch \"x{3,2}\" bad", "legacy.conf:1: BrowserMatch regex could not be compiled."},
		{Compat24, "SetEnvIf \"X-(a\" \"b\" c", "legacy.conf:1: SetEnvIfHeader name regex could not be compiled."},
		{Compat24, "RegexDefaultOptions +EXTENDED", "legacy.conf:1: RegexDefaultOptions: option 'EXTENDED' unknown"},
		{Compat24, "<VirtualHost *:80>\nRegexDefaultOptions ICASE\n</VirtualHost>", "legacy.conf:2: RegexDefaultOptions cannot occur within <VirtualHost> section"},
		{Compat24, "<FilesMatch \"(?R)\">\n</FilesMatch>", "legacy.conf:1: regex \"(?R)\" cannot be evaluated by orderly: recursion and subroutine calls; refusing to load"},
	} {
		_, err := buildText(t, tt.conf, Options{Semantics: tt.sem})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.conf, err, tt.want)
		}
	}
}

// fnmatchTest answers as regex.FnmatchTest (apr_fnmatch_test) for every
// string of up to four bytes of "/", "*", "?", "[", "]", "\\", NUL and
// "a".
func TestFnmatchTest(t *testing.T) {
	var gen func(s string, n int)
	gen = func(s string, n int) {
		if got, want := fnmatchTest(s), regex.FnmatchTest(s); got != want {
			t.Errorf("fnmatchTest(%q) = %v, want %v", s, got, want)
		}
		if n == 0 {
			return
		}
		for _, c := range []string{"/", "*", "?", "[", "]", "\\", "\x00", "a"} {
			gen(s+c, n-1)
		}
	}
	gen("", 4)
}

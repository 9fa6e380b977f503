package walk

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/regex"
)

// TestSectionsMatchBytes: <Files> wildcards and <FilesMatch>/<LocationMatch>
// regexes see the decoded name as bytes, as Apache's apr_fnmatch and PCRE
// do: "?" and "." take one byte of a UTF-8 letter (corpus 452-455 hold
// the same to Apache).
func TestSectionsMatchBytes(t *testing.T) {
	for _, tt := range []struct {
		name, conf, target string
		want               int
	}{
		{"files ?? two bytes", `<Files "a??c.txt">` + "\nDeny from all\n</Files>", "/a%C3%A9c.txt", 403},
		{"files ? one byte", `<Files "a?c.txt">` + "\nDeny from all\n</Files>", "/a%C3%A9c.txt", 0},
		{"filesmatch .. two bytes", `<FilesMatch "^a..c\.txt$">` + "\nDeny from all\n</FilesMatch>", "/a%C3%A9c.txt", 403},
		{"filesmatch . one byte", `<FilesMatch "^a.c\.txt$">` + "\nDeny from all\n</FilesMatch>", "/a%C3%A9c.txt", 0},
		{"locationmatch bytes", `<LocationMatch "^/caf[\x80-\xff]{2}\.txt$">` + "\nDeny from all\n</LocationMatch>", "/caf%C3%A9.txt", 403},
		{"lookahead", `<FilesMatch "^\.(?!well-known)">` + "\nDeny from all\n</FilesMatch>", "/.hidden", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := engine(t, "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from all\n</Directory>\n"+tt.conf, "a\xc3\xa9c.txt", "caf\xc3\xa9.txt", ".hidden")
			if res := decide(e, req{target: tt.target, ip: "10.0.0.1"}); res.Status != tt.want {
				t.Errorf("%s: %d, want %d", tt.target, res.Status, tt.want)
			}
		})
	}
}

// TestRegexTimeout: a section whose regex does not finish refuses the
// request (500) and says why, rather than deciding without it.
func TestRegexTimeout(t *testing.T) {
	name := strings.Repeat("a", 40) + "b"
	e, _ := engine(t, "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from all\n</Directory>\n"+
		`<FilesMatch "^(a|aa)+(?=x)$">`+"\nDeny from all\n</FilesMatch>", name)
	res := decide(e, req{target: "/" + name, ip: "10.0.0.1"})
	if res.Status != 500 || !regex.IsMatchError(res.RegexErr) {
		t.Fatalf("status %d, RegexErr %v; want 500 and a MatchError", res.Status, res.RegexErr)
	}
	if logs := res.Logs(); len(logs) == 0 || !strings.Contains(logs[len(logs)-1].Subject, "FilesMatch") {
		t.Errorf("logs %+v: want a line naming the section", logs)
	}
}

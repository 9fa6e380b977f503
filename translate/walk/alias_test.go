package walk

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// Alias and AliasMatch map the URL to a file name before the directory
// walk (apache-access-semantics.md §5, "Mapping to a filename"): the first
// matching alias wins, a run of slashes in the alias matches any run in
// the URL, the match ends on a segment boundary, and the file name then
// gets the <Directory> sections of the alias target.
func TestAliases(t *testing.T) {
	root := tree(t, "index.html", "pics/a.png", "pics/sub/", "home/bob/pub/x.html", "w/", "n/", "cost$",
		"private/x.html", "iconsx/index.html", "first/f.html", "second/f.html")
	conf := `Alias /icons/ @DOCROOT@/pics/
Alias /img @DOCROOT@/pics
Alias /two @DOCROOT@/first
Alias /two @DOCROOT@/second
Alias //sl//ash/ @DOCROOT@/pics/
Alias /hide @DOCROOT@/private
AliasMatch ^/~([a-z]+)(/.*)?$ @DOCROOT@/home/$1/pub$2
AliasMatch ^/whole(.*) @DOCROOT@/w&
AliasMatch ^/zero/(.*) @DOCROOT@/w$0
AliasMatch ^/n/(.)(.)(.)(.)(.)(.)(.)(.)(.)$ @DOCROOT@/n/$9$1
AliasMatch ^/cost$ @DOCROOT@/cost$
AliasMatch ^/dollar(.*) @DOCROOT@/w/$x$1
AliasMatch ^/gone(x)?(.*) @DOCROOT@/w/$1$2$3
<Directory @DOCROOT@/private>
Require all denied
</Directory>
`
	e := optEngine(t, translate.Compat24, root, conf, nil)
	tests := []struct {
		target, file string
		want         int
	}{
		{"/icons/a.png", "/pics/a.png", 0},
		{"/icons", "/icons", 0}, // "/icons/" needs the slash
		{"/img/a.png", "/pics/a.png", 0},
		{"/img", "/pics", 0},
		{"/imgx", "/imgx", 0}, // not on a segment boundary
		{"/im", "/im", 0},
		{"/iconsx/", "/iconsx/", 0},
		{"/two/f.html", "/first/f.html", 0}, // the first alias wins
		{"/sl/ash/a.png", "/pics/a.png", 0}, // slash runs match slash runs
		{"/sl/as", "/sl/as", 0},
		{"/hide/x.html", "/private/x.html", 403}, // the target's <Directory>
		{"/hidex/x.html", "/hidex/x.html", 0},
		{"/~bob/x.html", "/home/bob/pub/x.html", 0},
		{"/~bob", "/home/bob/pub", 0}, // an unmatched group is empty
		{"/whole/q", "/w/whole/q", 0}, // & is the whole match
		{"/zero/q", "/w/zero/q", 0},   // and so is $0
		{"/n/abcdefghi", "/n/ia", 0},
		{"/cost", "/cost$", 0},      // a "$" at the end is literal
		{"/dollar/q", "/w/$x/q", 0}, // so is one before a non-digit
		{"/gone/q", "/w/q", 0},      // $3: no such group
		{"/private/x.html", "/private/x.html", 403},
	}
	for _, tt := range tests {
		res := decide(e, req{target: tt.target, ip: "10.1.2.3"})
		// The file name and the path info after it: the alias's result.
		if got := strings.TrimPrefix(res.Filename+res.PathInfo, root); res.Status != tt.want || got != tt.file {
			t.Errorf("%s: status %d, file %q; want %d, %q", tt.target, res.Status, got, tt.want, tt.file)
		}
	}
}

// expand is ap_pregsub: "&" and "$0" the whole match, "$1".."$9" the
// groups (an unmatched or missing one empty), a backslash takes the next
// character literally; a trailing "$" or backslash is itself.
func TestExpand(t *testing.T) {
	tests := []struct {
		tmpl, src string
		m         []int
		want      string
	}{
		{"a&b", "xyz", []int{0, 3}, "axyzb"},
		{"a$0b", "xyz", []int{1, 2}, "ayb"},
		{"$1-$2", "xyz", []int{0, 3, 0, 1, -1, -1}, "x-"},
		{"$9", "abcdefghi", []int{0, 9, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9}, "i"},
		{"$5", "ab", []int{0, 2, 1, 2}, ""},
		{"$2", "ab", []int{0, 2, 1, 2}, ""}, // one past the last group
		{`\$1\&\\`, "xy", []int{0, 2, 0, 1}, `$1&\`},
		{`a\`, "x", []int{0, 1}, `a\`},
		{"a$", "x", []int{0, 1}, "a$"},
		{"$a$/", "x", []int{0, 1}, "$a$/"},
	}
	for _, tt := range tests {
		if got := expand(tt.tmpl, tt.src, tt.m); got != tt.want {
			t.Errorf("expand(%q, %q, %v) = %q, want %q", tt.tmpl, tt.src, tt.m, got, tt.want)
		}
	}
}

// <Files> sees the last segment of the file name (ap_file_walk: what
// follows the last "/"), which for the file system's root is empty.
func TestFilesBaseOfRoot(t *testing.T) {
	root := tree(t, "index.html")
	e := optEngine(t, translate.Compat24, root, "Alias /rootfs /\n<FilesMatch \"^$\">\nRequire all denied\n</FilesMatch>\n", nil)
	for target, want := range map[string]int{"/rootfs": 403, "/index.html": 0} {
		res := decide(e, req{target: target, ip: "8.8.8.8"})
		if res.Status != want {
			t.Errorf("%s: %d (file %q), want %d", target, res.Status, res.Filename, want)
		}
	}
}

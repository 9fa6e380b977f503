package walk

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// pathSafe is what ap_os_escape_path leaves as it is (gen_test_char's
// T_OS_ESCAPE_PATH): ASCII letters and digits and "$-_.+!*'(),:;@&=/~";
// osEscapePath writes every other byte as %xx in lower case.
func TestOSEscapePath(t *testing.T) {
	const safe = "$-_.+!*'(),:;@&=/~"
	for c := 0; c < 256; c++ {
		b := byte(c)
		want := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte(safe, b) >= 0
		if got := osEscapePath(string([]byte{b})) == string([]byte{b}); got != want {
			t.Errorf("%q kept: %v, want %v", b, got, want)
		}
	}
	for in, want := range map[string]string{
		"/a b/c":              "/a%20b/c",
		"/caf\xc3\xa9?#%":     "/caf%c3%a9%3f%23%25",
		"/$-_.+!*'(),:;@&=/~": "/$-_.+!*'(),:;@&=/~",
		"/AZaz09":             "/AZaz09",
		"\x00\x7f\xff[]`{}":   "%00%7f%ff%5b%5d%60%7b%7d",
	} {
		if got := osEscapePath(in); got != want {
			t.Errorf("osEscapePath(%q) = %q, want %q", in, got, want)
		}
	}
}

// schemeEnd finds a URI's scheme as apr_uri_parse does: a letter, then
// letters, digits, "+", "-" and ".", up to the first ":"; anything else,
// or a "/", "?" or "#" first, is no scheme.
func TestSchemeEnd(t *testing.T) {
	for in, want := range map[string]int{
		"http://h": 4, "a:": 1, "z:": 1, "A:": 1, "Z:": 1, "x0+-.9:": 6,
		"1a:": 0, "+a:": 0, ":x": 0, "/a:b": 0, "a/b:": 0, "a?b:": 0, "a#b:": 0,
		"a_b:": 0, "`:": 0, "{:": 0, "@:": 0, "[:": 0, "x/:": 0, "abc": 0, "": 0, "x@:": 0,
	} {
		if got := schemeEnd(in); got != want {
			t.Errorf("schemeEnd(%q) = %d, want %d", in, got, want)
		}
	}
}

// defaultPort is apr_uri_port_of_scheme, in any case.
func TestDefaultPort(t *testing.T) {
	for scheme, want := range map[string]int{
		"http": 80, "HTTP": 80, "https": 443, "ftp": 21, "ssh": 22, "telnet": 23, "gopher": 70, "nntp": 119,
		"imap": 143, "ldap": 389, "rtsp": 554, "sip": 5060, "sips": 5061, "mailto": 0, "": 0,
	} {
		if got := defaultPort(scheme); got != want {
			t.Errorf("defaultPort(%q) = %d, want %d", scheme, got, want)
		}
	}
}

// More of mod_alias's rewriting of a redirect target (apr_uri_unparse):
// the scheme's default port dropped, whatever the scheme, other ports
// kept, a user without password kept; ap_escape_uri then escapes the
// whole URL but the query and fragment, an IPv6 host's brackets included.
func TestEscapeTargetMore(t *testing.T) {
	for in, want := range map[string]string{
		"ftp://h.test:21/x":         "ftp://h.test/x",
		"ftp://h.test:80/x":         "ftp://h.test:80/x",
		"https://h.test:443":        "https://h.test",
		"http://h.test:0/x":         "http://h.test/x",
		"http://h.test:/x":          "http://h.test/x",
		"http://[::1]:8080/a b":     "http://%5b::1%5d:8080/a%20b", // ap_escape_uri escapes the brackets too
		"http://[::1]:80/x":         "http://%5b::1%5d/x",
		"http://[::1]/x":            "http://%5b::1%5d/x",
		"http://u@h.test/x":         "http://u@h.test/x",
		"http://a@b:pw@h.test/x":    "http://a@b:XXXXXXXX@h.test/x",
		"//h.test:80/x":             "//h.test:80/x",
		"http:/x y":                 "http:/x%20y",
		"/a?b#c d":                  "/a?b#c d",
		"/a?":                       "/a?",
		"/a#":                       "/a#",
		"gopher://h.test:70/1 menu": "gopher://h.test/1%20menu",
		// Delimiters first in their part (apr_uri_parse): an empty path
		// before the query, an empty authority before the path, an empty
		// user before the password, an empty host before the port.
		"?a=b":                "?a=b",
		"#x":                  "#x",
		"http:///a:b@c":       "http:///a:b@c",
		"http://:pw@h.test/x": "http://:XXXXXXXX@h.test/x",
		"http://:80/x":        "http:///x",
	} {
		if got := escapeTarget(in); got != want {
			t.Errorf("escapeTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

// The URL of a redirect (ap_construct_url): the Host's port unless it is
// the scheme's default; over TLS the scheme is https and 443 the default.
func TestConstructURLPorts(t *testing.T) {
	e, _ := engine(t, "Redirect /moved /new\n")
	checkRed(t, e, []redReq{
		{target: "/moved/a", want: 302, location: "http://h.test/new/a", host: "h.test:80"},
		{target: "/moved/a", want: 302, location: "http://h.test:443/new/a", host: "h.test:443"},
		{target: "/moved/a", want: 302, location: "https://h.test/new/a", host: "h.test:443", tls: true},
		{target: "/moved/a", want: 302, location: "https://h.test:80/new/a", host: "h.test:80", tls: true},
		{target: "/moved/a", want: 302, location: "http://[::1]/new/a", host: "[::1]"},
		{target: "/moved/a", want: 302, location: "http://[::1]:81/new/a", host: "[::1]:81"},
	})
}

// A redirect counts a match of its rule, unless the request is decided
// dry; a server-level target that is no URL is a 500 with translate_name's
// line (AH00674), a per-directory one with fixup's (AH00676).
func TestRedirectRuleAndCodes(t *testing.T) {
	e, _ := engine(t, "Redirect /moved /new\nRedirectMatch ^/bad/(.*) rel/$1\n<Directory @DOCROOT@/d>\nRedirectMatch ^/d/(.*) rel/$1\n</Directory>\n", "d/")
	var rule *policy.Rule
	for _, r := range e.Config().Rules {
		if r.Text == "Redirect /moved /new" {
			rule = r
		}
	}
	if rule == nil {
		t.Fatal("no rule for the Redirect line")
	}
	res := decideRed(e, redReq{target: "/moved/x", host: "h.test"})
	if res.Status != 302 || res.Rule != rule {
		t.Errorf("/moved/x: %d by %v", res.Status, res.Rule)
	}
	dry := &Request{Method: "GET", Target: "/moved/x", Host: "h.test", Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("8.8.8.8"), Dry: true}
	if res := e.Decide(dry, nil); res.Status != 302 {
		t.Errorf("dry /moved/x: %d", res.Status)
	}
	if m, _, _ := rule.Stats(); m != 1 {
		t.Errorf("the Redirect matched %d times, want 1 (the dry request not counted)", m)
	}
	for target, code := range map[string]string{"/bad/x": "AH00674", "/d/x": "AH00676"} {
		res := decideRed(e, redReq{target: target, host: "h.test"})
		if l := res.Logs(); res.Status != 500 || len(l) != 1 || l[0].Code != code {
			t.Errorf("%s: %d, logs %v, want 500 with %s", target, res.Status, l, code)
		}
	}
}

// An ErrorDocument URL of a section answers that section's refusals, but
// not those of a walk that failed (map_to_storage): Apache then has the
// server's per-directory configuration only.
func TestErrorDocumentSections(t *testing.T) {
	e, root := engine(t, `ErrorDocument 500 http://example.com/server500
<Directory @DOCROOT@/d>
AllowOverride All
ErrorDocument 403 http://example.com/d403
ErrorDocument 500 http://example.com/d500
</Directory>
<Directory @DOCROOT@/d/deny>
Require all denied
</Directory>
`, "d/deny/index.html", "d/broken/index.html")
	if err := os.WriteFile(filepath.Join(root, "d", "broken", ".htaccess"), []byte("Dney from all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkRed(t, e, []redReq{
		{target: "/d/deny/index.html", want: 302, location: "http://example.com/d403"},
		{target: "/d/broken/index.html", want: 302, location: "http://example.com/server500"},
	})
}

// A <Location> path that ends in "/" matches below it only; one that
// does not matches itself and below it, on a segment boundary.
func TestLocationPrefix(t *testing.T) {
	e, _ := engine(t, "<Location /a/>\nRequire all denied\n</Location>\n<Location /b>\nRequire all denied\n</Location>\n", "a/x", "ab/x", "b/x", "bc/x")
	for target, want := range map[string]int{"/a/x": 403, "/a": 0, "/ab/x": 0, "/b/x": 403, "/b": 403, "/bc/x": 0} {
		if res := decide(e, req{target: target, ip: "8.8.8.8"}); res.Status != want {
			t.Errorf("%s: %d, want %d", target, res.Status, want)
		}
	}
}

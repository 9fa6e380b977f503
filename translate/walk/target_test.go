package walk

import "testing"

// The request-target as ap_parse_uri reads it: no fragment (400), the
// query cut off, extra leading slashes dropped, "*" naming no file, the
// path of an absolute-form target, and nothing else (authority-form: 400).
func TestTarget(t *testing.T) {
	e, _ := engine(t, "<Location /y>\nRequire all denied\n</Location>\n", "y/")
	for _, tt := range []struct {
		method, target, uri string
		want                int
	}{
		{"GET", "/a?x#y", "", 400},
		{"GET", "/a#y", "", 400},
		{"GET", "/a?b/../c", "/a", 0},
		{"GET", "/y?q", "/y", 403},
		{"GET", "//a", "/a", 0},
		{"GET", "///y", "/y", 403},
		{"OPTIONS", "*", "", 0},
		{"GET", "http://h.test", "/", 0},
		{"GET", "http://h.test/x/../y", "/y", 403},
		{"GET", "https://h.test/y?q=1", "/y", 403},
		{"GET", "http:///y", "/y", 403}, // an empty authority
		{"GET", "h.test:443", "", 400},
		{"GET", "?x=http://h.test/y", "", 400}, // a query is no absolute-form
		{"GET", "y", "", 400},
		{"GET", "", "", 400},
	} {
		res := decide(e, req{method: tt.method, target: tt.target, ip: "8.8.8.8"})
		if res.Status != tt.want || res.URI != tt.uri {
			t.Errorf("%s %q: status %d URI %q, want %d %q", tt.method, tt.target, res.Status, res.URI, tt.want, tt.uri)
		}
	}
}

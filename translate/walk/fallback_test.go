package walk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// A chain of FallbackResource subrequests: Apache refuses to make a
// subrequest from one already nested LimitInternalRecursion's 10 deep
// (ap_sub_req_method_uri, ap_is_recursion_limit_exceeded: AH00125, 500),
// so the tenth fallback still serves and an eleventh is refused.
func TestFallbackDepth(t *testing.T) {
	var conf strings.Builder
	for n := 0; n <= 10; n++ {
		fmt.Fprintf(&conf, "<Location /f%d>\nFallbackResource /f%d\n</Location>\n", n, n+1)
	}
	root := tree(t, "index.html", "f11")
	e := optEngine(t, translate.Compat24, root, conf.String(), nil)
	for _, tt := range []struct {
		target string
		want   int
	}{
		{"/f1", 0},   // the tenth subrequest serves /f11
		{"/f0", 500}, // an eleventh would
		{"/f11", 0},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8"})
		if res.Status != tt.want {
			t.Errorf("%s: %d, want %d; logs %v", tt.target, res.Status, tt.want, res.Logs())
			continue
		}
		found := false
		for _, l := range res.Logs() {
			found = found || l.Code == "AH00125"
		}
		if found != (tt.want == 500) {
			t.Errorf("%s: logs %v, AH00125 %v", tt.target, res.Logs(), tt.want == 500)
		}
	}
}

// fixup_dflt answers a fallback subrequest's redirect or error with its
// status (a 401 without the subrequest's WWW-Authenticate), serves its
// file, and declines on its 404: the request is then its handler's.
func TestFallbackAnswers(t *testing.T) {
	root := tree(t, "index.html", "auth/login.html", "real.html", "t/")
	conf := "Redirect /moved http://example.com/new\n" +
		"<Directory @DOCROOT@/auth>\nAuthType Basic\nAuthName R\nAuthUserFile /x\nRequire valid-user\n</Directory>\n" +
		"<Location /a>\nFallbackResource /auth/login.html\n</Location>\n" +
		"<Location /b>\nFallbackResource /x%2Fy\n</Location>\n" +
		"<Location /c>\nFallbackResource /moved\n</Location>\n" +
		"<Location /d>\nFallbackResource /real.html\n</Location>\n" +
		"<Location /e>\nFallbackResource /t/x.html\n</Location>\n" +
		"<Directory @DOCROOT@/t>\nRedirect /t/x.html http://example.com/tx\n</Directory>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	for _, tt := range []struct {
		target, location string
		want             int
		noChallenge      bool
	}{
		{"/a/x", "", 401, true},
		{"/b/x", "", 0, false},
		{"/c/x", "http://example.com/new", 302, false},
		{"/d/x", "", 0, false},
		{"/e/x", "http://example.com/tx", 302, false}, // the subrequest's own fixups redirect
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8"})
		if res.Status != tt.want || res.NoChallenge != tt.noChallenge || res.Location != tt.location || res.URI != tt.target {
			t.Errorf("%s: status %d NoChallenge %v Location %q URI %q; want %d %v %q %q", tt.target, res.Status, res.NoChallenge, res.Location, res.URI, tt.want, tt.noChallenge, tt.location, tt.target)
		}
	}
}

// mod_dir's index subrequests (fixup_dir): an index name that maps to
// nothing falls back (fixup_dflt runs for the subrequest too), and a
// served fallback serves the directory; a 401 of the only candidate is
// the answer with its challenge, the last error of several is answered
// as a status only (no WWW-Authenticate); a 404 is no error.
func TestDirIndexAnswers(t *testing.T) {
	root := tree(t, "index.html", "real.html", "fb/", "one/index.html", "two/index.html", "nf/", "red/index.html", "ri/home.html", "gone/home.html", "fbdir/", "sub2/home.html")
	conf := "<Directory @DOCROOT@/fb>\nFallbackResource /real.html\nDirectoryIndex start.html\n</Directory>\n" +
		"<Files index.html>\nAuthType Basic\nAuthName R\nAuthUserFile /x\nRequire valid-user\n</Files>\n" +
		"<Directory @DOCROOT@/two>\nDirectoryIndex missing.html index.html\n</Directory>\n" +
		"<Directory @DOCROOT@/nf>\nDirectoryIndex nothere.html start.html\n</Directory>\n" +
		"Redirect /red/index.html http://example.com/elsewhere\n" +
		"<Directory @DOCROOT@/ri>\nDirectoryIndex home.html\nRedirect /ri/home.html http://example.com/ri\n</Directory>\n" +
		"<Directory @DOCROOT@/fbdir>\nFallbackResource /sub2/\nDirectoryIndex start.html\n</Directory>\n" +
		"<Directory @DOCROOT@/sub2>\nDirectoryIndex home.html\n</Directory>\n" +
		"<Directory @DOCROOT@/gone>\nDirectoryIndex home.html\nRedirect gone /gone/home.html\n</Directory>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	for _, tt := range []struct {
		target, index, location string
		want                    int
		noChallenge             bool
	}{
		{"/fb/", "start.html", "", 0, false},
		{"/one/", "index.html", "", 401, false},
		{"/two/", "index.html", "", 401, true},
		{"/nf/", "", "", 403, false}, // no index: autoindex's refusal
		{"/red/", "index.html", "http://example.com/elsewhere", 302, false},
		{"/ri/", "home.html", "http://example.com/ri", 302, false}, // mod_alias's fixups of the subrequest
		{"/fbdir/", "start.html", "", 0, false},                    // the fallback, a directory, serves its index
		{"/gone/", "home.html", "", 410, false},                    // an error, not a redirect: kept as the last error
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8"})
		if res.Status != tt.want || res.NoChallenge != tt.noChallenge || res.Index != tt.index || res.Location != tt.location || res.URI != tt.target {
			t.Errorf("%s: status %d NoChallenge %v Index %q Location %q URI %q; want %d %v %q %q", tt.target, res.Status, res.NoChallenge, res.Index, res.Location, res.URI, tt.want, tt.noChallenge, tt.index, tt.location)
		}
	}
}

// A fallback subrequest with the same merged configuration as the request
// it falls back from skips access control (corpus 928): a DELETE that a
// <Limit DELETE> lets through falls back to a GET its other rules would
// refuse, and falls back again until the nesting limit (500), where a
// fallback in another directory is refused (403).
func TestFallbackSameConfig(t *testing.T) {
	root := tree(t, "index.html", "api/index.html", "other/index.html")
	conf := "<Location /api>\nOrder allow,deny\nDeny from 203.0.113.0/24\n<Limit DELETE>\nOrder deny,allow\nAllow from all\n</Limit>\n</Location>\n" +
		"<Directory @DOCROOT@/api>\nFallbackResource nothere\n</Directory>\n" +
		"<Directory @DOCROOT@/other>\nFallbackResource /api/nothere\n</Directory>\n" +
		"<Location /other>\n<Limit DELETE>\nOrder deny,allow\nAllow from all\n</Limit>\n</Location>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	for _, tt := range []struct {
		method, target string
		want           int
	}{
		{"DELETE", "/api/missing", 500},
		{"GET", "/api/missing", 403},
		{"DELETE", "/other/missing", 403},
	} {
		if res := decide(e, req{method: tt.method, target: tt.target, ip: "203.0.113.9"}); res.Status != tt.want {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.target, res.Status, tt.want)
		}
	}
}

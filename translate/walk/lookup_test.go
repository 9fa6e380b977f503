package walk

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// The look-ahead subrequests, step by step (corpus case 507 holds them to
// Apache): -U below 400, -F below 300 on a file that exists, subreq_ok,
// the nesting limit, and what %{LA-U:...} and %{LA-F:...} read.
func TestLookahead(t *testing.T) {
	conf := `RewriteEngine On
Alias /al/ "@DOCROOT@/aliased/"
Redirect /moved/ http://elsewhere.test/
RewriteCond %{REQUEST_URI} ^/u/(.*)$
RewriteCond /%1 !-U
RewriteRule ^/u/ - [F]
RewriteRule ^/u/(.*)$ /$1 [PT]
RewriteCond %{REQUEST_URI} !-U
RewriteRule ^/self/ - [F]
RewriteCond %{DOCUMENT_ROOT}%{REQUEST_URI} !-F
RewriteRule ^/ff/ - [F]
RewriteCond %{LA-U:REQUEST_FILENAME} !-f
RewriteRule ^/(lu|al)/ - [F,NS]
RewriteCond %{LA-U:REMOTE_USER} ^bob$
RewriteRule ^/la/ - [F]
RewriteCond %{REQUEST_URI}x -U
RewriteRule ^/rec - [F]
RewriteCond %{REQUEST_URI}x -U
RewriteRule ^/rd/index\.html - [F]
RewriteCond %{LA-F:REQUEST_FILENAME} -f
RewriteRule ^/lfs/ - [F]
RewriteRule ^/e/$ - [END]
RewriteRule ^/e/index\.html$ - [F]
RewriteCond %{IS_SUBREQ} true
RewriteRule ^/lz2/ - [F]
RewriteCond %{LA-U:REQUEST_FILENAME} ^/lz2/
RewriteRule ^/lz2/ - [F]
RewriteCond %{REQUEST_URI} ^/v/(.*)$
RewriteCond /%1 !-U
RewriteRule ^/v/ - [F]
RewriteCond %{LA-U:REQUEST_FILENAME} ^redirect:
RewriteRule ^/ix2?/$ - [F]
<Directory "@DOCROOT@">
    AllowOverride All
    Options FollowSymLinks
</Directory>
<Directory "@DOCROOT@/private">
    Order deny,allow
    Deny from all
</Directory>
<Directory "@DOCROOT@/noindex">
    <Files "index.html">
        Order deny,allow
        Deny from all
    </Files>
</Directory>
<Directory "@DOCROOT@/la">
    AuthType Basic
    AuthName "la"
    AuthUserFile /x
    Require valid-user
</Directory>
<Directory "@DOCROOT@/fb">
    FallbackResource /fb/index.html
</Directory>
<Directory "@DOCROOT@/ds">
    DirectorySlash Off
</Directory>
<Location "/pd/loc.html">
    Order deny,allow
    Deny from all
</Location>
<Location "/open/loc.html">
    Order deny,allow
    Deny from all
</Location>
`
	e, root := rewriteEngine(t, conf, "open/page.html", "private/page.html", "noindex/index.html", "noindex/other.html",
		"self/page.html", "ff/page.html", "ff/sub/page.html", "fb/index.html", "lu/page.html", "aliased/page.html",
		"la/page.html", "rec/page.html", "pd/page.html", "pd/guarded.html", "pd/other.html", "pd/f-ok.html",
		"pd2/page.html", "pd2/other.html", "pd2/guarded.html",
		"pd/loc.html", "open/loc.html", "pd/g1.html", "pd/g2.html", "pd/sub/lf-ok.html", "rd/index.html", "lfs/page.html",
		"e/index.html", "lz2/page.html", "ff/idx/index.html", "ix/index.html", "ix/target.html", "ix2/index.html")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pd/.htaccess", "RewriteEngine On\nRewriteCond guarded.html !-U\nRewriteRule ^page - [F]\n"+
		"RewriteCond %{LA-U:REQUEST_FILENAME} !-f\nRewriteRule ^other - [F]\n"+
		"RewriteCond %{REQUEST_FILENAME} !-F\nRewriteRule ^f- - [F,NS]\n"+
		"RewriteCond %{LA-F:REQUEST_FILENAME} !-f\nRewriteRule (^|/)lf- - [F,NS]\n"+
		"RewriteCond %{DOCUMENT_ROOT}/pd/loc.html -F\nRewriteRule ^g1 - [F]\n"+
		"RewriteCond %{DOCUMENT_ROOT}/open/loc.html -F\nRewriteRule ^g2 - [F]\n")
	write("pd2/.htaccess", "RewriteEngine On\nRewriteBase /pd2/\nRewriteCond guarded.html !-U\nRewriteRule ^page - [F]\n"+
		"RewriteCond %{LA-U:REQUEST_FILENAME} !-f\nRewriteRule ^other - [F]\n"+
		"<Files \"guarded.html\">\nOrder deny,allow\nDeny from all\n</Files>\n")
	write("ix/.htaccess", "RewriteEngine On\nRewriteRule ^index\\.html$ target.html\n")
	if err := os.MkdirAll(filepath.Join(root, "ds", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		target, user string
		want         int
	}{
		{target: "/u/open/page.html", want: 0},
		{target: "/u/open/missing.html", want: 0},   // a missing file is no refusal: the handler's 404
		{target: "/u/private/page.html", want: 403}, // the subrequest is refused
		{target: "/u/moved/x", want: 302},           // -U passes a redirect; the main request meets it too
		{target: "/u/open", want: 0},                // DirectorySlash's 301 passes
		{target: "/u/noindex/", want: 403},          // the index subrequest's refusal is the directory's
		{target: "/u/noindex/other.html", want: 0},
		{target: "/u/la/page.html", want: 403}, // a login the subrequest cannot make
		{target: "/self/page.html", want: 403}, // the subrequest's own lookup is not made: !-U holds there
		{target: "/ff/page.html", want: 0},
		{target: "/ff/missing.html", want: 403},
		{target: "/ff/sub/", want: 403},  // a directory: a file subrequest has no URI, so DirectorySlash redirects
		{target: "/fb/missing", want: 0}, // not here: the fallback served in its place is
		{target: "/lu/page.html", want: 0},
		{target: "/lu/missing.html", want: 403},
		{target: "/al/page.html", want: 0}, // Alias, in the subrequest's translate_name
		{target: "/al/missing.html", want: 403},
		{target: "/la/page.html", user: "alice", want: 0},
		{target: "/la/page.html", user: "bob", want: 403},
		{target: "/la/page.html", want: 401},
		{target: "/rec/page.html", want: 0}, // ten levels of lookups, the tenth refused (AH00125)
		{target: "/pd/page.html", want: 0},
		{target: "/pd/other.html", want: 403}, // LA-U per directory: the directory's path as a URI
		{target: "/pd/f-ok.html", want: 0},
		{target: "/pd/f-missing.html", want: 403},
		{target: "/pd/lf-missing.html", want: 403},
		{target: "/pd2/page.html", want: 403}, // relative to the request's directory
		{target: "/pd2/other.html", want: 0},  // LA-U relative to RewriteBase
		{target: "/pd/g1.html", want: 0},      // a file in the request's directory has its URI there: <Location> refuses it
		{target: "/pd/g2.html", want: 403},    // one elsewhere has none
		{target: "/pd/sub/lf-ok.html", want: 0},
		{target: "/pd/sub/lf-missing.html", want: 403}, // LA-F per directory: the directory's path and the match
		{target: "/rd/", want: 403},                    // the chain from an index subrequest starts a level down
		{target: "/rd/index.html", want: 0},
		{target: "/lfs/page.html", want: 0},   // LA-F at the server level: the URL-path taken for a file
		{target: "/e/", want: 403},            // an [END] is the request's: its index subrequest runs the rules
		{target: "/lz2/page.html", want: 403}, // the filename a subrequest's server rules left when they refused
		{target: "/v/noindex/", want: 403},
		{target: "/v/open", want: 0},
		{target: "/ff/idx/", want: 403}, // a directory with an index: still its DirectorySlash redirect
		{target: "/ix/", want: 403},     // its index rewritten: the subrequest ends on "redirect:..."
		{target: "/ix2/", want: 0},
	} {
		r := req{target: tt.target, ip: "8.8.8.8"}
		if tt.user != "" {
			r.user = tt.user + ":ok" // the test identity's password
		}
		res := decide(e, r)
		if res.Status != tt.want {
			t.Errorf("%s (%s): %d, want %d", tt.target, tt.user, res.Status, tt.want)
		}
	}
}

// What a look-ahead subrequest logs is logged with the request.
func TestLookaheadLogs(t *testing.T) {
	conf := "RewriteEngine On\nRewriteCond /private/page.html -U\nRewriteRule ^/u/ - [F]\n" +
		"<Directory \"@DOCROOT@/private\">\nOrder deny,allow\nDeny from all\n</Directory>\n"
	e, _ := rewriteEngine(t, conf, "private/page.html", "u/page.html")
	res := decide(e, req{target: "/u/page.html", ip: "8.8.8.8"})
	var codes []string
	for _, l := range res.Logs() {
		codes = append(codes, l.Code)
	}
	if res.Status != 0 || len(codes) != 1 || codes[0] != "AH01797" {
		t.Errorf("status %d, logs %v: want 0 and the subrequest's AH01797", res.Status, codes)
	}
}

// A look-ahead subrequest from a directory's rules starts from its main
// request's walk cache (corpus 509): a file in the directory that walk
// ended in keeps its <Directory> sections, where a wildcard section would
// refuse it walked anew.
func TestLookaheadWalkCache(t *testing.T) {
	conf := "RewriteEngine On\nRewriteCond /index.html !-U\nRewriteRule ^/srv - [F]\n" +
		"<Directory \"@DOCROOT@\">\nAllowOverride All\nOptions FollowSymLinks\n</Directory>\n" +
		"<Directory \"@DOCROOT@/*/\">\nOrder allow,deny\nAllow from 10.0.0.0/8\n</Directory>\n"
	e, root := rewriteEngine(t, conf, "sub/page.html")
	if err := os.WriteFile(filepath.Join(root, ".htaccess"), []byte("RewriteEngine On\nRewriteCond /index.html -U\nRewriteRule ^wc - [F]\nRewriteCond /sub/page.html -U\nRewriteRule ^deep - [F]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []req{
		{target: "/index.html", ip: "8.8.8.8", want: 403},
		{target: "/wcx", ip: "8.8.8.8", want: 403},
		{target: "/wcx", ip: "10.1.1.1", want: 403},
		{target: "/deepx", ip: "8.8.8.8", want: 0},
		{target: "/deepx", ip: "10.1.1.1", want: 403},
		{target: "/srvx", ip: "8.8.8.8", want: 403},
		{target: "/srvx", ip: "10.1.1.1", want: 0},
	} {
		if res := decide(e, tt); res.Status != tt.want {
			t.Errorf("%s from %s: %d, want %d", tt.target, tt.ip, res.Status, tt.want)
		}
	}
}

func TestMergeFilePath(t *testing.T) {
	for _, tt := range []struct{ root, add, want string }{
		{"/srv/www/", "/srv/www/a.html", "/srv/www/a.html"},
		{"/srv/www/", "a.html", "/srv/www/a.html"},
		{"/srv/www/", "../a.html", "/srv/a.html"},
		{"/srv/www/", "/../../a", "/a"},
		{"/srv/www/", "./x//y/", "/srv/www/x/y/"},
		{"/srv/www/", "x/..", "/srv/www/"},
		{"/", "..", "/"},
		{"", "a/b", "a/b"},
		{"", "../a", "../a"},
		{"", "a/../../b", "../b"},
	} {
		if got := mergeFilePath(tt.root, tt.add); got != tt.want {
			t.Errorf("mergeFilePath(%q, %q) = %q, want %q", tt.root, tt.add, got, tt.want)
		}
	}
}

// The subrequest's own lookups: a subrequest of mod_dir's, or a
// look-ahead one, makes none for its main request's URI.
func TestSubreqOK(t *testing.T) {
	r := &Request{}
	r.rw.uri = "/a"
	for _, tt := range []struct {
		kind reqKind
		lk   *lookup
		uri  string
		want bool
	}{
		{kindMain, nil, "/a", true},
		{kindDirSub, nil, "/a", false},
		{kindDirSub, nil, "/a/index.html", true},
		{kindLookup, &lookup{parentURI: "/b"}, "/b", false},
		{kindLookup, &lookup{parentURI: "/b"}, "/a", true},
		{kindLookup, nil, "/a", false}, // a context reading a look-ahead's variable
	} {
		r.rw.lookup = tt.lk
		c := &rewriteCtx{req: r, kind: tt.kind, uri: tt.uri}
		if got := c.subreqOK(); got != tt.want {
			t.Errorf("kind %d, uri %s: %v, want %v", tt.kind, tt.uri, got, tt.want)
		}
	}
}

// The nesting limit counts a subrequest of mod_dir's as a level of its
// own: a lookup from one at depth 9 is the eleventh level.
func TestSubrequestDepth(t *testing.T) {
	e, _ := rewriteEngine(t, "RewriteEngine On\n")
	for _, tt := range []struct {
		kind  reqKind
		depth int
		want  int
	}{
		{kindLookup, 9, 0},
		{kindLookup, 10, 500},
		{kindDirSub, 8, 0},
		{kindDirSub, 9, 500},
		{kindMain, 0, 0},
	} {
		r := &Request{Method: "GET", Target: "/", Proto: "HTTP/1.1", Header: http.Header{},
			ClientAddr: netip.MustParseAddr("8.8.8.8"), LocalAddr: netip.MustParseAddr("127.0.0.1")}
		if tt.kind != kindMain {
			r.rw.lookup = &lookup{depth: tt.depth, parentURI: "/"}
		}
		c := newRewriteCtx(e, r, "/x", policy.Env{}, nil, tt.kind)
		res := c.subrequest("/index.html", lookup{})
		c.release()
		if res.Status != tt.want {
			t.Errorf("kind %d at depth %d: %d, want %d", tt.kind, tt.depth, res.Status, tt.want)
		}
	}
}

// A fallback for a missing index is two levels below the lookup whose
// directory it is: for a lookup made at depth 7 (itself the eighth level)
// it is the tenth, and still made; from depth 8 it is the eleventh.
func TestIndexFallbackDepth(t *testing.T) {
	e, _ := rewriteEngine(t, "<Directory \"@DOCROOT@/fb\">\nFallbackResource /index.html\n</Directory>\n", "fb/", "ix/index.html")
	for _, tt := range []struct {
		target      string
		depth, want int
	}{
		{"/fb/", 7, 0}, {"/fb/", 8, 500}, {"/fb/", 9, 500},
		{"/ix/", 8, 0}, {"/ix/", 9, 500}, // an index subrequest is a level below the lookup
	} {
		r := &Request{Method: "GET", Target: "/", Proto: "HTTP/1.1", Header: http.Header{},
			ClientAddr: netip.MustParseAddr("8.8.8.8"), LocalAddr: netip.MustParseAddr("127.0.0.1")}
		r.rw.lookup = &lookup{depth: tt.depth, parentURI: "/"}
		c := newRewriteCtx(e, r, "/x", policy.Env{}, nil, kindLookup)
		res := c.subrequest(tt.target, lookup{})
		c.release()
		if res.Status != tt.want {
			t.Errorf("%s from depth %d: %d, want %d", tt.target, tt.depth, res.Status, tt.want)
		}
	}
}

// The Location of a rewrite's redirect, which orderly sends itself
// (corpus 508 holds these to Apache).
func TestRewriteRedirectLocation(t *testing.T) {
	conf := "ServerName canon.test\nRewriteEngine On\nRewriteRule ^/s/(.*)$ /target/$1 [R]\n" +
		"<Directory \"@DOCROOT@\">\nAllowOverride All\nOptions FollowSymLinks\n</Directory>\n" +
		"<Directory \"@DOCROOT@/cn\">\nUseCanonicalName On\n</Directory>\n"
	e, root := rewriteEngine(t, conf, "cn/new/page.html", "b/new/page.html")
	os.WriteFile(filepath.Join(root, "cn", ".htaccess"), []byte("RewriteEngine On\nRewriteRule ^old/(.*)$ /cn/new/$1 [R]\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b", ".htaccess"), []byte("RewriteEngine On\nRewriteBase /b/\nRewriteRule ^old/(.*)$ new/$1 [R=301]\n"), 0o644)
	for _, tt := range []struct {
		target, host string
		want         int
		location     string
	}{
		{"/s/x.html", "www.example.test:8123", 302, "http://www.example.test:8123/target/x.html"},
		{"/s/x.html?k=v%20w", "www.example.test", 302, "http://www.example.test/target/x.html?k=v%20w"},
		{"/cn/old/page.html", "www.example.test", 302, "http://canon.test/cn/new/page.html"},
		{"/b/old/page.html", "www.example.test", 301, "http://www.example.test/b/new/page.html"},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8", header: map[string]string{"Host": tt.host}})
		if res.Status != tt.want || res.Location != tt.location {
			t.Errorf("%s: %d %q, want %d %q", tt.target, res.Status, res.Location, tt.want, tt.location)
		}
	}
}

// In translate_name a look-ahead subrequest that finds no <Directory> or
// <Files> section ends on its main request's configuration (the
// <Location> merge) and skips access control (corpus 929): the -U holds,
// and the main request is refused by its own access check instead.
func TestLookaheadSkipsSameConfig(t *testing.T) {
	conf := "RewriteEngine On\nRewriteCond %{REQUEST_URI} !-U\nRewriteRule ^/admin - [F,NS]\n" +
		"<Location /admin>\nOrder deny,allow\nDeny from all\n</Location>\n"
	e, _ := rewriteEngine(t, conf, "admin/x.html")
	res := decide(e, req{target: "/admin/x.html", ip: "8.8.8.8"})
	if res.Status != 403 || res.Rewritten != nil || res.Layer != policy.LayerCompat {
		t.Errorf("status %d, rewritten %+v, layer %v: want 403 by the access check, no rule applied", res.Status, res.Rewritten, res.Layer)
	}
}

// A subrequest an .htaccess file stops ends with the directory being
// walked as its filename (corpus 931): %{LA-U:REQUEST_FILENAME} is a
// directory, where the main request would answer 500.
func TestLookaheadBrokenHtaccess(t *testing.T) {
	conf := "RewriteEngine On\nRewriteCond %{LA-U:REQUEST_FILENAME} /pub/$\nRewriteRule ^/pub - [F,NS]\n" +
		"<Directory \"@DOCROOT@\">\nAllowOverride AuthConfig\n</Directory>\n"
	e, root := rewriteEngine(t, conf, "pub/index.html", "other/index.html")
	for _, d := range []string{"pub", "other"} {
		if err := os.WriteFile(filepath.Join(root, d, ".htaccess"), []byte("Order deny,allow\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for target, want := range map[string]int{"/pub/index.html": 403, "/other/index.html": 500} {
		if res := decide(e, req{target: target, ip: "8.8.8.8"}); res.Status != want {
			t.Errorf("%s: %d, want %d", target, res.Status, want)
		}
	}
}

// A look-ahead from per-directory rules, with no server-level rule, runs
// translate_name too (corpus 512): a Redirect answers it, leaving it no
// filename, and -U holds on the redirect.
func TestLookaheadRedirected(t *testing.T) {
	conf := "Redirect /moved/ http://elsewhere.test/\n<Directory \"@DOCROOT@\">\nAllowOverride All\nOptions FollowSymLinks\n</Directory>\n"
	e, root := rewriteEngine(t, conf, "moved/go", "r/go", "r/u")
	ht := "RewriteEngine On\nRewriteBase /moved/\nRewriteCond %{LA-U:REQUEST_FILENAME} ^$\nRewriteRule ^go - [F]\nRewriteCond /moved/x -U\nRewriteRule ^u - [F]\n"
	if err := os.WriteFile(filepath.Join(root, "r", ".htaccess"), []byte(ht), 0o644); err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]int{"/r/go": 403, "/r/u": 403, "/r/other": 0} {
		if res := decide(e, req{target: target, ip: "8.8.8.8"}); res.Status != want {
			t.Errorf("%s: %d, want %d", target, res.Status, want)
		}
	}
}

package walk

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

type redReq struct {
	method, target, host, ip string
	tls                      bool
	want                     int
	location                 string
}

func decideRed(e *Engine, r redReq) Result {
	m, ip := r.method, r.ip
	if m == "" {
		m = "GET"
	}
	if ip == "" {
		ip = "8.8.8.8"
	}
	return e.Decide(&Request{
		Method: m, Target: r.target, Host: r.host, Proto: "HTTP/1.1", Header: http.Header{},
		ClientAddr: netip.MustParseAddr(ip), LocalAddr: netip.MustParseAddr("127.0.0.1"), TLS: r.tls,
	}, nil)
}

func checkRed(t *testing.T, e *Engine, reqs []redReq) {
	t.Helper()
	for _, r := range reqs {
		res := decideRed(e, r)
		if res.Status != r.want || res.Location != r.location {
			t.Errorf("%s %s (Host %q): %d %q, want %d %q", r.method, r.target, r.host, res.Status, res.Location, r.want, r.location)
		}
	}
}

// mod_alias as corpus 420-424 show it on Apache 2.4: server-level
// redirects at translate_name, before access control; per-directory ones
// at fixups, after it; the Location built from the matched prefix, the
// rest escaped, the query.
func TestRedirects(t *testing.T) {
	e, _ := engine(t, `Redirect /old http://example.com/new
Redirect permanent /moved /new/place
RedirectMatch ^/m/(.*)\.html$ http://example.com/$1.htm
RedirectMatch 301 ^/rm/(.*)$ /other/$1
Redirect gone /g
Redirect 403 /forbidden
Redirect /q http://example.com/n?fixed=1
Redirect /private/away http://example.com/away
<Directory "@DOCROOT@/private">
    Order allow,deny
    Deny from all
    Redirect /private/in http://example.com/in
</Directory>
<Directory "@DOCROOT@/open">
    Redirect /open/a http://example.com/outer
</Directory>
<Directory "@DOCROOT@/open/deep">
    Redirect /open/a http://example.com/inner
</Directory>
<Location /loc>
    Order allow,deny
    Deny from all
    Redirect http://example.com/location
</Location>
<Directory "@DOCROOT@/dir">
    Order allow,deny
    Deny from all
    Redirect 301 http://example.com/dir
</Directory>
`, "private/", "open/deep/", "dir/x.html")
	checkRed(t, e, []redReq{
		{target: "/old", want: 302, location: "http://example.com/new"},
		{target: "/old/x/y.html?a=1&b=%20", want: 302, location: "http://example.com/new/x/y.html?a=1&b=%20"},
		{target: "/oldx", want: 0},
		{target: "//old//a", want: 302, location: "http://example.com/new/a"},
		{target: "/old/a%20b%3Fc%25d%23e/%C3%A9?q", want: 302, location: "http://example.com/new/a%20b%3fc%25d%23e/%c3%a9?q"},
		{target: "/old?", want: 302, location: "http://example.com/new?"},
		{target: "/moved/a", want: 301, location: "http://127.0.0.1/new/place/a", host: "127.0.0.1"},
		{target: "/moved/a", want: 301, location: "http://www.example.org:8080/new/place/a", host: "www.example.org:8080"},
		{target: "/moved/a", want: 301, location: "http://www.example.org/new/place/a", host: "WWW.Example.ORG."},
		{target: "/moved/a", want: 301, location: "https://www.example.org/new/place/a", host: "www.example.org", tls: true},
		{target: "/moved/a", want: 301, location: "http://[::1]:8443/new/place/a", host: "[::1]:8443"},
		{target: "/m/a%20b.html", want: 302, location: "http://example.com/a%20b.htm"},
		{target: "/m/x.html?z", want: 302, location: "http://example.com/x.htm?z"},
		{target: "/rm/a%25b", want: 301, location: "http://h.test/other/a%25b", host: "h.test"},
		{target: "/g/x", want: 410},
		{target: "/forbidden", want: 403},
		{target: "/q?x=1", want: 302, location: "http://example.com/n?fixed=1"},
		{target: "/private/away", want: 302, location: "http://example.com/away"},
		{target: "/private/in", want: 403},
		{target: "/open/a", want: 302, location: "http://example.com/outer"},
		{target: "/open/a/x", want: 302, location: "http://example.com/outer/x"},
		{target: "/loc/x?q=1", want: 302, location: "http://example.com/location?q=1"},
		{target: "/dir/x.html", want: 403},
		{method: "TRACE", target: "/old", want: 302, location: "http://example.com/new"},
	})
}

// A <Location>'s one-argument Redirect alone, with no server-level
// Redirect: still tried at translate_name, before the Deny beside it.
func TestLocationRedirectAlone(t *testing.T) {
	e, _ := engine(t, `<Location /loc>
    Order allow,deny
    Deny from all
    Redirect http://example.com/location
</Location>
`)
	checkRed(t, e, []redReq{
		{target: "/loc/x", want: 302, location: "http://example.com/location"},
		{target: "/other", want: 0},
	})
}

// 2.2: the one-argument form does not exist, and a server-level target
// that is no URL is sent as written.
func TestRedirects22(t *testing.T) {
	e, _ := engineWith(t, translate.Legacy22, `RedirectMatch ^/rel/(.*) other/$1
<Directory "@DOCROOT@/d">
    RedirectMatch ^/d/(.*) rel/$1
</Directory>
`, "d/x.html")
	checkRed(t, e, []redReq{
		{target: "/rel/a", want: 302, location: "other/a"},
		{target: "/d/x.html", want: 500},
	})
}

// A per-directory redirect whose target is no URL is a 500 (AH00676);
// RedirectRelative On sends a path as it is; UseCanonicalName On builds
// the URL from ServerName and its port.
func TestRedirectTargets(t *testing.T) {
	e, _ := engine(t, `ServerName www.example.com:8080
<Directory "@DOCROOT@/bad">
    RedirectMatch ^/bad/(.*) rel/$1
</Directory>
<Directory "@DOCROOT@/rel">
    RedirectRelative On
    Redirect /rel/a /b
</Directory>
<Directory "@DOCROOT@/canon">
    UseCanonicalName On
    Redirect /canon/a /c
</Directory>
`, "bad/", "rel/", "canon/")
	checkRed(t, e, []redReq{
		{target: "/bad/x", want: 500},
		{target: "/rel/a/x", want: 302, location: "/b/x", host: "h.test"},
		{target: "/canon/a", want: 302, location: "http://www.example.com:8080/c", host: "h.test:9000"},
	})
	if res := decideRed(e, redReq{target: "/bad/x"}); len(res.Logs()) != 1 || res.Logs()[0].Code != "AH00676" {
		t.Errorf("/bad/x logs %v, want AH00676", res.Logs())
	}
}

// ErrorDocument with a URL turns a refusal into a 302 (not a 401).
func TestErrorDocumentURL(t *testing.T) {
	e, _ := engine(t, `ErrorDocument 403 http://example.com/denied
ErrorDocument 401 http://example.com/login
Redirect gone /g
ErrorDocument 410 https://example.com/gone?x=1
<Directory "@DOCROOT@/private">
    Order allow,deny
    Deny from all
</Directory>
<Directory "@DOCROOT@/private2">
    Order allow,deny
    Deny from all
    ErrorDocument 403 "Go away"
</Directory>
<Directory "@DOCROOT@/auth">
    AuthType Basic
    AuthName "Members"
    AuthUserFile /dev/null
    Require valid-user
</Directory>
`, "private/", "private2/", "auth/")
	checkRed(t, e, []redReq{
		{target: "/private/", want: 302, location: "http://example.com/denied"},
		{target: "/private2/", want: 403},
		{target: "/auth/", want: 401},
		{target: "/g", want: 302, location: "https://example.com/gone?x=1"},
	})
}

func TestEscapeTarget(t *testing.T) {
	tests := map[string]string{
		"/other/a%b":                    "/other/a%25b",
		"http://example.com:80/x y":     "http://example.com/x%20y",
		"https://example.com:8443/x":    "https://example.com:8443/x",
		"http://u:pw@example.com/x?a b": "http://u:XXXXXXXX@example.com/x?a b",
		"/a#frag ment":                  "/a#frag ment",
		"mailto:a@b":                    "mailto:a@b",
	}
	for in, want := range tests {
		if got := escapeTarget(in); got != want {
			t.Errorf("escapeTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

// UseCanonicalName On with no ServerName: orderly cannot know the legacy
// server's host name, and the request's Host stands in for it rather than
// an empty host (random 935).
func TestCanonicalNameWithoutServerName(t *testing.T) {
	root := tree(t, "index.html")
	e := optEngine(t, translate.Compat24, root, "UseCanonicalName On\nRedirectPermanent /oldp /index.html\n", nil)
	res := decide(e, req{target: "/oldp", ip: "8.8.8.8", header: map[string]string{"Host": "www.example.test:8080"}})
	if res.Status != 301 || res.Location != "http://www.example.test:8080/index.html" {
		t.Errorf("%d %q, want 301 to the Host's name", res.Status, res.Location)
	}
}

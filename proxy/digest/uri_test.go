package digest

import (
	"fmt"
	"testing"
)

func (o opt) String() string {
	if !o.ok {
		return "NULL"
	}
	return fmt.Sprintf("%q", o.s)
}

func TestParseURI(t *testing.T) {
	// The fields apr_uri_parse (apr-util 1.6) fills in; "-" for NULL.
	type want struct{ scheme, hostinfo, hostname, portStr, path, query string }
	o := func(s string) opt {
		if s == "-" {
			return opt{}
		}
		return some(s)
	}
	tests := []struct {
		uri  string
		ok   bool
		w    want
		port uint16
	}{
		{"/a/b?c=d#e", true, want{"-", "-", "-", "-", "/a/b", "c=d"}, 0},
		{"/a?", true, want{"-", "-", "-", "-", "/a", ""}, 0},
		{"/a#f?x", true, want{"-", "-", "-", "-", "/a", "-"}, 0},
		{"?q", true, want{"-", "-", "-", "-", "-", "q"}, 0},
		{"*", true, want{"-", "-", "-", "-", "*", "-"}, 0},
		{"//host/p", true, want{"-", "host", "host", "-", "/p", "-"}, 0},
		{"///p", true, want{"-", "-", "-", "-", "///p", "-"}, 0},
		{"//", true, want{"-", "", "", "-", "-", "-"}, 0},
		{"http://u:pw@Host:8080/p?q", true, want{"http", "u:pw@Host:8080", "Host", "8080", "/p", "q"}, 8080},
		{"http://a@b@host/p", true, want{"http", "a@b@host", "host", "-", "/p", "-"}, 0},
		{"https://host:/p", true, want{"https", "host:", "host", "", "/p", "-"}, 443},
		{"foo://host:/p", true, want{"foo", "host:", "host", "", "/p", "-"}, 0},
		{"http://host", true, want{"http", "host", "host", "-", "-", "-"}, 0},
		{"http://host?q", true, want{"http", "host", "host", "-", "-", "q"}, 0},
		{"http://[::1]:80/p", true, want{"http", "[::1]:80", "::1", "80", "/p", "-"}, 80},
		{"http://[::1]/p", true, want{"http", "[::1]", "::1", "-", "/p", "-"}, 0},
		{"http://[::1/p", false, want{}, 0},
		{"http://host:8x/p", false, want{}, 0},
		{"http://host:70000/p", true, want{"http", "host:70000", "host", "70000", "/p", "-"}, 70000 - 65536},
		{"http://host:+80/p", true, want{"http", "host:+80", "host", "+80", "/p", "-"}, 80},
		{"a:b/c", true, want{"a", "-", "-", "-", "b/c", "-"}, 0},
		{"a+b.c-d:x", true, want{"a+b.c-d", "-", "-", "-", "x", "-"}, 0},
		{"1a:b", false, want{}, 0},
		{"x/y:z", true, want{"-", "-", "-", "-", "x/y:z", "-"}, 0},
		{":x", false, want{}, 0},
		{"rel", true, want{"-", "-", "-", "-", "rel", "-"}, 0},
		{"", true, want{"-", "-", "-", "-", "-", "-"}, 0},
	}
	for _, tt := range tests {
		u, ok := parseURI(tt.uri)
		if ok != tt.ok {
			t.Errorf("%q: ok %v", tt.uri, ok)
			continue
		}
		if !ok {
			continue
		}
		got := []opt{u.scheme, u.hostinfo, u.hostname, u.portStr, u.path, u.query}
		w := []opt{o(tt.w.scheme), o(tt.w.hostinfo), o(tt.w.hostname), o(tt.w.portStr), o(tt.w.path), o(tt.w.query)}
		if fmt.Sprint(got) != fmt.Sprint(w) || u.port != tt.port {
			t.Errorf("%q:\n got %v port %d\nwant %v port %d", tt.uri, got, u.port, w, tt.port)
		}
	}
}

func TestURICheck(t *testing.T) {
	base := Request{Method: "GET", ServerName: "example.org", ServerPort: 8080, DefaultPort: 80}
	tests := []struct {
		name      string
		uri       string // the uri parameter
		target    string // the request-target
		path      string // Request.Path ("" : the target's path)
		method    string
		hack      bool
		serverPrt int
		host      string // ServerName, if not example.org
		code      string
	}{
		{name: "equal", uri: "/a b", target: "/a b"},
		{name: "path differs", uri: "/a", target: "/b", code: "AH01786"},
		{name: "escapes", uri: "/%61", target: "/a"},
		{name: "escaped target", uri: "/a", target: "/%61", path: "/a"},
		{name: "decoded twice", uri: "/a", target: "/%2561", path: "/%61"},
		{name: "decoded %2F", uri: "/a/b", target: "/a%2Fb", path: "/a%2Fb"},
		{name: "decoded %00 ends", uri: "/a%00x", target: "/a"},
		{name: "query", uri: "/a?x=%41", target: "/a?x=A"},
		{name: "query missing", uri: "/a", target: "/a?x", code: "AH01786"},
		{name: "query missing, hack", uri: "/a", target: "/a?x", hack: true},
		{name: "query differs, hack", uri: "/a?y", target: "/a?x", hack: true, code: "AH01786"},
		{name: "empty query vs none", uri: "/a?", target: "/a", code: "AH01786"},
		{name: "absolute, host and port", uri: "http://EXAMPLE.org:8080/a", target: "/a"},
		{name: "absolute, wrong port", uri: "http://example.org:8081/a", target: "/a", code: "AH01786"},
		{name: "absolute, no port, not default", uri: "http://example.org/a", target: "/a", code: "AH01786"},
		{name: "absolute, no port, default", uri: "http://example.org/a", target: "/a", serverPrt: 80},
		{name: "absolute, empty port", uri: "http://example.org:/a", target: "/a", serverPrt: 80},
		{name: "port without host", uri: "//:8080/a", target: "/a"},
		{name: "wrong host", uri: "http://other/a", target: "/a", code: "AH01786"},
		{name: "ASCII fold", uri: "http://KEY:8080/a", target: "/a", host: "key"},
		{name: "no non-ASCII fold", uri: "http://\u212Aey:8080/a", target: "/a", host: "key", code: "AH01786"},
		{name: "unparsable", uri: "http://h:x/a", target: "/a", code: "AH01783"},
		{name: "absolute-form target", uri: "/a", target: "http://example.org:8080/a"},
		{name: "absolute-form target, its host", uri: "http://H2:9/a", target: "http://h2:9/a"},
		{name: "absolute-form target, other host", uri: "http://h3/a", target: "http://h2/a", code: "AH01786"},
		{name: "star and no path", uri: "*", target: "http://example.org:8080"},
		{name: "star and a path", uri: "*", target: "/", code: "AH01786"},
		{name: "double slash target", uri: "/a", target: "//a"},
		{name: "connect", method: "CONNECT", uri: "h:443", target: "//h:443", code: "AH01785"},
		{name: "connect equal", method: "CONNECT", uri: "h:443", target: "h:443"},
	}
	for _, tt := range tests {
		req := base
		req.URI, req.Path, req.QueryStringHack = tt.target, tt.path, tt.hack
		if tt.method != "" {
			req.Method = tt.method
		}
		if tt.host != "" {
			req.ServerName = tt.host
		}
		if tt.serverPrt != 0 {
			req.ServerPort = tt.serverPrt
		}
		code, msg, _ := uriCheck(tt.uri, &req)
		if code != tt.code {
			t.Errorf("%s: uri %q target %q: got %q (%s), want %q", tt.name, tt.uri, tt.target, code, msg, tt.code)
		}
	}
}

func TestUnescapeURL(t *testing.T) {
	for in, want := range map[string]string{
		"a%20b": "a b", "%2f%2F": "//", "%zz%4": "%zz%4", "a%00b": "a", "%": "%", "%4": "%4", "%41%": "A%", "%e9": "\xe9",
	} {
		if got := unescapeURL(in); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

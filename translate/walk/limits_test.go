package walk

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

type limReq struct {
	method, target, host, ip string
	want                     int
}

func decideLim(e *Engine, r limReq) Result {
	m, ip := r.method, r.ip
	if m == "" {
		m = "GET"
	}
	if ip == "" {
		ip = "8.8.8.8"
	}
	return e.Decide(&Request{
		Method: m, Target: r.target, Host: r.host, Proto: "HTTP/1.1", Header: http.Header{},
		ClientAddr: netip.MustParseAddr(ip), LocalAddr: netip.MustParseAddr("127.0.0.1"),
	}, nil)
}

func checkLim(t *testing.T, e *Engine, reqs []limReq) {
	t.Helper()
	for _, r := range reqs {
		if res := decideLim(e, r); res.Status != r.want {
			t.Errorf("%s %s (Host %q): %d, want %d", r.method, r.target, r.host, res.Status, r.want)
		}
	}
}

// What Apache refuses while it reads the request, by the configuration
// of the server the address chose.
func TestReadRequest(t *testing.T) {
	e, _ := engine(t, `HttpProtocolOptions RegisteredMethods
<Location /brew>
    <Limit BREW>
        Order allow,deny
        Deny from all
    </Limit>
</Location>
`)
	checkLim(t, e, []limReq{
		{method: "FOO", target: "/", want: 501},
		{method: "get", target: "/", want: 501},
		{method: "BREW", target: "/brew", want: 403},
		{method: "PROPFIND", target: "/", want: 0},
		{target: "http://u:p@h.test/", want: 400},
		{target: "/", host: "1.2.3", want: 400},
		{target: "/", host: "01.2.3.4", want: 400},
		{target: "/", host: "123", want: 400},
		{target: "/", host: "a..b", want: 400},
		{target: "/", host: "foo.123", want: 400},
		{target: "/", host: "a.b:99999", want: 400},
		{target: "/", host: "a.b:0", want: 400},
		{target: "/", host: "[::1", want: 400},
		{target: "/", host: "[::1]:80", want: 0},
		{target: "/", host: "foo_bar.example", want: 0},
		{target: "/", host: "-x.com", want: 0},
		{target: "/", host: "10.0.0.1:8080", want: 0},
	})
}

// StrictHostCheck On: the Host must name a host of the address.
func TestStrictHostCheck(t *testing.T) {
	e, _ := engine(t, `StrictHostCheck On
<VirtualHost *:*>
    ServerName www.example.test
    ServerAlias example.test *.shop.test
</VirtualHost>
<VirtualHost *:*>
    ServerName intranet.test
</VirtualHost>
`)
	checkLim(t, e, []limReq{
		{target: "/", host: "www.example.test"},
		{target: "/", host: "EXAMPLE.test."},
		{target: "/", host: "a.shop.test:8080"},
		{target: "/", host: "intranet.test"},
		{target: "/", host: "other.test", want: 400},
		{target: "/", host: ""},
	})
	res := decideLim(e, limReq{target: "/", host: "other.test"})
	if l := res.Logs(); len(l) != 1 || l[0].Code != "AH10157" {
		t.Errorf("logs %v, want AH10157", l)
	}
	// A host without ServerName takes the main server's (corpus case 438).
	nameless, _ := engine(t, `ServerName main.test
StrictHostCheck On
<VirtualHost *:*>
    ServerAlias alias.test
</VirtualHost>
<VirtualHost *:*>
    ServerName other.test
</VirtualHost>
`)
	checkLim(t, nameless, []limReq{
		{target: "/", host: "main.test"},
		{target: "/", host: "alias.test"},
		{target: "/", host: "other.test"},
		{target: "/", host: "nope.test", want: 400},
	})
	main, _ := engine(t, "ServerName www.example.test\nStrictHostCheck On\n")
	checkLim(t, main, []limReq{
		{target: "/", host: "www.example.test"},
		{target: "/", host: "other.test", want: 400},
	})
}

// LimitRequestBody in force for an answer: the sections' (the index
// file's for a directory), Apache's default by version, and whether a
// refusal reads the body (2.4 does, unless the status closes the
// connection; 2.2 does not).
func TestBodyLimit(t *testing.T) {
	conf := `LimitRequestBody 100
<Directory "@DOCROOT@/private">
    Order allow,deny
    Deny from all
</Directory>
<Directory "@DOCROOT@/big">
    LimitRequestBody 0
</Directory>
<Files "upload.html">
    LimitRequestBody 5000
</Files>
`
	e, _ := engine(t, conf, "private/x.html", "big/x.html", "up/upload.html")
	tests := []struct {
		method, target string
		limit          int64
		applies        bool
	}{
		{"POST", "/index.html", 100, true},
		{"POST", "/private/x.html", 100, true},
		{"POST", "/big/x.html", 0, false},
		{"POST", "/up/upload.html", 5000, true},
		{"FOO", "/private/x.html", 100, true},
	}
	for _, tt := range tests {
		res := decideLim(e, limReq{method: tt.method, target: tt.target})
		if n, ok := res.BodyLimit(); n != tt.limit || ok != tt.applies {
			t.Errorf("%s %s: BodyLimit %d %v, want %d %v", tt.method, tt.target, n, ok, tt.limit, tt.applies)
		}
	}
	idx, _ := engine(t, `<Files index.html>
LimitRequestBody 7
</Files>
`, "d/index.html")
	bodyLimit := func(r Result) (int64, bool) { return r.BodyLimit() }
	if n, _ := bodyLimit(decideLim(idx, limReq{method: "POST", target: "/d/"})); n != 7 {
		t.Errorf("index: BodyLimit %d, want the index file's 7", n)
	}
	def, _ := engine(t, "")
	if n, ok := bodyLimit(decideLim(def, limReq{method: "POST", target: "/"})); n != 1<<30 || !ok {
		t.Errorf("2.4.71 default: %d %v, want 1 GiB", n, ok)
	}
	e22, _ := engineWith(t, translate.Legacy22, conf, "private/x.html")
	if n, ok := bodyLimit(decideLim(e22, limReq{method: "POST", target: "/private/x.html"})); ok {
		t.Errorf("2.2 refusal: BodyLimit %d %v, want none (2.2 answers before reading)", n, ok)
	}
	if n, ok := bodyLimit(decideLim(e22, limReq{method: "POST", target: "/index.html"})); n != 100 || !ok {
		t.Errorf("2.2 granted: BodyLimit %d %v, want 100", n, ok)
	}
	old := &translate.Config{Semantics: translate.Compat24, Version: "2.4.53"}
	if n := defaultBodyLimit(old); n != 0 {
		t.Errorf("2.4.53 default: %d, want none", n)
	}
}

// LimitRequestBody's default by version: 1 GiB from 2.4.54 (CVE-2022-29404),
// none before, nor under 2.2; a version's suffix does not count.
func TestDefaultBodyLimit(t *testing.T) {
	for _, tt := range []struct {
		version string
		want    int64
	}{
		{"2.4.54", 1 << 30},
		{"2.4.54-dev", 1 << 30},
		{"2.4.59", 1 << 30},
		{"2.4.60", 1 << 30},
		{"2.4.100", 1 << 30},
		{"2.5.0", 1 << 30},
		{"3.0.0", 1 << 30},
		{"2.4.53", 0},
		{"2.4.9", 0},
		{"2.3.99", 0},
		{"1.9.99", 0},
	} {
		cfg := &translate.Config{Semantics: translate.Compat24, Version: tt.version}
		if n := defaultBodyLimit(cfg); n != tt.want {
			t.Errorf("%s: %d, want %d", tt.version, n, tt.want)
		}
	}
	if n := defaultBodyLimit(&translate.Config{Semantics: translate.Legacy22, Version: "2.4.60"}); n != 0 {
		t.Errorf("2.2: %d, want none", n)
	}
}

// A 2.4 refusal whose status closes the connection (ap_status_drops_connection)
// reads no body: no limit applies to it.
func TestBodyLimitDroppedConnection(t *testing.T) {
	e, _ := engine(t, "LimitRequestBody 100\n<Directory @DOCROOT@/auth>\nRequire valid-user\n</Directory>\n", "auth/x.html")
	for _, tt := range []struct {
		method, target, host string
		status               int
		limit                int64
		applies              bool
	}{
		{"POST", "/auth/x.html", "", 500, 0, false},
		{"POST", "/x.html", "a..b", 400, 0, false},
		{"POST", "/x.html", "", 0, 100, true},
	} {
		res := decideLim(e, limReq{method: tt.method, target: tt.target, host: tt.host})
		if n, ok := res.BodyLimit(); res.Status != tt.status || n != tt.limit || ok != tt.applies {
			t.Errorf("%s %s: status %d BodyLimit %d %v, want %d %d %v", tt.method, tt.target, res.Status, n, ok, tt.status, tt.limit, tt.applies)
		}
	}
	for _, st := range []int{400, 408, 411, 413, 414, 500, 501, 503} {
		if !dropsConnection(st) {
			t.Errorf("dropsConnection(%d) = false", st)
		}
	}
	for _, st := range []int{401, 403, 404, 405, 502} {
		if dropsConnection(st) {
			t.Errorf("dropsConnection(%d) = true", st)
		}
	}
}

// A user name is refused only in an absolute-form target's authority, and
// only under HttpProtocolOptions Strict (the default); Unsafe also lets
// host names through that strict_hostname_check refuses.
func TestReadRequestUserinfo(t *testing.T) {
	strict, _ := engine(t, "")
	checkLim(t, strict, []limReq{
		{target: "http://u:p@h.test/", want: 400},
		{target: "http://u@h.test", want: 400},
		{target: "http://h.test/a@b", want: 0},
		{target: "http://h.test?q=a@b", want: 0},
		{target: "http://h.test#a@b", want: 400}, // a fragment
		{target: "/x?u=http://a@b", want: 0},
		{target: "/a@b", want: 0},
		{target: "://u@h.test/", want: 400}, // no scheme: apr_uri_parse fails
		{target: "/", host: "1.2.3", want: 400},
	})
	root := tree(t, "index.html")
	cf := filepath.Join(filepath.Dir(root), "legacy.conf")
	if err := os.WriteFile(cf, []byte("HttpProtocolOptions Unsafe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root, ForwardUnfaithful: true}})
	if err != nil {
		t.Fatal(err)
	}
	unsafe := New(cfg, OS, users{})
	checkLim(t, unsafe, []limReq{
		{target: "http://u:p@h.test/", want: 0},
		{target: "/", host: "1.2.3", want: 0},
		{target: "/", host: "123", want: 0},
		{target: "/", host: "a..b", want: 400},
	})
}

// StrictHostCheck for an IP-based host: its ServerName, or its
// <VirtualHost> address as written (corpus case 412); with no host for
// the address, the main server's ServerName alone passes, and the warning
// says so (AH10156).
func TestStrictHostCheckAddress(t *testing.T) {
	e, _ := engine(t, `ServerName main.test
StrictHostCheck On
<VirtualHost 127.0.0.1:80>
ServerName one.test
</VirtualHost>
<VirtualHost 127.0.0.2:80>
ServerName two.test
</VirtualHost>
`)
	e.SetLegacyAddress(netip.MustParseAddr("127.0.0.1"), 80)
	checkLim(t, e, []limReq{
		{target: "/", host: "one.test"},
		{target: "/", host: "127.0.0.1"},
		{target: "/", host: "127.0.0.2", want: 400},
		{target: "/", host: "two.test", want: 400},
		{target: "/", host: "main.test", want: 400},
	})
	e.SetLegacyAddress(netip.MustParseAddr("127.0.0.2"), 80)
	checkLim(t, e, []limReq{
		{target: "/", host: "two.test"},
		{target: "/", host: "127.0.0.2"},
		{target: "/", host: "one.test", want: 400},
	})
	e.SetLegacyAddress(netip.MustParseAddr("10.9.9.9"), 80)
	checkLim(t, e, []limReq{
		{target: "/", host: "main.test"},
		{target: "/", host: "two.test", want: 400},
	})
	res := decideLim(e, limReq{target: "/", host: "two.test"})
	if l := res.Logs(); len(l) != 1 || l[0].Code != "AH10156" {
		t.Errorf("logs %v, want AH10156", l)
	}
}

// The address's hosts match its port: <VirtualHost *> (any port) and
// <VirtualHost *:81> only for traffic that stands for port 81; the first
// of them gives the limits a request is read with.
func TestAddressHostsPort(t *testing.T) {
	e, _ := engine(t, `<VirtualHost *:81>
ServerName eighty-one.test
LimitRequestLine 1000
</VirtualHost>
<VirtualHost *>
ServerName any.test
</VirtualHost>
`)
	for _, c := range []struct{ port, line int }{{80, 8190}, {81, 1000}, {0, 1000}} {
		e.SetLegacyAddress(netip.MustParseAddr("127.0.0.1"), c.port)
		if got := e.RequestLimits().RequestLine; got != c.line {
			t.Errorf("port %d: LimitRequestLine %d, want %d (the limits of the wrong host)", c.port, got, c.line)
		}
	}
}

// userinfo is apr_uri_parse finding a user in an absolute-form target:
// the last '@' of the authority, which ends at the first '/', '?' or '#'.
func TestUserinfo(t *testing.T) {
	for _, c := range []struct {
		target string
		want   bool
	}{
		{"http://u@h.test/", true},
		{"http://u:p@h.test", true},
		{"http:///u@h.test", false},
		{"http://?u@h.test", false},
		{"http://#u@h.test", false},
		{"http://h.test/u@x", false},
		{"/http://u@h.test", false},
	} {
		if got := userinfo(c.target); got != c.want {
			t.Errorf("userinfo(%q) = %v, want %v", c.target, got, c.want)
		}
	}
}

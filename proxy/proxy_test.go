package proxy

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.9.0.0/16")}
	tests := []struct {
		peer string
		xff  []string
		want string
		ok   bool
	}{
		{"203.0.113.9:5000", nil, "203.0.113.9", true},
		{"203.0.113.9:5000", []string{"10.1.2.3"}, "203.0.113.9", true}, // untrusted peer: header ignored
		{"127.0.0.1:5000", []string{"10.1.2.3"}, "10.1.2.3", true},
		{"127.0.0.1:5000", []string{"8.8.8.8, 10.1.2.3"}, "10.1.2.3", true},
		{"127.0.0.1:5000", []string{"8.8.8.8, 10.9.1.1"}, "8.8.8.8", true}, // a trusted hop is skipped
		{"127.0.0.1:5000", []string{"8.8.8.8", "10.9.1.1"}, "8.8.8.8", true},
		// mod_remoteip reads no port and no brackets: unparsable.
		{"127.0.0.1:5000", []string{"[2001:db8::1]:80"}, "", false},
		{"127.0.0.1:5000", []string{"10.1.2.3:4711"}, "", false},
		{"127.0.0.1:5000", []string{"[10.1.2.3]"}, "", false},
		{"127.0.0.1:5000", []string{"fe80::1%eth0"}, "fe80::1", true},
		{"127.0.0.1:5000", []string{"::ffff:10.1.2.3"}, "10.1.2.3", true},
		{"127.0.0.1:5000", []string{"not-an-ip"}, "", false},
		{"[::1]:5000", []string{"10.1.2.3"}, "::1", true},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.peer
		for _, v := range tt.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		got, _, ok := clientAddr(r, trusted)
		if ok != tt.ok || (ok && got.String() != tt.want) {
			t.Errorf("peer %s xff %q: got %v %v, want %s %v", tt.peer, tt.xff, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseAuthorization(t *testing.T) {
	b := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		h          string
		basic      bool
		user, pass string
	}{
		{"Basic " + b("alice:secret"), true, "alice", "secret"},
		{"basic   " + b("alice:se:cret"), true, "alice", "se:cret"},
		{"Basic " + b("alice"), true, "alice", ""},
		{"Basic " + strings.TrimRight(b("alice:ok"), "="), true, "alice", "ok"},
		{"Bearer abc", false, "", ""},
		{"Basic " + b("alice:ok") + "!!garbage", true, "alice", "ok"},
	}
	for _, tt := range tests {
		c := parseAuthorization(tt.h, true)
		if c.Basic != tt.basic || c.User != tt.user || c.Password != tt.pass {
			t.Errorf("%q: got %+v", tt.h, c)
		}
	}
}

func FuzzParseAuthorization(f *testing.F) {
	f.Add("Basic YWxpY2U6b2s=")
	f.Add("Basic \t YWxp")
	f.Add("Digest x")
	f.Fuzz(func(t *testing.T, h string) {
		c := parseAuthorization(h, true)
		if !c.Present {
			t.Fatal("credentials lost")
		}
		if !c.Basic && (c.User != "" || c.Password != "") {
			t.Fatal("non-Basic credentials decoded")
		}
		// Round trip: the user and password decoded, sent again as
		// Basic, decode the same (ap_get_basic_auth_pw splits at the
		// first ':', so a user never holds one).
		if c.Basic {
			if strings.Contains(c.User, ":") {
				t.Fatalf("user %q holds a ':'", c.User)
			}
			again := parseAuthorization("Basic "+base64.StdEncoding.EncodeToString([]byte(c.User+":"+c.Password)), true)
			if !again.Basic || again.User != c.User || again.Password != c.Password {
				t.Fatalf("%q decodes to %q/%q, which sent again decode to %q/%q", h, c.User, c.Password, again.User, again.Password)
			}
		}
	})
}

// TestProxyPath runs the handler in front of a recording backend: refusals
// never reach it, passing requests arrive unchanged but for the
// forwarding headers, and only orderly sets the user header.
func TestProxyPath(t *testing.T) {
	var seen []*http.Request
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Clone(r.Context()))
		io.WriteString(w, "backend:"+r.RequestURI)
	}))
	defer backend.Close()

	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	os.MkdirAll(filepath.Join(root, "private"), 0o755)
	os.WriteFile(filepath.Join(root, "private", "a.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "users"), []byte("alice:{SHA}"+sha1b64("ok")+"\n"), 0o644)
	conf := `<Directory "` + root + `/private">
AuthType Basic
AuthName "Private \"zone\""
AuthUserFile "` + dir + `/users"
Require valid-user
</Directory>`
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte(conf), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(backend.URL)
	var errlog bytes.Buffer
	h := New(Config{Backend: u, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, ErrorLog: &errlog}, walk.New(cfg, walk.OS, NewIdentity()))
	front := httptest.NewServer(h)
	defer front.Close()

	do := func(path string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest("GET", front.URL+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := do("/private/a.txt", map[string]string{"X-Remote-User": "alice"})
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="Private \"zone\""` {
		t.Fatalf("no credentials: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if len(seen) != 0 {
		t.Fatal("a refused request reached the backend")
	}
	resp = do("/private/a.txt", map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:bad"))})
	if resp.StatusCode != 401 || !strings.Contains(errlog.String(), "AH01617: user alice: authentication failure for \"/private/a.txt\": Password Mismatch") {
		t.Fatalf("bad password: %d, log %q", resp.StatusCode, errlog.String())
	}
	resp = do("/private/a.txt?q=1", map[string]string{
		"Authorization":   "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:ok")),
		"X-Remote-User":   "mallory",
		"X-Forwarded-For": "10.1.2.3",
	})
	if resp.StatusCode != 200 || len(seen) != 1 {
		t.Fatalf("good password: %d, backend saw %d", resp.StatusCode, len(seen))
	}
	got := seen[0]
	if got.Header.Get("X-Remote-User") != "alice" || len(got.Header.Values("X-Remote-User")) != 1 {
		t.Errorf("user header at backend: %q", got.Header.Values("X-Remote-User"))
	}
	if got.RequestURI != "/private/a.txt?q=1" {
		t.Errorf("backend saw %q", got.RequestURI)
	}
	if xff := got.Header.Get("X-Forwarded-For"); xff != "10.1.2.3, 127.0.0.1" {
		t.Errorf("X-Forwarded-For at backend: %q", xff)
	}
	// The backend gets the path orderly decided on, normalised as Apache
	// normalises it, and the query as sent.
	for _, tt := range []struct{ sent, want string }{
		{"/a/../index.html", "/index.html"},
		{"//index.html", "/index.html"},
		{"/%2e/index.html", "/index.html"},
		{"/x/%2e%2e/index.html", "/index.html"},
		{"/%69ndex.html", "/index.html"},
		{"/a%20b?x=%2F&y", "/a%20b?x=%2F&y"},
		{"/a;b/c", "/a;b/c"},
		{"/caf%c3%a9", "/caf%C3%A9"},
		{"/p%25q", "/p%25q"},
		{"http://other.example/index.html?q", "/index.html?q"},
	} {
		n := len(seen)
		conn, err := net.Dial("tcp", front.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", tt.sent)
		io.Copy(io.Discard, conn)
		conn.Close()
		if len(seen) != n+1 || seen[n].RequestURI != tt.want {
			got := "(nothing)"
			if len(seen) > n {
				got = seen[n].RequestURI
			}
			t.Errorf("sent %q, backend saw %q, want %q", tt.sent, got, tt.want)
		}
	}
	// A public file passes without credentials, and a client's user
	// header never reaches the backend.
	resp = do("/index.html", map[string]string{"X-Remote-User": "mallory"})
	if last := seen[len(seen)-1]; resp.StatusCode != 200 || last.Header.Get("X-Remote-User") != "" {
		t.Errorf("public: %d, user header %q", resp.StatusCode, last.Header.Get("X-Remote-User"))
	}
}

func TestEncodePath(t *testing.T) {
	for _, tt := range []struct {
		in   string
		kept bool
		want string
	}{
		{"/a b/c", false, "/a%20b/c"},
		{"/x%2Fy", true, "/x%2Fy"}, // AllowEncodedSlashes NoDecode kept it encoded
		{"/x%2fy", true, "/x%2fy"},
		// Otherwise "%2F" in a decided URI is a literal "%", "2", "F"
		// (the client sent %252F): sent as %2F, a backend with
		// AllowEncodedSlashes On would decode a slash.
		{"/admin%2Fsecret.html", false, "/admin%252Fsecret.html"},
		{"/100%", false, "/100%25"},
		{"/100%", true, "/100%25"},
		{"/q?#", false, "/q%3F%23"},
		{"/é", false, "/%C3%A9"},
		{"/~u/a;b=c", false, "/~u/a;b=c"},
		// At the edges of what it leaves as it is: the unreserved
		// characters and sub-delimiters of RFC 3986 (and ':', '@', '/')
		// stay, the characters next to them are escaped; "%2F" stays only
		// where slashes were kept, and only as a whole.
		{"", false, ""},
		{"*", false, ""},
		{"/*", false, "/*"},
		{"/azAZ09-._~!$&'()*+,;=:@/", false, "/azAZ09-._~!$&'()*+,;=:@/"},
		{"/`{[]\"<>\\^|", false, "/%60%7B%5B%5D%22%3C%3E%5C%5E%7C"},
		{"/\x00\x1f \x7f\xff", false, "/%00%1F%20%7F%FF"},
		{"/x%2", true, "/x%252"},
		{"/x%", true, "/x%25"},
		{"/x%2G", true, "/x%252G"},
		{"/%2f%2F/", true, "/%2f%2F/"},
		{"/%2f%2F/", false, "/%252f%252F/"},
		{"/a%2Fb%2", true, "/a%2Fb%252"},
	} {
		if got := encodePath(tt.in, tt.kept); got != tt.want {
			t.Errorf("encodePath(%q, %v) = %q, want %q", tt.in, tt.kept, got, tt.want)
		}
	}
}

// FuzzEncodePath: what orderly sends decodes back to what it decided on.
func FuzzEncodePath(f *testing.F) {
	f.Add("/a b/%/é?#")
	f.Add("/admin%2Fsecret")
	f.Fuzz(func(t *testing.T, uri string) {
		for _, kept := range []bool{false, true} {
			if kept && strings.Contains(strings.ToLower(uri), "%2f") {
				continue
			}
			enc := encodePath("/"+uri, kept)
			dec, err := url.PathUnescape(enc)
			if err != nil || dec != "/"+uri {
				t.Fatalf("%q (kept %v) -> %q -> %q (%v)", uri, kept, enc, dec, err)
			}
		}
	})
}

package walk

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// The Host header picks the name-based host after fix_hostname has taken
// its port off (an IPv6 literal also loses its brackets, as
// apr_parse_addr_port gives the address): the first host answers names no
// host has.
func TestHostHeaderForms(t *testing.T) {
	e, _ := engine(t, `<VirtualHost *:80>
ServerName open.test
</VirtualHost>
<VirtualHost *:80>
ServerName closed.test
ServerAlias ::1 *.closed.test
<Location />
Require all denied
</Location>
</VirtualHost>`, "index.html")
	tests := []struct {
		host string
		want int
	}{
		{"closed.test", 403},
		{"closed.test:80", 403},
		{"closed.test.", 403},
		{"CLOSED.test:8080", 403},
		{"a.closed.test:80", 403},
		{"[::1]:80", 403},
		{"[::1]", 403},
		{"open.test:80", 0},
		{"other.test:80", 0},
		{"", 0},
	}
	for _, tt := range tests {
		r := &Request{Method: "GET", Target: "/index.html", Host: tt.host, Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("8.8.8.8")}
		if res := e.Decide(r, nil); res.Status != tt.want {
			t.Errorf("Host %q: %d, want %d", tt.host, res.Status, tt.want)
		}
	}
}

// PathOf normalises the target by the rules of the host the Host header
// picks: there MergeSlashes Off keeps "//". A Host the reading of the
// request would refuse picks the first host.
func TestPathByHost(t *testing.T) {
	e, _ := engine(t, `<VirtualHost *:80>
ServerName merge.test
</VirtualHost>
<VirtualHost *:80>
ServerName keep.test
MergeSlashes Off
</VirtualHost>`, "index.html")
	tests := []struct {
		host, target, want string
		ok                 bool
	}{
		{"merge.test", "/a//b", "/a/b", true},
		{"keep.test", "/a//b", "/a//b", true},
		{"keep.test:80", "/a//b", "/a//b", true},
		{"[::1", "/a//b", "/a/b", true},
		{"keep.test", "/%2e%2e/x", "", false},
	}
	for _, tt := range tests {
		if got, ok := e.PathOf(&Request{Host: tt.host, Target: tt.target}); got != tt.want || ok != tt.ok {
			t.Errorf("PathOf(%q, %q) = %q, %v; want %q, %v", tt.host, tt.target, got, ok, tt.want, tt.ok)
		}
	}
}

// The walk takes the target PathOf parsed only for the same target on
// the same host engine: a request whose target changed since, or decided
// by another engine, is parsed again.
func TestPathOfShared(t *testing.T) {
	conf := `<Location /private>
Order deny,allow
Deny from all
</Location>`
	e, _ := engine(t, conf, "private/x.html", "open/x.html")
	other, _ := engine(t, conf, "private/x.html", "open/x.html")
	for _, tc := range []struct {
		name           string
		parsed, target string
		by             *Engine
		want           int
	}{
		{"same target", "/private/x.html", "/private/x.html", e, 403},
		{"same target, open", "/open/x.html", "/open/x.html", e, 0},
		{"target changed to a refused one", "/open/x.html", "/private/x.html", e, 403},
		{"target changed to an open one", "/private/x.html", "/open/x.html", e, 0},
		{"another engine", "/open/x.html", "/private/x.html", other, 403},
		{"a refused parse, target changed", "/%2e%2e/x", "/open/x.html", e, 0},
	} {
		req := &Request{Method: "GET", Target: tc.parsed, Proto: "HTTP/1.1", Host: "www.test",
			ClientAddr: netip.MustParseAddr("192.0.2.7"), LocalAddr: netip.MustParseAddr("127.0.0.1")}
		e.PathOf(req)
		req.Target = tc.target
		if res := tc.by.Decide(req, nil); res.Status != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, res.Status, tc.want)
		}
	}
	// The same engine and target: the walk answers from what PathOf
	// parsed (a planted result shows it was taken).
	req := &Request{Method: "GET", Target: "/open/x.html", Proto: "HTTP/1.1", Host: "www.test",
		ClientAddr: netip.MustParseAddr("192.0.2.7"), LocalAddr: netip.MustParseAddr("127.0.0.1")}
	e.PathOf(req)
	req.parsed.st = 400
	if res := e.Decide(req, nil); res.Status != 400 {
		t.Errorf("a target PathOf parsed was parsed again (status %d)", res.Status)
	}
}

// New with a nil file system reads the machine's (OS).
func TestNewNilFS(t *testing.T) {
	root := tree(t, "index.html", "private/x.html")
	cf := filepath.Join(filepath.Dir(root), "legacy.conf")
	if err := os.WriteFile(cf, []byte("<Directory "+root+"/private>\nRequire all denied\n</Directory>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}})
	if err != nil {
		t.Fatal(err)
	}
	e := New(cfg, nil, users{})
	for target, want := range map[string]int{"/index.html": 0, "/private/x.html": 403} {
		if res := decide(e, req{target: target, ip: "8.8.8.8"}); res.Status != want {
			t.Errorf("%s: %d, want %d", target, res.Status, want)
		}
	}
}

// SlashesKept says whether Result.URI keeps %2F escapes: under
// AllowEncodedSlashes NoDecode, and under 2.2's On (which does not decode
// them); 2.4's On decodes them, and Off refuses them (404).
func TestSlashesKept(t *testing.T) {
	for _, tt := range []struct {
		sem      translate.Semantics
		conf     string
		status   int
		uri      string
		kept     bool
		plainURI string // /a/b's
	}{
		{translate.Compat24, "AllowEncodedSlashes NoDecode", 0, "/a%2Fb", true, "/a/b"},
		{translate.Compat24, "AllowEncodedSlashes On", 0, "/a/b", false, "/a/b"},
		{translate.Compat24, "AllowEncodedSlashes Off", 404, "", false, "/a/b"},
		{translate.Legacy22, "AllowEncodedSlashes On", 0, "/a%2Fb", true, "/a/b"},
		{translate.Legacy22, "AllowEncodedSlashes Off", 404, "", false, "/a/b"},
	} {
		e, _ := engineWith(t, tt.sem, tt.conf+"\n")
		res := decide(e, req{target: "/a%2Fb", ip: "8.8.8.8"})
		if res.Status != tt.status || res.URI != tt.uri || res.SlashesKept != tt.kept {
			t.Errorf("%s %s: status %d URI %q kept %v; want %d %q %v", tt.sem, tt.conf, res.Status, res.URI, res.SlashesKept, tt.status, tt.uri, tt.kept)
		}
		res = decide(e, req{target: "/a/b", ip: "8.8.8.8"})
		if res.Status != 0 || res.URI != tt.plainURI || res.SlashesKept != tt.kept {
			t.Errorf("%s %s: /a/b: status %d URI %q kept %v; want 0 %q %v", tt.sem, tt.conf, res.Status, res.URI, res.SlashesKept, tt.plainURI, tt.kept)
		}
	}
}

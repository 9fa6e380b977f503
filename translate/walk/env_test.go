package walk

import (
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// fakeNames answers PTR names and verified names from tables, and counts
// the lookups.
type fakeNames struct {
	ptr, verified map[string]string
	lookups       int
}

func (f *fakeNames) Name(a netip.Addr) (string, bool) {
	f.lookups++
	n, ok := f.ptr[a.String()]
	return n, ok
}

func (f *fakeNames) Verified(a netip.Addr) (string, bool) {
	f.lookups++
	n, ok := f.verified[a.String()]
	return n, ok
}

// TestRemoteHostLookups: SetEnvIf Remote_Host under HostnameLookups Off,
// On and Double, set at server level and by <Directory>, looked up once a
// request (ap_get_useragent_host; testdata/corpus/145 and 146 on Apache).
func TestRemoteHostLookups(t *testing.T) {
	names := func() *fakeNames {
		return &fakeNames{
			ptr:      map[string]string{"192.0.2.10": "www.example.test", "192.0.2.66": "www.example.test"},
			verified: map[string]string{"192.0.2.10": "www.example.test"},
		}
	}
	const dirs = `
<Directory "@DOCROOT@/d">
    Order deny,allow
    Deny from all
    Allow from env=named
</Directory>
`
	tests := []struct {
		name, conf string
		ip         string
		want       int
		lookups    int
	}{
		{"off: the address", `SetEnvIf Remote_Host "\.example\.test$" named` + dirs, "192.0.2.10", 403, 0},
		{"off: the address matches", `SetEnvIf Remote_Host "^192\.0\.2\.10$" named` + dirs, "192.0.2.10", 0, 0},
		{"on: the PTR name", "HostnameLookups On\n" + `SetEnvIf Remote_Host "\.example\.test$" named` + dirs, "192.0.2.66", 0, 1},
		{"on: no name, the address", "HostnameLookups On\n" + `SetEnvIf Remote_Host "^192\.0\.2\.77$" named` + dirs, "192.0.2.77", 0, 1},
		{"double: forged", "HostnameLookups Double\n" + `SetEnvIf Remote_Host "\.example\.test$" named` + dirs, "192.0.2.66", 403, 1},
		{"double: verified", "HostnameLookups Double\n" + `SetEnvIf Remote_Host "\.example\.test$" named` + dirs, "192.0.2.10", 0, 1},
		{"double: forged gives the address", "HostnameLookups Double\n" + `SetEnvIf Remote_Host "^192\.0\.2\.66$" named` + dirs, "192.0.2.66", 0, 1},
		{"per directory: on", `<Directory "@DOCROOT@/d">
    HostnameLookups On
    SetEnvIf Remote_Host "\.example\.test$" named
</Directory>` + dirs, "192.0.2.66", 0, 1},
		{"per directory: off under a server-wide on", "HostnameLookups On\n" + `<Directory "@DOCROOT@/d">
    HostnameLookups Off
    SetEnvIf Remote_Host "\.example\.test$" named
</Directory>` + dirs, "192.0.2.10", 403, 0},
		{"looked up under on first, kept under double", "HostnameLookups On\n" + `SetEnvIf Remote_Host "x" unused
<Directory "@DOCROOT@/d">
    HostnameLookups Double
    SetEnvIf Remote_Host "\.example\.test$" named
</Directory>` + dirs, "192.0.2.66", 0, 1},
		{"looked up under on, kept under off", "HostnameLookups On\n" + `SetEnvIf Remote_Host "x" unused
<Directory "@DOCROOT@/d">
    HostnameLookups Off
    SetEnvIf Remote_Host "\.example\.test$" named
</Directory>` + dirs, "192.0.2.66", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := engine(t, tt.conf, "d/index.html")
			n := names()
			r := &Request{Method: "GET", Target: "/d/index.html", Proto: "HTTP/1.1", Header: http.Header{},
				ClientAddr: netip.MustParseAddr(tt.ip), LocalAddr: netip.MustParseAddr("127.0.0.1"), Resolver: n}
			res := e.Decide(r, nil)
			if res.Status != tt.want {
				t.Errorf("status %d, want %d", res.Status, tt.want)
			}
			if n.lookups != tt.lookups {
				t.Errorf("%d lookups, want %d", n.lookups, tt.lookups)
			}
		})
	}
}

// TestHeaderNameRegex: a header-name regex decides on the header fields
// as sent (Request.Headers: the last match, names as spelled); on Go's
// header map alone it is decided where at most one name can match and
// the regex ignores case, and refused (500) otherwise
// (testdata/corpus/144 on Apache).
func TestHeaderNameRegex(t *testing.T) {
	const conf = `SetEnvIf ^X-Ro "^(.*)$" ro=$1
SetEnvIfNoCase ^x-tier- "^gold$" gold
SetEnvIf ro "^a" ro_a
<Directory "@DOCROOT@/ro">
    Order deny,allow
    Deny from all
    Allow from env=ro_a
</Directory>
<Directory "@DOCROOT@/gold">
    Order deny,allow
    Deny from all
    Allow from env=gold
</Directory>
`
	e, _ := engine(t, conf, "ro/index.html", "gold/index.html")
	if !e.WantsRawHeaders() {
		t.Error("WantsRawHeaders: false")
	}
	f := func(kv ...string) translate.Headers {
		var fs []translate.HeaderField
		for i := 0; i+1 < len(kv); i += 2 {
			fs = append(fs, translate.HeaderField{Name: kv[i], Value: kv[i+1]})
		}
		return translate.MergeFields(fs)
	}
	tests := []struct {
		name    string
		target  string
		headers translate.Headers // nil: Go's header map
		hmap    map[string]string
		want    int
	}{
		{"last wins", "/ro/", f("X-Ro-B", "b", "X-Ro-A", "a"), nil, 0},
		{"last wins, refused", "/ro/", f("X-Ro-A", "a", "X-Ro-B", "b"), nil, 403},
		{"as spelled", "/ro/", f("x-ro-a", "a"), nil, 403},
		{"merged into the first", "/ro/", f("X-Ro-A", "a", "X-Ro-B", "b", "x-ro-a", "c"), nil, 403},
		{"merged, first spelling", "/ro/", f("X-Ro-B", "b", "X-Ro-A", "a", "x-ro-b", "c"), nil, 0},
		{"nocase", "/gold/", f("x-TIER-a", "gold"), nil, 0},
		{"map: case-sensitive regex, one name", "/ro/", nil, map[string]string{"X-Ro-A": "a"}, 500},
		{"map: no name can match", "/ro/", nil, map[string]string{"X-Other": "a"}, 403},
		{"map: nocase, one name", "/gold/", nil, map[string]string{"X-Tier-A": "gold"}, 0},
		{"map: nocase, two names", "/gold/", nil, map[string]string{"X-Tier-A": "gold", "X-Tier-B": "silver"}, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := http.Header{}
			for k, v := range tt.hmap {
				hdr.Set(k, v)
			}
			r := &Request{Method: "GET", Target: tt.target, Proto: "HTTP/1.1", Header: hdr, Headers: tt.headers,
				ClientAddr: netip.MustParseAddr("192.0.2.1"), LocalAddr: netip.MustParseAddr("127.0.0.1")}
			res := e.Decide(r, nil)
			if res.Status != tt.want {
				t.Errorf("status %d, want %d", res.Status, tt.want)
			}
			if tt.want == 500 && (res.Rule == nil || res.Rule.Line != 1 && res.Rule.Line != 2) {
				t.Errorf("500 names rule %v, want the SetEnvIf line", res.Rule)
			}
		})
	}
}

// TestWantsRawHeadersHtaccess: a rule that wants the header fields as
// sent, met in an .htaccess file, turns WantsRawHeaders on.
func TestWantsRawHeadersHtaccess(t *testing.T) {
	e, root := engine(t, "<Directory @DOCROOT@>\nAllowOverride All\n</Directory>\n", "h/index.html")
	if e.WantsRawHeaders() {
		t.Fatal("WantsRawHeaders before any .htaccess file")
	}
	if err := os.WriteFile(filepath.Join(root, "h", ".htaccess"), []byte("SetEnvIf Trailer x t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	decide(e, req{target: "/h/index.html", ip: "192.0.2.1"})
	if !e.WantsRawHeaders() {
		t.Error("WantsRawHeaders after an .htaccess file with SetEnvIf Trailer")
	}
}

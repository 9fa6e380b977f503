package ldapauth

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

type urlWant struct {
	scheme, host string
	port         int
	dn           string
	attrs        []string
	attr         string
	scope        Scope
	filter       string
	mode         Mode
	exts         []string
	hosts        string
}

var urlCases = []struct {
	url, extra string
	want       *urlWant
	err        string
}{
	{url: "ldap://ldap.example.com/dc=example,dc=com", want: &urlWant{scheme: "ldap", host: "ldap.example.com", port: 389, dn: "dc=example,dc=com", attr: "uid", filter: "objectclass=*"}},
	{url: "ldap://h1 h2:3389/o=x?cn?one?(posixid=*)", want: &urlWant{scheme: "ldap", host: "h1 h2:3389", port: 3389, dn: "o=x", attrs: []string{"cn"}, attr: "cn", scope: ScopeOne, filter: "posixid=*"}},
	{url: "ldaps://h/o=x", want: &urlWant{scheme: "ldaps", host: "h", port: 636, dn: "o=x", attr: "uid", filter: "objectclass=*", mode: ModeSSL}},
	{url: "LDAPS://h:1636/", want: &urlWant{scheme: "ldaps", host: "h:1636", port: 1636, attr: "uid", filter: "objectclass=*", mode: ModeSSL}},
	{url: "ldap://h/o=x", extra: "tls", want: &urlWant{scheme: "ldap", host: "h", port: 389, dn: "o=x", attr: "uid", filter: "objectclass=*", mode: ModeSTARTTLS}},
	{url: "ldap://h/o=x", extra: "STARTTLS", want: &urlWant{scheme: "ldap", host: "h", port: 389, dn: "o=x", attr: "uid", filter: "objectclass=*", mode: ModeSTARTTLS}},
	{url: "ldaps://h/o=x", extra: "NONE", want: &urlWant{scheme: "ldaps", host: "h", port: 636, dn: "o=x", attr: "uid", filter: "objectclass=*", mode: ModeSSL}},
	{url: "<URL:ldaps://h/o=x>", want: &urlWant{scheme: "ldaps", host: "h", port: 636, dn: "o=x", attr: "uid", filter: "objectclass=*"}},
	{url: "ldap:///o=x", want: &urlWant{scheme: "ldap", port: 389, dn: "o=x", attr: "uid", filter: "objectclass=*", hosts: "localhost"}},
	{url: "ldap://h", want: &urlWant{scheme: "ldap", host: "h", port: 389, attr: "uid", filter: "objectclass=*"}},
	{url: "ldap://h/o=x?uid,cn,,mail?base", want: &urlWant{scheme: "ldap", host: "h", port: 389, dn: "o=x", attrs: []string{"uid", "cn", "mail"}, attr: "uid", filter: "objectclass=*"}},
	{url: "ldap://h/o=x??onetree?none", want: &urlWant{scheme: "ldap", host: "h", port: 389, dn: "o=x", attr: "uid", scope: ScopeOne, filter: "none"}},
	{url: "ldap://h/o=x???(a=b", want: &urlWant{scheme: "ldap", host: "h", port: 389, dn: "o=x", attr: "uid", filter: "a="}},
	{url: "ldap://h/o%3Dx%2Cdc%3dy?c%6e", want: &urlWant{scheme: "ldap", host: "h", port: 389, dn: "o=x,dc=y", attrs: []string{"cn"}, attr: "cn", filter: "objectclass=*"}},
	{url: "ldap://h/o=x????x-a,!x-b", want: &urlWant{scheme: "ldap", host: "h", port: 389, dn: "o=x", attr: "uid", filter: "objectclass=*", exts: []string{"x-a", "!x-b"}}},
	{url: "ldap://[::1]:1389/o=x", want: &urlWant{scheme: "ldap", host: "::1", port: 1389, dn: "o=x", attr: "uid", filter: "objectclass=*"}},
	{url: "ldap://h:abc/", want: &urlWant{scheme: "ldap", host: "h:abc", port: 389, attr: "uid", filter: "objectclass=*"}},
	{url: "ldap://h:389??cn=abc,o=company", want: &urlWant{scheme: "ldap", host: "h:389??cn=abc,o=company", port: 389, dn: "cn=abc,o=company", attr: "uid", filter: "objectclass=*"}},
	{url: "ldapi://%2fvar%2frun%2fldapi/o=x", want: &urlWant{scheme: "ldapi", host: "/var/run/ldapi", port: 389, dn: "o=x", attr: "uid", filter: "objectclass=*"}},

	{url: "http://h/o=x", err: "The scheme was not recognised as a valid LDAP URL scheme."},
	{url: "ldap://h/o=x", extra: "foo", err: "Invalid LDAP connection mode setting: must be one of NONE, SSL, or TLS/STARTTLS"},
	{url: "<ldap://h/o=x", err: "Bad enclosure error while parsing LDAP URL."},
	{url: "ldap://[::1/o=x", err: "Bad LDAP URL while parsing IPV6 syntax."},
	{url: "ldap://h:/o=x", err: "Bad LDAP URL while parsing."},
	{url: "ldap://h/o=x??nowhere", err: "Bad scope encountered while parsing LDAP URL."},
	{url: "ldap://h/o=x???%00", err: "Bad filter encountered while parsing LDAP URL."},
	{url: "ldap://h/o=x???(a=b)?", err: "Bad extensions encountered while parsing LDAP URL."},
	{url: "ldap://h/o=x???(a=b)?e?f", err: "Bad URL encountered while parsing LDAP URL."},
}

func TestParseURL(t *testing.T) {
	for _, tc := range urlCases {
		u, err := ParseURL(tc.url, tc.extra)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseURL(%q, %q) = %v, want error %q", tc.url, tc.extra, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseURL(%q, %q): %v", tc.url, tc.extra, err)
			continue
		}
		w := tc.want
		if w.hosts == "" {
			w.hosts = w.host
		}
		got := urlWant{u.Scheme, u.Host, u.Port, u.BaseDN, u.Attributes, u.Attribute, u.Scope, u.Filter, u.Mode, u.Extensions, u.Hosts()}
		if !reflect.DeepEqual(got, *w) {
			t.Errorf("ParseURL(%q, %q)\n got %+v\nwant %+v", tc.url, tc.extra, got, *w)
		}
		checkRoundTrip(t, u)
	}
}

func checkRoundTrip(t *testing.T, u *URL) {
	t.Helper()
	s, extra := u.String(), u.Extra()
	v, err := ParseURL(s, extra)
	if err != nil {
		t.Fatalf("ParseURL(%q, %q) of String() of %q: %v", s, extra, u.Raw, err)
	}
	v.Raw = u.Raw
	if !reflect.DeepEqual(u, v) {
		t.Fatalf("%q re-parses differently as %q %q:\n got %#v\nwant %#v", u.Raw, s, extra, v, u)
	}
}

func TestSetURLHosts(t *testing.T) {
	cfg := NewConfig(Apache24)
	for _, a := range [][]string{{"ldap://a/o=x"}, {"ldap://b:1389/o=y?cn"}} {
		if err := cfg.Apply("AuthLDAPURL", a, DirectiveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Hosts != "b:1389 a" || cfg.URL.BaseDN != "o=y" || cfg.URL.Attribute != "cn" {
		t.Errorf("two AuthLDAPURL: hosts %q, base %q, attribute %q", cfg.Hosts, cfg.URL.BaseDN, cfg.URL.Attribute)
	}
}

func TestParseHosts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		def  int
		want string
	}{
		{"a b:1389", 389, "a:389 b:1389"},
		{"a,b", 636, "a:636 b:636"},
		{"[::1]:1389 ::1", 389, "::1:1389 ::1:389"},
		{"h:x", 389, "error"},
		{"h:%31%32", 389, "h:12"},
	} {
		hs, err := parseHosts(tc.in, tc.def)
		var got []string
		for _, h := range hs {
			got = append(got, h.host+":"+h.port)
		}
		g := strings.Join(got, " ")
		if err != nil {
			g = "error"
		}
		if g != tc.want {
			t.Errorf("parseHosts(%q) = %s, want %s", tc.in, g, tc.want)
		}
	}
}

// TestParseURLApache checks ParseURL's verdict and message against
// apache2 -t reading AuthLDAPURL.
func TestParseURLApache(t *testing.T) {
	paths := apachetest.Require(t)
	dir := t.TempDir()
	lineRE := regexp.MustCompile(`Syntax error on line \d+ of [^:]+:\s*(.*)`)
	for i, tc := range urlCases {
		if strings.ContainsAny(tc.url, "\"\\") {
			continue
		}
		conf := fmt.Sprintf(`ServerRoot %q
LoadModule mpm_event_module %s/mod_mpm_event.so
LoadModule ldap_module %s/mod_ldap.so
LoadModule authnz_ldap_module %s/mod_authnz_ldap.so
Listen 127.0.0.1:1
PidFile %s/pid
ErrorLog %s/error.log
<Location /x>
AuthLDAPURL "%s" %s
</Location>
`, dir, paths.ModulesDir, paths.ModulesDir, paths.ModulesDir, dir, dir, tc.url, tc.extra)
		f := filepath.Join(dir, fmt.Sprintf("c%d.conf", i))
		if err := os.WriteFile(f, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(paths.Apache, "-t", "-f", f).CombinedOutput()
		m := lineRE.FindSubmatch(out)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q %q: apache2 -t refused it: %s", tc.url, tc.extra, out)
		case tc.err != "" && (m == nil || strings.TrimSpace(string(m[1])) != tc.err):
			t.Errorf("%q %q: apache2 -t said %q, ParseURL says %q", tc.url, tc.extra, out, tc.err)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, tc := range urlCases {
		f.Add(tc.url, tc.extra)
	}
	f.Add("ldap://%zz:%4/%?%a?%1", "")
	f.Add("<URL:ldapi://[a]b:c/?,,?one?()?x>", "ssl")
	f.Fuzz(func(t *testing.T, url, extra string) {
		u, err := ParseURL(url, extra)
		if err != nil {
			return
		}
		if u.Attribute == "" || (len(u.Attributes) > 0 && u.Attribute != u.Attributes[0]) {
			t.Fatalf("%q: attribute %q of %q", url, u.Attribute, u.Attributes)
		}
		checkRoundTrip(t, u)
		// The filter the URL makes for a user must be the one rebuilt
		// from the canonical form.
		cfg := NewConfig(Apache24)
		cfg.SetURL(u)
		f1, ok1 := buildFilter(cfg, "us(e)r*", "")
		v, _ := ParseURL(u.String(), u.Extra())
		cfg.SetURL(v)
		f2, ok2 := buildFilter(cfg, "us(e)r*", "")
		if f1 != f2 || ok1 != ok2 {
			t.Fatalf("%q: filter %q, canonical %q", url, f1, f2)
		}
	})
}

package walk

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// testCA is a certificate authority made by the test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var serial int64

func newTestCA(t testing.TB, name string, parent *testCA) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name, Organization: []string{"Test"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	signer, signKey := tmpl, key
	if parent != nil {
		signer, signKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCA{cert: c, key: key}
}

func (ca *testCA) client(t testing.TB, subject pkix.Name, expired bool) *x509.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if expired {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

// sslEngine builds an engine from a fragment with mod_ssl loaded (and the
// CA file written at @CA@).
func sslEngine(t testing.TB, sem translate.Semantics, conf string, ca *testCA) *Engine {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	for _, d := range []string{"", "req", "verify", "fake", "user", "sub"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
		os.WriteFile(filepath.Join(root, d, "index.html"), []byte("x"), 0o644)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if ca != nil {
		os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o644)
	}
	conf = strings.NewReplacer("@DOCROOT@", root, "@CA@", caFile).Replace(conf)
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte(conf), 0o644)
	mods := slices.Clone(translate.FragmentModules)
	if sem == translate.Legacy22 {
		mods = slices.Clone(translate.FragmentModules22)
	}
	mods = append(mods, "ssl_module")
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: sem, DocumentRoot: root}, Modules: mods})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	e := New(cfg, OS, users{"alice": "ok", "/C=DE/O=Example/CN=alice": "password"})
	if err := e.SSLError(); err != nil {
		t.Fatal(err)
	}
	return e
}

type sslReq struct {
	target string
	tls    bool
	chain  []*x509.Certificate
	user   string // user:password
	ip     string
	want   int
	// wantUser is the user the decision names; wantCode an error-log code
	// it must hold; wantRule the directive it names.
	wantUser, wantCode, wantRule string
}

func decideSSL(e *Engine, r sslReq) Result {
	ip := r.ip
	if ip == "" {
		ip = "192.0.2.1"
	}
	wr := &Request{
		Method: "GET", Target: r.target, Proto: "HTTP/1.1", Header: http.Header{},
		ClientAddr: netip.MustParseAddr(ip), LocalAddr: netip.MustParseAddr("127.0.0.1"),
		TLSInfo: TLSInfo{On: r.tls, Chain: r.chain},
	}
	if r.user != "" {
		u, p, _ := strings.Cut(r.user, ":")
		wr.Auth = policy.Credentials{Present: true, Basic: true, User: u, Password: p}
	}
	return e.Decide(wr, nil)
}

// TestSSL holds mod_ssl's access directives to what Apache 2.4.71 with
// mod_ssl answered (the same cases run on it in testdata/corpus/480-499)
// and, for 2.2, to ssl_engine_kernel.c of 2.2.34.
func TestSSL(t *testing.T) {
	ca := newTestCA(t, "Test CA", nil)
	other := newTestCA(t, "Other CA", nil)
	inter := newTestCA(t, "Intermediate", ca)
	alice := ca.client(t, pkix.Name{CommonName: "alice", Organization: []string{"Example"}, Country: []string{"DE"}}, false)
	mallory := other.client(t, pkix.Name{CommonName: "mallory"}, false)
	expired := ca.client(t, pkix.Name{CommonName: "old"}, true)
	deep := inter.client(t, pkix.Name{CommonName: "deep"}, false)
	auth := `AuthType Basic
AuthName "R"
AuthUserFile /nonexistent
`
	tests := []struct {
		name string
		sem  translate.Semantics
		conf string
		reqs []sslReq
	}{
		{"SSLRequireSSL", translate.Compat24, `<Directory @DOCROOT@/req>
SSLRequireSSL
</Directory>`, []sslReq{
			{target: "/req/", want: 403, wantCode: "AH02219"}, {target: "/req/", tls: true}, {target: "/"}}},
		{"SSLRequireSSL inherited, not cleared", translate.Compat24, `<Directory @DOCROOT@>
SSLRequireSSL
</Directory>
<Directory @DOCROOT@/sub>
SSLOptions +StdEnvVars
</Directory>`, []sslReq{{target: "/sub/", want: 403}, {target: "/sub/", tls: true}}},
		{"2.4 Satisfy Any without Require grants past SSLRequireSSL", translate.Compat24, `<Directory @DOCROOT@/req>
SSLRequireSSL
Order allow,deny
Allow from all
Satisfy Any
</Directory>`, []sslReq{{target: "/req/", wantCode: "AH02219"}}},
		{"2.2 Satisfy Any without Require refuses", translate.Legacy22, `<Directory @DOCROOT@/req>
SSLRequireSSL
Order allow,deny
Allow from all
Satisfy Any
</Directory>`, []sslReq{{target: "/req/", want: 403}}},
		{"Satisfy Any: a user gets past SSLRequireSSL", translate.Compat24, `<Directory @DOCROOT@/req>
SSLRequireSSL
Order allow,deny
Allow from all
Satisfy Any
` + auth + `Require valid-user
</Directory>`, []sslReq{{target: "/req/", want: 401}, {target: "/req/", user: "alice:ok", wantUser: "alice"}}},
		{"Satisfy Any: a host denial first skips mod_ssl", translate.Compat24, `<Directory @DOCROOT@/req>
SSLRequireSSL
SSLOptions +StrictRequire
Order deny,allow
Deny from all
Satisfy Any
` + auth + `Require valid-user
</Directory>`, []sslReq{{target: "/req/", user: "alice:ok"}}},
		{"StrictRequire", translate.Compat24, `<Directory @DOCROOT@/req>
SSLRequireSSL
SSLOptions +StrictRequire
Order allow,deny
Allow from all
Satisfy Any
` + auth + `Require valid-user
</Directory>`, []sslReq{{target: "/req/", want: 403}, {target: "/req/", user: "alice:ok", want: 403}, {target: "/req/", tls: true, user: "alice:ok"}}},
		{"StrictRequire 2.2", translate.Legacy22, `<Directory @DOCROOT@/req>
SSLRequireSSL
SSLOptions +StrictRequire
Order allow,deny
Allow from all
Satisfy Any
` + auth + `Require valid-user
</Directory>`, []sslReq{{target: "/req/", user: "alice:ok", want: 403}}},
		{"per-directory SSLVerifyClient require", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/verify>
SSLVerifyClient require
</Directory>`, []sslReq{
			{target: "/verify/", tls: true, want: 403, wantCode: "AH02263"},
			{target: "/verify/", tls: true, chain: []*x509.Certificate{alice}},
			{target: "/verify/", tls: true, chain: []*x509.Certificate{mallory}, want: 403, wantCode: "AH02262"},
			{target: "/verify/", tls: true, chain: []*x509.Certificate{expired}, want: 403},
			{target: "/verify/", tls: true, chain: []*x509.Certificate{deep, inter.cert}, want: 403}, // depth 1 by default
			{target: "/verify/"}, // plain: mod_ssl checks nothing more
			{target: "/", tls: true, chain: []*x509.Certificate{mallory}}}},
		{"SSLVerifyDepth", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/verify>
SSLVerifyClient require
SSLVerifyDepth 2
</Directory>`, []sslReq{{target: "/verify/", tls: true, chain: []*x509.Certificate{deep, inter.cert}}}},
		{"optional", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/verify>
SSLVerifyClient optional
</Directory>`, []sslReq{
			{target: "/verify/", tls: true}, {target: "/verify/", tls: true, chain: []*x509.Certificate{mallory}, want: 403}}},
		{"optional_no_ca", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/verify>
SSLVerifyClient optional_no_ca
SSLUserName SSL_CLIENT_VERIFY
Require user GENEROUS SUCCESS NONE
</Directory>`, []sslReq{
			{target: "/verify/", tls: true, wantUser: "NONE"},
			{target: "/verify/", tls: true, chain: []*x509.Certificate{mallory}, wantUser: "GENEROUS"},
			{target: "/verify/", tls: true, chain: []*x509.Certificate{alice}, wantUser: "SUCCESS"},
			{target: "/verify/", tls: true, chain: []*x509.Certificate{expired}, want: 403}}},
		{"server-level require", translate.Compat24, `SSLCACertificateFile @CA@
SSLVerifyClient require
<Directory @DOCROOT@/verify>
SSLVerifyClient none
</Directory>`, []sslReq{{target: "/verify/", tls: true, want: 403}, {target: "/", tls: true, chain: []*x509.Certificate{alice}},
			{target: "/", tls: true, want: 403}, {target: "/", tls: true, chain: []*x509.Certificate{mallory}, want: 403}, {target: "/"}}},
		{"Satisfy Any cannot grant past a broken renegotiation", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/verify>
SSLVerifyClient require
Order allow,deny
Allow from all
Satisfy Any
` + auth + `Require valid-user
</Directory>`, []sslReq{{target: "/verify/", tls: true, user: "alice:ok", want: 403}, {target: "/verify/", user: "alice:ok"}}},
		{"FakeBasicAuth", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/fake>
SSLVerifyClient optional
SSLOptions +FakeBasicAuth
` + auth + `Require valid-user
</Directory>`, []sslReq{
			{target: "/fake/", tls: true, chain: []*x509.Certificate{alice}, wantUser: "/C=DE/O=Example/CN=alice"},
			{target: "/fake/", tls: true, want: 401},
			{target: "/fake/", tls: true, user: "/C=DE/O=Example/CN=alice:password", want: 403, wantCode: "AH02035"},
			{target: "/fake/", user: "/x:password", want: 403, wantCode: "AH02035"},
			{target: "/fake/", user: "alice:ok", wantUser: "alice"}}},
		{"FakeBasicAuth needs the certificate asked for", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/fake>
SSLOptions +FakeBasicAuth
` + auth + `Require valid-user
</Directory>`, []sslReq{{target: "/fake/", tls: true, chain: []*x509.Certificate{alice}, want: 401}}},
		{"spoof guard wherever mod_ssl is loaded", translate.Compat24, `<Directory @DOCROOT@>
` + auth + `Require valid-user
</Directory>`, []sslReq{{target: "/", user: "/x:password", want: 403}, {target: "/", user: "/x:other", want: 401}}},
		{"SSLUserName", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/user>
SSLVerifyClient optional
SSLUserName SSL_CLIENT_S_DN_CN
Require user alice
</Directory>`, []sslReq{
			{target: "/user/", tls: true, chain: []*x509.Certificate{alice}, wantUser: "alice"},
			{target: "/user/", tls: true, want: 500, wantCode: "AH02227"}}},
		{"SSLUserName 2.4 DN", translate.Compat24, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/user>
SSLVerifyClient require
SSLUserName SSL_CLIENT_S_DN
Require user CN=alice,O=Example,C=DE
</Directory>`, []sslReq{{target: "/user/", tls: true, chain: []*x509.Certificate{alice}, wantUser: "CN=alice,O=Example,C=DE"}}},
		{"SSLUserName 2.2 needs AuthType", translate.Legacy22, `SSLCACertificateFile @CA@
<Directory @DOCROOT@/user>
SSLVerifyClient require
SSLUserName SSL_CLIENT_S_DN
Require valid-user
</Directory>`, []sslReq{{target: "/user/", tls: true, chain: []*x509.Certificate{alice}, want: 500}}},
		{"server-level SSLVerifyClient and SSLVerifyDepth", translate.Compat24, `SSLCACertificateFile @CA@
SSLVerifyClient require
SSLVerifyDepth 2
`, []sslReq{
			{target: "/", tls: true, chain: []*x509.Certificate{deep, inter.cert}},
			{target: "/", tls: true, chain: []*x509.Certificate{mallory}, want: 403, wantRule: "SSLVerifyClient require"}}},
		{"a refusal names the level whose SSLVerifyClient applies", translate.Compat24, `SSLCACertificateFile @CA@
SSLVerifyClient optional
<Directory @DOCROOT@/verify>
SSLVerifyClient require
</Directory>`, []sslReq{
			{target: "/verify/", tls: true, want: 403, wantRule: "SSLVerifyClient require"},
			{target: "/", tls: true, chain: []*x509.Certificate{mallory}, want: 403, wantRule: "SSLVerifyClient optional"}}},
		{"2.2 per-directory CA sets the server's", translate.Legacy22, `<Directory @DOCROOT@/verify>
SSLCACertificateFile @CA@
SSLVerifyClient require
</Directory>`, []sslReq{{target: "/verify/", tls: true, chain: []*x509.Certificate{alice}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := sslEngine(t, tc.sem, tc.conf, ca)
			for _, r := range tc.reqs {
				res := decideSSL(e, r)
				if res.Status != r.want {
					t.Errorf("%s tls=%v user=%q: %d (%s, %v), want %d", r.target, r.tls, r.user, res.Status, res.Layer, res.Rule, r.want)
				}
				if r.wantUser != "" && res.User != r.wantUser {
					t.Errorf("%s: user %q, want %q", r.target, res.User, r.wantUser)
				}
				if r.wantCode != "" && !slices.ContainsFunc(res.Logs(), func(l policy.LogLine) bool { return l.Code == r.wantCode }) {
					t.Errorf("%s: logs %v, want %s", r.target, res.Logs(), r.wantCode)
				}
				if r.wantRule != "" && (res.Rule == nil || res.Rule.Text != r.wantRule) {
					t.Errorf("%s: rule %v, want %q", r.target, res.Rule, r.wantRule)
				}
			}
		})
	}
}

func TestSSLLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		sem        translate.Semantics
		conf, want string
	}{
		{translate.Compat24, "<Directory @DOCROOT@>\nSSLCACertificateFile /x\n</Directory>", "Your SSL library does not have support for per-directory CA"},
		{translate.Compat24, "<Directory @DOCROOT@>\nSSLVerifyClient maybe\n</Directory>", "SSLVerifyClient: Invalid argument 'maybe'"},
		{translate.Compat24, "<Directory @DOCROOT@>\nSSLOptions +Fake\n</Directory>", "SSLOptions: Illegal option 'Fake'"},
		{translate.Legacy22, "<Directory @DOCROOT@>\nSSLOptions +LegacyDNStringFormat\n</Directory>", "Illegal option"},
		{translate.Compat24, "<Directory @DOCROOT@>\nSSLUserName SSL_CLIENT_CERT\n</Directory>", "cannot know this variable"},
		{translate.Compat24, "SSLEngine optional", "does not upgrade connections"},
		{translate.Compat24, "<Directory @DOCROOT@>\nSSLRequireSSL on\n</Directory>", "takes no arguments"},
		{translate.Compat24, "SSLRequireSSL", "not allowed here"},
	} {
		dir := t.TempDir()
		cf := filepath.Join(dir, "legacy.conf")
		os.WriteFile(cf, []byte(strings.ReplaceAll(tc.conf, "@DOCROOT@", dir)), 0o644)
		_, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: tc.sem, DocumentRoot: dir},
			Modules: append(slices.Clone(translate.FragmentModules), "ssl_module")})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.conf, err, tc.want)
		}
	}
}

func TestSSLOptionsMerge(t *testing.T) {
	ca := newTestCA(t, "Test CA", nil)
	alice := ca.client(t, pkix.Name{CommonName: "alice", Organization: []string{"Example"}, Country: []string{"DE"}}, false)
	e := sslEngine(t, translate.Compat24, `SSLCACertificateFile @CA@
SSLVerifyClient optional
SSLOptions +FakeBasicAuth
<Directory @DOCROOT@>
AuthType Basic
AuthName "R"
AuthUserFile /nonexistent
Require valid-user
</Directory>
<Directory @DOCROOT@/user>
SSLOptions -FakeBasicAuth +StdEnvVars
</Directory>
<Directory @DOCROOT@/fake>
SSLOptions StdEnvVars FakeBasicAuth
</Directory>
<Directory @DOCROOT@/sub>
SSLOptions StdEnvVars
</Directory>`, ca)
	for _, r := range []sslReq{
		{target: "/", tls: true, chain: []*x509.Certificate{alice}, wantUser: "/C=DE/O=Example/CN=alice"},
		{target: "/user/", tls: true, chain: []*x509.Certificate{alice}, want: 401},
		{target: "/fake/", tls: true, chain: []*x509.Certificate{alice}, wantUser: "/C=DE/O=Example/CN=alice"}, // the last plain word stands
		{target: "/sub/", tls: true, chain: []*x509.Certificate{alice}, want: 401},
	} {
		res := decideSSL(e, r)
		if res.Status != r.want || r.wantUser != "" && res.User != r.wantUser {
			t.Errorf("%s: %d %q, want %d %q", r.target, res.Status, res.User, r.want, r.wantUser)
		}
	}
}

func TestClientAuth(t *testing.T) {
	ca := newTestCA(t, "Test CA", nil)
	for _, tc := range []struct {
		conf string
		want tls.ClientAuthType
	}{
		{"", tls.NoClientCert},
		{"SSLCACertificateFile @CA@\nSSLVerifyClient require", tls.RequireAndVerifyClientCert},
		{"SSLCACertificateFile @CA@\nSSLVerifyClient optional", tls.VerifyClientCertIfGiven},
		{"SSLCACertificateFile @CA@\nSSLVerifyClient optional_no_ca", tls.RequestClientCert},
		{"SSLCACertificateFile @CA@\n<Location /x>\nSSLVerifyClient require\n</Location>", tls.RequestClientCert},
		{"<Directory @DOCROOT@/req>\nSSLRequireSSL\n</Directory>", tls.NoClientCert},
	} {
		e := sslEngine(t, translate.Compat24, tc.conf, ca)
		if got := e.ClientAuth("www.example.com").Type; got != tc.want {
			t.Errorf("%q: %v, want %v", tc.conf, got, tc.want)
		}
	}
}

// TestSSLVirtualHosts: where a virtual host has SSLEngine on, a TLS
// request is served by it and a plain one by the other.
func TestSSLVirtualHosts(t *testing.T) {
	e := sslEngine(t, translate.Compat24, `<VirtualHost *:80>
ServerName www.example.com
<Location />
Order deny,allow
Deny from all
</Location>
</VirtualHost>
<VirtualHost *:443>
ServerName www.example.com
SSLEngine on
</VirtualHost>`, nil)
	wr := func(on bool) *Request {
		return &Request{Method: "GET", Target: "/", Host: "www.example.com", Proto: "HTTP/1.1", Header: http.Header{},
			ClientAddr: netip.MustParseAddr("192.0.2.1"), TLSInfo: TLSInfo{On: on}}
	}
	if res := e.Decide(wr(false), nil); res.Status != 403 {
		t.Errorf("plain: %d, want 403 from the *:80 host", res.Status)
	}
	if res := e.Decide(wr(true), nil); res.Status != 0 {
		t.Errorf("TLS: %d, want the SSLEngine on host", res.Status)
	}
}

// TestDNFormats holds the DN forms to what Apache 2.4.71 with OpenSSL
// 3.0 logged for a certificate with every kind of character that needs
// escaping (FakeBasicAuth's header, SSL_CLIENT_S_DN, _CN).
func TestDNFormats(t *testing.T) {
	ca := newTestCA(t, "Test CA", nil)
	tricky := ca.client(t, pkix.Name{CommonName: "a/b+c,d\\e\"f", Organization: []string{"Ex\u00e4mple"}, OrganizationalUnit: []string{" lead", "trail "},
		ExtraNames: []pkix.AttributeTypeAndValue{
			{Type: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}, Value: "x@y.z"},
			{Type: asn1.ObjectIdentifier{1, 2, 3, 4}, Value: "odd"},
			{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "dc"},
		}}, false)
	if got, _ := dnOneline(tricky.RawSubject, true); got != `/O=Ex\xC3\xA4mple/OU= lead+OU=trail /CN=a\/b\+c,d\e"f/emailAddress=x@y.z/1.2.3.4=odd/DC=dc` {
		t.Errorf("oneline: %s", got)
	}
	if got, _ := dnOneline(tricky.RawSubject, false); got != `/O=Ex\xC3\xA4mple/OU= lead/OU=trail /CN=a/b+c,d\e"f/emailAddress=x@y.z/1.2.3.4=odd/DC=dc` {
		t.Errorf("oneline (OpenSSL before 3.0): %s", got)
	}
	if got, _ := dnRFC2253(tricky.RawSubject); got != `DC=dc,1.2.3.4=#13036F6464,emailAddress=x@y.z,CN=a/b\+c\,d\\e\"f,OU=trail\ +OU=\ lead,O=Exämple` {
		t.Errorf("RFC 2253: %s", got)
	}
	if got, _ := dnAttr(tricky.RawSubject, "2.5.4.3", 0, false); got != `a/b+c,d\\e"f` {
		t.Errorf("CN: %s", got)
	}
	if got, _ := dnAttr(tricky.RawSubject, "2.5.4.11", 1, false); got != `trail ` {
		t.Errorf("OU_1: %q", got)
	}
	if got := serialHex(big.NewInt(0x18EB8CF98AB027A6)); got != "18EB8CF98AB027A6" {
		t.Errorf("serial: %s", got)
	}
}

// verifyClient keeps its answer for the connection, keyed by what it was
// asked: another noCA or depth asks OpenSSL's question again. Under
// optional_no_ca an unknown issuer is GENEROUS only within the depth.
func TestVerifyClientCache(t *testing.T) {
	ca := newTestCA(t, "Test CA", nil)
	inter := newTestCA(t, "Intermediate", ca)
	otherRoot := newTestCA(t, "Other Root", nil)
	otherInter := newTestCA(t, "Other Intermediate", otherRoot)
	deep := inter.client(t, pkix.Name{CommonName: "deep"}, false)
	stranger := otherInter.client(t, pkix.Name{CommonName: "stranger"}, false)
	e := sslEngine(t, translate.Compat24, "SSLCACertificateFile @CA@\n", ca)
	for _, seq := range [][]struct {
		chain []*x509.Certificate
		noCA  bool
		depth int
		want  verifyResult
	}{
		{{[]*x509.Certificate{stranger, otherInter.cert}, true, 1, certGenerous}, {[]*x509.Certificate{stranger, otherInter.cert}, false, 1, certFailed}},
		{{[]*x509.Certificate{deep, inter.cert}, false, 2, certOK}, {[]*x509.Certificate{deep, inter.cert}, false, 1, certFailed}},
		{{[]*x509.Certificate{stranger, otherInter.cert}, true, 0, certFailed}},
	} {
		tls := &TLSInfo{On: true, Chain: seq[0].chain}
		for i, c := range seq {
			if got := e.verifyClient(tls, c.noCA, c.depth); got != c.want {
				t.Errorf("call %d (noCA %v, depth %d) on %s: %v, want %v", i, c.noCA, c.depth, c.chain[0].Subject.CommonName, got, c.want)
			}
		}
	}
	// A connection that outlives a reload asks the new CA list.
	tls := &TLSInfo{On: true, Chain: []*x509.Certificate{deep, inter.cert}}
	if got := e.verifyClient(tls, false, 2); got != certOK {
		t.Fatalf("first engine: %v, want certOK", got)
	}
	other := sslEngine(t, translate.Compat24, "SSLCACertificateFile @CA@\n", otherRoot)
	if got := other.verifyClient(tls, false, 2); got != certFailed {
		t.Errorf("after a reload to another CA: %v, want certFailed", got)
	}
}

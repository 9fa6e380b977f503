package walk

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
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

// SSLUserName SSL_CLIENT_SAN_Email_n and SSL_CLIENT_SAN_DNS_n (2.4): the
// n-th subjectAltName of the kind, counted from 0; past the last there is
// none, and the request has no user (AH02227).
func TestSSLUserNameSAN(t *testing.T) {
	ca := newTestCA(t, "SAN CA", nil)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "carol"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		EmailAddresses: []string{"carol@example.test"}, DNSNames: []string{"a.example.test", "b.example.test"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	carol, _ := x509.ParseCertificate(der)
	for _, tt := range []struct {
		variable, user string
	}{
		{"SSL_CLIENT_SAN_Email_0", "carol@example.test"},
		{"SSL_CLIENT_SAN_Email_1", ""},
		{"SSL_CLIENT_SAN_DNS_1", "b.example.test"},
		{"SSL_CLIENT_SAN_DNS_2", ""},
	} {
		e := sslEngine(t, translate.Compat24, "SSLCACertificateFile @CA@\n<Directory @DOCROOT@/user>\nSSLVerifyClient require\nSSLUserName "+tt.variable+"\nRequire user carol@example.test b.example.test\n</Directory>\n", ca)
		res := decideSSL(e, sslReq{target: "/user/", tls: true, chain: []*x509.Certificate{carol}})
		warned := slices.ContainsFunc(res.Logs(), func(l policy.LogLine) bool { return l.Code == "AH02227" })
		if res.User != tt.user || warned != (tt.user == "") {
			t.Errorf("%s: status %d user %q (AH02227 %v), want user %q", tt.variable, res.Status, res.User, warned, tt.user)
		}
	}
}

// Among the hosts with SSLEngine on, a TLS request's host is chosen as
// any other (server/vhost.c): an exact address first, then by name and
// alias (wildcards too), else the first of them; a port no host listens
// on leaves the main server.
func TestSSLVirtualHostsByName(t *testing.T) {
	e := sslEngine(t, translate.Compat24, `<VirtualHost *:80>
ServerName www.example.com
<Location />
Require all denied
</Location>
</VirtualHost>
<VirtualHost *:443>
ServerName a.example.com
SSLEngine on
<Location />
Require all denied
</Location>
</VirtualHost>
<VirtualHost *:443>
ServerName b.example.com
ServerAlias *.b.example.com c.example.com
SSLEngine on
</VirtualHost>
<VirtualHost 192.0.2.50:443>
ServerName a.example.com
SSLEngine on
</VirtualHost>`, nil)
	get := func(host string, on bool) int {
		r := &Request{Method: "GET", Target: "/", Host: host, Proto: "HTTP/1.1", ClientAddr: netip.MustParseAddr("192.0.2.1"), TLSInfo: TLSInfo{On: on}}
		return e.Decide(r, nil).Status
	}
	for _, tt := range []struct {
		host string
		tls  bool
		want int
	}{
		{"a.example.com", true, 403},
		{"b.example.com:443", true, 0},
		{"x.b.example.com", true, 0},
		{"c.example.com", true, 0},
		{"other.example.com", true, 403},
		{"", true, 403},
		{"b.example.com", false, 403},
	} {
		if got := get(tt.host, tt.tls); got != tt.want {
			t.Errorf("Host %q tls=%v: %d, want %d", tt.host, tt.tls, got, tt.want)
		}
	}
	e.SetLegacyAddress(netip.MustParseAddr("192.0.2.50"), 443)
	if got := get("a.example.com", true); got != 0 {
		t.Errorf("the exact address's host: %d, want 0", got)
	}
	e.SetLegacyAddress(netip.MustParseAddr("192.0.2.51"), 8443)
	if got := get("a.example.com", true); got != 0 {
		t.Errorf("no host on port 8443: %d, want the main server's 0", got)
	}
}

// SSLVerifyDepth 0 accepts self-signed client certificates only (mod_ssl's
// documentation): a certificate its CA issued is one level too deep.
func TestSSLVerifyDepthZero(t *testing.T) {
	ca := newTestCA(t, "Depth CA", nil)
	alice := ca.client(t, pkix.Name{CommonName: "alice"}, false)
	for _, tt := range []struct {
		depth string
		want  int
	}{{"0", 403}, {"1", 0}} {
		e := sslEngine(t, translate.Compat24, "SSLCACertificateFile @CA@\n<Directory @DOCROOT@/verify>\nSSLVerifyClient require\nSSLVerifyDepth "+tt.depth+"\n</Directory>\n", ca)
		if res := decideSSL(e, sslReq{target: "/verify/", tls: true, chain: []*x509.Certificate{alice}}); res.Status != tt.want {
			t.Errorf("SSLVerifyDepth %s: %d, want %d", tt.depth, res.Status, tt.want)
		}
	}
}

// loadCAs reads SSLCACertificateFile (every CERTIFICATE or TRUSTED
// CERTIFICATE block, at least one; other blocks skipped) and, from
// SSLCACertificatePath, the files with OpenSSL's hash names only.
func TestLoadCAs(t *testing.T) {
	ca := newTestCA(t, "Load CA", nil)
	other := newTestCA(t, "Other CA", nil)
	alice := ca.client(t, pkix.Name{CommonName: "alice"}, false)
	dir := t.TempDir()
	certPEM := func(typ string) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: ca.cert.Raw}))
	}
	key := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}))
	files := map[string]string{
		"empty.pem":            "",
		"key.pem":              key,
		"keycert.pem":          key + certPEM("CERTIFICATE"),
		"trusted.pem":          certPEM("TRUSTED CERTIFICATE"),
		"bad.pem":              string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}})),
		"hashed/0a1b2c3d.0":    certPEM("CERTIFICATE"),
		"named/ca.pem":         certPEM("CERTIFICATE"),
		"badhashed/0a1b2c3d.0": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}})),
		// Every hashed file is read, not the first alone.
		"two/00000000.0": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.cert.Raw})),
		"two/0a1b2c3d.0": certPEM("CERTIFICATE"),
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		file, path string
		err        string // "" for none
		trusts     bool
	}{
		{"missing.pem", "", "does not exist or is empty", false},
		{"empty.pem", "", "does not exist or is empty", false},
		{"key.pem", "", "holds no PEM certificate", false},
		{"bad.pem", "", "bad.pem", false},
		{"keycert.pem", "", "", true},
		{"trusted.pem", "", "", true},
		{"", "hashed", "", true},
		{"", "named", "", false},
		{"", "badhashed", "0a1b2c3d.0", false},
		{"", "two", "", true},
		{"", "missing", "does not exist", false},
	} {
		pool := x509.NewCertPool()
		file, path := tt.file, tt.path
		if file != "" {
			file = filepath.Join(dir, file)
		}
		if path != "" {
			path = filepath.Join(dir, path)
		}
		err := loadCAs(pool, file, path, OS)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("loadCAs(%q, %q): %v, want %q", tt.file, tt.path, err, tt.err)
			continue
		}
		_, verr := alice.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		if (verr == nil) != tt.trusts {
			t.Errorf("loadCAs(%q, %q): the CA trusted %v, want %v", tt.file, tt.path, verr == nil, tt.trusts)
		}
	}
}

// SSLError reports a CA list Apache would not start with, the main
// server's and each virtual host's (named by its position).
func TestSSLError(t *testing.T) {
	for _, tt := range []struct {
		conf string
		want []string // substrings; none for no error
	}{
		{"", nil},
		{"SSLCACertificateFile /nonexistent/ca.pem\n", []string{"/nonexistent/ca.pem"}},
		{"<VirtualHost *:443>\nSSLEngine on\nSSLCACertificateFile /nonexistent/v.pem\n</VirtualHost>\n", []string{"legacy.conf:1", "/nonexistent/v.pem"}},
		{"SSLCACertificateFile /nonexistent/ca.pem\n<VirtualHost *:443>\nSSLEngine on\nSSLCACertificatePath /nonexistent/dir\n</VirtualHost>\n", []string{"/nonexistent/ca.pem", "legacy.conf:2"}}, // the host inherits the file
	} {
		root := tree(t, "index.html")
		e := optEngine(t, translate.Compat24, root, tt.conf, append(slices.Clone(translate.FragmentModules), "ssl_module"))
		err := e.SSLError()
		if (err != nil) != (tt.want != nil) {
			t.Errorf("%q: %v", tt.conf, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v, want %q in it", tt.conf, err, w)
			}
		}
	}
}

// The server level's SSLVerifyClient optional_no_ca holds in a directory
// that sets none: a certificate of an unknown CA is let through
// (GENEROUS); and an .htaccess file's SSLVerifyClient, met by a request
// that brought no certificate, makes later handshakes ask for one.
func TestSSLVerifyInherited(t *testing.T) {
	ca := newTestCA(t, "Inherit CA", nil)
	other := newTestCA(t, "Other CA", nil)
	mallory := other.client(t, pkix.Name{CommonName: "mallory"}, false)
	e := sslEngine(t, translate.Compat24, "SSLCACertificateFile @CA@\nSSLVerifyClient optional_no_ca\n<Directory @DOCROOT@/user>\nSSLUserName SSL_CLIENT_VERIFY\nRequire user GENEROUS\n</Directory>\n", ca)
	if res := decideSSL(e, sslReq{target: "/user/", tls: true, chain: []*x509.Certificate{mallory}}); res.Status != 0 || res.User != "GENEROUS" {
		t.Errorf("optional_no_ca from the server level: %d user %q, want 0 GENEROUS", res.Status, res.User)
	}

	h := sslEngine(t, translate.Compat24, "SSLCACertificateFile @CA@\n<Directory @DOCROOT@/verify>\nAllowOverride AuthConfig\n</Directory>\n", ca)
	docroot := h.Config().DocumentRoot
	if err := os.WriteFile(filepath.Join(docroot, "verify", ".htaccess"), []byte("SSLVerifyClient require\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := h.ClientAuth("").Type; got != tls.NoClientCert {
		t.Fatalf("before any request: %v", got)
	}
	if res := decideSSL(h, sslReq{target: "/verify/", tls: true}); res.Status != 403 {
		t.Errorf("no certificate where the .htaccess requires one: %d, want 403", res.Status)
	}
	if got := h.ClientAuth("").Type; got != tls.RequestClientCert {
		t.Errorf("after the .htaccess asked: %v, want RequestClientCert", got)
	}
}

// The handshake's check of the chain (ClientAuth.Verify): no longer than
// SSLVerifyDepth above the client, any chain when none is sent; under
// optional_no_ca any certificate that is not broken (an unknown CA is
// fine, an expired one is not).
func TestClientAuthVerify(t *testing.T) {
	ca := newTestCA(t, "Verify CA", nil)
	inter := newTestCA(t, "Verify Intermediate", ca)
	alice := ca.client(t, pkix.Name{CommonName: "alice"}, false)
	deep := inter.client(t, pkix.Name{CommonName: "deep"}, false)
	e := sslEngine(t, translate.Compat24, "SSLCACertificateFile @CA@\nSSLVerifyClient require\nSSLVerifyDepth 1\n", ca)
	v := e.ClientAuth("").Verify
	if err := v(nil, [][]*x509.Certificate{{alice, ca.cert}}); err != nil {
		t.Errorf("depth 1: %v", err)
	}
	if err := v(nil, [][]*x509.Certificate{{deep, inter.cert, ca.cert}}); err == nil {
		t.Errorf("depth 2 under SSLVerifyDepth 1: accepted")
	}
	if err := v(nil, [][]*x509.Certificate{{deep, inter.cert, ca.cert}, {alice, ca.cert}}); err != nil {
		t.Errorf("one chain short enough: %v", err)
	}
	if err := v(nil, nil); err != nil {
		t.Errorf("no chain: %v", err)
	}
	other := newTestCA(t, "Other CA", nil)
	mallory := other.client(t, pkix.Name{CommonName: "mallory"}, false)
	expired := ca.client(t, pkix.Name{CommonName: "old"}, true)
	n := sslEngine(t, translate.Compat24, "SSLCACertificateFile @CA@\nSSLVerifyClient optional_no_ca\n", ca)
	nv := n.ClientAuth("").Verify
	for _, tt := range []struct {
		name  string
		raw   [][]byte
		valid bool
	}{
		{"none", nil, true},
		{"unknown CA", [][]byte{mallory.Raw}, true},
		{"known CA", [][]byte{alice.Raw}, true},
		{"expired", [][]byte{expired.Raw}, false},
		{"garbage", [][]byte{{1, 2, 3}}, false},
	} {
		if err := nv(tt.raw, nil); (err == nil) != tt.valid {
			t.Errorf("optional_no_ca, %s: %v", tt.name, err)
		}
	}
}

package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sslHCL loads the legacy configuration with mod_ssl among the modules.
const sslHCL = `listen = "127.0.0.1:0"
backend "httpd" {
  url = "http://127.0.0.1:1"
}
legacy {
  files         = ["legacy.conf"]
  document_root = "docroot"
  semantics     = "2.4-compat"
  modules       = ["authz_core_module", "authz_host_module", "authn_core_module", "authn_file_module", "auth_basic_module", "access_compat_module", "dir_module", "ssl_module"]
  path_map      = { "/etc/legacy" = "certs" }
}
client_ip {
  trusted_proxies = ["127.0.0.1/32"]
  forwarded_tls   = true
}
`

// pemCA makes a CA and a client certificate it issued, as PEM.
func pemCA(t *testing.T) (caPEM, clientPEM string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, _ := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	caCert, _ := x509.ParseCertificate(caDER)
	ckey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "alice"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	clDER, _ := x509.CreateCertificate(rand.Reader, cl, caCert, &ckey.PublicKey, key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: clDER}))
}

// explain decides over TLS with -tls, an https:// URL or -cert, and
// loads the CA list through path_map.
func TestExplainTLS(t *testing.T) {
	ca, alice := pemCA(t)
	legacy := `SSLCACertificateFile /etc/legacy/ca.pem
<Directory @DIR@/docroot/secure>
SSLRequireSSL
</Directory>
<Directory @DIR@/docroot/certs>
SSLVerifyClient require
</Directory>
`
	dir := writeFiles(t, map[string]string{"orderly.hcl": sslHCL, "legacy.conf": legacy, "certs/ca.pem": ca, "alice.pem": alice,
		"docroot/secure/index.html": "x", "docroot/certs/index.html": "x"})
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"/secure/"}, "decision: DENY 403"},
		{[]string{"/secure/"}, "AH02219: access to " + dir + "/docroot/secure/ failed, reason: SSL connection required"},
		{[]string{"-tls", "/secure/"}, "decision: ALLOW"},
		{[]string{"https://www.example.com/secure/"}, "decision: ALLOW"},
		{[]string{"-tls", "/certs/"}, "decision: DENY 403"},
		{[]string{"-cert", filepath.Join(dir, "alice.pem"), "/certs/"}, "decision: ALLOW"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", "192.0.2.1"}, tt.args...)
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errb.String())
		}
		if !strings.Contains(out.String(), tt.want) {
			t.Errorf("%v: want %q in:\n%s", tt.args, tt.want, out.String())
		}
	}
	rc, _, diags := loadConfig(filepath.Join(dir, "orderly.hcl"))
	if diags.HasErrors() || !rc.ForwardedTLS {
		t.Errorf("client_ip.forwarded_tls: %v %v", rc != nil && rc.ForwardedTLS, diags)
	}
}

// Apache does not start with an SSLCACertificateFile it cannot read;
// neither does orderly.
func TestSSLCAFileMissing(t *testing.T) {
	dir := writeFiles(t, map[string]string{"orderly.hcl": sslHCL, "legacy.conf": "SSLCACertificateFile /etc/legacy/none.pem\n", "docroot/index.html": "x"})
	var out, errb bytes.Buffer
	if code := run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", "192.0.2.1", "/"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "SSLCACertificateFile: file '/etc/legacy/none.pem' does not exist or is empty") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

package walk

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"slices"
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

package proxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
)

func TestRedirectHTTPS(t *testing.T) {
	tests := []struct {
		port, host, target string
		status             int
		location           string
	}{
		{"8443", "www.example.com", "/a/b?x=1&y=%2F", 308, "https://www.example.com:8443/a/b?x=1&y=%2F"},
		{"8443", "www.example.com:8080", "/", 308, "https://www.example.com:8443/"},
		{"443", "www.example.com:80", "/p%20q", 308, "https://www.example.com/p%20q"},
		{"443", "[2001:db8::1]:80", "/", 308, "https://[2001:db8::1]/"},
		{"8443", "[2001:db8::1]", "/", 308, "https://[2001:db8::1]:8443/"},
		{"8443", "", "/", 400, ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", tt.target, nil)
		r.Host = tt.host
		w := httptest.NewRecorder()
		RedirectHTTPS(tt.port).ServeHTTP(w, r)
		if w.Code != tt.status || w.Header().Get("Location") != tt.location {
			t.Errorf("port %s Host %q %s: %d %q, want %d %q", tt.port, tt.host, tt.target, w.Code, w.Header().Get("Location"), tt.status, tt.location)
		}
	}
}

func TestAllowNames(t *testing.T) {
	entries := []string{"vhost.example.org", "Alias.example.org", "*.wild.example.org", "www?.example.org", "*"}
	vhosts := func() []string { return entries }
	withVHosts := AllowNames([]string{"exact.example.com", "*.example.net", "192.0.2.7"}, vhosts)
	without := AllowNames([]string{"exact.example.com", "*.example.net", "192.0.2.7"}, nil)
	tests := []struct {
		name          string
		with, without bool
	}{
		{"exact.example.com", true, true},
		{"EXACT.example.com.", true, true},
		{"other.example.com", false, false},
		{"a.example.net", true, true},
		{"a.b.example.net", false, false}, // one label only, as a wildcard certificate
		{"example.net", false, false},
		{".example.net", false, false},
		{"192.0.2.7", true, true},
		{"vhost.example.org", true, false},
		{"alias.example.org", true, false},
		{"x.wild.example.org", true, false},
		{"x.y.wild.example.org", false, false},
		{"www1.example.org", false, false}, // Apache's glob, not issued for
		{"anything.test", false, false},    // ServerAlias *
		{"", false, false},
		{"*", false, false},
		{"*.example.net", false, false},
		{"www?.example.org", false, false},
	}
	for _, tt := range tests {
		if got := withVHosts(context.Background(), tt.name) == nil; got != tt.with {
			t.Errorf("with vhosts: %q allowed %v, want %v", tt.name, got, tt.with)
		}
		if got := without(context.Background(), tt.name) == nil; got != tt.without {
			t.Errorf("without vhosts: %q allowed %v, want %v", tt.name, got, tt.without)
		}
	}
	// The names are read at each decision: a reload applies.
	entries = nil
	if withVHosts(context.Background(), "vhost.example.org") == nil {
		t.Error("vhost.example.org still allowed after its virtual host went")
	}
}

// A static certificate alone is served by Go's TLS with HTTP/2 offered.
func TestCertsStatic(t *testing.T) {
	certFile, keyFile := writeTestCert(t, "static.example.com")
	c, err := NewCerts(TLSConfig{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Proto))
	}))
	srv.TLS = c.TLSConfig()
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(certFile)
	pool.AppendCertsFromPEM(pem)
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{ServerName: "static.example.com", RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Errorf("ALPN %q, want h2", p)
	}
	if _, err := NewCerts(TLSConfig{CertFile: certFile, KeyFile: certFile}); err == nil {
		t.Error("a certificate file as its own key: no error")
	}
}

// With ACME, the TLS configuration offers h2 first and keeps acme-tls/1;
// the hosts' certificates belong to the managed configuration and those
// obtained on demand to the on-demand one, which is the one serving.
func TestCertsACME(t *testing.T) {
	certFile, keyFile := writeTestCert(t, "static.example.com")
	c, err := NewCerts(TLSConfig{
		CertFile: certFile, KeyFile: keyFile,
		ACME: &ACMEConfig{
			Directory: "https://127.0.0.1:1/dir",
			Storage:   &certmagic.FileStorage{Path: t.TempDir()},
			Hosts:     []string{"www.example.com"},
			HTTP01:    true, TLSALPN01: true,
			HTTPAddr: "127.0.0.1:8080", TLSAddr: "127.0.0.1:8443",
			OnDemand: AllowNames([]string{"*.example.com"}, nil),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if got := c.TLSConfig().NextProtos; !slices.Equal(got, []string{"h2", "http/1.1", "acme-tls/1"}) {
		t.Errorf("NextProtos %q", got)
	}
	if c.issuer.AltHTTPPort != 8080 || c.issuer.AltTLSALPNPort != 8443 || c.issuer.ListenHost != "127.0.0.1" {
		t.Errorf("certmagic would answer challenges on %s:%d and :%d, not orderly's listeners", c.issuer.ListenHost, c.issuer.AltHTTPPort, c.issuer.AltTLSALPNPort)
	}
	if c.managed.DefaultServerName != "static.example.com" || c.onDemand.DefaultServerName != "static.example.com" {
		t.Errorf("clients without SNI get %q/%q, want the static certificate", c.managed.DefaultServerName, c.onDemand.DefaultServerName)
	}
	hello := &tls.ClientHelloInfo{ServerName: "static.example.com"}
	cert, err := c.TLSConfig().GetCertificate(hello)
	if err != nil || cert.Leaf == nil || cert.Leaf.DNSNames[0] != "static.example.com" {
		t.Errorf("static certificate through certmagic: %v", err)
	}
	if _, err := c.TLSConfig().GetCertificate(&tls.ClientHelloInfo{ServerName: "www.other.org"}); err == nil {
		t.Error("a name on demand does not allow got a certificate")
	}
}

// writeTestCert writes a self-signed certificate for name and its key.
func writeTestCert(t *testing.T, name string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return certFile, keyFile
}

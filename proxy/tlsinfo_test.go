package proxy

import (
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
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func selfSigned(t *testing.T, cn string) (*x509.Certificate, string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestTLSInfo: the TLS facts come from the connection, or from a
// trusted proxy's headers with forwarded_tls, and from nobody else.
func TestTLSInfo(t *testing.T) {
	leaf, leafPEM := selfSigned(t, "alice")
	inter, interPEM := selfSigned(t, "intermediate")
	esc := url.PathEscape(leafPEM)
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	tests := []struct {
		name      string
		forwarded bool
		peer      string
		header    http.Header
		conn      *tls.ConnectionState
		on        bool
		chain     []*x509.Certificate
	}{
		{name: "plain", peer: "10.0.0.1:1"},
		{name: "connection", peer: "192.0.2.1:1", conn: &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}, on: true, chain: []*x509.Certificate{leaf}},
		{name: "connection wins over headers", forwarded: true, peer: "10.0.0.1:1", conn: &tls.ConnectionState{},
			header: http.Header{"X-Forwarded-Client-Cert": {"Cert=" + esc}}, on: true},
		{name: "headers without forwarded_tls", peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"https"}}},
		{name: "headers from an untrusted peer", forwarded: true, peer: "192.0.2.1:1", header: http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-Client-Cert": {"Cert=" + esc}}},
		{name: "https", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"HTTPS"}}, on: true},
		{name: "two proto fields", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"https", "http"}}},
		{name: "a proto list", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"https, http"}}},
		{name: "envoy", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"https"},
			"X-Forwarded-Client-Cert": {`By=spiffe://x;Hash=ab;Cert="` + esc + `";Subject="CN=alice,O=a;b"`}}, on: true, chain: []*x509.Certificate{leaf}},
		{name: "envoy chain, last element", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"https"},
			"X-Forwarded-Client-Cert": {`Cert="` + url.PathEscape(interPEM) + `",Hash=x;Cert=zz;Chain="` + url.PathEscape(leafPEM+interPEM) + `"`}},
			on: true, chain: []*x509.Certificate{leaf, inter}},
		{name: "nginx escaped cert", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"https"},
			"X-Forwarded-Client-Cert": {"Cert=" + strings.ReplaceAll(url.QueryEscape(leafPEM), "+", "%20")}}, on: true, chain: []*x509.Certificate{leaf}},
		{name: "query-component encoding", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"https"},
			"X-Forwarded-Client-Cert": {`Cert="` + url.QueryEscape(leafPEM) + `"`}}, on: true, chain: []*x509.Certificate{leaf}},
		{name: "no certificate over plain", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Client-Cert": {"Cert=" + esc}}},
		{name: "garbage", forwarded: true, peer: "10.0.0.1:1", header: http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-Client-Cert": {"Cert=%zz"}}, on: true},
	}
	for _, tc := range tests {
		h := &Handler{cfg: Config{TrustedProxies: trusted, ForwardedTLS: tc.forwarded}}
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr, r.TLS = tc.peer, tc.conn
		for k, v := range tc.header {
			r.Header[k] = v
		}
		got := h.tlsInfo(r)
		if got.On != tc.on || len(got.Chain) != len(tc.chain) {
			t.Errorf("%s: on %v, %d certificates; want %v, %d", tc.name, got.On, len(got.Chain), tc.on, len(tc.chain))
			continue
		}
		for i := range tc.chain {
			if !got.Chain[i].Equal(tc.chain[i]) {
				t.Errorf("%s: certificate %d is %s", tc.name, i, got.Chain[i].Subject)
			}
		}
	}
}

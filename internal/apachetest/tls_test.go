package apachetest

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"net"
	"net/http"
	"strings"
	"testing"
)

// doCase sends r to the server s runs for the case laid out at l: over
// TLS to its TLS listener, with the certificate r names, when r says so.
func doCase(s *Server, l Layout, r Request) (Response, error) {
	if !r.TLS {
		return Do(s.Addr, r)
	}
	p, err := TestPKI()
	if err != nil {
		return Response{}, err
	}
	return DoTLS(s.TLSAddr, r, l.TLS.Certs[r.Cert], p.Roots)
}

const tlsCase = `TLS.
-- legacy.conf --
SSLCACertificateFile @TLSCA@
-- certs --
# name issuer subject
alice ca /C=DE/O=Example/CN=alice
mallory other /CN=mallory expired
-- requests --
GET / 1.2.3.4 want=200
GET / 1.2.3.4 tls want=200
GET / 1.2.3.4 cert=alice want=tls
`

func TestParseTLSCase(t *testing.T) {
	c, err := ParseCase("dir/480-x.txtar", []byte(tlsCase))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Certs) != 2 || c.Certs[0].Subject.CommonName != "alice" || c.Certs[0].Subject.Country[0] != "DE" || !c.Certs[1].Expired || c.Certs[1].Issuer != "other" {
		t.Errorf("certs %+v", c.Certs)
	}
	r := c.Requests
	if r[0].TLS || !r[1].TLS || r[1].Cert != "" || !r[2].TLS || r[2].Cert != "alice" || r[2].Want != "tls" {
		t.Errorf("requests %+v", r)
	}
	if r[2].String() != "GET / 1.2.3.4 cert=alice want=tls" {
		t.Errorf("String: %s", r[2])
	}
	for _, bad := range []struct{ edit, err string }{
		{"cert=alice want=tls", "cert=bob want=tls"},
		{"/C=DE/O=Example/CN=alice", "/CN=alice/O=Example"},
		{"alice ca", "alice nobody"},
		{"mallory other /CN=mallory expired", "alice other /CN=x"},
		{"tls want=200", "tls cert= want=200"},
	} {
		if _, err := ParseCase("dir/c.txtar", []byte(strings.Replace(tlsCase, bad.edit, bad.err, 1))); err == nil {
			t.Errorf("%q: no error", bad.err)
		}
	}
	l, err := c.Materialize(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if l.TLS == nil || l.TLS.Certs["alice"] == nil || !strings.Contains(string(l.Expand([]byte("@TLSCA@"))), "/tls/ca.pem") {
		t.Errorf("layout %+v", l.TLS)
	}
	if o := l.OracleOptions(); o.TLS == nil || !strings.Contains(strings.Join(o.LoadedModules(), " "), "ssl_module") {
		t.Errorf("oracle options %+v", o)
	}
}

// TestDoTLS: a server that refuses the client's certificate at the
// handshake is a refusal of the TLS layer, not an error.
func TestDoTLS(t *testing.T) {
	p, err := TestPKI()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{p.Server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.Roots})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	alice, _ := p.Client(CertSpec{Name: "alice", Issuer: "ca", Subject: mustName(t, "/CN=alice")})
	mallory, _ := p.Client(CertSpec{Name: "mallory", Issuer: "other", Subject: mustName(t, "/CN=mallory")})
	rq := Request{Method: "GET", Target: "/", TLS: true}
	addr := ln.Addr().String()
	if r, err := DoTLS(addr, rq, alice, p.Roots); err != nil || r.Status != http.StatusTeapot {
		t.Errorf("alice: %+v %v", r, err)
	}
	for _, c := range []*tls.Certificate{nil, mallory} {
		r, err := DoTLS(addr, rq, c, p.Roots)
		if err != nil || r.TLS != TLSHandshake || r.Class() != "tls refused at the handshake" || !r.Matches("tls") || r.Matches("403") {
			t.Errorf("refused: %+v %v", r, err)
		}
	}
	if _, err := DoTLS(net.JoinHostPort("127.0.0.1", "1"), rq, nil, p.Roots); err == nil {
		t.Error("no listener: no error")
	}
}

func mustName(t *testing.T, s string) pkix.Name {
	t.Helper()
	n, err := parseOneline(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

package apachetest

// TLS for the corpus: a public-key infrastructure the test makes for
// itself (crypto/x509, in memory, written to the case's directory), the
// oracle's TLS listener (Options.TLS), the certs file of a case, and a
// client that speaks TLS 1.2 with renegotiation, as mod_ssl needs for
// a per-directory SSLVerifyClient (testdata/corpus/README.md, "TLS").

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Names of the TLS files of a case.
const (
	// CertsFile is a case's file of client certificates: one a line,
	// NAME ISSUER SUBJECT [expired], ISSUER "ca" (the CA the case's
	// @TLSCA@ file holds), "inter" (an intermediate CA under it, which
	// the client sends with its certificate) or "other" (a CA nobody
	// trusts), SUBJECT in OpenSSL's one-line form (/C=DE/O=Example/CN=alice).
	CertsFile = "certs"
	// TLSCAPlaceholder is replaced by the path of the trusted CA's PEM
	// file (for SSLCACertificateFile).
	TLSCAPlaceholder = "@TLSCA@"
	// TLSDir is where Materialize writes the CA and the server's
	// certificate and key.
	TLSDir = "tls"
)

// TLSOptions make the server listen with TLS on a second port too
// (Server.TLSAddr): a <VirtualHost> for that address with SSLEngine on
// and the certificate and key of these files; everything else (client
// verification included) it inherits from the main server, which is
// where a case's legacy.conf puts it.
type TLSOptions struct {
	CertFile, KeyFile string
}

// A CertSpec is one line of a case's certs file.
type CertSpec struct {
	Name    string
	Issuer  string // "ca", "inter" or "other"
	Subject pkix.Name
	Expired bool
}

// ParseCerts parses a certs file; firstLine numbers its first line in
// name, for errors.
func ParseCerts(name string, firstLine int, data []byte) ([]CertSpec, error) {
	var out []CertSpec
	var errs []error
	seen := map[string]bool{}
	for i, text := range strings.Split(string(data), "\n") {
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		fail := func(msg string) { errs = append(errs, fmt.Errorf("%s:%d: %s", name, firstLine+i, msg)) }
		if len(f) < 3 || len(f) > 4 || len(f) == 4 && f[3] != "expired" {
			fail(fmt.Sprintf("%q: want NAME ca|inter|other /SUBJECT [expired]", text))
			continue
		}
		if f[1] != "ca" && f[1] != "inter" && f[1] != "other" {
			fail(fmt.Sprintf("issuer %q: want ca, inter or other", f[1]))
			continue
		}
		subj, err := parseOneline(f[2])
		if err != nil {
			fail(err.Error())
			continue
		}
		if seen[f[0]] {
			fail(fmt.Sprintf("certificate %q declared twice", f[0]))
			continue
		}
		seen[f[0]] = true
		out = append(out, CertSpec{Name: f[0], Issuer: f[1], Subject: subj, Expired: len(f) == 4})
	}
	return out, errors.Join(errs...)
}

// subjectOrder is the order in which crypto/x509 writes a subject's
// attributes, which is the order the DN has: a subject line gives them
// in it.
var subjectOrder = []string{"C", "ST", "L", "O", "OU", "CN", "emailAddress"}

// parseOneline reads /C=DE/O=Example/CN=alice (a value may not hold
// "/" or blanks; %20 stands for a space), the keys in subjectOrder.
func parseOneline(s string) (pkix.Name, error) {
	var n pkix.Name
	if !strings.HasPrefix(s, "/") {
		return n, fmt.Errorf("subject %q: want /KEY=value/...", s)
	}
	rank := 0
	for _, part := range strings.Split(s[1:], "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || v == "" {
			return n, fmt.Errorf("subject %q: %q is not KEY=value", s, part)
		}
		v = strings.ReplaceAll(v, "%20", " ")
		r := slices.Index(subjectOrder, k)
		if r < rank || k == "CN" && n.CommonName != "" {
			return n, fmt.Errorf("subject %q: %s out of order: the keys go in the order %s, as the certificate has them", s, k, strings.Join(subjectOrder, ", "))
		}
		rank = max(r, 0)
		switch k {
		case "C":
			n.Country = append(n.Country, v)
		case "ST":
			n.Province = append(n.Province, v)
		case "L":
			n.Locality = append(n.Locality, v)
		case "O":
			n.Organization = append(n.Organization, v)
		case "OU":
			n.OrganizationalUnit = append(n.OrganizationalUnit, v)
		case "CN":
			n.CommonName = v
		case "emailAddress":
			n.ExtraNames = append(n.ExtraNames, pkix.AttributeTypeAndValue{Type: []int{1, 2, 840, 113549, 1, 9, 1}, Value: v})
		default:
			return n, fmt.Errorf("subject %q: key %q: want C, ST, L, O, OU, CN or emailAddress", s, k)
		}
	}
	return n, nil
}

// UsesTLS reports whether a request of the case goes over TLS.
func (c *Case) UsesTLS() bool {
	for _, r := range c.Requests {
		if r.TLS {
			return true
		}
	}
	return len(c.Certs) > 0
}

// checkTLS checks that every cert= of the requests names a certificate
// of the certs file.
func (c *Case) checkTLS() error {
	var errs []error
	for _, r := range c.Requests {
		if r.Cert == "" {
			continue
		}
		found := false
		for _, s := range c.Certs {
			found = found || s.Name == r.Cert
		}
		if !found {
			errs = append(errs, fmt.Errorf("%s:%d: cert=%s: no such certificate in %s", c.Path, r.Line, r.Cert, CertsFile))
		}
	}
	return errors.Join(errs...)
}

// parseTLSOption reads a request line's TLS words: "tls" (the request
// goes over TLS) and cert=NAME (over TLS, with the client certificate
// NAME of the certs file). ok is false for another word.
func parseTLSOption(opt string, r *Request) (ok bool, err error) {
	switch {
	case opt == "tls":
		r.TLS = true
		return true, nil
	case strings.HasPrefix(opt, "cert="):
		if r.Cert != "" || opt == "cert=" {
			return true, fmt.Errorf("bad %q: want cert=NAME, once", opt)
		}
		r.TLS, r.Cert = true, opt[len("cert="):]
		return true, nil
	}
	return false, nil
}

// PKI is the test's public-key infrastructure: a CA the cases trust, an
// intermediate CA under it, one they do not trust, a server certificate
// for 127.0.0.1 and the client certificates of the cases' certs files,
// made once a process.
type PKI struct {
	CA, Inter, Other *x509.Certificate
	caKey            *ecdsa.PrivateKey
	interKey         *ecdsa.PrivateKey
	otherKey         *ecdsa.PrivateKey
	Server           tls.Certificate
	// Roots trust CA, for the clients' view of the servers.
	Roots *x509.CertPool

	mu      sync.Mutex
	clients map[string]*tls.Certificate
}

var (
	pkiOnce sync.Once
	pki     *PKI
	pkiErr  error
)

// TestPKI returns the process's PKI, made on first use.
func TestPKI() (*PKI, error) {
	pkiOnce.Do(func() { pki, pkiErr = newPKI() })
	return pki, pkiErr
}

// nextSerial is a random positive serial number.
func nextSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n.Add(n, big.NewInt(1))
}

// newCA makes a CA, signed by parent (with its key) or by itself.
func newCA(name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	t := &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{Organization: []string{"orderly test"}, CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	signer, signKey := t, key
	if parent != nil {
		signer, signKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, t, signer, &key.PublicKey, signKey)
	if err != nil {
		return nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	return c, key, err
}

func issue(ca *x509.Certificate, caKey *ecdsa.PrivateKey, t *x509.Certificate) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, t, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, err
}

func newPKI() (*PKI, error) {
	p := &PKI{clients: map[string]*tls.Certificate{}, Roots: x509.NewCertPool()}
	var err error
	if p.CA, p.caKey, err = newCA("orderly test CA", nil, nil); err != nil {
		return nil, err
	}
	if p.Inter, p.interKey, err = newCA("orderly intermediate CA", p.CA, p.caKey); err != nil {
		return nil, err
	}
	if p.Other, p.otherKey, err = newCA("orderly untrusted CA", nil, nil); err != nil {
		return nil, err
	}
	p.Roots.AddCert(p.CA)
	p.Server, err = issue(p.CA, p.caKey, &x509.Certificate{SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}})
	return p, err
}

// Client returns the client certificate of spec (one per distinct spec
// in a process).
func (p *PKI) Client(spec CertSpec) (*tls.Certificate, error) {
	key := fmt.Sprintf("%s|%v|%v", spec.Issuer, spec.Subject.String(), spec.Expired)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[key]; c != nil {
		return c, nil
	}
	ca, caKey := p.CA, p.caKey
	switch spec.Issuer {
	case "inter":
		ca, caKey = p.Inter, p.interKey
	case "other":
		ca, caKey = p.Other, p.otherKey
	}
	t := &x509.Certificate{SerialNumber: nextSerial(), Subject: spec.Subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if spec.Expired {
		t.NotBefore, t.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	}
	c, err := issue(ca, caKey, t)
	if err != nil {
		return nil, err
	}
	if spec.Issuer == "inter" {
		c.Certificate = append(c.Certificate, p.Inter.Raw) // the client sends the chain
	}
	p.clients[key] = &c
	return &c, nil
}

// writeTLS writes the trusted CA (ca.pem) and the server's certificate
// and key (server.pem, server.key) into dir.
func (p *PKI) writeTLS(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	key, err := x509.MarshalECPrivateKey(p.Server.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		b    *pem.Block
	}{
		{"ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: p.CA.Raw}},
		{"server.pem", &pem.Block{Type: "CERTIFICATE", Bytes: p.Server.Certificate[0]}},
		{"server.key", &pem.Block{Type: "EC PRIVATE KEY", Bytes: key}},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), pem.EncodeToMemory(f.b), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TLSLayout is where Materialize wrote a TLS case's certificates.
type TLSLayout struct {
	CA, CertFile, KeyFile string
	// Certs are the case's client certificates, by name.
	Certs map[string]*tls.Certificate
}

// materializeTLS writes the TLS files of a case that uses TLS.
func (c *Case) materializeTLS(dir string) (*TLSLayout, error) {
	if !c.UsesTLS() {
		return nil, nil
	}
	p, err := TestPKI()
	if err != nil {
		return nil, err
	}
	d := filepath.Join(dir, TLSDir)
	if err := p.writeTLS(d); err != nil {
		return nil, err
	}
	t := &TLSLayout{CA: filepath.Join(d, "ca.pem"), CertFile: filepath.Join(d, "server.pem"), KeyFile: filepath.Join(d, "server.key"), Certs: map[string]*tls.Certificate{}}
	for _, s := range c.Certs {
		if t.Certs[s.Name], err = p.Client(s); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// The stages at which a TLS connection can be refused.
const (
	TLSHandshake     = "handshake"
	TLSRenegotiation = "renegotiation"
)

// DoTLS sends req to addr over TLS (1.2 at most, renegotiation allowed
// once, as mod_ssl's per-directory SSLVerifyClient asks; TLS 1.3 clients
// such as Go's offer no post-handshake authentication), with cert as
// the client certificate if the server asks for one (nil: none), the
// server verified against roots. A connection the server refuses with a
// TLS alert or by closing it, at the handshake or at a renegotiation,
// is the Response with TLS set to the stage.
func DoTLS(addr string, req Request, cert *tls.Certificate, roots *x509.CertPool) (Response, error) {
	raw, err := net.DialTimeout("tcp", addr, RequestTimeout)
	if err != nil {
		return Response{}, err
	}
	defer raw.Close()
	if err := raw.SetDeadline(time.Now().Add(RequestTimeout)); err != nil {
		return Response{}, err
	}
	cfg := &tls.Config{
		RootCAs: roots, ServerName: "127.0.0.1", MaxVersion: tls.VersionTLS12,
		Renegotiation: tls.RenegotiateOnceAsClient,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if cert == nil {
				return &tls.Certificate{}, nil
			}
			return cert, nil
		},
	}
	c := tls.Client(raw, cfg)
	if err := c.Handshake(); err != nil {
		if refusedTLS(err) {
			return Response{TLS: TLSHandshake}, nil
		}
		return Response{}, fmt.Errorf("TLS handshake for %q: %v", req.String(), err)
	}
	if _, err := c.Write(req.Wire()); err != nil {
		if refusedTLS(err) {
			return Response{TLS: TLSRenegotiation}, nil
		}
		return Response{}, fmt.Errorf("sending %q: %v", req.String(), err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: req.Method})
	if err != nil {
		if refusedTLS(err) {
			return Response{TLS: TLSRenegotiation}, nil
		}
		return Response{}, fmt.Errorf("reading the response to %q: %v", req.String(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return Response{}, fmt.Errorf("reading the body of the response to %q: %v", req.String(), err)
	}
	return Response{
		Status:          resp.StatusCode,
		WWWAuthenticate: strings.Join(resp.Header.Values("WWW-Authenticate"), ", "),
		Location:        resp.Header.Get("Location"),
		Server:          resp.Header.Get("Server"),
		Body:            body,
	}, nil
}

// refusedTLS reports a server's refusal at the TLS layer: an alert, or
// the connection closed or reset in the middle of a handshake.
func refusedTLS(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "remote error" {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "connection reset by peer")
}

// pickTLSPort chooses the TLS listener's port: the one used before, or
// (again) a free one; with no TLS, none.
func (s *Server) pickTLSPort(opt Options, again bool) error {
	if opt.TLS == nil {
		s.TLSAddr = ""
		return nil
	}
	if s.tlsPort == 0 || again {
		p, err := freePort()
		if err != nil {
			return err
		}
		s.tlsPort = p
	}
	s.TLSAddr = net.JoinHostPort("127.0.0.1", fmt.Sprint(s.tlsPort))
	return nil
}

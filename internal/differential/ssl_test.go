package differential

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TLS in the differential test (testdata/corpus/README.md, "TLS"): a case
// whose requests go over TLS (tls, cert=NAME) runs on the oracle's TLS
// listener and on orderly's own (its tls block, with the certificate of
// the test's CA), with the client certificate the request names.
//
// One difference is by design and counted apart: where a directory's
// SSLVerifyClient asks for more than the handshake did, Apache
// renegotiates, and a client without a certificate that verifies is
// refused there, at the TLS layer ("tls refused at renegotiation");
// orderly cannot renegotiate, asks at the handshake instead, and refuses
// the request with 403 (translate/walk/ssl.go). Both refuse the same
// requests; renegotiationRefusal counts the pair as agreeing.

// frontTLS maps an orderly front's plain address to its TLS listener's.
var frontTLS sync.Map

// pickFrontTLS chooses the TLS listener of an orderly front for a case
// that uses TLS ("" otherwise).
func pickFrontTLS(l apachetest.Layout, addr string) (string, error) {
	if l.TLS == nil {
		frontTLS.Delete(addr)
		return "", nil
	}
	// Not the plain listener's port, which pickPort handed out too.
	a, err := pickPort()
	if err != nil {
		return "", err
	}
	frontTLS.Store(addr, a)
	return a, nil
}

// frontTLSConfig completes the HCL of an orderly front: for a TLS case,
// the tls block of the listener pickFrontTLS chose, with the server
// certificate the oracle has; behind lbFront, client_ip.forwarded_tls.
func frontTLSConfig(hcl string, l apachetest.Layout, addr string) string {
	if strings.Contains(hcl, forwardedMark) {
		hcl = strings.Replace(hcl, `trusted_proxies = ["127.0.0.1/32"]`, `trusted_proxies = ["127.0.0.1/32"]`+"\n  forwarded_tls   = true", 1)
	}
	v, ok := frontTLS.Load(addr)
	if l.TLS == nil || !ok {
		return hcl
	}
	return hcl + fmt.Sprintf("tls {\n  listen    = %q\n  cert_file = %q\n  key_file  = %q\n}\n", v.(string), l.TLS.CertFile, l.TLS.KeyFile)
}

// frontTLSAddr is the TLS listener of a front ("" when it has none: its
// TLS requests go plain).
func frontTLSAddr(fr front, addr string) string {
	switch f := fr.(type) {
	case *apacheFront:
		return f.srv.TLSAddr
	case orderlyFront:
		if v, ok := frontTLS.Load(addr); ok {
			return v.(string)
		}
	case *lbFront:
		return f.tlsAddr
	}
	return ""
}

// doRequest sends rq to a server: over TLS to tlsAddr, with the client
// certificate it names, when it says tls and the server has a TLS
// listener; to plain otherwise.
func doRequest(plain, tlsAddr string, l apachetest.Layout, rq apachetest.Request) (apachetest.Response, error) {
	if !rq.TLS || tlsAddr == "" || l.TLS == nil {
		return apachetest.Do(plain, rq)
	}
	pki, err := apachetest.TestPKI()
	if err != nil {
		return apachetest.Response{}, err
	}
	return apachetest.DoTLS(tlsAddr, rq, l.TLS.Certs[rq.Cert], pki.Roots)
}

// renegotiationRefusal reports mod_ssl's refusal in a renegotiation
// (want) answered by the front with 403 (got): the same decision.
func renegotiationRefusal(want, got apachetest.Response) bool {
	return want.TLS == apachetest.TLSRenegotiation && got.TLS == "" && got.Status == 403
}

// forwardedMark, in an orderly front's extra HCL, asks frontTLSConfig for
// client_ip.forwarded_tls.
const forwardedMark = "# forwarded_tls\n"

// lbFront is orderly behind a load balancer that terminates TLS: a Go
// TLS server that asks every client for a certificate (it verifies
// nothing) and forwards to orderly's plain listener with
// X-Forwarded-Proto: https and the certificate chain in
// X-Forwarded-Client-Cert, as Envoy writes it (SANITIZE_SET: the
// client's own copy is replaced). orderly runs with forwarded_tls and
// verifies the certificate itself. Plain requests go to orderly directly.
type lbFront struct {
	tlsAddr string
}

func (f *lbFront) start(t *testing.T, l apachetest.Layout, backend string) (string, func()) {
	t.Helper()
	plain := l
	plain.TLS = nil // orderly itself listens plain
	addr, stop, err := orderlyFront{extra: forwardedMark}.launch(plain, backend)
	if err != nil {
		t.Fatal(err)
	}
	if l.TLS == nil {
		f.tlsAddr = ""
		return addr, stop
	}
	pki, err := apachetest.TestPKI()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pki.Server}, ClientAuth: tls.RequestClientCert})
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse("http://" + addr)
	lb := &http.Server{Handler: &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
		pr.Out.Host = pr.In.Host
		pr.Out.Header["X-Forwarded-For"] = pr.In.Header["X-Forwarded-For"]
		pr.Out.Header.Set("X-Forwarded-Proto", "https")
		pr.Out.Header.Del("X-Forwarded-Client-Cert")
		if cs := pr.In.TLS; cs != nil && len(cs.PeerCertificates) > 0 {
			var chain strings.Builder
			for _, c := range cs.PeerCertificates {
				chain.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
			}
			leaf := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cs.PeerCertificates[0].Raw})
			pr.Out.Header.Set("X-Forwarded-Client-Cert", fmt.Sprintf(`By=spiffe://lb;Cert="%s";Chain="%s";Subject="%s"`,
				url.QueryEscape(string(leaf)), url.QueryEscape(chain.String()), cs.PeerCertificates[0].Subject))
		}
	}}}
	go lb.Serve(ln)
	f.tlsAddr = ln.Addr().String()
	return addr, func() { lb.Close(); stop() }
}

func (f *lbFront) errorLog(l apachetest.Layout) func() string {
	return func() string {
		b, _ := os.ReadFile(filepath.Join(l.Dir, "orderly-error.log"))
		return string(b)
	}
}

// tolerate: where Apache refused a handshake (the server level's
// SSLVerifyClient), orderly behind a proxy that completed it can only
// refuse the request.
func (f *lbFront) tolerate(want, got apachetest.Response) string {
	if want.TLS == apachetest.TLSHandshake && got.Status == 403 {
		return "Apache refused the TLS handshake; behind a proxy that completed it, orderly refuses the request"
	}
	return ""
}

// TestForwardedTLS replays the corpus cases that use TLS through orderly
// behind a TLS-terminating proxy (lbFront): the TLS facts come from its
// headers, which orderly believes from a trusted peer with forwarded_tls,
// and the certificate is verified by orderly against the legacy CA list.
func TestForwardedTLS(t *testing.T) {
	apachetest.Require(t)
	cases, err := apachetest.LoadCorpus(*corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var s servers
	var tl tally
	tmp := apachetest.TempDir(t)
	fr := &lbFront{}
	for _, c := range cases {
		if !c.UsesTLS() || *only != "" && !strings.Contains(c.Name, *only) {
			continue
		}
		s.runCase(t, fr, c, filepath.Join(tmp, c.Name), &tl)
	}
	for _, m := range tl.mismatches {
		t.Error(m)
	}
	for _, m := range tl.logMismatches {
		t.Error(m)
	}
	for _, m := range tl.tolerated {
		t.Log(m)
	}
	tl.printExact("forwarded TLS")
	fmt.Printf("forwarded TLS: orderly behind a TLS-terminating proxy agrees with Apache on %d/%d requests across %d cases, %d bypasses; %d refused by mod_ssl in a renegotiation and by orderly with 403; %d refused by Apache at the handshake and by orderly with 403\n",
		tl.agree, tl.requests-len(tl.tolerated), tl.cases, tl.bypasses, tl.tlsRenegotiation, len(tl.tolerated))
	if tl.requests == 0 {
		t.Fatal("no TLS case was replayed")
	}
}

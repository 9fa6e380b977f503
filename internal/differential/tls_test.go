package differential

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestTLSPebble runs orderly's tls block against Debian's Pebble with
// real challenge validation: Pebble resolves every name through a DNS
// server of the test (127.0.0.1 for all) and validates HTTP-01 and
// TLS-ALPN-01 on orderly's own plain and HTTPS listeners. It checks, on
// the orderly binary: a certificate obtained by each challenge type and
// served over HTTP/2 in front of a backend, with a chain that verifies
// against Pebble's root; the redirect of the plain listener, which still
// answers HTTP-01; on-demand issuance limited to the allow-list and the
// legacy <VirtualHost> names; static certificate files; two replicas on
// one storage (one answers the other's challenge and serves its
// certificate); and the background renewal of a short-lived certificate.
func TestTLSPebble(t *testing.T) {
	pebbleBin := apachetest.RequireTool(t, "pebble", "pebble")
	dir := apachetest.TempDir(t)
	resolver := startAnyNameDNS(t)
	// Pebble validates on one port of each kind: every orderly that obtains
	// certificates through it listens there, one after the other.
	plain, secure := freePort(t), freePort(t)
	ca := startPebble(t, pebbleBin, filepath.Join(dir, "pebble"), resolver.addr, plain, secure, 0)

	backend := newRecordingBackend(t)
	legacy := writeTLSLegacy(t, filepath.Join(dir, "legacy"))

	t.Run("http-01 and redirect", func(t *testing.T) {
		o := startTLSOrderly(t, filepath.Join(dir, "http01"), legacy, backend.URL, plain, secure, fmt.Sprintf(`
  redirect_http = true
  acme {
    directory  = %q
    email      = "ops@orderly.test"
    storage    = "certs"
    hosts      = ["www.orderly.test"]
    ca_root    = %q
    challenges = ["http-01"]
  }`, ca.directory, ca.listenerPEM))
		defer o.stop()
		leaf := waitCertificate(t, o, secure, "www.orderly.test", ca.roots)
		o.wantLog(t, `"msg":"served key authentication","identifier":"www.orderly.test","challenge":"http-01"`)
		o.wantNoLog(t, `"challenge":"tls-alpn-01"`)
		checkHTTPS(t, backend, secure, "www.orderly.test", ca.roots, leaf)

		// The plain listener redirects everything else, query included.
		resp := plainGet(t, plain, "www.orderly.test", "/index.html?a=1&b=%2F")
		want := "https://www.orderly.test:" + port(secure) + "/index.html?a=1&b=%2F"
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
			t.Errorf("plain GET: %d Location %q, want 308 %q", resp.StatusCode, resp.Header.Get("Location"), want)
		}
		// A challenge path with no challenge behind it is not answered
		// as one: it is redirected like any other.
		resp = plainGet(t, plain, "www.orderly.test", "/.well-known/acme-challenge/unknown")
		if resp.StatusCode != http.StatusPermanentRedirect {
			t.Errorf("unknown challenge token: %d, want 308", resp.StatusCode)
		}
	})

	t.Run("tls-alpn-01 without redirect", func(t *testing.T) {
		o := startTLSOrderly(t, filepath.Join(dir, "alpn"), legacy, backend.URL, plain, secure, fmt.Sprintf(`
  acme {
    directory  = %q
    storage    = "certs"
    hosts      = ["alpn.orderly.test"]
    ca_root    = %q
    challenges = ["tls-alpn-01"]
  }`, ca.directory, ca.listenerPEM))
		defer o.stop()
		leaf := waitCertificate(t, o, secure, "alpn.orderly.test", ca.roots)
		o.wantLog(t, `"msg":"served key authentication certificate","server_name":"alpn.orderly.test","challenge":"tls-alpn-01"`)
		o.wantNoLog(t, `"challenge":"http-01"`)
		checkHTTPS(t, backend, secure, "alpn.orderly.test", ca.roots, leaf)
		// Without redirect_http the plain listener proxies.
		resp := plainGet(t, plain, "alpn.orderly.test", "/index.html")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("plain GET without redirect_http: %d, want 200 from the backend", resp.StatusCode)
		}
		if got := backend.last().Header.Get("X-Forwarded-Proto"); got != "http" {
			t.Errorf("plain request reached the backend with X-Forwarded-Proto %q, want http", got)
		}
	})

	t.Run("on demand", func(t *testing.T) {
		o := startTLSOrderly(t, filepath.Join(dir, "ondemand"), legacy, backend.URL, plain, secure, fmt.Sprintf(`
  acme {
    directory = %q
    storage   = "certs"
    ca_root   = %q
    on_demand {
      allow  = ["*.allowed.orderly.test", "exact.orderly.test"]
      vhosts = true
    }
  }`, ca.directory, ca.listenerPEM))
		defer o.stop()
		for _, name := range []string{"a.allowed.orderly.test", "exact.orderly.test", "vhost.orderly.test", "alias.orderly.test"} {
			leaf, err := handshake(secure, name, ca.roots)
			if err != nil {
				t.Errorf("%s is allowed, but: %v\n%s", name, err, o.log())
				continue
			}
			if leaf.VerifyHostname(name) != nil {
				t.Errorf("%s: served a certificate for %v", name, leaf.DNSNames)
			}
		}
		leaf := waitCertificate(t, o, secure, "exact.orderly.test", ca.roots)
		checkHTTPS(t, backend, secure, "exact.orderly.test", ca.roots, leaf)
		refused := []string{"denied.orderly.test", "a.b.allowed.orderly.test", "allowed.orderly.test", "www.other.test"}
		for _, name := range refused {
			if leaf, err := handshake(secure, name, ca.roots); err == nil {
				t.Errorf("%s is not allowed, yet the handshake succeeded with a certificate for %v", name, leaf.DNSNames)
			}
			o.wantLog(t, regexp.QuoteMeta(`certificate is not allowed for server name `+name+`: decision func: \"`+name+`\" is not allowed by tls.acme.on_demand`))
		}
		// Refused names never reached the CA: storage holds no trace of them.
		filepath.WalkDir(filepath.Join(o.dir, "certs"), func(p string, d fs.DirEntry, err error) error {
			for _, name := range refused {
				if base := filepath.Base(p); base == name || strings.HasPrefix(base, name+".") {
					t.Errorf("storage has %s", p)
				}
			}
			return nil
		})
	})

	t.Run("static files", func(t *testing.T) {
		sdir := filepath.Join(dir, "static")
		roots := writeStaticCert(t, sdir, "static.orderly.test")
		o := startTLSOrderly(t, sdir, legacy, backend.URL, freePort(t), freePort(t), `
  cert_file = "static.pem"
  key_file  = "static.key"`)
		defer o.stop()
		leaf, err := handshake(o.secure, "static.orderly.test", roots)
		if err != nil {
			t.Fatalf("static certificate: %v\n%s", err, o.log())
		}
		checkHTTPS(t, backend, o.secure, "static.orderly.test", roots, leaf)
	})

	t.Run("replicas share storage", func(t *testing.T) {
		shared := filepath.Join(dir, "shared-certs")
		// Replica b listens where Pebble validates, but manages nothing of
		// its own: it can answer a's challenge only from the storage.
		b := startTLSOrderly(t, filepath.Join(dir, "replica-b"), legacy, backend.URL, plain, secure, fmt.Sprintf(`
  acme {
    directory  = %q
    storage    = %q
    ca_root    = %q
    challenges = ["http-01"]
    on_demand {
      allow = ["shared.orderly.test"]
    }
  }`, ca.directory, shared, ca.listenerPEM))
		defer b.stop()
		a := startTLSOrderly(t, filepath.Join(dir, "replica-a"), legacy, backend.URL, freePort(t), freePort(t), fmt.Sprintf(`
  acme {
    directory  = %q
    storage    = %q
    hosts      = ["shared.orderly.test"]
    ca_root    = %q
    challenges = ["http-01"]
  }`, ca.directory, shared, ca.listenerPEM))
		defer a.stop()
		leafA := waitCertificate(t, a, a.secure, "shared.orderly.test", ca.roots)
		b.wantLog(t, `"msg":"served key authentication","identifier":"shared.orderly.test","challenge":"http-01","remote":"[^"]*","distributed":true`)
		a.wantNoLog(t, `"msg":"served key authentication"`)
		leafB, err := handshake(b.secure, "shared.orderly.test", ca.roots)
		if err != nil {
			t.Fatalf("replica b: %v\n%s", err, b.log())
		}
		if leafB.SerialNumber.Cmp(leafA.SerialNumber) != 0 {
			t.Errorf("replica b serves serial %x, a %x: b obtained its own instead of loading a's from storage", leafB.SerialNumber, leafA.SerialNumber)
		}
		b.wantNoLog(t, `"msg":"obtaining new certificate"`)
	})

	t.Run("renewal", func(t *testing.T) {
		// A second Pebble on the same validation ports, issuing
		// certificates valid for 8 seconds.
		short := startPebble(t, pebbleBin, filepath.Join(dir, "pebble-short"), resolver.addr, plain, secure, 8*time.Second)
		o := startTLSOrderly(t, filepath.Join(dir, "renew"), legacy, backend.URL, plain, secure, fmt.Sprintf(`
  acme {
    directory            = %q
    storage              = "certs"
    hosts                = ["renew.orderly.test"]
    ca_root              = %q
    renew_interval       = "1s"
    renewal_window_ratio = 0.5
  }`, short.directory, short.listenerPEM))
		defer o.stop()
		first := waitCertificate(t, o, secure, "renew.orderly.test", short.roots)
		if life := first.NotAfter.Sub(first.NotBefore); life > time.Minute {
			t.Fatalf("Pebble issued a certificate valid for %v, want seconds", life)
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			leaf, err := handshake(secure, "renew.orderly.test", short.roots)
			if err == nil && leaf.SerialNumber.Cmp(first.SerialNumber) != 0 {
				if !leaf.NotBefore.After(first.NotBefore) && !leaf.NotAfter.After(first.NotAfter) {
					t.Errorf("new serial %x is not a later certificate: %v..%v after %v..%v", leaf.SerialNumber, leaf.NotBefore, leaf.NotAfter, first.NotBefore, first.NotAfter)
				}
				checkHTTPS(t, backend, secure, "renew.orderly.test", short.roots, leaf)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("still serving serial %x (%v) after 15 s, valid until %v\n%s", first.SerialNumber, err, first.NotAfter, o.log())
			}
			time.Sleep(200 * time.Millisecond)
		}
		o.wantLog(t, `"msg":"certificate expires soon; queuing for renewal","identifiers":\["renew.orderly.test"\]`)
	})

	if asked := resolver.asked(); len(asked) == 0 {
		t.Error("Pebble never asked the test's DNS server: it validated nothing")
	}
}

// anyNameDNS answers every A question with 127.0.0.1, and nothing else.
type anyNameDNS struct {
	addr string
	mu   sync.Mutex
	seen []string
}

func startAnyNameDNS(t *testing.T) *anyNameDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &anyNameDNS{addr: pc.LocalAddr().String()}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		for _, q := range r.Question {
			s.mu.Lock()
			s.seen = append(s.seen, q.Name+" "+dns.TypeToString[q.Qtype])
			s.mu.Unlock()
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET},
					A:   net.IPv4(127, 0, 0, 1),
				})
			}
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return s
}

func (s *anyNameDNS) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// pebbleCA is one Pebble process.
type pebbleCA struct {
	directory   string         // ACME directory URL
	listenerPEM string         // certificate of Pebble's own HTTPS listeners (orderly's ca_root)
	roots       *x509.CertPool // Pebble's issuing root, from its management API
}

// startPebble runs Pebble in dir on free ports of 127.0.0.1, resolving
// names with the DNS server at resolver and validating HTTP-01 on
// httpAddr's port and TLS-ALPN-01 on tlsAddr's; validity, when not zero,
// is the lifetime of the certificates it issues. It is killed, by PID,
// when the test ends.
func startPebble(t *testing.T, bin, dir, resolver, httpAddr, tlsAddr string, validity time.Duration) *pebbleCA {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Debian's package ships no test certificate: make one for the
	// listeners (the ACME API and the management API).
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pebble listener"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	certPEM, keyPEM := issue(t, tmpl, tmpl, key, key)
	p := &pebbleCA{listenerPEM: filepath.Join(dir, "listener.pem")}
	writeFile(t, p.listenerPEM, certPEM)
	writeFile(t, filepath.Join(dir, "listener.key"), keyPEM)
	api, mgmt := freePort(t), freePort(t)
	conf := map[string]any{
		"listenAddress":           api,
		"managementListenAddress": mgmt,
		"certificate":             p.listenerPEM,
		"privateKey":              filepath.Join(dir, "listener.key"),
		"httpPort":                atoi(t, port(httpAddr)),
		"tlsPort":                 atoi(t, port(tlsAddr)),
		"ocspResponderURL":        "",
	}
	if validity > 0 {
		conf["certificateValidityPeriod"] = int(validity / time.Second)
	}
	js, _ := json.Marshal(map[string]any{"pebble": conf})
	writeFile(t, filepath.Join(dir, "pebble.json"), js)
	out, err := os.Create(filepath.Join(dir, "pebble.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", filepath.Join(dir, "pebble.json"), "-dnsserver", resolver, "-strict=false")
	cmd.Dir = dir
	// No random sleep before validating, no nonce rejected at random, and
	// every order validated afresh (no reuse of earlier authorizations).
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	trust := x509.NewCertPool()
	trust.AppendCertsFromPEM(certPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: trust}}}
	p.directory = "https://" + api + "/dir"
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get(p.directory)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("pebble exited:\n%s", readLog(filepath.Join(dir, "pebble.log")))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble does not answer at %s (%v):\n%s", p.directory, err, readLog(filepath.Join(dir, "pebble.log")))
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := client.Get("https://" + mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.roots = x509.NewCertPool()
	if !p.roots.AppendCertsFromPEM(root) {
		t.Fatalf("pebble /roots/0: no certificate in %q", root)
	}
	return p
}

// issue signs tmpl with parent's key and returns both in PEM.
func issue(t *testing.T, tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) (certPEM, keyPEM []byte) {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// writeStaticCert writes static.pem (a leaf for name and the CA that
// signed it) and static.key into dir, and returns a pool with the CA.
func writeStaticCert(t *testing.T, dir, name string) *x509.CertPool {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "orderly test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	caPEM, _ := issue(t, caTmpl, caTmpl, caKey, caKey)
	blk, _ := pem.Decode(caPEM)
	caCert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafPEM, keyPEM := issue(t, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, caCert, key, caKey)
	writeFile(t, filepath.Join(dir, "static.pem"), append(leafPEM, caPEM...))
	writeFile(t, filepath.Join(dir, "static.key"), keyPEM)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return pool
}

// recordingBackend is the 2.4 backend stand-in: it answers 200 with the
// path and remembers the requests it saw.
type recordingBackend struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newRecordingBackend(t *testing.T) *recordingBackend {
	b := &recordingBackend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.reqs = append(b.reqs, r.Clone(r.Context()))
		b.mu.Unlock()
		fmt.Fprintf(w, "backend: %s %s", r.Host, r.URL.RequestURI())
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *recordingBackend) last() *http.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.reqs) == 0 {
		return &http.Request{Header: http.Header{}}
	}
	return b.reqs[len(b.reqs)-1]
}

// writeTLSLegacy writes a legacy configuration that allows everything,
// with one virtual host (vhost.orderly.test, alias alias.orderly.test),
// and returns the legacy file and document root.
func writeTLSLegacy(t *testing.T, dir string) [2]string {
	t.Helper()
	docroot := filepath.Join(dir, "docroot")
	writeFile(t, filepath.Join(docroot, "index.html"), []byte("home\n"))
	conf := filepath.Join(dir, "legacy.conf")
	writeFile(t, conf, []byte(fmt.Sprintf(`<Directory %q>
    Order allow,deny
    Allow from all
</Directory>
<VirtualHost *:80>
    ServerName vhost.orderly.test
    ServerAlias alias.orderly.test
</VirtualHost>
`, docroot)))
	return [2]string{conf, docroot}
}

// tlsOrderly is an orderly binary serving with a tls block.
type tlsOrderly struct {
	dir           string
	plain, secure string
	out           string
	stop          func()
}

// startTLSOrderly runs orderly in dir with listen = plain and a tls block
// on secure holding body, and waits until both listen.
func startTLSOrderly(t *testing.T, dir string, legacy [2]string, backend, plain, secure, body string) *tlsOrderly {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	o := &tlsOrderly{dir: dir, plain: plain, secure: secure, out: filepath.Join(dir, "orderly.out")}
	conf := fmt.Sprintf(`listen = %q
backend "httpd" {
  url = %q
}
legacy {
  files         = [%q]
  document_root = %q
  semantics     = "2.4-compat"
}
error_log = "error.log"
tls {
  listen = %q%s
}
`, plain, backend, legacy[0], legacy[1], secure, body)
	writeFile(t, filepath.Join(dir, "orderly.hcl"), []byte(conf))
	out, err := os.Create(o.out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "serve", "-config", filepath.Join(dir, "orderly.hcl"))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); out.Close() }()
	var once sync.Once
	o.stop = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Errorf("orderly (pid %d) did not stop on SIGTERM", cmd.Process.Pid)
			}
		})
	}
	t.Cleanup(o.stop)
	deadline := time.Now().Add(10 * time.Second)
	for !listening(plain, secure) {
		select {
		case err := <-exited:
			t.Fatalf("orderly exited before serving (%v):\n%s", err, o.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("orderly does not listen on %s and %s:\n%s", plain, secure, o.log())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return o
}

func (o *tlsOrderly) log() string { return readLog(o.out) }

// wantLog fails the test unless orderly's log matches the regexp within
// 5 s (a server writes some lines after the client has its answer).
func (o *tlsOrderly) wantLog(t *testing.T, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	if log := waitLog(o.log, rx.MatchString); !rx.MatchString(log) {
		t.Errorf("orderly's log has no match for %s:\n%s", re, log)
	}
}

func (o *tlsOrderly) wantNoLog(t *testing.T, re string) {
	t.Helper()
	if m := regexp.MustCompile(re).FindString(o.log()); m != "" {
		t.Errorf("orderly's log has %s", m)
	}
}

// handshake connects to addr with server name name, verifies the chain
// against roots, and returns the leaf.
func handshake(addr, name string, roots *x509.CertPool) (*x509.Certificate, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{ServerName: name, RootCAs: roots})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0], nil
}

// waitCertificate waits until orderly serves a certificate for name that
// verifies against roots, obtained in the background.
func waitCertificate(t *testing.T, o *tlsOrderly, addr, name string, roots *x509.CertPool) *x509.Certificate {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		leaf, err := handshake(addr, name, roots)
		if err == nil {
			return leaf
		}
		if time.Now().After(deadline) {
			t.Fatalf("no certificate for %s after 20 s: %v\n%s", name, err, o.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkHTTPS sends a request for name to orderly's HTTPS listener at addr
// and checks that it went over HTTP/2, with leaf as the certificate (its
// chain verifying against roots), and that the backend answered it and
// saw it as HTTPS.
func checkHTTPS(t *testing.T, b *recordingBackend, addr, name string, roots *x509.CertPool, leaf *x509.Certificate) {
	t.Helper()
	tr := &http.Transport{
		Proxy:             nil,
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		},
	}
	defer tr.CloseIdleConnections()
	url := "https://" + name + ":" + port(addr) + "/index.html?q=1"
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("GET %s: %s, want HTTP/2", url, resp.Proto)
	}
	if want := "backend: " + name + ":" + port(addr) + " /index.html?q=1"; resp.StatusCode != http.StatusOK || string(body) != want {
		t.Errorf("GET %s: %d %q, want 200 %q", url, resp.StatusCode, body, want)
	}
	if got := resp.TLS.PeerCertificates[0]; !bytes.Equal(got.Raw, leaf.Raw) {
		t.Errorf("GET %s: served serial %x, want %x", url, got.SerialNumber, leaf.SerialNumber)
	}
	if len(resp.TLS.VerifiedChains) == 0 || len(resp.TLS.VerifiedChains[0]) < 2 {
		t.Errorf("GET %s: no verified chain to the root", url)
	}
	if got := b.last().Header.Get("X-Forwarded-Proto"); got != "https" {
		t.Errorf("the backend saw X-Forwarded-Proto %q, want https", got)
	}
}

// plainGet sends GET target with Host host to orderly's plain listener,
// without following redirects.
func plainGet(t *testing.T, addr, host, target string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+addr+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	c := &http.Client{
		Transport:     &http.Transport{Proxy: nil},
		Timeout:       5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readLog(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

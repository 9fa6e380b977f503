package walk

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// mod_ssl at request time (modules/ssl/ssl_engine_kernel.c
// ssl_hook_Access, ssl_hook_UserCheck, ssl_callback_SSLVerify;
// ssl_engine_vars.c ssl_var_lookup; 2.2.34 and the 2.4.x branch): what
// SSLRequireSSL, SSLVerifyClient, SSLVerifyDepth, SSLCACertificateFile,
// SSLOptions and SSLUserName do with the TLS facts of one request, worked
// out here into the policy.SSL that Decide reads at Apache's hooks.
//
// Apache asks for a client certificate at the handshake when the server
// level says so, and by renegotiating (TLS 1.2; post-handshake
// authentication with TLS 1.3 in 2.4) when a directory asks for more
// than the connection has. orderly cannot renegotiate: the handshake of a
// host where any directory asks for a certificate asks for one
// (ClientAuth), and the request is decided on the certificate the client
// sent there, as a renegotiating Apache decides on the one it sends
// then: verified against the server's CA list and SSLVerifyDepth with
// the directory's SSLVerifyClient. Where Apache's renegotiation fails
// (no certificate, or one that does not verify), the connection breaks;
// orderly answers 403, which is what Apache 2.4 answers where it cannot
// renegotiate (HTTP/2, TLS 1.3 without post-handshake authentication).

// TLSInfo is what access control knows of the TLS under a request: from the
// connection when orderly terminates TLS, or from a trusted proxy's
// headers.
type TLSInfo struct {
	// On: the request came over TLS (HTTPS).
	On bool
	// Chain is the client's certificate chain as sent, leaf first; nil
	// without one. Verified, when set, are the chains crypto/tls
	// verified at the handshake against the host's CA list (ClientAuth
	// modes that verify).
	Chain    []*x509.Certificate
	Verified [][]*x509.Certificate

	// The verification of Chain for one (CA list, mode, depth), kept for
	// the request's subrequests.
	vKey   *sslState
	vNoCA  bool
	vDepth int
	vRes   verifyResult
}

// mode is how hostTLS picks virtual hosts for the request.
func (t *TLSInfo) mode() int8 {
	if t.On {
		return tlsYes
	}
	return tlsNo
}

// The connection kinds of hostTLS.
const (
	tlsAny int8 = iota // not known: every host is a candidate
	tlsNo
	tlsYes
)

type verifyResult uint8

const (
	certNone     verifyResult = iota // no certificate
	certOK                           // verified: SSL_CLIENT_VERIFY SUCCESS
	certGenerous                     // optional_no_ca accepted an unverifiable one: GENEROUS
	certFailed                       // does not verify: Apache's handshake fails
)

// sslState is an engine's mod_ssl: the server configuration and its CA
// list, read when the engine is made.
type sslState struct {
	loaded   bool
	legacy22 bool
	server   *translate.SSLServer
	pool     *x509.CertPool // the trust anchors (SSLCACertificateFile/Path); never nil
	err      error          // reading them failed
	// anyPeer: a section of the configuration asks for a client
	// certificate (SSLVerifyClient optional, optional_no_ca, require);
	// htPeer: an .htaccess file's did, for a request whose handshake had
	// not asked (ClientAuth asks from then on).
	anyPeer bool
	htPeer  atomic.Bool
	// engine: SSLEngine on (a virtual host chosen for TLS requests).
	engine bool
}

// newSSLState reads the engine's mod_ssl configuration and its CA list
// through fsys (legacy.path_map).
func newSSLState(cfg *translate.Config, fsys FS) *sslState {
	s := &sslState{loaded: cfg.SSLLoaded(), legacy22: cfg.Semantics == translate.Legacy22, server: cfg.SSL, pool: x509.NewCertPool()}
	if !s.loaded {
		return s
	}
	if cfg.SSL != nil {
		s.engine = cfg.SSL.Engine == translate.SSLEngineOn
		s.err = loadCAs(s.pool, cfg.SSL.CAFile, cfg.SSL.CAPath, fsys)
	}
	peer := func(c *translate.DirConf) {
		if c != nil && c.SSL != nil && c.SSL.Verify.Peer() {
			s.anyPeer = true
		}
	}
	peer(cfg.Defaults)
	var walk func([]*translate.Section)
	walk = func(ss []*translate.Section) {
		for _, x := range ss {
			peer(x.Conf)
			walk(x.Conf.Files)
		}
	}
	walk(cfg.Dirs)
	walk(cfg.DirMatches)
	walk(cfg.Files)
	walk(cfg.Locations)
	return s
}

// hashName is how OpenSSL's hashed-directory lookup names a CA
// certificate in SSLCACertificatePath (c_rehash): HASH.N.
var hashName = regexp.MustCompile(`^[0-9a-f]{8}\.[0-9]+$`)

// loadCAs reads SSLCACertificateFile (PEM certificates) and the
// certificates of SSLCACertificatePath into pool. Apache refuses to start
// when the file or directory cannot be read.
func loadCAs(pool *x509.CertPool, file, dir string, fsys FS) error {
	add := func(name string, data []byte) error {
		n := 0
		for {
			var b *pem.Block
			b, data = pem.Decode(data)
			if b == nil {
				break
			}
			if b.Type != "CERTIFICATE" && b.Type != "TRUSTED CERTIFICATE" {
				continue
			}
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return fmt.Errorf("SSLCACertificate: %s: %v", name, err)
			}
			pool.AddCert(c)
			n++
		}
		if n == 0 {
			return fmt.Errorf("SSLCACertificate: %s holds no PEM certificate", name)
		}
		return nil
	}
	if file != "" {
		data, err := fsys.ReadFile(file)
		if err != nil || len(data) == 0 {
			return fmt.Errorf("SSLCACertificateFile: file '%s' does not exist or is empty", file)
		}
		if err := add(file, data); err != nil {
			return err
		}
	}
	if dir != "" {
		real := dir
		if pm, ok := fsys.(*PathMap); ok {
			real = pm.Map(dir)
		}
		ents, err := os.ReadDir(real)
		if err != nil {
			return fmt.Errorf("SSLCACertificatePath: directory '%s' does not exist", dir)
		}
		for _, e := range ents {
			if !hashName.MatchString(e.Name()) {
				continue // OpenSSL looks certificates up by their hash names only
			}
			data, err := fsys.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return fmt.Errorf("SSLCACertificatePath: %s: %v", e.Name(), err)
			}
			if err := add(filepath.Join(dir, e.Name()), data); err != nil {
				return err
			}
		}
	}
	return nil
}

// SSLError reports what kept the engine's mod_ssl configuration (a
// virtual host's included) from loading: a CA list Apache would not
// start with.
func (e *Engine) SSLError() error {
	var errs []error
	if e.ssl != nil && e.ssl.err != nil {
		errs = append(errs, e.ssl.err)
	}
	for _, h := range e.hosts {
		if h.e.ssl != nil && h.e.ssl.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", h.v.Pos, h.e.ssl.err))
		}
	}
	return errors.Join(errs...)
}

// mergedSSL is mod_ssl's per-directory configuration for sections, merged
// over the server's defaults walk by walk as mergeNow merges the others.
func mergedSSL(defaults *translate.DirConf, sections []*translate.Section) *translate.SSLDir {
	m := defaults.SSL
	for i := 0; i < len(sections); {
		phase := translate.WalkPhase(sections[i])
		w := sections[i].Conf.SSL
		j := i + 1
		for ; j < len(sections) && translate.WalkPhase(sections[j]) == phase; j++ {
			w = translate.MergeSSLDir(w, sections[j].Conf.SSL)
		}
		m = translate.MergeSSLDir(m, w)
		i = j
	}
	return m
}

// noSSLDir is mod_ssl's per-directory configuration where nothing set
// one (ssl_config_perdir_create).
var noSSLDir = translate.SSLDir{Depth: -1}

// sslRequest works out what mod_ssl's hooks do for a request (or, sub,
// a DirectoryIndex subrequest) whose merged configuration is m.
func (e *Engine) sslRequest(req *Request, m *merged, filename string, sub bool) policy.SSL {
	st := e.ssl
	if st == nil || !st.loaded {
		return policy.SSL{}
	}
	s := policy.SSL{Loaded: true, Subrequest: sub}
	d := m.ssl
	if d == nil {
		d = &noSSLDir // the server level's SSLVerifyClient still applies
	}
	opts := d.Options.Opts
	s.Strict = opts&translate.SSLStrictRequire != 0
	t := &req.TLSInfo
	if d.Required && !t.On {
		s.Deny, s.Forbidden, s.DenyRule = true, true, d.RequiredRule
		s.DenyLog = policy.LogLine{Module: "ssl", Code: "AH02219", Subject: filename}
		s.DenyWhy = "SSLRequireSSL, and the request did not come over TLS"
		return s
	}
	if !t.On {
		return s // no further check applies to a plain request
	}
	srv := translate.VerifyUnset
	depth := st.server.VerifyDepth()
	if st.server != nil {
		srv = st.server.Verify
	}
	var cert *x509.Certificate
	res := certNone
	if d.Verify.Peer() || srv.Peer() {
		// ssl_callback_SSLVerify: the directory's level if it has one.
		mode := d.Verify
		if mode == translate.VerifyUnset {
			mode = srv
		}
		if d.Depth >= 0 {
			depth = d.Depth
		}
		if d.Verify.Peer() && len(t.Chain) == 0 {
			// The handshake may not have asked (an .htaccess file's
			// SSLVerifyClient): from now on it does (ClientAuth).
			st.htPeer.Store(true)
		}
		res = e.verifyClient(t, mode == translate.VerifyOptionalNoCA, depth)
		rule := d.VerifyRule
		if d.Verify == translate.VerifyUnset && st.server != nil {
			rule = st.server.VerifyRule
		}
		switch {
		case res == certFailed:
			s.Deny, s.Final, s.DenyRule = true, true, rule
			s.DenyLog = policy.LogLine{Module: "ssl", Code: "AH02262"}
			s.DenyWhy = "SSLVerifyClient, and the client certificate does not verify against SSLCACertificateFile/Path within SSLVerifyDepth"
			return s
		case res == certNone && (d.Verify.Strict() || srv.Strict()):
			s.Deny, s.Final, s.DenyRule = true, true, rule
			s.DenyLog = policy.LogLine{Module: "ssl", Code: "AH02263"}
			s.DenyWhy = "SSLVerifyClient require, and the client sent no certificate"
			return s
		case res != certNone:
			cert = t.Chain[0]
		}
	}
	if opts&translate.SSLFakeBasicAuth == 0 && d.UserName != "" {
		v := e.sslVar(d.UserNameVar, cert, res, opts)
		switch {
		case v != "":
			s.User, s.UserRule = v, d.UserNameRule
		case !st.legacy22:
			s.UserLog = policy.LogLine{Module: "ssl", Level: "warn", Code: "AH02227", Subject: d.UserName}
		}
	}
	if opts&translate.SSLFakeBasicAuth != 0 && cert != nil {
		if dn, ok := dnOneline(cert.RawSubject, !st.legacy22); ok {
			s.Fake, s.FakeUser = true, dn
		}
	}
	return s
}

// verifyClient verifies the client's certificate chain against the CA
// list as OpenSSL does for mod_ssl (purpose "SSL client", trust anchors
// from SSLCACertificateFile/Path only), with SSLVerifyDepth: a chain
// whose root sits deeper than depth fails. Under optional_no_ca (noCA)
// an unknown issuer is accepted (ssl_verify_error_is_optional); an
// expired or otherwise invalid certificate is not.
func (e *Engine) verifyClient(t *TLSInfo, noCA bool, depth int) verifyResult {
	if len(t.Chain) == 0 {
		return certNone
	}
	if t.vKey == e.ssl && t.vNoCA == noCA && t.vDepth == depth {
		return t.vRes
	}
	res := certFailed
	chains := t.Verified
	var err error
	if chains == nil {
		chains, err = verifyChain(t.Chain, e.ssl.pool)
	}
	for _, c := range chains {
		if len(c)-1 <= depth {
			res = certOK
			break
		}
	}
	if res == certFailed && noCA && err != nil && len(t.Chain)-1 <= depth {
		var ua x509.UnknownAuthorityError
		if errors.As(err, &ua) {
			res = certGenerous
		}
	}
	t.vKey, t.vNoCA, t.vDepth, t.vRes = e.ssl, noCA, depth, res
	return res
}

// verifyChain verifies chain (leaf first) against the trust anchors.
func verifyChain(chain []*x509.Certificate, roots *x509.CertPool) ([][]*x509.Certificate, error) {
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	return chain[0].Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		CurrentTime:   time.Now(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// sslVar is ssl_var_lookup of an SSLUserName variable for the client
// certificate mod_ssl has (nil for none).
func (e *Engine) sslVar(v translate.SSLVar, cert *x509.Certificate, res verifyResult, opts translate.SSLOptionBits) string {
	if v.Kind == translate.SSLVarVerify {
		switch res {
		case certOK:
			return "SUCCESS"
		case certGenerous:
			return "GENEROUS"
		}
		return "NONE"
	}
	if cert == nil {
		return ""
	}
	name := cert.RawSubject
	if v.Issuer {
		name = cert.RawIssuer
	}
	switch v.Kind {
	case translate.SSLVarDN:
		if e.ssl.legacy22 || opts&translate.SSLLegacyDNFormat != 0 {
			s, _ := dnOneline(name, !e.ssl.legacy22)
			return s
		}
		s, _ := dnRFC2253(name)
		return s
	case translate.SSLVarDNAttr:
		s, _ := dnAttr(name, translate.SSLDNAttrOID(v.Attr), v.Index, e.ssl.legacy22)
		return s
	case translate.SSLVarSerial:
		return serialHex(cert.SerialNumber)
	case translate.SSLVarVersion:
		return strconv.Itoa(cert.Version)
	case translate.SSLVarSANEmail:
		if v.Index < len(cert.EmailAddresses) {
			return cert.EmailAddresses[v.Index]
		}
	case translate.SSLVarSANDNS:
		if v.Index < len(cert.DNSNames) {
			return cert.DNSNames[v.Index]
		}
	}
	return ""
}

// serialHex is i2a_ASN1_INTEGER: the magnitude's bytes in upper-case hex
// ("00" for zero), a minus sign before a negative one.
func serialHex(n *big.Int) string {
	if n == nil {
		return ""
	}
	b := n.Bytes()
	if len(b) == 0 {
		return "00"
	}
	s := strings.ToUpper(fmt.Sprintf("%x", b))
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// ClientAuth is what a TLS handshake for a host asks of the client.
type ClientAuth struct {
	Type tls.ClientAuthType
	// CAs verify the client's chain where Type says crypto/tls does.
	CAs *x509.CertPool
	// Verify, when set, is the host's further check of the chain
	// (tls.Config.VerifyPeerCertificate): SSLVerifyDepth, and for
	// optional_no_ca Apache's tolerance of an unknown issuer.
	Verify func(rawCerts [][]byte, chains [][]*x509.Certificate) error
}

// ClientAuth says what the handshake of a TLS connection for
// serverName (SNI; "" for none) asks of the client: what the server
// level's SSLVerifyClient asks, as Apache's handshake asks it (require:
// a certificate that verifies, or no connection; optional: one that
// verifies if any; optional_no_ca: any); where only directories ask,
// a certificate if the client has one, which is checked when a request
// reaches such a directory.
func (e *Engine) ClientAuth(serverName string) ClientAuth {
	h := e.hostTLS(serverName, tlsYes)
	st := h.ssl
	if st == nil || !st.loaded {
		return ClientAuth{Type: tls.NoClientCert}
	}
	srv := translate.VerifyUnset
	if st.server != nil {
		srv = st.server.Verify
	}
	depth := st.server.VerifyDepth()
	checkDepth := func(_ [][]byte, chains [][]*x509.Certificate) error {
		for _, c := range chains {
			if len(c)-1 <= depth {
				return nil
			}
		}
		if len(chains) == 0 {
			return nil // no certificate (optional)
		}
		return fmt.Errorf("client certificate chain longer than SSLVerifyDepth %d", depth)
	}
	switch srv {
	case translate.VerifyRequire:
		return ClientAuth{Type: tls.RequireAndVerifyClientCert, CAs: st.pool, Verify: checkDepth}
	case translate.VerifyOptional:
		return ClientAuth{Type: tls.VerifyClientCertIfGiven, CAs: st.pool, Verify: checkDepth}
	case translate.VerifyOptionalNoCA:
		return ClientAuth{Type: tls.RequestClientCert, Verify: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return nil
			}
			var chain []*x509.Certificate
			for _, r := range raw {
				c, err := x509.ParseCertificate(r)
				if err != nil {
					return err
				}
				chain = append(chain, c)
			}
			t := TLSInfo{Chain: chain}
			if h.verifyClient(&t, true, depth) == certFailed {
				return errors.New("client certificate does not verify (SSLVerifyClient optional_no_ca)")
			}
			return nil
		}}
	}
	if st.anyPeer || st.htPeer.Load() {
		return ClientAuth{Type: tls.RequestClientCert}
	}
	return ClientAuth{Type: tls.NoClientCert}
}

// hostFor is host for a request whose TLS is known: where a virtual host
// has SSLEngine on, a TLS request is served by one of those and a plain
// one by another, as on Apache, whose TLS and plain ports differ.
func (e *Engine) hostFor(req *Request) *Engine {
	if !e.sslHosts {
		return e.host(req.Host)
	}
	return e.hostTLS(req.Host, req.TLSInfo.mode())
}

// hostTLS is host (server/vhost.c) among the hosts that may serve a
// request of the kind t: those bound to the address (an exact IP first,
// else the wildcard ones), then by the Host header against ServerName
// and ServerAlias, else the first of them; with none, the main server.
func (e *Engine) hostTLS(hostHeader string, t int8) *Engine {
	if !e.sslHosts || t == tlsAny {
		return e.host(hostHeader)
	}
	return e.hostSets[t].host(e, hostHeader)
}

// sslVHosts reports whether a virtual host has SSLEngine on: then TLS
// requests are served by those hosts and plain ones by the others, as
// on Apache, where the ports of the two kinds differ.
func (e *Engine) sslVHosts() bool {
	for _, h := range e.hosts {
		if h.e.ssl != nil && h.e.ssl.engine {
			return true
		}
	}
	return false
}

// tlsCandidate reports whether h may serve a request of the kind t.
func (e *Engine) tlsCandidate(h hostEngine, t int8) bool {
	if t == tlsAny || !e.sslHosts {
		return true
	}
	return (h.e.ssl != nil && h.e.ssl.engine) == (t == tlsYes)
}

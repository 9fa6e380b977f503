package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"

	"github.com/orderly-proxy/orderly/translate/walk"
)

// The TLS facts of a request, for mod_ssl's directives (SSLRequireSSL,
// SSLVerifyClient, FakeBasicAuth, SSLUserName; translate/walk/ssl.go).
//
// Where orderly terminates TLS (the tls block), they are the
// connection's: TLS, and the client certificate the handshake asked for
// (ClientAuthFor). Behind a load balancer that terminates TLS, they are
// what it says, and only when client_ip.forwarded_tls is set and the
// peer is one of client_ip.trusted_proxies (a header from anyone else is
// ignored, as X-Forwarded-For is):
//
//   - X-Forwarded-Proto: a single field whose value is "https" (any
//     case) says the client came over TLS; anything else (several
//     fields, a list) says it did not, so SSLRequireSSL refuses.
//   - X-Forwarded-Client-Cert, in Envoy's form: elements separated by
//     ",", each "Key=value" pairs separated by ";", values possibly
//     double-quoted; of the last element (the one the nearest proxy
//     added), Chain= (the whole chain), else Cert= (the leaf), as
//     URL-encoded PEM (spaces as %20, or as "+" in the query-component
//     form). Envoy writes it (forward_client_cert_details
//     SANITIZE_SET, set_current_client_cert_details cert and chain);
//     nginx writes it with
//     proxy_set_header X-Forwarded-Client-Cert "Cert=$ssl_client_escaped_cert".
//
// The certificate is verified here against the legacy server's
// SSLCACertificateFile/Path and SSLVerifyDepth, exactly as a certificate
// from orderly's own handshake: no "verified" flag of the proxy is
// believed. A header certificate proves nothing of its holder (it is
// public): the proxy must set or replace the header on every request,
// which is why forwarded_tls is off by default.

// tlsInfo is the TLS under r as access control needs it.
func (h *Handler) tlsInfo(r *http.Request) walk.TLSInfo {
	if cs := r.TLS; cs != nil {
		return walk.TLSInfo{On: true, Chain: cs.PeerCertificates, Verified: cs.VerifiedChains}
	}
	if !h.cfg.ForwardedTLS || !isTrusted(peerAddr(r), h.cfg.TrustedProxies) {
		return walk.TLSInfo{}
	}
	var t walk.TLSInfo
	if p := r.Header.Values("X-Forwarded-Proto"); len(p) == 1 && strings.EqualFold(strings.TrimSpace(p[0]), "https") {
		t.On = true
	}
	if t.On {
		t.Chain = forwardedCert(r.Header.Values("X-Forwarded-Client-Cert"))
	}
	return t
}

// forwardedCert reads the client certificate chain of the last element
// of X-Forwarded-Client-Cert; nil when there is none or it does not
// parse (the request is then decided as one without a certificate).
func forwardedCert(fields []string) []*x509.Certificate {
	if len(fields) == 0 {
		return nil
	}
	elems := splitQuoted(strings.Join(fields, ","), ',')
	last := strings.TrimSpace(elems[len(elems)-1])
	var cert, chain string
	for _, kv := range splitQuoted(last, ';') {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			continue
		}
		v = unquote(strings.TrimSpace(v))
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "cert":
			cert = v
		case "chain":
			chain = v
		}
	}
	if chain == "" {
		chain = cert
	}
	if chain == "" {
		return nil
	}
	data, err := url.PathUnescape(chain)
	if err != nil {
		return nil
	}
	if strings.Contains(data, "-----BEGIN+") {
		// Encoded as a query component: "+" stands for a space (and a
		// "+" of the base64 text is %2B).
		if data, err = url.QueryUnescape(chain); err != nil {
			return nil
		}
	}
	var out []*x509.Certificate
	rest := []byte(data)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil
		}
		out = append(out, c)
	}
	return out
}

// splitQuoted splits s at sep outside double quotes (a backslash escapes
// the next character inside them).
func splitQuoted(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unquote removes the double quotes around a value and its backslash
// escapes.
func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	v = v[1 : len(v)-1]
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ClientAuthFor makes the HTTPS listener's handshakes ask for client
// certificates as the legacy configuration in force (engine, read at
// each handshake so that a reload applies) asks for them for the server
// name the client sends: the server level's SSLVerifyClient as Apache's
// handshake does, and a certificate if the client has one where only
// directories ask (walk.Engine.ClientAuth). The client sees the
// difference: Apache asks in a renegotiation when a request reaches such
// a directory, orderly at the handshake, for every connection to the
// host.
func ClientAuthFor(base *tls.Config, engine func() *walk.Engine) *tls.Config {
	c := base.Clone()
	prev := c.GetConfigForClient
	c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		from := c
		if prev != nil {
			p, err := prev(hello)
			if err != nil {
				return nil, err
			}
			if p != nil {
				from = p
			}
		}
		e := engine()
		if e == nil {
			return nil, nil
		}
		ca := e.ClientAuth(hello.ServerName)
		if ca.Type == tls.NoClientCert {
			if from == c {
				return nil, nil
			}
			return from, nil
		}
		out := from.Clone()
		out.GetConfigForClient = nil
		out.ClientAuth, out.ClientCAs, out.VerifyPeerCertificate = ca.Type, ca.CAs, ca.Verify
		return out, nil
	}
	return c
}

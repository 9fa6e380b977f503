package proxy

// This file is the HTTPS side of orderly: certificates from files or from
// an ACME CA through certmagic, the TLS configuration of the HTTPS listener
// (HTTP/2, HTTP/1.1 and the TLS-ALPN-01 challenge protocol), the ACME
// HTTP-01 answers on the plain listener and its redirect to HTTPS.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/mholt/acmez/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TLSConfig is the runtime configuration of the HTTPS listener's
// certificates.
type TLSConfig struct {
	// CertFile and KeyFile name a static certificate chain and its key
	// (PEM). They are read once, at start.
	CertFile, KeyFile string
	// ACME, when set, obtains and renews certificates from an ACME CA.
	ACME *ACMEConfig
	// Log receives certmagic's log as JSON lines (nil: discarded).
	Log io.Writer
}

// ACMEConfig is the certificate management of an ACME CA.
type ACMEConfig struct {
	// Directory is the CA's directory URL.
	Directory string
	// Email is the account's contact address ("" for none).
	Email string
	// Storage holds the account, the certificates and keys, the locks and
	// the challenge tokens. Instances that share one Storage form a
	// cluster: one obtains or renews a name while the others wait on its
	// lock and load the result, and any of them answers a challenge
	// another started.
	Storage certmagic.Storage
	// Roots, when set, are the roots trusted for the CA's own HTTPS
	// (system roots otherwise).
	Roots *x509.CertPool
	// Hosts are obtained at start and renewed in the background.
	Hosts []string
	// HTTP01 and TLSALPN01 enable the challenge types.
	HTTP01, TLSALPN01 bool
	// HTTPAddr and TLSAddr are orderly's plain and HTTPS listeners, which
	// answer the challenges (HTTPChallenges and the TLS configuration);
	// certmagic is told so, and never binds ports 80 and 443 itself.
	HTTPAddr, TLSAddr string
	// OnDemand, when set, decides during a TLS handshake whether a
	// certificate may be obtained for a name that has none yet: nil
	// allows it, an error refuses the handshake.
	OnDemand func(ctx context.Context, name string) error
	// RenewInterval is how often certificates are checked for renewal
	// (certmagic's default, 10 minutes, when 0).
	RenewInterval time.Duration
	// RenewalWindowRatio is the part of a certificate's lifetime, at its
	// end, in which it is renewed (certmagic's default, 1/3, when 0).
	RenewalWindowRatio float64
}

// Certs serves the HTTPS listener's certificates.
type Certs struct {
	tlsConfig *tls.Config
	cache     *certmagic.Cache
	managed   *certmagic.Config // Hosts, and the static certificate
	onDemand  *certmagic.Config // nil without ACMEConfig.OnDemand
	issuer    *certmagic.ACMEIssuer
	hosts     []string
	ctx       context.Context // ended by Stop
	cancel    context.CancelFunc
}

// NewCerts loads the static certificate and prepares certificate
// management; nothing is obtained before [Certs.Manage].
func NewCerts(cfg TLSConfig) (*Certs, error) {
	c := &Certs{}
	if cfg.ACME == nil {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		c.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		c.tlsConfig.NextProtos = []string{"h2", "http/1.1"}
		c.tlsConfig.MinVersion = tls.VersionTLS12
		return c, nil
	}
	a := cfg.ACME
	if !a.HTTP01 && !a.TLSALPN01 {
		return nil, errors.New("no ACME challenge type enabled")
	}
	if a.Storage == nil {
		return nil, errors.New("no certificate storage")
	}
	zl := zapLogger(cfg.Log)
	c.hosts = a.Hosts
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert:   c.configFor,
		RenewCheckInterval: a.RenewInterval,
		Logger:             zl,
	})
	// Two configurations on one cache: with OnDemand set, certmagic's
	// ManageAsync obtains nothing (it only notes the names), so the hosts
	// are managed by a configuration without it.
	base := certmagic.Config{
		Storage:            a.Storage,
		RenewalWindowRatio: a.RenewalWindowRatio,
		Logger:             zl,
	}
	c.managed = certmagic.New(c.cache, base)
	c.issuer = newIssuer(c.managed, a, zl)
	c.managed.Issuers = []certmagic.Issuer{c.issuer}
	if a.OnDemand != nil {
		od := base
		od.OnDemand = &certmagic.OnDemandConfig{DecisionFunc: a.OnDemand}
		c.onDemand = certmagic.New(c.cache, od)
		c.onDemand.Issuers = []certmagic.Issuer{newIssuer(c.onDemand, a, zl)}
	}
	serving := c.managed
	if c.onDemand != nil {
		serving = c.onDemand
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err == nil {
			_, err = c.managed.CacheUnmanagedTLSCertificate(c.ctx, cert, []string{staticTag})
		}
		if err != nil {
			c.Stop()
			return nil, err
		}
		if names := cert.Leaf.DNSNames; len(names) > 0 {
			c.setDefaultName(names[0])
		}
	} else if len(a.Hosts) > 0 {
		c.setDefaultName(a.Hosts[0])
	}
	c.tlsConfig = serving.TLSConfig()
	// The server's order is the preference; acme-tls/1 must stay for
	// TLS-ALPN-01 (certmagic answers it in GetCertificate).
	c.tlsConfig.NextProtos = []string{"h2", "http/1.1", acmez.ACMETLS1Protocol}
	c.tlsConfig.MinVersion = tls.VersionTLS12
	return c, nil
}

// setDefaultName is the certificate served to clients that send no server
// name (SNI), for example those that connect by IP address.
func (c *Certs) setDefaultName(name string) {
	c.managed.DefaultServerName = name
	if c.onDemand != nil {
		c.onDemand.DefaultServerName = name
	}
}

func newIssuer(cfg *certmagic.Config, a *ACMEConfig, zl *zap.Logger) *certmagic.ACMEIssuer {
	host, httpPort := splitPort(a.HTTPAddr)
	_, tlsPort := splitPort(a.TLSAddr)
	return certmagic.NewACMEIssuer(cfg, certmagic.ACMEIssuer{
		CA:                      a.Directory,
		Email:                   a.Email,
		Agreed:                  true,
		TrustedRoots:            a.Roots,
		DisableHTTPChallenge:    !a.HTTP01,
		DisableTLSALPNChallenge: !a.TLSALPN01,
		// certmagic binds these only when nothing listens there; orderly
		// does, and answers from the same state.
		ListenHost:     host,
		AltHTTPPort:    httpPort,
		AltTLSALPNPort: tlsPort,
		Logger:         zl,
	})
}

func splitPort(addr string) (string, int) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0
	}
	n, _ := strconv.Atoi(port)
	return host, n
}

// staticTag marks the static certificate in certmagic's cache.
const staticTag = "orderly-static"

// configFor is the cache's GetConfigForCert: certificates for Hosts (and
// the static one) belong to the managed configuration, renewed by the
// background maintenance; those obtained on demand to the on-demand one,
// renewed during handshakes once their decision still allows them.
func (c *Certs) configFor(cert certmagic.Certificate) (*certmagic.Config, error) {
	if c.onDemand == nil || cert.HasTag(staticTag) {
		return c.managed, nil
	}
	for _, n := range cert.Names {
		if slices.Contains(c.hosts, n) {
			return c.managed, nil
		}
	}
	return c.onDemand, nil
}

// TLSConfig is the HTTPS listener's configuration: certificates by server
// name, ALPN h2, http/1.1 (and acme-tls/1 with ACME).
func (c *Certs) TLSConfig() *tls.Config { return c.tlsConfig.Clone() }

// Manage starts obtaining the hosts' certificates (those in storage are
// loaded) and keeps them renewed in the background until Stop. It
// returns at once; a failure to obtain is logged and retried with backoff.
// The listeners that answer challenges must be serving.
func (c *Certs) Manage() error {
	if c.managed == nil || len(c.hosts) == 0 {
		return nil
	}
	return c.managed.ManageAsync(c.ctx, c.hosts)
}

// HTTPChallenges answers ACME HTTP-01 challenges, those this instance
// started and, from storage, those of other instances sharing it; other
// requests go to next.
func (c *Certs) HTTPChallenges(next http.Handler) http.Handler {
	if c.issuer == nil {
		return next
	}
	return c.issuer.HTTPChallengeHandler(next)
}

// Stop stops renewals and pending obtains.
func (c *Certs) Stop() {
	if c.cache != nil {
		c.cancel()
		c.cache.Stop()
	}
}

// RedirectHTTPS answers every request with 308 Permanent Redirect to the
// same host and request URI over HTTPS, on port (omitted when 443).
func RedirectHTTPS(port string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if host == "" {
			http.Error(w, "400 Bad Request: no Host", http.StatusBadRequest)
			return
		}
		if port != "443" {
			host = net.JoinHostPort(host, port)
		} else if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}

// AllowNames is an on-demand decision: a name may have a certificate when
// it is one of names, or one label followed by the suffix of a "*.suffix"
// entry. more, when set, is asked at each decision for further entries
// (the legacy virtual hosts' ServerName and ServerAlias, so that a reload
// applies). Other patterns ("www?.example.com", "*") allow nothing: they
// match more names than should be issued for.
func AllowNames(names []string, more func() []string) func(context.Context, string) error {
	allow := make(map[string]bool, len(names))
	for _, n := range names {
		allow[strings.ToLower(n)] = true
	}
	return func(_ context.Context, name string) error {
		name = strings.ToLower(strings.TrimSuffix(name, "."))
		if name != "" && !strings.ContainsAny(name, "*?[") {
			if matchName(allow, name) {
				return nil
			}
			if more != nil {
				for _, p := range more() {
					if p = strings.ToLower(p); p == name || matchWildcard(p, name) {
						return nil
					}
				}
			}
		}
		return fmt.Errorf("%q is not allowed by tls.acme.on_demand", name)
	}
}

// matchName reports whether name is in allow, exactly or under one of its
// "*.suffix" entries.
func matchName(allow map[string]bool, name string) bool {
	if allow[name] {
		return true
	}
	label, rest, ok := strings.Cut(name, ".")
	return ok && label != "" && allow["*."+rest]
}

// matchWildcard reports whether name is one label followed by the suffix
// of pattern, which must be "*.suffix".
func matchWildcard(pattern, name string) bool {
	suffix, ok := strings.CutPrefix(pattern, "*.")
	if !ok || strings.ContainsAny(suffix, "*?[") {
		return false
	}
	label, rest, ok := strings.Cut(name, ".")
	return ok && label != "" && rest == suffix
}

// zapLogger logs to w as JSON lines with the keys of orderly's own slog
// JSON log (time, level, msg), so that both read as one log.
func zapLogger(w io.Writer) *zap.Logger {
	if w == nil {
		return zap.NewNop()
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey, enc.MessageKey, enc.NameKey = "time", "msg", "logger"
	enc.EncodeTime = zapcore.RFC3339NanoTimeEncoder
	enc.EncodeLevel = zapcore.CapitalLevelEncoder
	enc.EncodeDuration = zapcore.StringDurationEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(zapcore.AddSync(w)), zapcore.InfoLevel)
	return zap.New(core).Named("tls")
}

package main

// The tls block: its HCL, its validation into tlsRuntime, and the HTTPS
// listener it starts beside the plain one (docs/tls.md).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/hashicorp/hcl/v2"

	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate"
)

type tlsBlock struct {
	Listen       string     `hcl:"listen"`
	CertFile     *string    `hcl:"cert_file,optional"`
	KeyFile      *string    `hcl:"key_file,optional"`
	RedirectHTTP *bool      `hcl:"redirect_http,optional"`
	ACME         *acmeBlock `hcl:"acme,block"`

	DefRange    hcl.Range `hcl:",def_range"`
	ListenRange hcl.Range `hcl:"listen,attr_range"`
	CertRange   hcl.Range `hcl:"cert_file,attr_range"`
	KeyRange    hcl.Range `hcl:"key_file,attr_range"`
}

type acmeBlock struct {
	Directory     *string        `hcl:"directory,optional"`
	Email         *string        `hcl:"email,optional"`
	Storage       string         `hcl:"storage"`
	Hosts         []string       `hcl:"hosts,optional"`
	CARoot        *string        `hcl:"ca_root,optional"`
	Challenges    []string       `hcl:"challenges,optional"`
	RenewInterval *string        `hcl:"renew_interval,optional"`
	RenewalRatio  *float64       `hcl:"renewal_window_ratio,optional"`
	OnDemand      *onDemandBlock `hcl:"on_demand,block"`

	DefRange        hcl.Range `hcl:",def_range"`
	DirectoryRange  hcl.Range `hcl:"directory,attr_range"`
	EmailRange      hcl.Range `hcl:"email,attr_range"`
	HostsRange      hcl.Range `hcl:"hosts,attr_range"`
	CARootRange     hcl.Range `hcl:"ca_root,attr_range"`
	ChallengesRange hcl.Range `hcl:"challenges,attr_range"`
	IntervalRange   hcl.Range `hcl:"renew_interval,attr_range"`
	RatioRange      hcl.Range `hcl:"renewal_window_ratio,attr_range"`
}

type onDemandBlock struct {
	Allow  []string `hcl:"allow,optional"`
	VHosts *bool    `hcl:"vhosts,optional"`

	DefRange   hcl.Range `hcl:",def_range"`
	AllowRange hcl.Range `hcl:"allow,attr_range"`
}

// tlsRuntime is the validated tls block. It holds values only (the CA
// root as PEM), so a reload can tell whether it changed.
type tlsRuntime struct {
	Listen       string
	CertFile     string
	KeyFile      string
	RedirectHTTP bool
	ACME         *acmeRuntime
}

type acmeRuntime struct {
	Directory          string
	Email              string
	Storage            string
	Hosts              []string
	CARoot             []byte // PEM, nil for the system roots only
	HTTP01, TLSALPN01  bool
	OnDemand           bool
	Allow              []string
	VHosts             bool
	RenewInterval      time.Duration
	RenewalWindowRatio float64
}

// The challenge types orderly answers (dns-01 needs a DNS provider).
const (
	challengeHTTP01    = "http-01"
	challengeTLSALPN01 = "tls-alpn-01"
)

// buildTLS validates the tls block into rc.TLS.
func (fc *fileConfig) buildTLS(rc *runtimeConfig, rel func(string) string) hcl.Diagnostics {
	b := fc.TLS
	if b == nil {
		return nil
	}
	var diags hcl.Diagnostics
	t := &tlsRuntime{Listen: b.Listen}
	if _, _, err := net.SplitHostPort(b.Listen); err != nil {
		diags = append(diags, diag("Invalid listen address", fmt.Sprintf("%q is not host:port.", b.Listen), b.ListenRange))
	} else if b.Listen == fc.Listen {
		diags = append(diags, diag("Invalid listen address", fmt.Sprintf("tls.listen %q is the plain listener's address too.", b.Listen), b.ListenRange))
	}
	if b.RedirectHTTP != nil {
		t.RedirectHTTP = *b.RedirectHTTP
	}
	switch {
	case b.CertFile != nil && b.KeyFile == nil:
		diags = append(diags, diag("Missing key_file", "cert_file needs key_file, the certificate's private key (PEM).", b.CertRange))
	case b.KeyFile != nil && b.CertFile == nil:
		diags = append(diags, diag("Missing cert_file", "key_file needs cert_file, the certificate chain (PEM).", b.KeyRange))
	case b.CertFile != nil:
		t.CertFile, t.KeyFile = rel(*b.CertFile), rel(*b.KeyFile)
		if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
			diags = append(diags, diag("Invalid certificate", fmt.Sprintf("%s, %s: %v.", t.CertFile, t.KeyFile, err), b.CertRange))
		}
	case b.ACME == nil:
		diags = append(diags, diag("No certificate", "The tls block needs cert_file and key_file, or an acme block, or both.", b.DefRange))
	}
	if b.ACME != nil {
		t.ACME = buildACME(b.ACME, rel, &diags)
	}
	rc.TLS = t
	return diags
}

func buildACME(a *acmeBlock, rel func(string) string, diags *hcl.Diagnostics) *acmeRuntime {
	add := func(summary, detail string, r hcl.Range) { *diags = append(*diags, diag(summary, detail, r)) }
	r := &acmeRuntime{Directory: certmagic.LetsEncryptProductionCA, Storage: rel(a.Storage)}
	if a.Directory != nil {
		r.Directory = *a.Directory
		if u, err := url.Parse(r.Directory); err != nil || u.Scheme != "https" || u.Host == "" {
			add("Invalid ACME directory", fmt.Sprintf("%q is not an https:// URL (ACME servers are reached over HTTPS).", r.Directory), a.DirectoryRange)
		}
	}
	if a.Email != nil {
		r.Email = *a.Email
		if addr, err := mail.ParseAddress(r.Email); err != nil || addr.Address != r.Email {
			add("Invalid email", fmt.Sprintf("%q is not an email address such as ops@example.com.", r.Email), a.EmailRange)
		}
	}
	if a.Storage == "" {
		add("Invalid storage", "storage must name a directory for the ACME account, certificates and keys.", a.DefRange)
	}
	for _, h := range a.Hosts {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		switch {
		case strings.HasPrefix(h, "*."):
			add("Invalid host", fmt.Sprintf("%q: a wildcard certificate needs the DNS-01 challenge, which orderly does not offer; allow the names with on_demand instead.", h), a.HostsRange)
		case !validDNSName(h) && !validIP(h):
			add("Invalid host", fmt.Sprintf("%q is not a DNS name or IP address.", h), a.HostsRange)
		}
		r.Hosts = append(r.Hosts, h)
	}
	if a.CARoot != nil {
		pem, err := os.ReadFile(rel(*a.CARoot))
		if err == nil && !x509.NewCertPool().AppendCertsFromPEM(pem) {
			err = errors.New("no PEM certificate in it")
		}
		if err != nil {
			add("Invalid ca_root", err.Error()+".", a.CARootRange)
		}
		r.CARoot = pem
	}
	if a.Challenges == nil {
		r.HTTP01, r.TLSALPN01 = true, true
	} else if len(a.Challenges) == 0 {
		add("No challenge", fmt.Sprintf("challenges must name at least one of %q and %q.", challengeHTTP01, challengeTLSALPN01), a.ChallengesRange)
	}
	for _, c := range a.Challenges {
		switch c {
		case challengeHTTP01:
			r.HTTP01 = true
		case challengeTLSALPN01:
			r.TLSALPN01 = true
		default:
			add("Unknown challenge", fmt.Sprintf("challenge %q: want %q (answered on listen) or %q (answered on tls.listen).", c, challengeHTTP01, challengeTLSALPN01), a.ChallengesRange)
		}
	}
	if a.RenewInterval != nil {
		d, err := time.ParseDuration(*a.RenewInterval)
		if err != nil || d <= 0 {
			add("Invalid renew_interval", fmt.Sprintf("%q is not a positive duration such as \"10m\".", *a.RenewInterval), a.IntervalRange)
		}
		r.RenewInterval = d
	}
	if a.RenewalRatio != nil {
		r.RenewalWindowRatio = *a.RenewalRatio
		if r.RenewalWindowRatio <= 0 || r.RenewalWindowRatio >= 1 {
			add("Invalid renewal_window_ratio", fmt.Sprintf("%v: want the part of a certificate's lifetime, at its end, in which it is renewed: more than 0 and less than 1 (default 1/3).", r.RenewalWindowRatio), a.RatioRange)
		}
	}
	if od := a.OnDemand; od != nil {
		r.OnDemand = true
		for _, p := range od.Allow {
			p = strings.ToLower(strings.TrimSuffix(p, "."))
			if name, _ := strings.CutPrefix(p, "*."); !validDNSName(name) && !validIP(p) {
				add("Invalid on_demand name", fmt.Sprintf("%q: want a DNS name, an IP address, or *. and a domain for any one label below it.", p), od.AllowRange)
			}
			r.Allow = append(r.Allow, p)
		}
		if od.VHosts != nil {
			r.VHosts = *od.VHosts
		}
		if len(r.Allow) == 0 && !r.VHosts {
			add("on_demand allows nothing", "Set allow, or vhosts = true for the names of the legacy <VirtualHost> sections.", od.DefRange)
		}
	} else if len(r.Hosts) == 0 {
		add("Nothing to manage", "The acme block needs hosts, or an on_demand block.", a.DefRange)
	}
	return r
}

// validDNSName reports whether s is a DNS name of LDH labels (RFC 1123).
func validDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func validIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// vhostNames are the ServerName and ServerAlias entries of the legacy
// virtual hosts.
func vhostNames(cfg *translate.Config) []string {
	var out []string
	for _, v := range cfg.VHosts {
		if v.Name != "" {
			out = append(out, v.Name)
		}
		out = append(out, v.Aliases...)
	}
	return out
}

// tlsServing is the HTTPS listener with its certificates. Its methods do
// nothing on nil (no tls block).
type tlsServing struct {
	srv    *http.Server
	ln     net.Listener
	certs  *proxy.Certs
	logger *slog.Logger
}

// startTLS binds the HTTPS listener of rc.TLS, serving the plain server's
// handler, and prepares its certificates; the legacy virtual hosts come
// from h's engine. It wraps the plain server's handler: ACME HTTP-01
// answers, then the redirect to HTTPS or the handler as it was. It returns
// nil without a tls block.
func startTLS(rc *runtimeConfig, h *proxy.Handler, plain *http.Server, logOut io.Writer, logger *slog.Logger) (*tlsServing, error) {
	t := rc.TLS
	if t == nil {
		return nil, nil
	}
	serve := plain.Handler
	cfg := proxy.TLSConfig{CertFile: t.CertFile, KeyFile: t.KeyFile, Log: logOut}
	if a := t.ACME; a != nil {
		pa := &proxy.ACMEConfig{
			Directory:          a.Directory,
			Email:              a.Email,
			Storage:            &certmagic.FileStorage{Path: a.Storage},
			Hosts:              a.Hosts,
			HTTP01:             a.HTTP01,
			TLSALPN01:          a.TLSALPN01,
			HTTPAddr:           rc.Listen,
			TLSAddr:            t.Listen,
			RenewInterval:      a.RenewInterval,
			RenewalWindowRatio: a.RenewalWindowRatio,
		}
		if a.CARoot != nil {
			pool, err := x509.SystemCertPool()
			if err != nil {
				pool = x509.NewCertPool()
			}
			pool.AppendCertsFromPEM(a.CARoot)
			pa.Roots = pool
		}
		if a.OnDemand {
			var vhosts func() []string
			if a.VHosts {
				vhosts = func() []string { return vhostNames(h.Engine().Config()) }
			}
			pa.OnDemand = proxy.AllowNames(slices.Concat(a.Hosts, a.Allow), vhosts)
		}
		cfg.ACME = pa
	}
	certs, err := proxy.NewCerts(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", t.Listen)
	if err != nil {
		certs.Stop()
		return nil, err
	}
	next := serve
	if t.RedirectHTTP {
		_, port, _ := net.SplitHostPort(t.Listen)
		next = proxy.RedirectHTTPS(port)
	}
	plain.Handler = certs.HTTPChallenges(next)
	srv := &http.Server{
		Handler:           serve,
		TLSConfig:         proxy.ClientAuthFor(certs.TLSConfig(), h.Engine), // SSLVerifyClient
		ReadHeaderTimeout: plain.ReadHeaderTimeout,
		ReadTimeout:       plain.ReadTimeout,
		WriteTimeout:      plain.WriteTimeout,
		IdleTimeout:       plain.IdleTimeout,
		MaxHeaderBytes:    plain.MaxHeaderBytes,
		ErrorLog:          plain.ErrorLog,
	}
	return &tlsServing{srv: srv, ln: ln, certs: certs, logger: logger}, nil
}

// Serve serves HTTPS and starts managing the certificates; it sends a
// failure of the listener to errc. Call it once the plain listener
// serves: it answers HTTP-01 challenges.
func (s *tlsServing) Serve(errc chan<- error) {
	if s == nil {
		return
	}
	go func() {
		if err := s.srv.ServeTLS(s.ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			select {
			case errc <- fmt.Errorf("tls: %w", err):
			default:
			}
		}
	}()
	if err := s.certs.Manage(); err != nil {
		s.logger.Error("managing certificates", "err", err)
	}
}

// Addr is the address the HTTPS listener listens on, "" without one.
func (s *tlsServing) Addr() string {
	if s == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Shutdown stops the HTTPS listener gracefully.
func (s *tlsServing) Shutdown(ctx context.Context) {
	if s == nil {
		return
	}
	s.srv.Shutdown(ctx)
}

// Stop stops certificate maintenance.
func (s *tlsServing) Stop() {
	if s == nil {
		return
	}
	s.certs.Stop()
}

package main

// The network blocks of the configuration: backend, client_ip,
// resolver, metrics, forward_auth, admin and limits (tls: tls.go).

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/orderly-proxy/orderly/proxy"
)

type backendBlock struct {
	Name        string   `hcl:"name,label"`
	URL         *string  `hcl:"url,optional"`
	URLs        []string `hcl:"urls,optional"`
	UserHeader  *string  `hcl:"user_header,optional"`
	Timeout     *string  `hcl:"timeout,optional"`
	FailTimeout *string  `hcl:"fail_timeout,optional"`
	// GuardTokenFile: the backend guard's shared secret (guard.go).
	GuardTokenFile *string      `hcl:"guard_token_file,optional"`
	Health         *healthBlock `hcl:"health_check,block"`

	DefRange         hcl.Range `hcl:",def_range"`
	URLRange         hcl.Range `hcl:"url,attr_range"`
	URLsRange        hcl.Range `hcl:"urls,attr_range"`
	TimeoutRange     hcl.Range `hcl:"timeout,attr_range"`
	FailTimeoutRange hcl.Range `hcl:"fail_timeout,attr_range"`
	GuardTokenRange  hcl.Range `hcl:"guard_token_file,attr_range"`
}

// healthBlock is a backend's active health check.
type healthBlock struct {
	Path          *string   `hcl:"path,optional"`
	Interval      *string   `hcl:"interval,optional"`
	Timeout       *string   `hcl:"timeout,optional"`
	Enabled       *bool     `hcl:"enabled,optional"`
	PathRange     hcl.Range `hcl:"path,attr_range"`
	IntervalRange hcl.Range `hcl:"interval,attr_range"`
	TimeoutRange  hcl.Range `hcl:"timeout,attr_range"`
}

type clientIPBlock struct {
	TrustedProxies []string  `hcl:"trusted_proxies,optional"`
	Range          hcl.Range `hcl:"trusted_proxies,attr_range"`
	// ForwardedTLS: the trusted proxies say whether the client came over
	// TLS and with which certificate (proxy/tlsinfo.go).
	ForwardedTLS *bool `hcl:"forwarded_tls,optional"`
}

type resolverBlock struct {
	Address      *string   `hcl:"address,optional"`
	Timeout      *string   `hcl:"timeout,optional"`
	TimeoutRange hcl.Range `hcl:"timeout,attr_range"`
}

type listenBlock struct {
	Listen string    `hcl:"listen"`
	Range  hcl.Range `hcl:"listen,attr_range"`
}

// forwardBlock is the forward-auth endpoint's listener.
type forwardBlock struct {
	Listen      string    `hcl:"listen"`
	Style       string    `hcl:"style"`
	PathPrefix  *string   `hcl:"path_prefix,optional"`
	ListenRange hcl.Range `hcl:"listen,attr_range"`
	StyleRange  hcl.Range `hcl:"style,attr_range"`
	PrefixRange hcl.Range `hcl:"path_prefix,attr_range"`
}

type adminBlock struct {
	Listen    string    `hcl:"listen"`
	Range     hcl.Range `hcl:"listen,attr_range"`
	TokenFile *string   `hcl:"token_file,optional"`
	TokenRng  hcl.Range `hcl:"token_file,attr_range"`
}

// limitsBlock bounds what a client can make orderly hold.
type limitsBlock struct {
	ReadHeaderTimeout *string `hcl:"read_header_timeout,optional"`
	ReadTimeout       *string `hcl:"read_timeout,optional"`
	WriteTimeout      *string `hcl:"write_timeout,optional"`
	IdleTimeout       *string `hcl:"idle_timeout,optional"`
	MaxHeaderBytes    *int    `hcl:"max_header_bytes,optional"`
	MaxRequestLine    *int    `hcl:"max_request_line,optional"`
	MaxPerClient      *int    `hcl:"max_requests_per_client,optional"`

	DefRange       hcl.Range `hcl:",def_range"`
	RHTRange       hcl.Range `hcl:"read_header_timeout,attr_range"`
	RTRange        hcl.Range `hcl:"read_timeout,attr_range"`
	WTRange        hcl.Range `hcl:"write_timeout,attr_range"`
	ITRange        hcl.Range `hcl:"idle_timeout,attr_range"`
	HeaderRange    hcl.Range `hcl:"max_header_bytes,attr_range"`
	LineRange      hcl.Range `hcl:"max_request_line,attr_range"`
	PerClientRange hcl.Range `hcl:"max_requests_per_client,attr_range"`
}

// buildBackend validates the backend block, exactly one of which is
// required, into rc, with the guard token its guard_token_file holds.
func (fc *fileConfig) buildBackend(rc *runtimeConfig, rel func(string) string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	switch len(fc.Backends) {
	case 0:
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Missing backend block", Detail: "A backend block with the 2.4 server's url is required."}}
	case 1:
	default:
		diags = append(diags, diag("Duplicate backend block",
			fmt.Sprintf("Only one backend is supported; the first is at %s.", fc.Backends[0].DefRange), fc.Backends[1].DefRange))
	}
	b := fc.Backends[0]
	diags = append(diags, b.build(rc)...)
	if b.GuardTokenFile != nil {
		tok, d := readGuardToken(rel(*b.GuardTokenFile), b.GuardTokenRange)
		rc.GuardToken, diags = tok, append(diags, d...)
	}
	return diags
}

// build validates the backend block into rc.
func (b *backendBlock) build(rc *runtimeConfig) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var raw []string
	rng := b.URLsRange
	switch {
	case b.URL != nil && b.URLs != nil:
		return hcl.Diagnostics{diag("Both url and urls", "Give the backend one url, or several in urls, not both.", b.URLsRange)}
	case b.URL != nil:
		raw, rng = []string{*b.URL}, b.URLRange
	case len(b.URLs) > 0:
		raw = b.URLs
	default:
		return hcl.Diagnostics{diag("Missing backend URL", "The backend block needs url (the 2.4 server) or urls (several, used round-robin among those up).", b.DefRange)}
	}
	for _, r := range raw {
		u, err := url.Parse(r)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			diags = append(diags, diag("Invalid backend URL", fmt.Sprintf("%q is not an http:// or https:// URL with a host.", r), rng))
			continue
		}
		rc.Backends = append(rc.Backends, u)
	}
	if len(rc.Backends) > 0 {
		rc.Backend = rc.Backends[0]
	}
	if b.UserHeader != nil {
		rc.UserHeader = *b.UserHeader
	}
	dur := func(v *string, r hcl.Range, into *time.Duration) {
		diags = append(diags, durationAttr(v, r, "Invalid duration", "5s", false, into)...)
	}
	rc.BackendTimeout = 60 * time.Second
	dur(b.Timeout, b.TimeoutRange, &rc.BackendTimeout)
	rc.Health = proxy.HealthCheck{Path: "/", Interval: 5 * time.Second, Timeout: 2 * time.Second, FailTimeout: 10 * time.Second}
	dur(b.FailTimeout, b.FailTimeoutRange, &rc.Health.FailTimeout)
	if h := b.Health; h != nil {
		if h.Path != nil {
			rc.Health.Path = *h.Path
			if !strings.HasPrefix(*h.Path, "/") {
				diags = append(diags, diag("Invalid health check path", fmt.Sprintf("%q is not a URL path starting with /.", *h.Path), h.PathRange))
			}
		}
		dur(h.Interval, h.IntervalRange, &rc.Health.Interval)
		dur(h.Timeout, h.TimeoutRange, &rc.Health.Timeout)
		if h.Enabled != nil && !*h.Enabled {
			rc.Health.Path = ""
		}
	}
	return diags
}

// build validates the client_ip block: the trusted proxies, addresses
// or CIDR prefixes.
func (c *clientIPBlock) build() (clientIPRuntime, hcl.Diagnostics) {
	var cr clientIPRuntime
	if c == nil {
		return cr, nil
	}
	var diags hcl.Diagnostics
	for _, s := range c.TrustedProxies {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, err2 := netip.ParseAddr(s)
			if err2 != nil {
				diags = append(diags, diag("Invalid trusted proxy", fmt.Sprintf("%q is not an address or CIDR prefix.", s), c.Range))
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		cr.TrustedProxies = append(cr.TrustedProxies, p.Masked())
	}
	if c.ForwardedTLS != nil {
		cr.ForwardedTLS = *c.ForwardedTLS
	}
	return cr, diags
}

// build validates the resolver block.
func (r *resolverBlock) build() (resolverRuntime, hcl.Diagnostics) {
	var rr resolverRuntime
	if r == nil {
		return rr, nil
	}
	if r.Address != nil {
		rr.ResolverAddr = *r.Address
	}
	return rr, durationAttr(r.Timeout, r.TimeoutRange, "Invalid timeout", "2s", false, &rr.ResolverTimeout)
}

// build validates the forward_auth block.
func (f *forwardBlock) build() (forwardRuntime, hcl.Diagnostics) {
	var fr forwardRuntime
	if f == nil {
		return fr, nil
	}
	var diags hcl.Diagnostics
	fr.ForwardListen = f.Listen
	if !strings.Contains(f.Listen, ":") {
		diags = append(diags, diag("Invalid listen address", fmt.Sprintf("%q is not host:port.", f.Listen), f.ListenRange))
	}
	fr.ForwardStyle = f.Style
	switch f.Style {
	case proxy.AuthNginx, proxy.AuthForwarded, proxy.AuthEnvoy:
	default:
		diags = append(diags, diag("Unknown forward-auth style", fmt.Sprintf("%q: want \"nginx\" (auth_request with X-Original-URI), \"forwarded\" (Traefik ForwardAuth, Caddy forward_auth: X-Forwarded-Uri) or \"envoy\" (ext_authz: the request's own path after path_prefix).", f.Style), f.StyleRange))
	}
	if f.PathPrefix != nil && f.Style != proxy.AuthEnvoy {
		diags = append(diags, diag("path_prefix without envoy", "path_prefix is Envoy ext_authz's; the other styles name the request in headers.", f.PrefixRange))
	}
	if f.PathPrefix != nil {
		fr.ForwardPrefix = *f.PathPrefix
		if !strings.HasPrefix(fr.ForwardPrefix, "/") {
			diags = append(diags, diag("Invalid path prefix", fmt.Sprintf("%q is not a URL path starting with /.", fr.ForwardPrefix), f.PrefixRange))
		}
	}
	return fr, diags
}

// build validates the admin block: a listener off loopback needs a
// token_file.
func (a *adminBlock) build(rel func(string) string) (adminRuntime, hcl.Diagnostics) {
	var ar adminRuntime
	if a == nil {
		return ar, nil
	}
	var diags hcl.Diagnostics
	ar.AdminListen = a.Listen
	if a.TokenFile != nil {
		b, err := os.ReadFile(rel(*a.TokenFile))
		tok := strings.TrimSpace(string(b))
		switch {
		case err != nil:
			diags = append(diags, diag("Unreadable token file", err.Error(), a.TokenRng))
		case len(tok) < 16:
			diags = append(diags, diag("Token too short", "The admin token must be at least 16 characters.", a.TokenRng))
		}
		ar.AdminToken = tok
	} else if !loopbackListen(a.Listen) {
		diags = append(diags, diag("Admin listener needs a token",
			fmt.Sprintf("%q is not a loopback address: the admin endpoints (reload, profiles) must be behind a bearer token; set token_file.", a.Listen), a.Range))
	}
	return ar, diags
}

// build reads the limits block over the defaults in l.
func (b *limitsBlock) build(l *limits) hcl.Diagnostics {
	var diags hcl.Diagnostics
	dur := func(v *string, r hcl.Range, into *time.Duration) {
		diags = append(diags, durationAttr(v, r, "Invalid duration", "10s", true, into)...)
	}
	dur(b.ReadHeaderTimeout, b.RHTRange, &l.ReadHeaderTimeout)
	dur(b.ReadTimeout, b.RTRange, &l.ReadTimeout)
	dur(b.WriteTimeout, b.WTRange, &l.WriteTimeout)
	dur(b.IdleTimeout, b.ITRange, &l.IdleTimeout)
	num := func(v *int, name string, min int, r hcl.Range, into *int) {
		if v == nil {
			return
		}
		if *v < min {
			diags = append(diags, diag("Invalid limit", fmt.Sprintf("limits.%s = %d: want at least %d (0: no limit, where allowed).", name, *v, min), r))
			return
		}
		*into = *v
	}
	num(b.MaxHeaderBytes, "max_header_bytes", 4096, b.HeaderRange, &l.MaxHeaderBytes)
	num(b.MaxRequestLine, "max_request_line", 0, b.LineRange, &l.MaxRequestLine)
	num(b.MaxPerClient, "max_requests_per_client", 0, b.PerClientRange, &l.MaxPerClient)
	if l.ReadHeaderTimeout == 0 {
		diags = append(diags, diag("Invalid limit", "limits.read_header_timeout cannot be 0: a client could hold a connection open without sending.", b.RHTRange))
	}
	return diags
}

// limits are the server's timeouts and bounds.
type limits struct {
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxHeaderBytes, MaxRequestLine, MaxPerClient              int
}

// defaultLimits are safe in front of the internet: a slow client cannot
// hold a connection open without sending, the request line and headers
// are bounded (the legacy configuration's LimitRequestLine,
// LimitRequestFieldSize and LimitRequestFields apply as Apache applies
// them, whatever these say), and one address cannot take every
// connection.
var defaultLimits = limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       60 * time.Second,
	WriteTimeout:      5 * time.Minute,
	IdleTimeout:       2 * time.Minute,
	MaxHeaderBytes:    64 << 10,
	MaxRequestLine:    0, // the legacy configuration's LimitRequestLine applies (proxy/limits_head.go)
	MaxPerClient:      256,
}

// loopbackListen reports whether host:port listens on loopback only.
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

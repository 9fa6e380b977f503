package main

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate"
)

// fileConfig is the HCL configuration as the operator writes it. It is a
// contract (design.md); the runtime form is runtimeConfig.
type fileConfig struct {
	Listen string  `hcl:"listen"`
	Mode   *string `hcl:"mode,optional"`
	// ErrorLog: Apache 2.4's error-log lines for refusals.
	ErrorLog      *string   `hcl:"error_log,optional"`
	ErrorLogRange hcl.Range `hcl:"error_log,attr_range"`
	// AccessLog: Apache's combined format plus the deciding rule.
	AccessLog      *string   `hcl:"access_log,optional"`
	AccessLogRange hcl.Range `hcl:"access_log,attr_range"`
	// StateFile keeps the rules' counters across restarts.
	StateFile *string `hcl:"state_file,optional"`
	// ShadowLog: JSON lines of shadow-mode disagreements.
	ShadowLog      *string   `hcl:"shadow_log,optional"`
	ShadowLogRange hcl.Range `hcl:"shadow_log,attr_range"`
	// RuleHeader names the response header that carries the deciding
	// rule's ID on orderly's refusals.
	RuleHeader      *string        `hcl:"rule_header,optional"`
	RuleHeaderRange hcl.Range      `hcl:"rule_header,attr_range"`
	Backends        []backendBlock `hcl:"backend,block"`
	Legacy          *legacyBlock   `hcl:"legacy,block"`
	Native          *nativeBlock   `hcl:"native,block"`
	Scopes          []scopeBlock   `hcl:"scope,block"`
	ClientIP        *clientIPBlock `hcl:"client_ip,block"`
	Metrics         *listenBlock   `hcl:"metrics,block"`
	Admin           *adminBlock    `hcl:"admin,block"`
	ForwardAuth     *forwardBlock  `hcl:"forward_auth,block"`
	Resolver        *resolverBlock `hcl:"resolver,block"`
	Limits          *limitsBlock   `hcl:"limits,block"`
	ShutdownGrace   *string        `hcl:"shutdown_grace,optional"`
	GraceRange      hcl.Range      `hcl:"shutdown_grace,attr_range"`
	TLS             *tlsBlock      `hcl:"tls,block"` // tls.go

	ModeRange   hcl.Range `hcl:"mode,attr_range"`
	ListenRange hcl.Range `hcl:"listen,attr_range"`
}

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

// legacyVersion is the form of legacy.version.
var legacyVersion = regexp.MustCompile(`^2\.[24]\.[0-9]{1,3}$`)

type legacyBlock struct {
	Files        []string          `hcl:"files"`
	ServerRoot   *string           `hcl:"server_root,optional"`
	DocumentRoot *string           `hcl:"document_root,optional"`
	PathMap      map[string]string `hcl:"path_map,optional"`
	Semantics    *string           `hcl:"semantics,optional"`
	Defines      []string          `hcl:"defines,optional"`
	Address      *string           `hcl:"address,optional"`
	Forward      *bool             `hcl:"forward_unfaithful,optional"`
	Modules      []string          `hcl:"modules,optional"`
	Version      *string           `hcl:"version,optional"`
	// Demote lists rule IDs demoted to shadow-only: still evaluated and
	// counted, no longer enforced.
	Demote []string `hcl:"demote,optional"`

	DefRange       hcl.Range `hcl:",def_range"`
	DemoteRange    hcl.Range `hcl:"demote,attr_range"`
	FilesRange     hcl.Range `hcl:"files,attr_range"`
	SemanticsRange hcl.Range `hcl:"semantics,attr_range"`
	PathMapRange   hcl.Range `hcl:"path_map,attr_range"`
	AddressRange   hcl.Range `hcl:"address,attr_range"`
	VersionRange   hcl.Range `hcl:"version,attr_range"`
}

// nativeBlock is the site's own 2.4 configuration, the policy scopes
// move to.
type nativeBlock struct {
	Files        []string          `hcl:"files"`
	ServerRoot   *string           `hcl:"server_root,optional"`
	DocumentRoot *string           `hcl:"document_root,optional"`
	PathMap      map[string]string `hcl:"path_map,optional"`
	Defines      []string          `hcl:"defines,optional"`
	Modules      []string          `hcl:"modules,optional"`

	DefRange     hcl.Range `hcl:",def_range"`
	FilesRange   hcl.Range `hcl:"files,attr_range"`
	PathMapRange hcl.Range `hcl:"path_map,attr_range"`
}

// scopeBlock is a part of the site with its own mode and policies.
type scopeBlock struct {
	Name    string   `hcl:"name,label"`
	Host    *string  `hcl:"host,optional"`
	Path    *string  `hcl:"path,optional"`
	Mode    *string  `hcl:"mode,optional"`
	Enforce *string  `hcl:"enforce,optional"`
	Shadow  *string  `hcl:"shadow,optional"`
	Percent *float64 `hcl:"enforce_percent,optional"`
	Cohort  *string  `hcl:"cohort,optional"`

	DefRange     hcl.Range `hcl:",def_range"`
	PathRange    hcl.Range `hcl:"path,attr_range"`
	HostRange    hcl.Range `hcl:"host,attr_range"`
	ModeRange    hcl.Range `hcl:"mode,attr_range"`
	EnforceRange hcl.Range `hcl:"enforce,attr_range"`
	ShadowRange  hcl.Range `hcl:"shadow,attr_range"`
	PercentRange hcl.Range `hcl:"enforce_percent,attr_range"`
	CohortRange  hcl.Range `hcl:"cohort,attr_range"`
}

type clientIPBlock struct {
	TrustedProxies []string  `hcl:"trusted_proxies,optional"`
	Range          hcl.Range `hcl:"trusted_proxies,attr_range"`
	// ForwardedTLS: the trusted proxies say whether the client came over
	// TLS and with which certificate (proxy/tlsinfo.go).
	ForwardedTLS *bool `hcl:"forwarded_tls,optional"`
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

// runtimeConfig is the validated configuration.
type runtimeConfig struct {
	Listen          string
	Backend         *url.URL   // the first of Backends
	Backends        []*url.URL // the backend block's URLs
	Health          proxy.HealthCheck
	BackendTimeout  time.Duration // for the backend's response headers
	UserHeader      string
	TrustedProxies  []netip.Prefix
	ForwardedTLS    bool // client_ip.forwarded_tls
	Legacy          translate.LoadOptions
	LegacyFiles     []string
	Demote          map[string]bool // rule IDs demoted to shadow-only
	DemoteAt        string          // where legacy.demote is written, for messages
	Native          *translate.LoadOptions
	NativeFiles     []string
	NativePathMap   map[string]string
	Scopes          []proxy.Scope
	MetricsListen   string
	AdminListen     string
	ForwardListen   string // forward-auth endpoint, "" for none
	ForwardStyle    string
	ForwardPrefix   string
	AdminToken      string // bearer token every admin endpoint requires ("" on loopback without token_file)
	ErrorLog        string // "stdout" unless set
	Mode            proxy.Mode
	AccessLog       string      // "" for none
	ShadowLog       string      // "" for none
	OnStderr        []stderrLog // the logs set to "stderr", the stream of orderly's own logs
	StateFile       string      // "" for none
	RuleHeader      string
	ResolverAddr    string
	ResolverTimeout time.Duration
	Limits          limits
	ShutdownGrace   time.Duration
	PathMap         map[string]string // legacy path prefix -> where orderly reads it
	LegacyIP        netip.Addr        // the legacy server's address, for <VirtualHost>
	LegacyPort      int
	TLS             *tlsRuntime // nil without a tls block (tls.go)
	GuardToken      string      // sent to the backend in proxy.GuardHeader ("" for none)
}

// stderrLog is a log the configuration sets to "stderr", where orderly's
// own logs go: the two share a stream, which log tooling reading either
// cannot tell apart.
type stderrLog struct {
	Setting string // error_log, access_log or shadow_log
	At      string // file:line
}

// String is the warning, file:line first.
func (l stderrLog) String() string {
	return fmt.Sprintf(`%s: %s = "stderr" shares standard error with orderly's own logs: set it to a file or "stdout"`, l.At, l.Setting)
}

var envFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "name", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if v, ok := os.LookupEnv(args[0].AsString()); ok {
			return cty.StringVal(v), nil
		}
		return cty.NilVal, fmt.Errorf("environment variable %q is not set", args[0].AsString())
	},
})

// loadConfig parses and validates the HCL file. Relative paths in it are
// relative to the file's directory. The parser is returned for pretty
// diagnostics.
func loadConfig(path string) (*runtimeConfig, *hclparse.Parser, hcl.Diagnostics) {
	p := hclparse.NewParser()
	f, diags := p.ParseHCLFile(path)
	if diags.HasErrors() {
		return nil, p, diags
	}
	rc, more := decodeConfig(f, path)
	return rc, p, append(diags, more...)
}

// decodeConfig decodes and validates a parsed HCL file; relative paths in
// it are relative to path's directory.
func decodeConfig(f *hcl.File, path string) (*runtimeConfig, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var fc fileConfig
	ctx := &hcl.EvalContext{Functions: map[string]function.Function{"env": envFunc}}
	diags = append(diags, gohcl.DecodeBody(f.Body, ctx, &fc)...)
	if diags.HasErrors() {
		return nil, diags
	}
	rc, more := fc.build(filepath.Dir(path))
	diags = append(diags, more...)
	if diags.HasErrors() {
		return nil, diags
	}
	return rc, diags
}

func diag(summary, detail string, r hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: r.Ptr()}
}

func (fc *fileConfig) build(dir string) (*runtimeConfig, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	// orderly's own logs go to stderr; the Apache-format error log
	// defaults to stdout so that the two never share a stream unasked.
	rc := &runtimeConfig{Listen: fc.Listen, UserHeader: "X-Remote-User", ErrorLog: "stdout"}
	for _, l := range []struct {
		name string
		set  *string
		at   hcl.Range
		into *string
	}{
		{"error_log", fc.ErrorLog, fc.ErrorLogRange, &rc.ErrorLog},
		{"access_log", fc.AccessLog, fc.AccessLogRange, &rc.AccessLog},
		{"shadow_log", fc.ShadowLog, fc.ShadowLogRange, &rc.ShadowLog},
	} {
		if l.set == nil {
			continue
		}
		switch *l.set {
		case "stderr":
			rc.OnStderr = append(rc.OnStderr, stderrLog{Setting: l.name, At: fmt.Sprintf("%s:%d", l.at.Filename, l.at.Start.Line)})
			*l.into = *l.set
		case "stdout":
			*l.into = *l.set
		default:
			*l.into = rel(*l.set)
		}
	}
	if fc.StateFile != nil {
		rc.StateFile = rel(*fc.StateFile)
	}
	if fc.RuleHeader != nil {
		rc.RuleHeader = *fc.RuleHeader
		if !validHeaderName(rc.RuleHeader) {
			diags = append(diags, diag("Invalid header name", fmt.Sprintf("%q is not an HTTP header name.", rc.RuleHeader), fc.RuleHeaderRange))
		}
	}
	rc.Mode = proxy.ModeEnforce
	if fc.Mode != nil {
		m, d := parseMode(*fc.Mode, fc.ModeRange)
		rc.Mode = m
		diags = append(diags, d...)
	}
	switch len(fc.Backends) {
	case 0:
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing backend block", Detail: "A backend block with the 2.4 server's url is required."})
	case 1:
	default:
		diags = append(diags, diag("Duplicate backend block",
			fmt.Sprintf("Only one backend is supported; the first is at %s.", fc.Backends[0].DefRange), fc.Backends[1].DefRange))
	}
	if len(fc.Backends) > 0 {
		diags = append(diags, fc.Backends[0].build(rc)...)
		if b := fc.Backends[0]; b.GuardTokenFile != nil {
			tok, d := readGuardToken(rel(*b.GuardTokenFile), b.GuardTokenRange)
			rc.GuardToken, diags = tok, append(diags, d...)
		}
	}
	if fc.Legacy == nil {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing legacy block", Detail: "A legacy block naming the 2.2 configuration files is required."})
	} else {
		l := fc.Legacy
		if len(l.Files) == 0 {
			diags = append(diags, diag("No legacy files", "legacy.files must name at least one file.", l.FilesRange))
		}
		for _, f := range l.Files {
			rc.LegacyFiles = append(rc.LegacyFiles, rel(f))
		}
		opt := translate.LoadOptions{Defines: map[string]bool{}}
		if l.ServerRoot != nil {
			opt.ServerRoot = rel(*l.ServerRoot)
		}
		if l.DocumentRoot != nil {
			opt.DocumentRoot = rel(*l.DocumentRoot)
		}
		for _, d := range l.Defines {
			opt.Defines[d] = true
		}
		opt.Modules = l.Modules
		sem := string(translate.Legacy22)
		if l.Semantics != nil {
			sem = *l.Semantics
		}
		switch translate.Semantics(sem) {
		case translate.Compat24, translate.Legacy22:
			opt.Semantics = translate.Semantics(sem)
		default:
			diags = append(diags, diag("Unknown semantics",
				fmt.Sprintf("semantics %q is not \"2.2\" (what Apache 2.2 did with the rules, the default) or \"2.4-compat\" (what Apache 2.4 does with them under mod_access_compat).", sem), l.SemanticsRange))
		}
		if l.Version != nil {
			want := "2.4"
			if opt.Semantics == translate.Legacy22 {
				want = "2.2"
			}
			if !legacyVersion.MatchString(*l.Version) || !strings.HasPrefix(*l.Version, want+".") {
				diags = append(diags, diag("Invalid legacy version",
					fmt.Sprintf("version %q is not a %s.x release (the version of the server whose rules these are, for <IfVersion>; semantics %q).", *l.Version, want, opt.Semantics), l.VersionRange))
			}
			opt.Version = *l.Version
		}
		for k, v := range l.PathMap {
			if !filepath.IsAbs(k) {
				diags = append(diags, diag("Invalid path_map", fmt.Sprintf("%q is not an absolute path as the legacy configuration names it.", k), l.PathMapRange))
			}
			if rc.PathMap == nil {
				rc.PathMap = map[string]string{}
			}
			rc.PathMap[k] = rel(v)
		}
		if l.Forward != nil {
			opt.ForwardUnfaithful = *l.Forward
		}
		rc.Legacy = opt
		if l.Address != nil {
			ip, port, err := parseLegacyAddress(*l.Address)
			if err != nil {
				diags = append(diags, diag("Invalid legacy address", err.Error(), l.AddressRange))
			}
			rc.LegacyIP, rc.LegacyPort = ip, port
		}
	}
	if fc.Legacy != nil && len(fc.Legacy.Demote) > 0 {
		rc.Demote = map[string]bool{}
		rc.DemoteAt = fc.Legacy.DemoteRange.String()
		for _, id := range fc.Legacy.Demote {
			if !ruleIDPattern(id) {
				diags = append(diags, diag("Invalid rule ID", fmt.Sprintf("%q is not a rule ID (12 hexadecimal digits, as orderly_rule_info and orderly explain show them).", id), fc.Legacy.DemoteRange))
			}
			rc.Demote[id] = true
		}
	}
	if n := fc.Native; n != nil {
		if len(n.Files) == 0 {
			diags = append(diags, diag("No native files", "native.files must name at least one file.", n.FilesRange))
		}
		for _, f := range n.Files {
			rc.NativeFiles = append(rc.NativeFiles, rel(f))
		}
		// The native configuration is 2.4's own: it means what Apache 2.4
		// does with it.
		opt := translate.LoadOptions{Defines: map[string]bool{}, Options: translate.Options{Semantics: translate.Compat24}}
		if n.ServerRoot != nil {
			opt.ServerRoot = rel(*n.ServerRoot)
		} else {
			opt.ServerRoot = rc.Legacy.ServerRoot
		}
		if n.DocumentRoot != nil {
			opt.DocumentRoot = rel(*n.DocumentRoot)
		} else {
			opt.DocumentRoot = rc.Legacy.DocumentRoot
		}
		for _, d := range n.Defines {
			opt.Defines[d] = true
		}
		opt.Modules = n.Modules
		rc.Native = &opt
		rc.NativePathMap = rc.PathMap
		if n.PathMap != nil {
			rc.NativePathMap = map[string]string{}
			for k, v := range n.PathMap {
				if !filepath.IsAbs(k) {
					diags = append(diags, diag("Invalid path_map", fmt.Sprintf("%q is not an absolute path as the native configuration names it.", k), n.PathMapRange))
				}
				rc.NativePathMap[k] = rel(v)
			}
		}
	}
	diags = append(diags, fc.buildScopes(rc)...)
	if fc.ClientIP != nil {
		for _, s := range fc.ClientIP.TrustedProxies {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				a, err2 := netip.ParseAddr(s)
				if err2 != nil {
					diags = append(diags, diag("Invalid trusted proxy", fmt.Sprintf("%q is not an address or CIDR prefix.", s), fc.ClientIP.Range))
					continue
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			rc.TrustedProxies = append(rc.TrustedProxies, p.Masked())
		}
		if fc.ClientIP.ForwardedTLS != nil {
			rc.ForwardedTLS = *fc.ClientIP.ForwardedTLS
		}
	}
	if r := fc.Resolver; r != nil {
		if r.Address != nil {
			rc.ResolverAddr = *r.Address
		}
		diags = append(diags, durationAttr(r.Timeout, r.TimeoutRange, "Invalid timeout", "2s", false, &rc.ResolverTimeout)...)
	}
	if fc.Metrics != nil {
		rc.MetricsListen = fc.Metrics.Listen
	}
	if f := fc.ForwardAuth; f != nil {
		rc.ForwardListen = f.Listen
		if !strings.Contains(f.Listen, ":") {
			diags = append(diags, diag("Invalid listen address", fmt.Sprintf("%q is not host:port.", f.Listen), f.ListenRange))
		}
		rc.ForwardStyle = f.Style
		switch f.Style {
		case proxy.AuthNginx, proxy.AuthForwarded, proxy.AuthEnvoy:
		default:
			diags = append(diags, diag("Unknown forward-auth style", fmt.Sprintf("%q: want \"nginx\" (auth_request with X-Original-URI), \"forwarded\" (Traefik ForwardAuth, Caddy forward_auth: X-Forwarded-Uri) or \"envoy\" (ext_authz: the request's own path after path_prefix).", f.Style), f.StyleRange))
		}
		if f.PathPrefix != nil && f.Style != proxy.AuthEnvoy {
			diags = append(diags, diag("path_prefix without envoy", "path_prefix is Envoy ext_authz's; the other styles name the request in headers.", f.PrefixRange))
		}
		if f.PathPrefix != nil {
			rc.ForwardPrefix = *f.PathPrefix
			if !strings.HasPrefix(rc.ForwardPrefix, "/") {
				diags = append(diags, diag("Invalid path prefix", fmt.Sprintf("%q is not a URL path starting with /.", rc.ForwardPrefix), f.PrefixRange))
			}
		}
	}
	if a := fc.Admin; a != nil {
		rc.AdminListen = a.Listen
		if a.TokenFile != nil {
			b, err := os.ReadFile(rel(*a.TokenFile))
			tok := strings.TrimSpace(string(b))
			switch {
			case err != nil:
				diags = append(diags, diag("Unreadable token file", err.Error(), a.TokenRng))
			case len(tok) < 16:
				diags = append(diags, diag("Token too short", "The admin token must be at least 16 characters.", a.TokenRng))
			}
			rc.AdminToken = tok
		} else if !loopbackListen(a.Listen) {
			diags = append(diags, diag("Admin listener needs a token",
				fmt.Sprintf("%q is not a loopback address: the admin endpoints (reload, profiles) must be behind a bearer token; set token_file.", a.Listen), a.Range))
		}
	}
	rc.Limits = defaultLimits
	if l := fc.Limits; l != nil {
		diags = append(diags, l.build(&rc.Limits)...)
	}
	rc.ShutdownGrace = 30 * time.Second
	diags = append(diags, durationAttr(fc.ShutdownGrace, fc.GraceRange, "Invalid duration", "30s", true, &rc.ShutdownGrace)...)
	diags = append(diags, fc.buildTLS(rc, rel)...)
	if !strings.Contains(rc.Listen, ":") {
		diags = append(diags, diag("Invalid listen address", fmt.Sprintf("%q is not host:port.", rc.Listen), fc.ListenRange))
	}
	return rc, diags
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

// validHeaderName reports whether s is an HTTP field name (RFC 9110 token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
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

// parseLegacyAddress reads legacy.address: "ip:port", "*:port" or "ip".
func parseLegacyAddress(s string) (netip.Addr, int, error) {
	host, port := s, ""
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), int(ap.Port()), nil
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 && strings.Count(s, ":") == 1 {
		host, port = s[:i], s[i+1:]
	}
	var ip netip.Addr
	if host != "*" {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return ip, 0, fmt.Errorf("%q: want ip:port, *:port or ip", s)
		}
		ip = a.Unmap()
	}
	p := 0
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return ip, 0, fmt.Errorf("%q: bad port", s)
		}
		p = n
	}
	return ip, p, nil
}

// parseMode reads a mode attribute.
func parseMode(s string, r hcl.Range) (proxy.Mode, hcl.Diagnostics) {
	switch m := proxy.Mode(s); m {
	case proxy.ModeEnforce, proxy.ModeShadow, proxy.ModeObserve:
		return m, nil
	}
	return proxy.ModeEnforce, hcl.Diagnostics{diag("Unsupported mode",
		fmt.Sprintf("mode %q: want \"enforce\" (orderly refuses), \"shadow\" (orderly forwards everything and counts where it disagrees with the backend or the other policy) or \"observe\" (forward and count only).", s), r)}
}

// ruleIDPattern reports whether s looks like a rule ID.
func ruleIDPattern(s string) bool {
	if len(s) != 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// buildScopes validates the scope blocks into rc.Scopes.
func (fc *fileConfig) buildScopes(rc *runtimeConfig) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[string]hcl.Range{}
	where := map[string]hcl.Range{}
	for _, b := range fc.Scopes {
		sc := proxy.Scope{Name: b.Name, Mode: rc.Mode, Enforce: proxy.PolicyLegacy, Percent: 100}
		if prev, ok := seen[b.Name]; ok {
			diags = append(diags, diag("Duplicate scope", fmt.Sprintf("Scope %q is already defined at %s.", b.Name, prev), b.DefRange))
		}
		seen[b.Name] = b.DefRange
		if b.Name == "" || b.Name == proxy.DefaultScope {
			diags = append(diags, diag("Invalid scope name", fmt.Sprintf("%q is reserved for the requests no scope takes; name the scope after what it covers.", b.Name), b.DefRange))
		}
		if b.Host != nil {
			sc.Host = strings.ToLower(strings.TrimSuffix(*b.Host, "."))
			if sc.Host == "" || strings.ContainsAny(sc.Host, ":/ ") {
				diags = append(diags, diag("Invalid scope host", fmt.Sprintf("%q is not a host name (no port, no scheme).", *b.Host), b.HostRange))
			}
		}
		if b.Path != nil {
			sc.Path = *b.Path
			if !strings.HasPrefix(sc.Path, "/") || strings.Contains(sc.Path, "//") || strings.Contains(sc.Path, "/../") || strings.HasSuffix(sc.Path, "/..") || strings.ContainsAny(sc.Path, "?#%") {
				diags = append(diags, diag("Invalid scope path", fmt.Sprintf("%q is not a normalised URL-path prefix such as \"/api\" (it is matched on the decoded path, as Apache's <Location>).", *b.Path), b.PathRange))
			}
		}
		if b.Host == nil && b.Path == nil {
			diags = append(diags, diag("Scope covers nothing", "A scope needs a host, a path, or both; the top-level mode governs everything else.", b.DefRange))
		}
		key := sc.Host + "\x00" + sc.Path
		if prev, ok := where[key]; ok {
			diags = append(diags, diag("Duplicate scope", fmt.Sprintf("Another scope covers the same host and path, at %s.", prev), b.DefRange))
		}
		where[key] = b.DefRange
		if b.Mode != nil {
			m, d := parseMode(*b.Mode, b.ModeRange)
			sc.Mode = m
			diags = append(diags, d...)
		}
		policyName := func(v *string, r hcl.Range) string {
			switch *v {
			case proxy.PolicyLegacy:
			case proxy.PolicyNative:
				if rc.Native == nil {
					diags = append(diags, diag("No native policy", "This scope names the native policy: add a native block with the site's 2.4 configuration files.", r))
				}
			default:
				diags = append(diags, diag("Unknown policy", fmt.Sprintf("%q: want \"legacy\" (the translated 2.2 rules) or \"native\" (the native block's 2.4 configuration).", *v), r))
			}
			return *v
		}
		if b.Enforce != nil {
			sc.Enforce = policyName(b.Enforce, b.EnforceRange)
		}
		if b.Shadow != nil {
			sc.Shadow = policyName(b.Shadow, b.ShadowRange)
			if sc.Shadow == sc.Enforce {
				diags = append(diags, diag("Shadow is the enforced policy", fmt.Sprintf("The scope enforces %q already; shadow the other policy or leave shadow out.", sc.Enforce), b.ShadowRange))
			}
		}
		if b.Percent != nil {
			sc.Percent = *b.Percent
			switch {
			case sc.Percent < 0 || sc.Percent > 100:
				diags = append(diags, diag("Invalid enforce_percent", fmt.Sprintf("%v is not a percentage from 0 to 100.", sc.Percent), b.PercentRange))
			case sc.Shadow == "" && sc.Percent != 100:
				diags = append(diags, diag("enforce_percent without shadow", "The clients outside the enforce share are decided by the shadow policy: name it with shadow.", b.PercentRange))
			}
		}
		if b.Cohort != nil {
			switch *b.Cohort {
			case "client":
			case "user":
				sc.ByUser = true
			default:
				diags = append(diags, diag("Invalid cohort", fmt.Sprintf("%q: want \"client\" (by client address, the default) or \"user\" (by the Basic-auth user when the request names one).", *b.Cohort), b.CohortRange))
			}
		}
		rc.Scopes = append(rc.Scopes, sc)
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

// durationAttr reads an optional duration attribute into *into, which
// keeps its default when the attribute is absent or bad. zeroOK allows
// "0s" (no limit); example is shown in the message of a bad value.
func durationAttr(v *string, r hcl.Range, summary, example string, zeroOK bool, into *time.Duration) hcl.Diagnostics {
	if v == nil {
		return nil
	}
	d, err := time.ParseDuration(*v)
	if err != nil || d < 0 || d == 0 && !zeroOK {
		kind := "a positive duration"
		if zeroOK {
			kind = "a duration (\"0s\": no limit)"
		}
		return hcl.Diagnostics{diag(summary, fmt.Sprintf("%q is not %s such as %q.", *v, kind, example), r)}
	}
	*into = d
	return nil
}

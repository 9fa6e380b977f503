package main

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
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
	Listen   string  `hcl:"listen"`
	Mode     *string `hcl:"mode,optional"`
	ErrorLog *string `hcl:"error_log,optional"`
	// AccessLog: Apache's combined format plus the deciding rule.
	AccessLog *string `hcl:"access_log,optional"`
	// StateFile keeps the rules' counters across restarts.
	StateFile *string `hcl:"state_file,optional"`
	// ShadowLog: JSON lines of shadow-mode disagreements.
	ShadowLog *string `hcl:"shadow_log,optional"`
	// RuleHeader names the response header that carries the deciding
	// rule's ID on orderly's refusals.
	RuleHeader      *string        `hcl:"rule_header,optional"`
	RuleHeaderRange hcl.Range      `hcl:"rule_header,attr_range"`
	Backends        []backendBlock `hcl:"backend,block"`
	Legacy          *legacyBlock   `hcl:"legacy,block"`
	ClientIP        *clientIPBlock `hcl:"client_ip,block"`
	Metrics         *listenBlock   `hcl:"metrics,block"`
	Admin           *adminBlock    `hcl:"admin,block"`
	Resolver        *resolverBlock `hcl:"resolver,block"`

	ModeRange   hcl.Range `hcl:"mode,attr_range"`
	ListenRange hcl.Range `hcl:"listen,attr_range"`
}

type backendBlock struct {
	Name       string    `hcl:"name,label"`
	URL        string    `hcl:"url"`
	UserHeader *string   `hcl:"user_header,optional"`
	DefRange   hcl.Range `hcl:",def_range"`
	URLRange   hcl.Range `hcl:"url,attr_range"`
	// GuardTokenFile: the backend guard's shared secret (guard.go).
	GuardTokenFile  *string   `hcl:"guard_token_file,optional"`
	GuardTokenRange hcl.Range `hcl:"guard_token_file,attr_range"`
}

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

	DefRange       hcl.Range `hcl:",def_range"`
	FilesRange     hcl.Range `hcl:"files,attr_range"`
	SemanticsRange hcl.Range `hcl:"semantics,attr_range"`
	PathMapRange   hcl.Range `hcl:"path_map,attr_range"`
	AddressRange   hcl.Range `hcl:"address,attr_range"`
}

type clientIPBlock struct {
	TrustedProxies []string  `hcl:"trusted_proxies,optional"`
	Range          hcl.Range `hcl:"trusted_proxies,attr_range"`
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

type adminBlock struct {
	Listen    string    `hcl:"listen"`
	Range     hcl.Range `hcl:"listen,attr_range"`
	TokenFile *string   `hcl:"token_file,optional"`
	TokenRng  hcl.Range `hcl:"token_file,attr_range"`
}

// runtimeConfig is the validated configuration.
type runtimeConfig struct {
	Listen          string
	Backend         *url.URL
	UserHeader      string
	TrustedProxies  []netip.Prefix
	Legacy          translate.LoadOptions
	LegacyFiles     []string
	MetricsListen   string
	AdminListen     string
	AdminToken      string // bearer token every admin endpoint requires ("" on loopback without token_file)
	ErrorLog        string
	Mode            proxy.Mode
	AccessLog       string // "" for none
	ShadowLog       string // "" for none
	StateFile       string // "" for none
	RuleHeader      string
	ResolverAddr    string
	ResolverTimeout time.Duration
	PathMap         map[string]string // legacy path prefix -> where orderly reads it
	LegacyIP        netip.Addr        // the legacy server's address, for <VirtualHost>
	LegacyPort      int
	GuardToken      string // sent to the backend in proxy.GuardHeader ("" for none)
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
	var fc fileConfig
	ctx := &hcl.EvalContext{Functions: map[string]function.Function{"env": envFunc}}
	diags = append(diags, gohcl.DecodeBody(f.Body, ctx, &fc)...)
	if diags.HasErrors() {
		return nil, p, diags
	}
	rc, more := fc.build(filepath.Dir(path))
	diags = append(diags, more...)
	if diags.HasErrors() {
		return nil, p, diags
	}
	return rc, p, diags
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
	rc := &runtimeConfig{Listen: fc.Listen, UserHeader: "X-Remote-User", ErrorLog: "stderr"}
	if fc.ErrorLog != nil {
		rc.ErrorLog = *fc.ErrorLog
		if rc.ErrorLog != "stderr" && rc.ErrorLog != "stdout" {
			rc.ErrorLog = rel(rc.ErrorLog)
		}
	}
	if fc.AccessLog != nil {
		rc.AccessLog = *fc.AccessLog
		if rc.AccessLog != "stderr" && rc.AccessLog != "stdout" {
			rc.AccessLog = rel(rc.AccessLog)
		}
	}
	if fc.StateFile != nil {
		rc.StateFile = rel(*fc.StateFile)
	}
	if fc.ShadowLog != nil {
		rc.ShadowLog = *fc.ShadowLog
		if rc.ShadowLog != "stderr" && rc.ShadowLog != "stdout" {
			rc.ShadowLog = rel(rc.ShadowLog)
		}
	}
	if fc.RuleHeader != nil {
		rc.RuleHeader = *fc.RuleHeader
		if !validHeaderName(rc.RuleHeader) {
			diags = append(diags, diag("Invalid header name", fmt.Sprintf("%q is not an HTTP header name.", rc.RuleHeader), fc.RuleHeaderRange))
		}
	}
	rc.Mode = proxy.ModeEnforce
	if fc.Mode != nil {
		switch m := proxy.Mode(*fc.Mode); m {
		case proxy.ModeEnforce, proxy.ModeShadow, proxy.ModeObserve:
			rc.Mode = m
		default:
			diags = append(diags, diag("Unsupported mode",
				fmt.Sprintf("mode %q: want \"enforce\" (orderly refuses), \"shadow\" (orderly forwards everything and counts where it disagrees with the backend) or \"observe\" (forward and count only).", *fc.Mode), fc.ModeRange))
		}
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
		b := fc.Backends[0]
		u, err := url.Parse(b.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			diags = append(diags, diag("Invalid backend URL", fmt.Sprintf("%q is not an http:// or https:// URL with a host.", b.URL), b.URLRange))
		} else {
			rc.Backend = u
		}
		if b.UserHeader != nil {
			rc.UserHeader = *b.UserHeader
		}
		if b.GuardTokenFile != nil {
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
	}
	if r := fc.Resolver; r != nil {
		if r.Address != nil {
			rc.ResolverAddr = *r.Address
		}
		if r.Timeout != nil {
			d, err := time.ParseDuration(*r.Timeout)
			if err != nil || d <= 0 {
				diags = append(diags, diag("Invalid timeout", fmt.Sprintf("%q is not a positive duration such as \"2s\".", *r.Timeout), r.TimeoutRange))
			}
			rc.ResolverTimeout = d
		}
	}
	if fc.Metrics != nil {
		rc.MetricsListen = fc.Metrics.Listen
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
	if !strings.Contains(rc.Listen, ":") {
		diags = append(diags, diag("Invalid listen address", fmt.Sprintf("%q is not host:port.", rc.Listen), fc.ListenRange))
	}
	return rc, diags
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

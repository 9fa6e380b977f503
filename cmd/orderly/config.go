package main

// The HCL configuration: the file as the operator writes it
// (fileConfig, a contract: design.md), its runtime form (runtimeConfig),
// and the top-level attributes' validation. The blocks are validated in
// configpolicy.go (legacy, native, scope), confignet.go (backend,
// client_ip, resolver, forward_auth, admin, limits) and tls.go.

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
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

// runtimeConfig is the validated configuration. The settings of most
// blocks are grouped in an embedded struct of their own, which that
// block's validator fills; their fields are promoted, so rc.LegacyFiles
// is rc.legacyRuntime.LegacyFiles.
type runtimeConfig struct {
	Listen        string
	Mode          proxy.Mode
	RuleHeader    string
	StateFile     string // "" for none
	ShutdownGrace time.Duration
	logRuntime

	// The backend block, flat: a runtimeConfig with Backend and
	// GuardToken alone is what the backend probes take (guard.go,
	// rewriteprobe.go).
	Backend        *url.URL   // the first of Backends
	Backends       []*url.URL // the backend block's URLs
	Health         proxy.HealthCheck
	BackendTimeout time.Duration // for the backend's response headers
	UserHeader     string
	GuardToken     string // sent to the backend in proxy.GuardHeader ("" for none)

	legacyRuntime
	nativeRuntime
	Scopes []proxy.Scope

	clientIPRuntime
	resolverRuntime
	MetricsListen string
	forwardRuntime
	adminRuntime
	Limits limits
	TLS    *tlsRuntime // nil without a tls block (tls.go)
}

// logRuntime is where the Apache-format logs go.
type logRuntime struct {
	ErrorLog  string      // "stdout" unless set
	AccessLog string      // "" for none
	ShadowLog string      // "" for none
	OnStderr  []stderrLog // the logs set to "stderr", the stream of orderly's own logs
}

// legacyRuntime is the validated legacy block.
type legacyRuntime struct {
	Legacy      translate.LoadOptions
	LegacyFiles []string
	PathMap     map[string]string // legacy path prefix -> where orderly reads it
	LegacyIP    netip.Addr        // the legacy server's address, for <VirtualHost>
	LegacyPort  int
	Demote      map[string]bool // rule IDs demoted to shadow-only
	DemoteAt    string          // where legacy.demote is written, for messages
}

// nativeRuntime is the validated native block; Native is nil without
// one.
type nativeRuntime struct {
	Native        *translate.LoadOptions
	NativeFiles   []string
	NativePathMap map[string]string
}

// clientIPRuntime is the validated client_ip block.
type clientIPRuntime struct {
	TrustedProxies []netip.Prefix
	ForwardedTLS   bool // client_ip.forwarded_tls
}

// resolverRuntime is the validated resolver block.
type resolverRuntime struct {
	ResolverAddr    string
	ResolverTimeout time.Duration
}

// forwardRuntime is the validated forward_auth block.
type forwardRuntime struct {
	ForwardListen string // forward-auth endpoint, "" for none
	ForwardStyle  string
	ForwardPrefix string
}

// adminRuntime is the validated admin block.
type adminRuntime struct {
	AdminListen string
	AdminToken  string // bearer token every admin endpoint requires ("" on loopback without token_file)
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

// build validates the configuration, block by block, into its runtime
// form; relative paths are relative to dir. Every block's diagnostics
// are kept, in the order of this function.
func (fc *fileConfig) build(dir string) (*runtimeConfig, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	add := func(d hcl.Diagnostics) { diags = append(diags, d...) }
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	rc := &runtimeConfig{Listen: fc.Listen, Mode: proxy.ModeEnforce, UserHeader: "X-Remote-User",
		Limits: defaultLimits, ShutdownGrace: 30 * time.Second}
	rc.logRuntime = fc.buildLogs(rel)
	if fc.StateFile != nil {
		rc.StateFile = rel(*fc.StateFile)
	}
	if fc.RuleHeader != nil {
		rc.RuleHeader = *fc.RuleHeader
		if !validHeaderName(rc.RuleHeader) {
			add(hcl.Diagnostics{diag("Invalid header name", fmt.Sprintf("%q is not an HTTP header name.", rc.RuleHeader), fc.RuleHeaderRange)})
		}
	}
	if fc.Mode != nil {
		m, d := parseMode(*fc.Mode, fc.ModeRange)
		rc.Mode = m
		add(d)
	}
	add(fc.buildBackend(rc, rel))
	var d hcl.Diagnostics
	rc.legacyRuntime, d = fc.Legacy.build(rel)
	add(d)
	rc.nativeRuntime, d = fc.Native.build(rel, rc.legacyRuntime)
	add(d)
	add(fc.buildScopes(rc))
	rc.clientIPRuntime, d = fc.ClientIP.build()
	add(d)
	rc.resolverRuntime, d = fc.Resolver.build()
	add(d)
	if fc.Metrics != nil {
		rc.MetricsListen = fc.Metrics.Listen
	}
	rc.forwardRuntime, d = fc.ForwardAuth.build()
	add(d)
	rc.adminRuntime, d = fc.Admin.build(rel)
	add(d)
	if fc.Limits != nil {
		add(fc.Limits.build(&rc.Limits))
	}
	add(durationAttr(fc.ShutdownGrace, fc.GraceRange, "Invalid duration", "30s", true, &rc.ShutdownGrace))
	add(fc.buildTLS(rc, rel))
	if !strings.Contains(rc.Listen, ":") {
		add(hcl.Diagnostics{diag("Invalid listen address", fmt.Sprintf("%q is not host:port.", rc.Listen), fc.ListenRange)})
	}
	return rc, diags
}

// buildLogs reads error_log, access_log and shadow_log: "stdout",
// "stderr" (warned of: orderly's own logs go there) or a file. orderly's
// own logs go to stderr; the Apache-format error log defaults to stdout
// so that the two never share a stream unasked.
func (fc *fileConfig) buildLogs(rel func(string) string) logRuntime {
	l := logRuntime{ErrorLog: "stdout"}
	for _, o := range []struct {
		name string
		set  *string
		at   hcl.Range
		into *string
	}{
		{"error_log", fc.ErrorLog, fc.ErrorLogRange, &l.ErrorLog},
		{"access_log", fc.AccessLog, fc.AccessLogRange, &l.AccessLog},
		{"shadow_log", fc.ShadowLog, fc.ShadowLogRange, &l.ShadowLog},
	} {
		if o.set == nil {
			continue
		}
		switch *o.set {
		case "stderr":
			l.OnStderr = append(l.OnStderr, stderrLog{Setting: o.name, At: fmt.Sprintf("%s:%d", o.at.Filename, o.at.Start.Line)})
			*o.into = *o.set
		case "stdout":
			*o.into = *o.set
		default:
			*o.into = rel(*o.set)
		}
	}
	return l
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

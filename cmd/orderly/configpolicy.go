package main

// The policy blocks of the configuration: legacy, native and scope.

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

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

// build validates the legacy block, which is required.
func (l *legacyBlock) build(rel func(string) string) (legacyRuntime, hcl.Diagnostics) {
	var lr legacyRuntime
	if l == nil {
		return lr, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Missing legacy block", Detail: "A legacy block naming the 2.2 configuration files is required."}}
	}
	var diags hcl.Diagnostics
	if len(l.Files) == 0 {
		diags = append(diags, diag("No legacy files", "legacy.files must name at least one file.", l.FilesRange))
	}
	for _, f := range l.Files {
		lr.LegacyFiles = append(lr.LegacyFiles, rel(f))
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
	var d hcl.Diagnostics
	opt.Semantics, opt.Version, d = l.semantics()
	diags = append(diags, d...)
	for k, v := range l.PathMap {
		if !filepath.IsAbs(k) {
			diags = append(diags, diag("Invalid path_map", fmt.Sprintf("%q is not an absolute path as the legacy configuration names it.", k), l.PathMapRange))
		}
		if lr.PathMap == nil {
			lr.PathMap = map[string]string{}
		}
		lr.PathMap[k] = rel(v)
	}
	if l.Forward != nil {
		opt.ForwardUnfaithful = *l.Forward
	}
	lr.Legacy = opt
	if l.Address != nil {
		ip, port, err := parseLegacyAddress(*l.Address)
		if err != nil {
			diags = append(diags, diag("Invalid legacy address", err.Error(), l.AddressRange))
		}
		lr.LegacyIP, lr.LegacyPort = ip, port
	}
	lr.Demote, lr.DemoteAt, d = l.demoted()
	diags = append(diags, d...)
	return lr, diags
}

// semantics reads legacy.semantics ("2.2" unless set) and
// legacy.version, which must be a release of that semantics' server.
func (l *legacyBlock) semantics() (sem translate.Semantics, version string, diags hcl.Diagnostics) {
	name := string(translate.Legacy22)
	if l.Semantics != nil {
		name = *l.Semantics
	}
	switch translate.Semantics(name) {
	case translate.Compat24, translate.Legacy22:
		sem = translate.Semantics(name)
	default:
		diags = append(diags, diag("Unknown semantics",
			fmt.Sprintf("semantics %q is not \"2.2\" (what Apache 2.2 did with the rules, the default) or \"2.4-compat\" (what Apache 2.4 does with them under mod_access_compat).", name), l.SemanticsRange))
	}
	if l.Version != nil {
		want := "2.4"
		if sem == translate.Legacy22 {
			want = "2.2"
		}
		if !legacyVersion.MatchString(*l.Version) || !strings.HasPrefix(*l.Version, want+".") {
			diags = append(diags, diag("Invalid legacy version",
				fmt.Sprintf("version %q is not a %s.x release (the version of the server whose rules these are, for <IfVersion>; semantics %q).", *l.Version, want, sem), l.VersionRange))
		}
		version = *l.Version
	}
	return sem, version, diags
}

// demoted reads legacy.demote: the rule IDs demoted to shadow-only, and
// where they are written (nil and "" for none).
func (l *legacyBlock) demoted() (map[string]bool, string, hcl.Diagnostics) {
	if len(l.Demote) == 0 {
		return nil, "", nil
	}
	var diags hcl.Diagnostics
	ids := map[string]bool{}
	for _, id := range l.Demote {
		if !ruleIDPattern(id) {
			diags = append(diags, diag("Invalid rule ID", fmt.Sprintf("%q is not a rule ID (12 hexadecimal digits, as orderly_rule_info and orderly explain show them).", id), l.DemoteRange))
		}
		ids[id] = true
	}
	return ids, l.DemoteRange.String(), diags
}

// build validates the native block, whose roots and path_map default to
// the legacy block's.
func (n *nativeBlock) build(rel func(string) string, legacy legacyRuntime) (nativeRuntime, hcl.Diagnostics) {
	var nr nativeRuntime
	if n == nil {
		return nr, nil
	}
	var diags hcl.Diagnostics
	if len(n.Files) == 0 {
		diags = append(diags, diag("No native files", "native.files must name at least one file.", n.FilesRange))
	}
	for _, f := range n.Files {
		nr.NativeFiles = append(nr.NativeFiles, rel(f))
	}
	// The native configuration is 2.4's own: it means what Apache 2.4
	// does with it.
	opt := translate.LoadOptions{Defines: map[string]bool{}, Options: translate.Options{Semantics: translate.Compat24}}
	if n.ServerRoot != nil {
		opt.ServerRoot = rel(*n.ServerRoot)
	} else {
		opt.ServerRoot = legacy.Legacy.ServerRoot
	}
	if n.DocumentRoot != nil {
		opt.DocumentRoot = rel(*n.DocumentRoot)
	} else {
		opt.DocumentRoot = legacy.Legacy.DocumentRoot
	}
	for _, d := range n.Defines {
		opt.Defines[d] = true
	}
	opt.Modules = n.Modules
	nr.Native = &opt
	nr.NativePathMap = legacy.PathMap
	if n.PathMap != nil {
		nr.NativePathMap = map[string]string{}
		for k, v := range n.PathMap {
			if !filepath.IsAbs(k) {
				diags = append(diags, diag("Invalid path_map", fmt.Sprintf("%q is not an absolute path as the native configuration names it.", k), n.PathMapRange))
			}
			nr.NativePathMap[k] = rel(v)
		}
	}
	return nr, diags
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
			var ok bool
			if sc.Host, ok = scopeHost(*b.Host); !ok {
				diags = append(diags, diag("Invalid scope host", fmt.Sprintf("%q is not a host name or a bracketed IPv6 address (no port, no scheme).", *b.Host), b.HostRange))
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

// scopeHost is a scope's host as the proxy compares it with a request's
// Host once normalised (walk.HostName, Apache's fix_hostname): a name,
// lower case and without a final dot, or an IPv6 literal written in
// brackets, kept without them as Apache keeps it. ok is false for
// anything else, a port included.
func scopeHost(s string) (host string, ok bool) {
	if strings.HasPrefix(s, "[") {
		h, ok := walk.HostName(s)
		return h, ok && strings.HasSuffix(s, "]") && strings.Contains(h, ":")
	}
	h := strings.ToLower(strings.TrimSuffix(s, "."))
	return h, h != "" && !strings.ContainsAny(h, ":/ []")
}

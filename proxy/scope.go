package proxy

import (
	"hash/fnv"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// The policies a scope can enforce or shadow.
const (
	// PolicyLegacy is the translated 2.2 configuration.
	PolicyLegacy = "legacy"
	// PolicyNative is the site's own 2.4 configuration.
	PolicyNative = "native"
)

// DefaultScope names the scope of requests no configured scope takes.
const DefaultScope = "default"

// Scope is a part of the site (a virtual host, a path prefix, or both)
// with its own mode and policies. A scope moving from one policy to
// another (Shadow to Enforce) may do it for a share of its clients:
// Percent of them, chosen by a stable hash of the client address (or the
// user) salted with the scope's name, are decided by Enforce and the rest
// by Shadow, each evaluated beside the other so that no request goes
// unchecked. Raising Percent never moves a client out of the Enforce
// cohort.
type Scope struct {
	Name string
	// Host is the lower-case host name the scope covers, without port;
	// "" covers every host.
	Host string
	// Path is the URL-path prefix the scope covers, matched on whole
	// segments of the path as Apache normalises it; "" covers every path.
	Path string
	Mode Mode
	// Enforce names the policy that decides (PolicyLegacy or
	// PolicyNative); Shadow the one evaluated beside it, or "".
	Enforce, Shadow string
	// Percent is the share of clients (0 to 100) Enforce decides when
	// Shadow is set; the others are decided by Shadow. Mind the zero
	// value: with Shadow set, 0 is no client.
	Percent float64
	// ByUser picks the cohort by the Basic-auth user name when the
	// request carries one, by client address otherwise.
	ByUser bool

	counts *scopeCounts // its request counters (metrics.go), set before it is in force
}

// Policies are what one generation of the configuration decides with.
type Policies struct {
	// Legacy is the translated 2.2 configuration, counting every rule.
	Legacy *walk.Engine
	// LegacyEnforced is Legacy without its demoted rules (shadow-only:
	// counted by Legacy, no longer enforced); nil when none is demoted.
	// It decides dry.
	LegacyEnforced *walk.Engine
	// Native is the site's 2.4 configuration; nil when there is none.
	Native *walk.Engine
	// Scopes are the configured scopes; requests no scope takes belong
	// to the default scope, which enforces Legacy in the handler's mode.
	Scopes []Scope
	// Demoted lists the IDs of the demoted rules.
	Demoted map[string]bool
	// Mode is the default scope's mode, and that of scopes that name
	// none; "" is the handler's Config.Mode.
	Mode Mode

	scopes    []*Scope // most specific first, the default last
	byPath    bool     // some scope has a path: requests need theirs to find their scope
	anyShadow bool     // some scope is in shadow mode: serve records the answers
}

// prepare orders the scopes for lookup and adds the default one.
func (p *Policies) prepare(mode Mode) {
	if p.Mode != "" {
		mode = p.Mode
	}
	p.scopes = p.scopes[:0]
	p.byPath, p.anyShadow = false, false
	hasDefault := false
	for i := range p.Scopes {
		s := &p.Scopes[i]
		if s.Mode == "" {
			s.Mode = mode
		}
		if s.Enforce == "" {
			s.Enforce = PolicyLegacy
		}
		if s.Shadow == "" || s.Percent > 100 {
			s.Percent = 100
		}
		if s.Host == "" && (s.Path == "" || s.Path == "/") {
			hasDefault = true
		}
		if s.Path != "" && s.Path != "/" {
			p.byPath = true
		}
		p.scopes = append(p.scopes, s)
	}
	if !hasDefault {
		p.scopes = append(p.scopes, &Scope{Name: DefaultScope, Mode: mode, Enforce: PolicyLegacy, Percent: 100})
	}
	for _, s := range p.scopes {
		p.anyShadow = p.anyShadow || s.Mode == ModeShadow
	}
	// Host-specific scopes first, then longer prefixes; ties keep the
	// configured order.
	sort.SliceStable(p.scopes, func(i, j int) bool {
		a, b := p.scopes[i], p.scopes[j]
		if (a.Host != "") != (b.Host != "") {
			return a.Host != ""
		}
		return len(a.Path) > len(b.Path)
	})
}

// Rules returns every rule of the policies, legacy then native, for the
// metrics and the state file.
func (p *Policies) Rules() []*policy.Rule {
	rules := p.Legacy.Rules()
	if p.Native != nil {
		rules = append(rules, p.Native.Rules()...)
	}
	return rules
}

// identities returns the Identities of the policies' engines that are
// proxy's, each once.
func (p *Policies) identities() []*Identity {
	var out []*Identity
	for _, e := range []*walk.Engine{p.Legacy, p.LegacyEnforced, p.Native} {
		if e == nil {
			continue
		}
		if id, ok := e.Identity().(*Identity); ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// LDAPCacheEntries returns the entries the LDAP caches of the policies
// hold now (the counters at zero: see authfile.Identity.LDAPCounters).
func (p *Policies) LDAPCacheEntries() ldapauth.CacheStats {
	var s ldapauth.CacheStats
	for _, id := range p.identities() {
		s.Add(id.LDAPCacheStats().EntriesOnly())
	}
	return s
}

// CloseLDAP closes the idle LDAP connections of the policies (a
// configuration a reload replaced); connections in use are closed as
// they are given back.
func (p *Policies) CloseLDAP() {
	for _, id := range p.identities() {
		id.CloseLDAP()
	}
}

// Unclaimed returns the saved or inherited counters no rule in force has
// claimed (see walk.Engine.Unclaimed).
func (p *Policies) Unclaimed() []*policy.Rule {
	out := p.Legacy.Unclaimed()
	if p.Native != nil {
		out = append(out, p.Native.Unclaimed()...)
	}
	return out
}

// Inherit carries counters from old to the rules that kept their IDs
// and returns how many configuration rules did.
func (p *Policies) Inherit(old *Policies) int {
	kept := p.Legacy.Inherit(old.Legacy)
	if p.Native != nil {
		if old.Native != nil {
			kept += p.Native.Inherit(old.Native)
		} else {
			// A native policy added by this reload may still hold rules
			// that were legacy ones in the state of an earlier process.
			kept += p.Native.Inherit(old.Legacy)
		}
	}
	return kept
}

// Restore gives saved counters to the rules with their IDs.
func (p *Policies) Restore(saved []*policy.Rule) {
	left := p.Legacy.Restore(saved)
	if p.Native != nil {
		p.Native.Restore(left)
	}
}

// engine returns the engine of the named policy.
func (p *Policies) engine(name string) *walk.Engine {
	switch name {
	case PolicyLegacy:
		return p.Legacy
	case PolicyNative:
		return p.Native
	}
	return nil
}

// scope returns the scope of a request for the Host header host on the
// normalised path. A scope's host is the name Apache's virtual-host
// selection reads in the header (walk.HostName); a Host Apache refuses
// (400) names none, and belongs to the scopes of every host.
func (p *Policies) scope(host, path string, pathOK bool) *Scope {
	host, _ = walk.HostName(host)
	for _, s := range p.scopes {
		if s.Host != "" && s.Host != host {
			continue
		}
		if s.Path != "" && s.Path != "/" {
			// A target Apache refuses belongs to no path scope: it is
			// decided by the host's or the default scope.
			if !pathOK || !underPrefix(path, s.Path) {
				continue
			}
		}
		return s
	}
	return p.scopes[len(p.scopes)-1]
}

// underPrefix reports whether path is prefix or below it, on whole
// segments: "/api" covers "/api" and "/api/x", not "/apix".
func underPrefix(path, prefix string) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	return len(path) == len(prefix) || strings.HasSuffix(prefix, "/") || path[len(prefix)] == '/'
}

// inEnforceCohort reports whether the client (or user) is among the
// scope's Percent share decided by its Enforce policy. The hash puts each
// key at a fixed point of [0, 10000): a client in the cohort at some
// percentage stays in it at every higher one.
func (s *Scope) inEnforceCohort(client netip.Addr, user string) bool {
	if s.Percent >= 100 {
		return true
	}
	if s.Percent <= 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(s.Name))
	h.Write([]byte{0})
	if s.ByUser && user != "" {
		h.Write([]byte("user:" + user))
	} else {
		b := client.As16()
		h.Write(b[:])
	}
	return float64(h.Sum64()%10000) < s.Percent*100
}

// InForce returns the scopes as requests meet them: most specific first,
// the default scope last.
func (p *Policies) InForce() []Scope {
	out := make([]Scope, len(p.scopes))
	for i, s := range p.scopes {
		out[i] = *s
	}
	return out
}

// PolicyOf names the policy a rule belongs to: native when it is one of
// the native configuration's, legacy otherwise.
func (p *Policies) PolicyOf() func(*policy.Rule) string {
	native := map[*policy.Rule]bool{}
	if p.Native != nil {
		for _, r := range p.Native.Rules() {
			native[r] = true
		}
	}
	return func(r *policy.Rule) string {
		if native[r] {
			return PolicyNative
		}
		return PolicyLegacy
	}
}

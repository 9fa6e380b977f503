package translate

import (
	"github.com/orderly-proxy/orderly/policy"
)

// A Scope is one section of the model, of the configuration or an
// .htaccess file, with the configuration (the main server's or a virtual
// host's) whose requests it applies to. orderly lint reads its access
// findings from scopes (Conversion.Scopes): what a section sets, what it
// inherits and what is in force there come from the model orderly serve
// decides with and orderly translate writes from, not from a second
// reading of the legacy rules (issue 17: one model).
type Scope struct {
	Section *Section
	Config  *Config
}

// ScopeKey is where a section opens: its file and line, an .htaccess
// file's line 1.
type ScopeKey struct {
	File string
	Line int
}

// Key returns where s opens.
func (s *Section) Key() ScopeKey {
	if s.Kind == KindHtaccess {
		return ScopeKey{s.Path, 1}
	}
	return ScopeKey{s.Pos.File, s.Pos.Line}
}

// MergedBefore returns the sections with access rules (Order/Allow/Deny,
// Satisfy, Require, AuthType) that Apache merges before the scope's for
// every request it applies to, in merge order; or, where they differ from
// request to request, why (and no sections).
func (sc Scope) MergedBefore() ([]*Section, string) {
	s := sc.Section
	if s.Kind == KindHtaccess || s.htChain != nil {
		return s.htChain, ""
	}
	return ancestorsWith(sc.Config, s, func(c *DirConf) bool {
		return c.HasAccessRules() || c.AuthType != nil
	})
}

// InForce is what a scope's requests have in force once the sections
// merged before it and its own are merged.
type InForce struct {
	Require bool // a Require: 2.4's tree, or 2.2's lines under 2.2 semantics
	// DBMGroups and GroupFile: the group files in force (AuthDBMGroupFile,
	// AuthGroupFile), each set to a file.
	DBMGroups, GroupFile bool
	// GroupNotAuthoritative: AuthzGroupFileAuthoritative Off.
	GroupNotAuthoritative bool
}

// InForce returns what is in force in the scope, or why it differs from
// request to request.
func (sc Scope) InForce() (InForce, string) {
	chain, why := sc.MergedBefore()
	if why != "" {
		return InForce{}, why
	}
	var l Layers
	l.merge(chain, sc.Section)
	in := InForce{Require: l.Authz != nil && l.Authz.Root != nil || l.Req22 != nil, DBMGroups: l.DBMGroups, GroupFile: l.GroupFile}
	for _, s := range chain {
		if a := s.Conf.GroupAuthoritative; a != nil {
			in.GroupNotAuthoritative = !*a
		}
	}
	if a := sc.Section.Conf.GroupAuthoritative; a != nil {
		in.GroupNotAuthoritative = !*a
	}
	return in, ""
}

// AdmitsAll reports whether the Order/Allow/Deny of c let every client
// through, for every method (nil: none, which admits everybody).
func AdmitsAll(c *policy.Compat) bool {
	return compatEvery(c, policy.ProvAllGranted)
}

// RefusesAll reports whether the Order/Allow/Deny of c refuse every
// client, for every method.
func RefusesAll(c *policy.Compat) bool {
	return c != nil && compatEvery(c, policy.ProvAllDenied)
}

// compatEvery reports whether c decides as the provider p (all granted,
// all denied) for every client of every method.
func compatEvery(c *policy.Compat, p policy.Provider) bool {
	for m := 0; m < policy.MaxMethods; m++ {
		if t := CompatTree(c, m); t.Kind != policy.Leaf || t.Provider != p || t.Negate {
			return false
		}
	}
	return true
}

// HasOrderRules reports whether c holds Order, Allow or Deny lines, not
// only Satisfy (an Order that names the default order is the default's
// behaviour, and counts as none).
func HasOrderRules(c *policy.Compat) bool {
	if c == nil {
		return false
	}
	if len(c.Allows) > 0 || len(c.Denys) > 0 {
		return true
	}
	for _, o := range c.Order {
		if o != policy.DenyAllow {
			return true
		}
	}
	return false
}

// SatisfiesAny reports whether the section sets Satisfy Any for some
// method: in mod_access_compat's slot under 2.4-compat semantics, in
// core's under 2.2.
func (s *Section) SatisfiesAny(sem Semantics) bool {
	if sem == Legacy22 {
		return SatisfiesAny22(s.Conf)
	}
	if c := s.Conf.Compat; c != nil {
		for _, v := range c.Satisfy {
			if v == policy.SatisfyAny {
				return true
			}
		}
	}
	return false
}

// OverrideSet reports whether a <Directory> section of some server (the
// main one or a virtual host) sets AllowOverride for the directory dir
// (canonical, with a trailing "/"), so that the default does not apply
// to its .htaccess file.
func (c *Config) OverrideSet(dir string) bool {
	for _, cfg := range c.Servers() {
		for _, s := range FileChain(cfg, dir) {
			if s.Conf.Override != nil {
				return true
			}
		}
	}
	return false
}

// AccessWord returns the kind of the word w of an Allow or Deny line
// (after "from"), as the model reads it: all, an address or network, a
// host name, an environment variable; ok is false for a word Apache
// refuses.
func AccessWord(w string, sem Semantics) (kind policy.AccessKind, ok bool) {
	a, err, _ := accessWord(w, sem)
	return a.Kind, err == ""
}

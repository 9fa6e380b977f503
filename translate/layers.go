package translate

import (
	"math/bits"

	"github.com/orderly-proxy/orderly/policy"
)

// Layers is what one section has in force: its compat layer and its
// Require layer (2.4-compat: the authz slot; 2.2: the Require lines and
// Satisfy). The model merges them (MergeLayers, Inherited); Scope.InForce
// and translate/convert read them.
type Layers struct {
	Compat *policy.Compat
	Authz  *AuthzSlot
	Req22  []policy.Require22
	// 2.2's group files in force: Require group is mod_authz_groupfile's
	// with AuthGroupFile, mod_authz_dbm's with AuthDBMGroupFile.
	GroupFile, DBMGroups bool
	// 2.2's Authz*Authoritative Off in force: AuthzUserAuthoritative,
	// AuthzGroupFileAuthoritative, AuthzDBMAuthoritative,
	// AuthzOwnerAuthoritative (each module's configuration replaced
	// whole, as the walk merges it).
	UserNotAuth, GroupNotAuth, DBMNotAuth, OwnerNotAuth bool
	// LDAP is mod_authnz_ldap's configuration in force (nil: its
	// defaults, no AuthLDAPURL).
	LDAP   *LDAPDir
	Sat22  [policy.MaxMethods]policy.Satisfy
	SatSet policy.MethodMask // the methods Sat22 is set for
}

// Inherited returns the section's two Layers with what it inherits folded
// in, or why that depends on the request.
func Inherited(cfg *Config, s *Section) (*Layers, *Layers, string) {
	chain, why := InheritedChain(cfg, s)
	if why != "" {
		if SelfDenies(cfg, s) {
			// The section refuses everyone by itself: what it inherits
			// cannot change that.
			return &Layers{Compat: s.Conf.Compat}, &Layers{}, ""
		}
		return nil, nil, why
	}
	l := mergeLayers(chain, s)
	return l, l, ""
}

// InheritedChain lists the sections that merge before s for every
// request s applies to, or says why they differ from request to request.
func InheritedChain(cfg *Config, s *Section) ([]*Section, string) {
	if s.Kind == KindHtaccess || s.htChain != nil {
		return s.htChain, ""
	}
	return ancestors(cfg, s)
}

// MergeLayers folds the Layers of the sections, in Apache's merge order.
// As the directory, file and location walks do, the sections of one walk
// are merged among themselves first and their result over what the walks
// before gave: AuthMerging And/Or is not associative.
func MergeLayers(chain []*Section) (*Layers, *Layers) {
	l := mergeLayers(chain, nil)
	return l, l
}

// mergeLayers is MergeLayers of chain followed by last, unless nil:
// a section over what it inherits, without a list made for the two.
func mergeLayers(chain []*Section, last *Section) *Layers {
	l := new(Layers)
	l.merge(chain, last)
	return l
}

// merge sets l, empty, to mergeLayers of chain and last.
func (l *Layers) merge(chain []*Section, last *Section) {
	var walked *AuthzSlot // this walk's sections so far
	phase := -1
	n := len(chain)
	if last != nil {
		n++
	}
	for i := range n {
		a := last
		if i < len(chain) {
			a = chain[i]
		}
		if p := WalkPhase(a); p != phase {
			l.Authz, walked, phase = mergeAuthzOver(l.Authz, walked), nil, p
		}
		c := a.Conf
		if c.Compat != nil {
			l.Compat = c.Compat
		}
		if c.Authz != nil {
			walked = mergeAuthzOver(walked, c.Authz)
		}
		if c.Requires22 != nil {
			l.Req22 = c.Requires22
		}
		if c.GroupFile != nil {
			l.GroupFile = *c.GroupFile != ""
		}
		if c.GroupAuthoritative != nil {
			l.GroupNotAuth = !*c.GroupAuthoritative
		}
		if c.UserAuthoritative != nil {
			l.UserNotAuth = !*c.UserAuthoritative
		}
		if c.OwnerAuthoritative != nil {
			l.OwnerNotAuth = !*c.OwnerAuthoritative
		}
		if c.DBMGroupFile != nil {
			l.DBMGroups = *c.DBMGroupFile != ""
			l.DBMNotAuth = c.DBMAuthoritative != nil && !*c.DBMAuthoritative
		}
		if c.LDAP != nil {
			l.LDAP = c.LDAP
		}
		if c.Satisfy22Set == policy.AllMethods {
			l.Sat22 = c.Satisfy22 // a Satisfy outside <Limit>: the whole array
		} else {
			for set := c.Satisfy22Set; set != 0; set &= set - 1 {
				i := bits.TrailingZeros64(uint64(set))
				l.Sat22[i] = c.Satisfy22[i]
			}
		}
		l.SatSet |= c.Satisfy22Set
	}
	l.Authz = mergeAuthzOver(l.Authz, walked)
}

// mergeAuthzOver is MergeAuthz where either side may be missing.
func mergeAuthzOver(base, add *AuthzSlot) *AuthzSlot {
	if add == nil {
		return base
	}
	return MergeAuthz(base, add)
}

// CompatTree is Order/Allow/Deny for method m as a Require tree.
func CompatTree(c *policy.Compat, m int) *policy.Node {
	if c == nil {
		return allLeaf(policy.ProvAllGranted)
	}
	bit := policy.MethodMask(1) << uint(m)
	allowAll, allowEmpty := listFor(c.Allows, bit)
	denyAll, denyEmpty := listFor(c.Denys, bit)
	// The trees of the lists are made only where the answer holds them.
	allow := func() *policy.Node { return listTree(c.Allows, bit) }
	notDenied := func() *policy.Node {
		n := listTree(c.Denys, bit)
		n.Negate = true
		return n
	}
	none := func() *policy.Node { // not matched by the deny list
		return &policy.Node{Kind: policy.All, Methods: policy.AllMethods, Children: []*policy.Node{allLeaf(policy.ProvAllGranted), notDenied()}}
	}
	switch c.Order[m] {
	case policy.DenyAllow:
		switch {
		case allowAll || denyEmpty:
			return allLeaf(policy.ProvAllGranted)
		case denyAll && allowEmpty:
			return allLeaf(policy.ProvAllDenied)
		case denyAll:
			return allow()
		case allowEmpty:
			return none()
		}
		return &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: []*policy.Node{allow(), none()}}
	default: // allow,deny and mutual-failure
		switch {
		case denyAll || allowEmpty:
			return allLeaf(policy.ProvAllDenied)
		case allowAll && denyEmpty:
			return allLeaf(policy.ProvAllGranted)
		case allowAll:
			return none()
		case denyEmpty:
			return allow()
		}
		return &policy.Node{Kind: policy.All, Methods: policy.AllMethods, Children: []*policy.Node{allow(), notDenied()}}
	}
}

// allLeaf is a leaf of the provider p for every method.
func allLeaf(p policy.Provider) *policy.Node {
	return &policy.Node{Kind: policy.Leaf, Provider: p, Methods: policy.AllMethods}
}

// listFor reports whether the Allow or Deny list has "all" for the
// method bit, and whether it has nothing for it.
func listFor(list []policy.AccessRule, bit policy.MethodMask) (hasAll, empty bool) {
	empty = true
	for _, a := range list {
		if a.Methods&bit != 0 {
			empty = false
			hasAll = hasAll || a.Kind == policy.AccessAll
		}
	}
	return hasAll, empty
}

// listTree is the RequireAny of the Allow or Deny list's words for the
// method bit, "all" left out. The container and its leaves are one
// array, and the leaves' addresses and names another each.
func listTree(list []policy.AccessRule, bit policy.MethodMask) *policy.Node {
	n, ips, names := 0, 0, 0
	for _, a := range list {
		if a.Methods&bit == 0 {
			continue
		}
		switch a.Kind {
		case policy.AccessAll:
			continue
		case policy.AccessIP:
			ips++
		case policy.AccessHost, policy.AccessEnv:
			names++
		}
		n++
	}
	nodes := make([]policy.Node, 1+n)
	any := &nodes[0]
	*any = policy.Node{Kind: policy.Any, Methods: policy.AllMethods}
	if n == 0 {
		return any
	}
	any.Children = make([]*policy.Node, 0, n)
	var subnets []policy.Subnet
	if ips > 0 {
		subnets = make([]policy.Subnet, ips)
	}
	var args []string
	if names > 0 {
		args = make([]string, names)
	}
	for _, a := range list {
		if a.Methods&bit == 0 || a.Kind == policy.AccessAll {
			continue
		}
		leaf := &nodes[1+len(any.Children)]
		switch a.Kind {
		case policy.AccessIP:
			subnets[0] = a.Subnet
			*leaf = policy.Node{Kind: policy.Leaf, Provider: policy.ProvIP, Subnets: subnets[:1:1]}
			subnets = subnets[1:]
		case policy.AccessHost, policy.AccessEnv:
			args[0] = a.Name
			p := policy.ProvHost
			if a.Kind == policy.AccessEnv {
				p = policy.ProvEnv
			}
			*leaf = policy.Node{Kind: policy.Leaf, Provider: p, Args: args[:1:1]}
			args = args[1:]
		case policy.AccessNotEnv:
			*leaf = policy.Node{Kind: policy.All, Children: []*policy.Node{allLeaf(policy.ProvAllGranted),
				{Kind: policy.Leaf, Provider: policy.ProvEnv, Args: []string{a.Name}, Negate: true, Methods: policy.AllMethods}}}
		}
		leaf.Methods = policy.AllMethods
		any.Children = append(any.Children, leaf)
	}
	return any
}

// SelfDenies reports whether a section's own host-access rules refuse
// every request of every method with Satisfy All (2.4-compat), so that
// nothing it inherits matters.
func SelfDenies(cfg *Config, s *Section) bool {
	c := s.Conf.Compat
	if c == nil {
		return false
	}
	for m := 0; m < policy.MaxMethods; m++ {
		sat := c.Satisfy[m]
		if cfg.Semantics == Legacy22 {
			if s.Conf.Satisfy22Set&(1<<uint(m)) == 0 {
				return false // 2.2: Satisfy is inherited from core
			}
			sat = s.Conf.Satisfy22[m]
		}
		if sat == policy.SatisfyAny {
			return false
		}
		if t := CompatTree(c, m); t.Kind != policy.Leaf || t.Provider != policy.ProvAllDenied {
			return false
		}
	}
	return true
}

// SatisfiesAny22 reports whether a section sets Satisfy Any for some method
// (2.2): "Satisfy All" is the default's behaviour.
func SatisfiesAny22(c *DirConf) bool {
	for m := range c.Satisfy22 {
		if c.Satisfy22Set&(1<<uint(m)) != 0 && c.Satisfy22[m] == policy.SatisfyAny {
			return true
		}
	}
	return false
}

// HasAccessRules reports whether the section configuration holds access
// rules: Order/Allow/Deny or Satisfy, or a Require (2.4's tree, 2.2's
// lines). AuthType and the other authentication settings do not count
// (HasAccess counts them).
func (c *DirConf) HasAccessRules() bool {
	return c.Compat != nil || c.Authz != nil || c.Requires22 != nil || c.Satisfy22Set != 0
}

// SetsChain22 reports whether c sets what Apache 2.2's authorization
// modules read beside the Require lines, and so what the lines mean
// there (policy/decide22.go): AuthGroupFile, AuthDBMGroupFile (with
// AuthzDBMType), mod_authnz_ldap's configuration, and the
// AuthzUserAuthoritative, AuthzGroupFileAuthoritative,
// AuthzDBMAuthoritative and AuthzOwnerAuthoritative flags.
func (c *DirConf) SetsChain22() bool {
	return c.GroupFile != nil || c.GroupAuthoritative != nil || c.UserAuthoritative != nil || c.DBMGroupFile != nil || c.LDAP != nil ||
		c.OwnerAuthoritative != nil
}

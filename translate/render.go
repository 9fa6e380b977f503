package translate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
)

// renderScope writes the Require lines of a section from its layers.
func renderScope(cfg *Config, compat, authz *layers, indent string) []string {
	classes := methodClasses(cfg, compat, authz)
	if len(classes) == 1 {
		return policy.Render(scopeTree(cfg, compat, authz, classes[0].rep), indent)
	}
	var out []string
	for _, cl := range classes {
		if cl.rest {
			out = append(out, indent+"<LimitExcept "+strings.Join(cl.except, " ")+">")
		} else {
			out = append(out, indent+"<Limit "+strings.Join(cl.names, " ")+">")
		}
		out = append(out, policy.Render(scopeTree(cfg, compat, authz, cl.rep), indent+"    ")...)
		if cl.rest {
			out = append(out, indent+"</LimitExcept>")
		} else {
			out = append(out, indent+"</Limit>")
		}
	}
	return out
}

type methodClass struct {
	rep    int      // a method number of the class
	names  []string // its named methods
	rest   bool     // the class of unknown methods: written as LimitExcept
	except []string
}

// methodClasses groups the methods that the layers treat alike.
func methodClasses(cfg *Config, compat, authz *layers) []methodClass {
	names := cfg.methodNames
	if names == nil {
		names = methodNames(cfg.Methods)
	}
	if uniformMethods(compat, authz) {
		// No <Limit> anywhere in the layers: one class, every method.
		return []methodClass{{rep: policy.MethodInvalid, rest: true, names: names}}
	}
	key := func(m int) string { return methodKey(compat, authz, m) }
	restKey := key(policy.MethodInvalid)
	var classes []methodClass
	idx := map[string]int{restKey: 0}
	classes = append(classes, methodClass{rep: policy.MethodInvalid, rest: true})
	for _, name := range names {
		m := cfg.Methods.Number(name)
		k := key(m)
		i, ok := idx[k]
		if !ok {
			i = len(classes)
			idx[k] = i
			classes = append(classes, methodClass{rep: m})
		}
		classes[i].names = append(classes[i].names, name)
	}
	if len(classes) == 1 {
		return classes
	}
	for _, c := range classes[1:] {
		classes[0].except = append(classes[0].except, c.names...)
	}
	return append(classes[1:], classes[0])
}

// methodNames are the methods a translation names, in its order: the
// built-in ones, then the registered ones, by number.
func methodNames(ms *policy.Methods) []string {
	names := []string{"GET", "PUT", "POST", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PROPFIND", "PROPPATCH",
		"MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "VERSION-CONTROL", "CHECKOUT", "UNCHECKOUT", "CHECKIN", "UPDATE",
		"LABEL", "REPORT", "MKWORKSPACE", "MKACTIVITY", "BASELINE-CONTROL", "MERGE"}
	registered := ms.Registered()
	custom := make([]string, 0, len(registered))
	for name := range registered {
		custom = append(custom, name)
	}
	slices.SortFunc(custom, func(a, b string) int { return registered[a] - registered[b] })
	return slices.Clip(append(names, custom...))
}

// uniformMethods reports whether the layers decide every method alike:
// no line of them is limited to some methods, so methodKey would give
// every method the same key.
func uniformMethods(compat, authz *layers) bool {
	if c := compat.compat; c != nil {
		for m := 1; m < policy.MaxMethods; m++ {
			if c.Order[m] != c.Order[0] || c.Satisfy[m] != c.Satisfy[0] {
				return false
			}
		}
		for _, a := range c.Allows {
			if a.Methods != policy.AllMethods {
				return false
			}
		}
		for _, a := range c.Denys {
			if a.Methods != policy.AllMethods {
				return false
			}
		}
	}
	for m := 1; m < policy.MaxMethods && compat.satSet != 0; m++ { // unset: all alike
		if compat.sat22[m] != compat.sat22[0] {
			return false
		}
	}
	for _, q := range authz.req22 {
		if q.Methods != policy.AllMethods {
			return false
		}
	}
	if authz.authz != nil && authz.authz.Root != nil {
		return uniformTree(authz.authz.Root)
	}
	return true
}

func uniformTree(n *policy.Node) bool {
	if n.Methods != policy.AllMethods {
		return false
	}
	for _, c := range n.Children {
		if !uniformTree(c) {
			return false
		}
	}
	return true
}

func methodKey(compat, authz *layers, m int) string {
	bit := policy.MethodMask(1) << uint(m)
	var b strings.Builder
	if c := compat.compat; c != nil {
		fmt.Fprintf(&b, "o%d s%d ", c.Order[m], c.Satisfy[m])
		for i, a := range c.Allows {
			if a.Methods&bit != 0 {
				fmt.Fprintf(&b, "a%d ", i)
			}
		}
		for i, a := range c.Denys {
			if a.Methods&bit != 0 {
				fmt.Fprintf(&b, "d%d ", i)
			}
		}
	}
	fmt.Fprintf(&b, "S%d ", compat.sat22[m])
	for i, q := range authz.req22 {
		if q.Methods&bit != 0 {
			fmt.Fprintf(&b, "r%d ", i)
		}
	}
	if authz.authz != nil && authz.authz.Root != nil {
		fmt.Fprintf(&b, "z%t", authz.authz.Root.Methods&bit != 0)
		keyTree(&b, authz.authz.Root, bit)
	}
	return b.String()
}

func keyTree(b *strings.Builder, n *policy.Node, bit policy.MethodMask) {
	fmt.Fprintf(b, "(%t", n.Methods&bit != 0)
	for _, c := range n.Children {
		keyTree(b, c, bit)
	}
	b.WriteString(")")
}

// scopeTree is the Require tree deciding as the two layers do for method m.
func scopeTree(cfg *Config, compat, authz *layers, m int) *policy.Node {
	granted := &policy.Node{Kind: policy.Leaf, Provider: policy.ProvAllGranted, Methods: policy.AllMethods}
	c := compatTree(compat.compat, m)
	var sat policy.Satisfy
	var r *policy.Node
	if cfg.Semantics == Legacy22 {
		sat = compat.sat22[m]
		r = require22Tree(cfg, authz, m)
	} else {
		if compat.compat != nil {
			sat = compat.compat.Satisfy[m]
		}
		if authz.authz != nil && authz.authz.Root != nil {
			r = forMethod(authz.authz.Root, m)
		}
	}
	switch {
	case r == nil && sat == policy.SatisfyAny && cfg.Semantics != Legacy22:
		// 2.4: compat fails, then no Require: granted.
		return granted
	case r == nil:
		return c
	case sat == policy.SatisfyAny:
		return &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: []*policy.Node{c, r}}
	}
	return &policy.Node{Kind: policy.All, Methods: policy.AllMethods, Children: []*policy.Node{c, r}}
}

// forMethod keeps the parts of a Require tree that apply to method m,
// as a node limited to other methods is granted under RequireAll and
// neutral under RequireAny.
func forMethod(n *policy.Node, m int) *policy.Node {
	bit := policy.MethodMask(1) << uint(m)
	if n.Methods&bit == 0 {
		return nil
	}
	if n.Kind == policy.Leaf {
		c := *n
		c.Methods = policy.AllMethods
		return &c
	}
	c := *n
	c.Methods = policy.AllMethods
	c.Children = nil
	for _, ch := range n.Children {
		if k := forMethod(ch, m); k != nil {
			c.Children = append(c.Children, k)
		}
	}
	if len(c.Children) == 0 {
		return nil
	}
	return &c
}

// compatTree is Order/Allow/Deny for method m as a Require tree.
func compatTree(c *policy.Compat, m int) *policy.Node {
	all := func(p policy.Provider) *policy.Node {
		return &policy.Node{Kind: policy.Leaf, Provider: p, Methods: policy.AllMethods}
	}
	if c == nil {
		return all(policy.ProvAllGranted)
	}
	bit := policy.MethodMask(1) << uint(m)
	match := func(list []policy.AccessRule) (*policy.Node, bool, bool) {
		any := &policy.Node{Kind: policy.Any, Methods: policy.AllMethods}
		hasAll, empty := false, true
		for _, a := range list {
			if a.Methods&bit == 0 {
				continue
			}
			empty = false
			var leaf *policy.Node
			switch a.Kind {
			case policy.AccessAll:
				hasAll = true
				continue
			case policy.AccessIP:
				leaf = &policy.Node{Kind: policy.Leaf, Provider: policy.ProvIP, Subnets: []policy.Subnet{a.Subnet}}
			case policy.AccessHost:
				leaf = &policy.Node{Kind: policy.Leaf, Provider: policy.ProvHost, Args: []string{a.Name}}
			case policy.AccessEnv:
				leaf = &policy.Node{Kind: policy.Leaf, Provider: policy.ProvEnv, Args: []string{a.Name}}
			case policy.AccessNotEnv:
				leaf = &policy.Node{Kind: policy.All, Children: []*policy.Node{all(policy.ProvAllGranted),
					{Kind: policy.Leaf, Provider: policy.ProvEnv, Args: []string{a.Name}, Negate: true, Methods: policy.AllMethods}}}
			}
			leaf.Methods = policy.AllMethods
			any.Children = append(any.Children, leaf)
		}
		return any, hasAll, empty
	}
	allow, allowAll, allowEmpty := match(c.Allows)
	deny, denyAll, denyEmpty := match(c.Denys)
	none := func() *policy.Node { // not matched by the deny list
		n := *deny
		n.Negate = true
		return &policy.Node{Kind: policy.All, Methods: policy.AllMethods, Children: []*policy.Node{all(policy.ProvAllGranted), &n}}
	}
	switch c.Order[m] {
	case policy.DenyAllow:
		switch {
		case allowAll || denyEmpty:
			return all(policy.ProvAllGranted)
		case denyAll && allowEmpty:
			return all(policy.ProvAllDenied)
		case denyAll:
			return allow
		case allowEmpty:
			return none()
		}
		return &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: []*policy.Node{allow, none()}}
	default: // allow,deny and mutual-failure
		switch {
		case denyAll || allowEmpty:
			return all(policy.ProvAllDenied)
		case allowAll && denyEmpty:
			return all(policy.ProvAllGranted)
		case allowAll:
			return none()
		case denyEmpty:
			return allow
		}
		n := *deny
		n.Negate = true
		return &policy.Node{Kind: policy.All, Methods: policy.AllMethods, Children: []*policy.Node{allow, &n}}
	}
}

// require22Tree is 2.2's Require lines for method m as a 2.4 tree: the
// group file module decides first where it has lines and is authoritative,
// so user lines next to group lines never matter (they are dropped).
func require22Tree(cfg *Config, l *layers, m int) *policy.Node {
	bit := policy.MethodMask(1) << uint(m)
	var users, groups []*policy.Node
	for _, q := range l.req22 {
		if q.Methods&bit == 0 {
			continue
		}
		n := &policy.Node{Kind: policy.Leaf, Methods: policy.AllMethods, Args: q.Words[1:]}
		switch strings.ToLower(q.Words[0]) {
		case "valid-user":
			n.Provider = policy.ProvValidUser
			users = append(users, n)
		case "user":
			n.Provider = policy.ProvUser
			users = append(users, n)
		case "group":
			n.Provider = policy.ProvGroup
			if l.dbmGroups && cfg.Modules["authz_dbm_module"] {
				// AUTH-05: mod_authz_dbm's groups are 2.4's Require dbm-group.
				dbm := &policy.Node{Kind: policy.Leaf, Methods: policy.AllMethods, Provider: policy.ProvOther, Args: append([]string{"dbm-group"}, q.Words[1:]...)}
				if !l.groupFile {
					n = dbm
				} else {
					n = &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: []*policy.Node{n, dbm}}
				}
			}
			groups = append(groups, n)
		case "ldap-user", "ldap-group", "ldap-dn", "ldap-attribute", "ldap-filter":
			if cfg.Modules["authnz_ldap_module"] {
				// mod_authnz_ldap reads them the same way in 2.4.
				n.Provider, n.Args = policy.ProvOther, []string{strings.ToLower(q.Words[0]), q.Raw}
				users = append(users, n)
				continue
			}
			fallthrough
		default:
			// authz_default refuses an unknown keyword with 401: a user
			// must authenticate, then nobody is granted.
			n.Provider = policy.ProvUser
			n.Args = []string{"::no-such-user::"} // a user name cannot hold ":"
			users = append(users, n)
		}
	}
	pick := users
	if len(groups) > 0 && (cfg.GroupFirst || len(users) == 0) {
		pick = groups
	}
	if len(pick) == 0 {
		return nil
	}
	return &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: pick}
}

package convert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// renderScope writes the Require lines of a section from its translate.Layers.
func renderScope(cfg *translate.Config, compat, authz *translate.Layers, indent string) []string {
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

// methodClasses groups the methods that the translate.Layers treat alike.
func methodClasses(cfg *translate.Config, compat, authz *translate.Layers) []methodClass {
	names := methodNames(cfg.Methods)
	if uniformMethods(compat, authz) {
		// No <Limit> anywhere in the translate.Layers: one class, every method.
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

// uniformMethods reports whether the translate.Layers decide every method alike:
// no line of them is limited to some methods, so methodKey would give
// every method the same key.
func uniformMethods(compat, authz *translate.Layers) bool {
	if c := compat.Compat; c != nil {
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
	for m := 1; m < policy.MaxMethods && compat.SatSet != 0; m++ { // unset: all alike
		if compat.Sat22[m] != compat.Sat22[0] {
			return false
		}
	}
	for _, q := range authz.Req22 {
		if q.Methods != policy.AllMethods {
			return false
		}
	}
	if authz.Authz != nil && authz.Authz.Root != nil {
		return uniformTree(authz.Authz.Root)
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

func methodKey(compat, authz *translate.Layers, m int) string {
	bit := policy.MethodMask(1) << uint(m)
	var b strings.Builder
	if c := compat.Compat; c != nil {
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
	fmt.Fprintf(&b, "S%d ", compat.Sat22[m])
	for i, q := range authz.Req22 {
		if q.Methods&bit != 0 {
			fmt.Fprintf(&b, "r%d ", i)
		}
	}
	if authz.Authz != nil && authz.Authz.Root != nil {
		fmt.Fprintf(&b, "z%t", authz.Authz.Root.Methods&bit != 0)
		keyTree(&b, authz.Authz.Root, bit)
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

// scopeTree is the Require tree deciding as the two translate.Layers do for method m.
func scopeTree(cfg *translate.Config, compat, authz *translate.Layers, m int) *policy.Node {
	granted := &policy.Node{Kind: policy.Leaf, Provider: policy.ProvAllGranted, Methods: policy.AllMethods}
	c := translate.CompatTree(compat.Compat, m)
	var sat policy.Satisfy
	var r *policy.Node
	if cfg.Semantics == translate.Legacy22 {
		sat = compat.Sat22[m]
		r = require22Tree(cfg, authz, m)
	} else {
		if compat.Compat != nil {
			sat = compat.Compat.Satisfy[m]
		}
		if authz.Authz != nil && authz.Authz.Root != nil {
			r = forMethod(authz.Authz.Root, m)
		}
	}
	switch {
	case r == nil && sat == policy.SatisfyAny && cfg.Semantics != translate.Legacy22:
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

// require22Tree is 2.2's Require lines for method m as a 2.4 tree: the
// group file module decides first where it has lines and is authoritative,
// so user lines next to group lines never matter (they are dropped).
func require22Tree(cfg *translate.Config, l *translate.Layers, m int) *policy.Node {
	bit := policy.MethodMask(1) << uint(m)
	var users, groups []*policy.Node
	for _, q := range l.Req22 {
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
			if l.DBMGroups && cfg.Modules["authz_dbm_module"] {
				// AUTH-05: mod_authz_dbm's groups are 2.4's Require dbm-group.
				dbm := &policy.Node{Kind: policy.Leaf, Methods: policy.AllMethods, Provider: policy.ProvOther, Args: append([]string{"dbm-group"}, q.Words[1:]...)}
				if !l.GroupFile {
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

// sslSatisfyAny is why a section cannot be translated to 2.4 Require
// lines where SSLRequireSSL applies under Satisfy Any: with
// mod_access_compat, mod_ssl's refusal is one of the access checkers',
// which Satisfy Any lets a Require overcome; without it Satisfy is gone
// and the refusal is final. The translation would need mod_ssl's
// "Require ssl" inside the Require tree instead: "" where it does not
// apply.
func sslSatisfyAny(cfg *translate.Config, s *translate.Section, compat *translate.Layers) string {
	if compat == nil {
		return ""
	}
	anyMethod := false
	for i, v := range compat.Sat22 {
		anyMethod = anyMethod || v == policy.SatisfyAny || compat.Compat != nil && compat.Compat.Satisfy[i] == policy.SatisfyAny
	}
	if !anyMethod {
		return ""
	}
	// Only where the section sets SSLRequireSSL itself: left for review,
	// its access lines are commented out, which fails open wherever
	// else SSLRequireSSL comes from (a <Directory> under a <Location>
	// with Satisfy Any). There the translation stands: stricter than
	// 2.2 over plain HTTP (mod_ssl's refusal is final without
	// mod_access_compat), never more permissive.
	if s.Conf.SSL != nil && s.Conf.SSL.Required {
		return "SSLRequireSSL under Satisfy Any: with mod_access_compat its refusal is the access checkers', which a Require can overcome; without it the refusal is final. Write mod_ssl's Require ssl into the Require tree by hand"
	}
	return ""
}

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
	names  []string // its named methods (none where one class has them all: no <Limit> is written)
	rest   bool     // the class of unknown methods: written as LimitExcept
	except []string
}

// everyMethod is the class of every method, where no <Limit> is anywhere
// in the translate.Layers: written without naming any (shared, never
// written to).
var everyMethod = []methodClass{{rep: policy.MethodInvalid, rest: true}}

// methodClasses groups the methods that the translate.Layers treat alike.
func methodClasses(cfg *translate.Config, compat, authz *translate.Layers) []methodClass {
	if uniformMethods(compat, authz) {
		return everyMethod
	}
	names := methodNames(cfg.Methods)
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
	// Every method has the same value where each has the next one's.
	if c := compat.Compat; c != nil {
		if !alike(&c.Order) || !alike(&c.Satisfy) {
			return false
		}
		for i := range c.Allows { // by index: a rule is large to copy
			if c.Allows[i].Methods != policy.AllMethods {
				return false
			}
		}
		for i := range c.Denys {
			if c.Denys[i].Methods != policy.AllMethods {
				return false
			}
		}
	}
	if compat.SatSet != 0 && !alike(&compat.Sat22) { // unset: all alike
		return false
	}
	for i := range authz.Req22 {
		if authz.Req22[i].Methods != policy.AllMethods {
			return false
		}
	}
	if authz.Authz != nil && authz.Authz.Root != nil {
		return uniformTree(authz.Authz.Root)
	}
	return true
}

// alike reports whether every method has the same value in v: each has
// the next one's (the arrays compared at once).
func alike[T policy.Order | policy.Satisfy](v *[policy.MaxMethods]T) bool {
	return *(*[policy.MaxMethods - 1]T)(v[1:]) == *(*[policy.MaxMethods - 1]T)(v[:policy.MaxMethods-1])
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
		return &policy.Node{Kind: policy.Leaf, Provider: policy.ProvAllGranted, Methods: policy.AllMethods}
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

// chain22Default is the order of 2.2's auth_checker hooks where the
// configuration does not give one (policy.DefaultChain22).
var chain22Default = []string{"authnz_ldap_module", "authz_owner_module", "authz_dbm_module", "authz_groupfile_module", "authz_user_module"}

// require22Tree is 2.2's Require lines for method m as a 2.4 tree, read as
// 2.2's auth_checker hooks read them (policy/decide22.go), in the order
// the configuration runs them (Config.Authz22): each module that is
// configured and has lines of its own adds them as alternatives, and the
// first authoritative one to have any ends the list, its refusal being
// final. A line no module answers grants nobody (mod_authz_default): where
// no module answers any, the tree asks for a user and grants none.
//
// It is the tree for a file whose group mod_authz_owner finds: where
// that changes what the modules do beyond the "file-group" lines
// themselves, the section is left for review (fileGroup22).
func require22Tree(cfg *translate.Config, l *translate.Layers, m int) *policy.Node {
	qs := requires22For(l, m)
	if len(qs) == 0 {
		return nil
	}
	return any22(alts22(cfg, l, qs, true))
}

// requires22For lists the Require lines in force for method m.
func requires22For(l *translate.Layers, m int) []*policy.Require22 {
	bit := policy.MethodMask(1) << uint(m)
	var qs []*policy.Require22
	for i := range l.Req22 {
		if q := &l.Req22[i]; q.Methods&bit != 0 {
			qs = append(qs, q)
		}
	}
	return qs
}

func leaf22(p policy.Provider, args ...string) *policy.Node {
	return &policy.Node{Kind: policy.Leaf, Methods: policy.AllMethods, Provider: p, Args: args}
}

// alts22 is the alternatives the hooks grant by, for the lines qs, up to
// the first hook whose refusal is final. found says whether
// mod_authz_owner finds the name of the file's group, which only a
// "file-group" line asks: where it does, the module leaves it
// (AUTHZ_GROUP_NOTE) for mod_authz_groupfile's and mod_authz_dbm's
// "file-group", 2.4's Require file-group and dbm-file-group, which look
// it up themselves and are false where it is not found.
func alts22(cfg *translate.Config, l *translate.Layers, qs []*policy.Require22, found bool) []*policy.Node {
	chain := cfg.Authz22
	if chain == nil {
		chain = chain22Default
	}
	noted := false // AUTHZ_GROUP_NOTE
	var alts []*policy.Node
	for _, mod := range chain {
		var mine []*policy.Node
		final := false
		switch mod {
		case "authz_user_module":
			for _, q := range qs {
				switch w := keyword22(q); {
				case strings.EqualFold(w, "valid-user"):
					mine = append(mine, leaf22(policy.ProvValidUser))
				case strings.EqualFold(w, "user"):
					mine = append(mine, leaf22(policy.ProvUser, q.Words[1:]...))
				}
			}
			final = !l.UserNotAuth
		case "authz_owner_module":
			// check_file_owner: the first of its lines decides when it
			// is authoritative; otherwise a matching owner grants and
			// the rest declines.
			var first string
			owner, group := false, false
			for _, q := range qs {
				switch w := keyword22(q); w {
				case "file-owner", "file-group":
					if first == "" {
						first = w
					}
					owner, group = owner || w == "file-owner", group || w == "file-group"
				}
			}
			switch {
			case first == "":
				continue // none of its lines: DECLINED
			case l.OwnerNotAuth:
				if owner {
					mine = append(mine, leaf22(policy.ProvFileOwner))
				}
				noted = group && found
			case first == "file-owner":
				mine, final = append(mine, leaf22(policy.ProvFileOwner)), true
			case !found:
				return alts // no group name: HTTP_UNAUTHORIZED
			default:
				noted = true // the group noted, the module declines
			}
		case "authz_groupfile_module":
			if !l.GroupFile {
				continue
			}
			mine = groupLines22(qs, noted, !l.GroupNotAuth, leaf22(policy.ProvFileGroup), func(q *policy.Require22) *policy.Node {
				return leaf22(policy.ProvGroup, q.Words[1:]...)
			})
			final = !l.GroupNotAuth
		case "authz_dbm_module":
			if !l.DBMGroups {
				continue
			}
			// AUTH-05: mod_authz_dbm's groups are 2.4's Require
			// dbm-group, its file group dbm-file-group.
			mine = groupLines22(qs, noted, !l.DBMNotAuth, leaf22(policy.ProvDBMFileGroup), func(q *policy.Require22) *policy.Node {
				return leaf22(policy.ProvOther, append([]string{"dbm-group"}, q.Words[1:]...)...)
			})
			final = !l.DBMNotAuth
		case "authnz_ldap_module":
			url, authoritative := ldap22(l.LDAP)
			if !url || !ldapLines22(qs) {
				continue // declined
			}
			for _, q := range qs {
				switch w := keyword22(q); w {
				case "ldap-user", "ldap-group", "ldap-dn", "ldap-attribute", "ldap-filter":
					// mod_authnz_ldap 2.4 reads them the same way; 2.2 has
					// no ldap-search, which grants nothing there.
					mine = append(mine, leaf22(policy.ProvOther, w, q.Raw))
				}
			}
			// Authoritative, it refuses even with no line it can grant.
			if authoritative {
				return append(alts, mine...)
			}
		}
		alts = append(alts, mine...)
		if final && len(mine) > 0 {
			break
		}
	}
	return alts
}

// groupLines22 is what mod_authz_groupfile's check_user_access or
// mod_authz_dbm's dbm_check_auth grants by (2.2): each "group" line
// (group), and where mod_authz_owner noted the file's group each
// "file-group" line (fileGroup: the first only when the module is
// authoritative, whose refusal of it ends its scan); keywords compared
// without case.
func groupLines22(qs []*policy.Require22, noted, authoritative bool, fileGroup *policy.Node, group func(*policy.Require22) *policy.Node) []*policy.Node {
	var mine []*policy.Node
	for _, q := range qs {
		switch w := keyword22(q); {
		case strings.EqualFold(w, "file-group") && noted:
			mine = append(mine, fileGroup)
			if authoritative {
				return mine
			}
		case strings.EqualFold(w, "group"):
			mine = append(mine, group(q))
		}
	}
	return mine
}

// fileGroup22 is why a 2.2 section whose Require lines ask mod_authz_owner
// for the file's group cannot be written in 2.4, "" where it can: what
// the hooks do where the group has no name (or the file no status)
// differs from what the tree of require22Tree then does with its
// Require file-group lines false. Authoritative, mod_authz_owner refuses
// such a file outright, where other lines would grant; and
// mod_authz_groupfile or mod_authz_dbm read their "group" lines
// otherwise. 2.4 has no Require for "the file's group has a name".
func fileGroup22(cfg *translate.Config, l *translate.Layers) string {
	if l == nil || len(l.Req22) == 0 {
		return ""
	}
	chain := cfg.Authz22
	if chain == nil {
		chain = chain22Default
	}
	if !slices.Contains(chain, "authz_owner_module") {
		return "" // no note: "file-group" is nobody's line
	}
	for m := 0; m < policy.MaxMethods; m++ {
		qs := requires22For(l, m)
		if !slices.ContainsFunc(qs, func(q *policy.Require22) bool { return keyword22(q) == "file-group" }) {
			continue
		}
		var with []string
		for _, n := range alts22(cfg, l, qs, true) {
			if n.Provider != policy.ProvFileGroup && n.Provider != policy.ProvDBMFileGroup {
				with = append(with, strings.Join(policy.Render(n, ""), "\n"))
			}
		}
		var without []string
		for _, n := range alts22(cfg, l, qs, false) {
			without = append(without, strings.Join(policy.Render(n, ""), "\n"))
		}
		slices.Sort(with)
		slices.Sort(without)
		if !slices.Equal(with, without) {
			return "Require file-group: where mod_authz_owner finds no name for the file's group (or cannot stat it), 2.2's modules decide otherwise than 2.4's Require file-group can say (an authoritative mod_authz_owner refuses, a group module reads other lines); 2.4 has no Require for it. Write the Require by hand"
		}
	}
	return ""
}

// any22 is the alternatives as one RequireAny; with none, a line that
// asks for a user and grants nobody (a user name cannot hold ":").
func any22(alts []*policy.Node) *policy.Node {
	if len(alts) == 0 {
		alts = []*policy.Node{leaf22(policy.ProvUser, "::no-such-user::")}
	}
	return &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: alts}
}

// keyword22 is a 2.2 Require line's keyword as mod_authnz_ldap reads it:
// the requirement up to its first white space (ap_getword_white),
// compared case-sensitively.
func keyword22(q *policy.Require22) string {
	if q.Line == "" {
		return q.Words[0]
	}
	for i := 0; i < len(q.Line); i++ {
		if asciiSpace(q.Line[i]) { // apr_isspace: " \t\n\v\f\r"
			return q.Line[:i]
		}
	}
	return q.Line
}

// ldapLines22 reports whether a line's keyword starts with "ldap-", which
// makes 2.2's mod_authnz_ldap decide (its pre-scan, strncmp).
func ldapLines22(qs []*policy.Require22) bool {
	for _, q := range qs {
		if strings.HasPrefix(keyword22(q), "ldap-") {
			return true
		}
	}
	return false
}

// ldap22 reads mod_authnz_ldap's configuration in force: whether it has
// an AuthLDAPURL, and AuthzLDAPAuthoritative (default On).
func ldap22(d *translate.LDAPDir) (url, authoritative bool) {
	authoritative = true
	if d == nil {
		return false, true
	}
	for _, line := range d.Lines {
		switch {
		case strings.EqualFold(line.Name, "AuthLDAPURL"):
			url = true
		case strings.EqualFold(line.Name, "AuthzLDAPAuthoritative") && len(line.Args) == 1:
			authoritative = !strings.EqualFold(line.Args[0], "off")
		}
	}
	return url, authoritative
}

// sslSatisfyAny is why a section cannot be translated to 2.4 Require
// lines where SSLRequireSSL applies under Satisfy Any: with
// mod_access_compat, mod_ssl's refusal is one of the access checkers',
// which Satisfy Any lets a Require overcome; without it Satisfy is gone
// and the refusal is final. The translation would need mod_ssl's
// "Require ssl" inside the Require tree instead: "" where it does not
// apply.
func sslSatisfyAny(cfg *translate.Config, s *translate.Section, compat *translate.Layers) string {
	// Only where the section sets SSLRequireSSL itself: left for review,
	// its access lines are commented out, which fails open wherever
	// else SSLRequireSSL comes from (a <Directory> under a <Location>
	// with Satisfy Any). There the translation stands: stricter than
	// 2.2 over plain HTTP (mod_ssl's refusal is final without
	// mod_access_compat), never more permissive.
	if compat == nil || s.Conf.SSL == nil || !s.Conf.SSL.Required {
		return ""
	}
	for i, v := range compat.Sat22 {
		if v == policy.SatisfyAny || compat.Compat != nil && compat.Compat.Satisfy[i] == policy.SatisfyAny {
			return "SSLRequireSSL under Satisfy Any: with mod_access_compat its refusal is the access checkers', which a Require can overcome; without it the refusal is final. Write mod_ssl's Require ssl into the Require tree by hand"
		}
	}
	return ""
}

package translate

import (
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// inLimit refuses a section that core's filesection and ifsection
// refuse inside a <Limit> or <LimitExcept>, or inside a Require container,
// which clears cmd->limited's last bit to the same end
// (ap_check_cmd_context with NOT_IN_LIMIT).
func (b *builder) inLimit(d *apacheconf.Directive, ctx *dirCtx) bool {
	if ctx.limited == policy.AllMethods {
		return false
	}
	b.errorf(d, "<%s> cannot occur within <Limit> or <LimitExcept> section", d.Name)
	return true
}

func (b *builder) limit(d *apacheconf.Directive, ctx *dirCtx, except bool) {
	if len(d.Args) == 0 {
		b.errorf(d, "<%s> directive requires additional arguments", d.Name)
		return
	}
	var mask policy.MethodMask
	for _, m := range d.Args {
		if b.htaccess != nil && b.cfg.Methods.Number(m) == policy.MethodInvalid {
			b.errorf(d, "Could not register method '%s' for <%s from .htaccess configuration", m, d.Name)
			return
		}
		n, ok := b.cfg.Methods.Register(m)
		if !ok {
			b.errorf(d, "Maximum new request methods reached while registering method %s.", m)
			return
		}
		if n == 6 && !except {
			b.errorf(d, "TRACE cannot be controlled by <Limit>, see TraceEnable")
			return
		}
		mask |= 1 << uint(n)
	}
	if except {
		mask = ^mask
	}
	if ctx.limited&mask == 0 {
		b.errorf(d, "<%s> directive excludes all methods", d.Name)
		return
	}
	if ctx.limited&mask == ctx.limited {
		b.errorf(d, "<%s> directive specifies methods already excluded", d.Name)
		return
	}
	inner := *ctx
	inner.limited = ctx.limited & mask
	inner.scope = b.within(ctx.scope, d)
	inner.parent = d.Name
	for _, c := range d.Block {
		b.dirDirective(c, &inner)
	}
}

func (b *builder) allowDeny(d *apacheconf.Directive, ctx *dirCtx, allow bool) {
	if len(d.Args) < 2 {
		b.errorf(d, "%s requires at least two arguments, 'from' followed by hostnames or IP-address wildcards", d.Name)
		return
	}
	// ASCII's case folding is Unicode's for "from" (no other letter
	// folds to one of its letters, as the Kelvin sign does to "k").
	if !equalFoldASCII(d.Args[0], "from") {
		b.errorf(d, "allow and deny must be followed by 'from'")
		return
	}
	c := b.compat(ctx.conf)
	r := b.rule(d, ctx.scope)
	for _, w := range d.Args[1:] {
		a, err, differ := accessWord(w, b.cfg.Semantics)
		if err != "" {
			b.errorf(d, "%s", err)
			return
		}
		if differ != "" {
			b.differ(d, differ)
		}
		a.Methods, a.Rule = ctx.limited, r
		if r != renderRule {
			a.Part = r.NewPart(w)
		}
		if allow {
			c.Allows = b.appendAccess(c.Allows, a, ctx.sec.indexed().allows)
		} else {
			c.Denys = b.appendAccess(c.Denys, a, ctx.sec.indexed().denys)
		}
	}
}

// appendAccess appends a to list, which it allocates at first (from the
// builder's slab where it has one) with room for all words of the
// section's lines: n, as its index counted them.
func (b *builder) appendAccess(list []policy.AccessRule, a policy.AccessRule, n int32) []policy.AccessRule {
	if cap(list) == 0 {
		if b.cache != nil {
			list = b.cache.access.list(max(int(n), 1), accessSlab)
		} else {
			list = make([]policy.AccessRule, 0, max(int(n), 1))
		}
	}
	return append(list, a)
}

// accessWord reads the word w of an Allow or Deny line (after "from"):
// its kind and what it names; or Apache's refusal of it (err), or how
// Apache 2.2 and 2.4 read it differently (differ).
func accessWord(w string, sem Semantics) (a policy.AccessRule, err, differ string) {
	a.Word = w
	lw := toLower(w)
	switch {
	case strings.HasPrefix(lw, "env=!"):
		a.Kind, a.Name = policy.AccessNotEnv, w[5:]
	case strings.HasPrefix(lw, "env="):
		a.Kind, a.Name = policy.AccessEnv, w[4:]
	case lw == "all":
		a.Kind = policy.AccessAll
	case strings.Contains(w, "/"):
		addr, mask, _ := strings.Cut(w, "/")
		sn, perr := policy.ParseSubnet(addr, mask, true)
		if perr == policy.ErrNotIP {
			return a, "An IP address was expected", ""
		} else if perr != nil {
			return a, perr.Error(), ""
		}
		a.Kind, a.Subnet = policy.AccessIP, sn
	default:
		sn, perr := policy.ParseSubnet(w, "", false)
		switch {
		case perr == nil:
			a.Kind, a.Subnet = policy.AccessIP, sn
		case perr != policy.ErrNotIP:
			return a, perr.Error(), ""
		case strings.Contains(w, "#") && sem != Legacy22:
			return a, "No comments are allowed here", ""
		case strings.Contains(w, "#"):
			// 2.2 has no such check: "#" is a host name that never
			// matches, and every word after it is still a rule.
			a.Kind, a.Name = policy.AccessHost, w
			differ = "\"#\" in an Allow/Deny line: Apache 2.2 reads it and every word after it as host names; Apache 2.4 refuses to start"
		default:
			a.Kind, a.Name = policy.AccessHost, w
		}
	}
	return a, "", differ
}

// providerLine is the argument line of a Require as written, after the
// provider's name (and "not"): mod_authz_core hands it to the provider
// whole.
func providerLine(raw string, negate bool) string {
	blank := func(c byte) bool { return c == ' ' || c == '\t' }
	trim := func(s string) string { // strings.TrimLeft(s, " \t")
		for len(s) > 0 && blank(s[0]) {
			s = s[1:]
		}
		return s
	}
	skip := func(s string) string {
		s = trim(s)
		for i := 0; i < len(s); i++ {
			if blank(s[i]) {
				return trim(s[i:])
			}
		}
		return ""
	}
	if negate {
		raw = skip(raw)
	}
	return skip(raw)
}

// authzProviders are Apache 2.4's Require providers and the module that
// registers each ("" for mod_authz_core's own, there whenever Require is),
// as apache2 -t answers with only that module loaded.
var authzProviders = map[string]string{
	"all": "", "env": "", "method": "", "expr": "",
	"ip": "authz_host_module", "host": "authz_host_module", "local": "authz_host_module", "forward-dns": "authz_host_module",
	"user": "authz_user_module", "valid-user": "authz_user_module",
	"group": "authz_groupfile_module", "file-group": "authz_groupfile_module",
	"file-owner": "authz_owner_module",
	"dbm-group":  "authz_dbm_module", "dbm-file-group": "authz_dbm_module",
	"ldap-user": "authnz_ldap_module", "ldap-group": "authnz_ldap_module", "ldap-dn": "authnz_ldap_module",
	"ldap-attribute": "authnz_ldap_module", "ldap-filter": "authnz_ldap_module", "ldap-search": "authnz_ldap_module",
	"dbd-group": "authz_dbd_module", "dbd-login": "authz_dbd_module", "dbd-logout": "authz_dbd_module",
}

// require adds one Require line to the section's tree (add_authz_provider).
func (b *builder) require(d *apacheconf.Directive, ctx *dirCtx) {
	args := d.Args
	if len(args) == 0 {
		b.errorf(d, "Require requires at least one argument")
		return
	}
	n := &policy.Node{Kind: policy.Leaf, Methods: ctx.limited}
	if strings.EqualFold(args[0], "not") {
		n.Negate = true
		args = args[1:]
		if len(args) == 0 {
			b.errorf(d, "Require not requires a provider")
			return
		}
	}
	prov, rest := args[0], args[1:]
	if m, ok := authzProviders[prov]; ok && m != "" && !b.loaded(m) {
		// The provider registers when its module loads: without it, the
		// name is unknown (a start-up error, a 500 for an .htaccess file).
		b.errorf(d, "Unknown Authz provider: %s", prov)
		return
	}
	switch prov {
	case "all":
		if len(rest) == 1 && strings.EqualFold(rest[0], "granted") {
			n.Provider = policy.ProvAllGranted
		} else if len(rest) == 1 && strings.EqualFold(rest[0], "denied") {
			n.Provider = policy.ProvAllDenied
		} else {
			b.errorf(d, "'Require all' does not take arguments other than 'granted' or 'denied'")
			return
		}
	case "ip":
		if len(rest) == 0 {
			b.errorf(d, "Require ip requires an argument")
			return
		}
		n.Provider = policy.ProvIP
		for _, w := range rest {
			addr, mask, has := strings.Cut(w, "/")
			sn, err := policy.ParseSubnet(addr, mask, has)
			if err == policy.ErrNotIP {
				b.errorf(d, "ip address '%s' appears to be invalid", w)
				return
			} else if err != nil {
				b.errorf(d, "ip address '%s' appears to be invalid: %v", w, err)
				return
			}
			n.Subnets = append(n.Subnets, sn)
		}
	case "host":
		n.Provider = policy.ProvHost
		for _, w := range rest {
			if i := strings.IndexByte(w, '#'); i >= 0 {
				w = w[:i]
				if w != "" {
					n.Args = append(n.Args, w)
				}
				break
			}
			n.Args = append(n.Args, w)
		}
	case "env":
		n.Provider = policy.ProvEnv
		n.Args = rest
	case "method":
		n.Provider = policy.ProvMethod
		if len(rest) == 0 {
			b.errorf(d, "Require method requires an argument")
			return
		}
		for _, m := range rest {
			num := b.cfg.Methods.Number(m)
			if num == policy.MethodInvalid {
				b.errorf(d, "Invalid Method '%s'", m)
				return
			}
			n.MethodOK |= 1 << uint(num)
		}
	case "local":
		n.Provider = policy.ProvLocal
	case "valid-user":
		n.Provider = policy.ProvValidUser
	case "user":
		n.Provider = policy.ProvUser
		n.Args = rest
		if !b.requireExpr(d, n, rest) {
			return
		}
	case "group":
		n.Provider = policy.ProvGroup
		n.Args = rest
		if !b.requireExpr(d, n, rest) {
			return
		}
	case "dbm-group":
		n.Provider = policy.ProvDBMGroup
		n.Args = rest
		if !b.requireExpr(d, n, rest) {
			return
		}
	case "ldap-user", "ldap-group", "ldap-dn", "ldap-attribute", "ldap-filter", "ldap-search":
		// mod_authnz_ldap's providers take the line after the form whole
		// (ap_expr evaluates it first: a line with %{...} is refused).
		line := providerLine(d.Raw, n.Negate)
		if strings.Contains(line, "%{") {
			b.cannotServe(d, "Require %s with an expression (%%{...}) cannot be evaluated by orderly; refusing to load", prov)
			if !b.opt.RenderOnly {
				return
			}
			n.Provider, n.Args = policy.ProvOther, []string{prov, line}
			break
		}
		n.Provider, n.Args = policy.ProvLDAP, []string{prov, line}
	case "file-owner", "file-group", "dbm-file-group":
		// They read r->filename's owner (policy/owner.go), and ignore
		// their arguments. mod_authz_groupfile's file-group and
		// mod_authz_dbm's dbm-file-group call mod_authz_owner's
		// authz_owner_get_file_group, a NULL pointer without the module:
		// Apache's child crashes (the connection closes, no answer) once
		// a user of the group file asks.
		if prov != "file-owner" && !b.loaded("authz_owner_module") {
			b.cannotServe(d, "Require %s without mod_authz_owner: Apache's child crashes on it (mod_%s calls mod_authz_owner's authz_owner_get_file_group, which is not there) and orderly cannot answer as it does; load mod_authz_owner; refusing to load", prov, map[string]string{"file-group": "authz_groupfile", "dbm-file-group": "authz_dbm"}[prov])
			if !b.opt.RenderOnly {
				return
			}
		}
		n.Provider = map[string]policy.Provider{"file-owner": policy.ProvFileOwner, "file-group": policy.ProvFileGroup, "dbm-file-group": policy.ProvDBMFileGroup}[prov]
		n.Args = rest
	case "expr", "forward-dns", "dbd-group", "dbd-login", "dbd-logout":
		b.cannotServe(d, "Require %s cannot be evaluated by orderly; refusing to load", prov)
		if !b.opt.RenderOnly {
			return
		}
		// translate writes it as it is: 2.4 reads it the same way.
		n.Provider = policy.ProvOther
		n.Args = []string{prov, providerLine(d.Raw, n.Negate)}
	default:
		b.errorf(d, "Unknown Authz provider: %s", prov)
		return
	}
	n.Rule = b.rule(d, ctx.scope)
	parent, pname := b.container(ctx)
	if n.Negate && parent.Kind == policy.Any {
		b.errorf(d, "negative Require directive has no effect in %s directive", pname)
		return
	}
	parent.Methods |= n.Methods
	parent.Children = append(parent.Children, n)
}

// container returns the Require container being filled, creating the
// section's implicit <RequireAny> (create_default_section), and its name
// for messages.
func (b *builder) container(ctx *dirCtx) (*policy.Node, string) {
	if ctx.container != nil {
		return ctx.container, "<" + ctx.inRequire + ">"
	}
	slot := b.authz(ctx.conf)
	if slot.Root == nil {
		slot.Root = &policy.Node{Kind: policy.Any}
	}
	return slot.Root, "<RequireAny>"
}

func (b *builder) requireSection(d *apacheconf.Directive, ctx *dirCtx, name string) {
	if len(d.Args) != 0 {
		b.errorf(d, "<%s> directive doesn't take additional arguments", d.Name)
		return
	}
	sec := &policy.Node{Kind: policy.Any}
	switch name {
	case "requireall":
		sec.Kind = policy.All
	case "requirenone":
		sec.Negate = true
	}
	inner := *ctx
	inner.container = sec
	inner.inRequire = d.Name
	inner.parent = d.Name
	inner.scope = b.within(ctx.scope, d)
	inner.limited = ctx.limited &^ (1 << (policy.MaxMethods - 1))
	// Its contents are read as any directive of the section, but with
	// AuthConfig's directives alone allowed (ctxOf): AuthName, Satisfy or
	// a <Limit> act as they would outside, and the Require lines inside
	// fill this container.
	omitted := false
	for _, c := range d.Block {
		if b.omitted(c, c.LowerName(), inner.scope) {
			omitted = true
			continue
		}
		b.dirDirective(c, &inner)
		if b.vanished {
			omitted, b.vanished = true, false
		}
	}
	if len(sec.Children) == 0 && omitted {
		// Options.Omit took every Require line out: the container goes
		// with them, as a deletion of the lines would take it.
		b.vanished = true
		return
	}
	if len(sec.Children) == 0 {
		b.errorf(d, "<%s> directive contains no authorization directives", d.Name)
		return
	}
	parent, pname := b.container(ctx)
	if sec.Negate && parent.Kind == policy.Any {
		b.errorf(d, "<%s> directive has no effect in %s directive", d.Name, pname)
		return
	}
	allNegative := true
	for _, c := range sec.Children {
		if !c.Negate {
			allNegative = false
		}
	}
	if allNegative && !sec.Negate {
		b.errorf(d, "<%s> directive contains only negative authorization directives", d.Name)
		return
	}
	if !b.noIDs() {
		markStructuralLeaves(sec)
	}
	parent.Methods |= sec.Methods
	if !sec.Negate && sec.Kind == parent.Kind {
		parent.Children = append(parent.Children, sec.Children...)
		return
	}
	parent.Children = append(parent.Children, sec)
}

// markStructural marks the access lines of a section whose deletion
// would change more than their own words (policy.Rule.Structural): the
// only Allow or Deny line of a section that names no Order (or, in 2.4,
// Satisfy), after which the section would inherit its parent's host
// access; the only Require line (2.2); and the Require lines whose
// deletion would empty their container, leave it negated lines only, or
// narrow the methods it applies to.
func markStructural(c *DirConf) {
	if cp := c.Compat; cp != nil && cp.OrderRule == nil && cp.SatisfyRule == nil {
		if r := soleRule(cp.Allows, cp.Denys); r != nil {
			r.Structural = true
		}
	}
	if len(c.Requires22) > 0 {
		only := c.Requires22[0].Rule
		for _, q := range c.Requires22[1:] {
			if q.Rule != only {
				only = nil
				break
			}
		}
		if only != nil {
			only.Structural = true
		}
	}
	if c.Authz != nil && c.Authz.Root != nil {
		markStructuralLeaves(c.Authz.Root)
	}
}

// soleRule returns the rule of every word of the lists when they are
// all one line's, nil otherwise.
func soleRule(lists ...[]policy.AccessRule) *policy.Rule {
	var only *policy.Rule
	for _, l := range lists {
		for _, a := range l {
			switch {
			case only == nil:
				only = a.Rule
			case a.Rule != only:
				return nil
			}
		}
	}
	return only
}

// markStructuralLeaves marks the Require lines among n's children whose
// deletion would change n beyond losing them (markStructural).
func markStructuralLeaves(n *policy.Node) {
	for i, ch := range n.Children {
		if ch.Kind != policy.Leaf || ch.Rule == nil {
			continue
		}
		var others policy.MethodMask
		positive := false
		for j, o := range n.Children {
			if j != i {
				others |= o.Methods
				positive = positive || !o.Negate
			}
		}
		if len(n.Children) == 1 || !positive || ch.Methods&^others != 0 {
			ch.Rule.Structural = true
		}
	}
}

var onOff = map[string]bool{"on": true, "off": false}

// authz24 handles AuthMerging and AuthzSendForbiddenOnFailure.
func (b *builder) authz24(d *apacheconf.Directive, ctx *dirCtx, name string) {
	conf := ctx.conf
	if name == "authmerging" {
		if len(d.Args) != 1 {
			b.errorf(d, "AuthMerging takes one argument")
			return
		}
		a := b.authz(conf)
		switch strings.ToLower(d.Args[0]) {
		case "off":
			a.Merge = MergeOff
		case "and":
			a.Merge = MergeAnd
		case "or":
			a.Merge = MergeOr
		default:
			b.errorf(d, "The AuthMerging directive must be 'Off', 'And' or 'Or'")
			return
		}
		b.rule(d, ctx.scope)
		return
	}
	if len(d.Args) != 1 {
		b.errorf(d, "AuthzSendForbiddenOnFailure takes one argument")
		return
	}
	a := b.authz(conf)
	switch strings.ToLower(d.Args[0]) {
	case "on":
		a.ForbiddenOnFail = 1
	case "off":
		a.ForbiddenOnFail = 0
	default:
		b.errorf(d, "AuthzSendForbiddenOnFailure must be On or Off")
		return
	}
	b.rule(d, ctx.scope)
}

// require22 records a Require line as 2.2's core does: raw words, any
// keyword (an unknown one refuses every request with 401 at run time).
func (b *builder) require22(d *apacheconf.Directive, ctx *dirCtx) {
	if len(d.Args) == 0 {
		b.errorf(d, "Require requires at least one argument")
		return
	}
	switch toLower(d.Args[0]) {
	case "all", "ip", "host", "env", "method", "local", "expr", "not", "forward-dns":
		b.errorf(d, "Require %s is an Apache 2.4 form, unknown to 2.2; with 2.4 directives in the configuration use semantics \"2.4-compat\"", d.Args[0])
		return
	}
	if ctx.conf.Requires22 == nil {
		ctx.conf.Requires22 = []policy.Require22{}
	}
	ctx.conf.Requires22 = append(ctx.conf.Requires22, policy.Require22{Methods: ctx.limited, Words: d.Args, Rule: b.rule(d, ctx.scope), Raw: providerLine(d.Raw, false), Line: d.Raw})
}

type authzHook22 struct {
	module, file string
	pred, succ   []string
}

// authz22Hooks are the modules of Apache 2.2 whose auth_checker hooks run
// at APR_HOOK_MIDDLE and take part in the decision, with the name APR
// knows each hook by (the module's source file) and the hooks it must
// follow or precede (each module's register_hooks in 2.2.x:
// mod_authz_groupfile and mod_authz_dbm name mod_authz_owner.c among
// their predecessors, mod_authnz_ldap names mod_authz_user.c among its
// successors). mod_ssl's hook (ssl_hook_Auth) is left out: it names none,
// so it cannot move the others, and it declines by then (policy/ssl.go).
var authz22Hooks = []authzHook22{
	{"authnz_ldap_module", "mod_authnz_ldap.c", nil, []string{"mod_authz_user.c"}},
	{"authz_dbm_module", "mod_authz_dbm.c", []string{"mod_authz_owner.c"}, nil},
	{"authz_groupfile_module", "mod_authz_groupfile.c", []string{"mod_authz_owner.c"}, nil},
	{"authz_owner_module", "mod_authz_owner.c", nil, nil},
	{"authz_user_module", "mod_authz_user.c", nil, nil},
}

// authz22Chain lists the auth_checker hooks of the 2.2 authorization
// modules loaded, by module identifier, in the order Apache 2.2 runs
// them: those of APR_HOOK_MIDDLE in the order the modules registered
// them, sorted as apr_hooks.c's sort_hook does, then mod_authz_default's
// (APR_HOOK_LAST) when it is loaded.
//
// A module registers its hooks when it is added (ap_add_module calls
// ap_register_hooks): modules built in first, then in LoadModule order,
// the first LoadModule of a module counting. A module loaded without a
// LoadModule line (a fragment's assumed modules, legacy.modules) is taken
// to come first, in the order of the names, as Debian's Apache 2.2 loads
// mods-enabled/*.load.
//
// pos numbers the modules of LoadModule lines in the order of their
// first (prescan.loadOrder).
func (b *builder) authz22Chain(pos map[string]int) []string {
	var reg, late []authzHook22
	for _, h := range authz22Hooks { // in the order of the names
		if !b.loaded(h.module) {
			continue
		}
		if _, ok := pos[h.module]; ok {
			late = append(late, h)
		} else {
			reg = append(reg, h)
		}
	}
	slices.SortStableFunc(late, func(x, y authzHook22) int { return pos[x.module] - pos[y.module] })
	reg = append(reg, late...)
	files := make([]string, len(reg))
	preds := make([][]string, len(reg))
	succs := make([][]string, len(reg))
	for i, h := range reg {
		files[i], preds[i], succs[i] = h.file, h.pred, h.succ
	}
	var out []string
	for _, i := range tsortHooks(files, preds, succs) {
		out = append(out, reg[i].module)
	}
	if b.loaded("authz_default_module") {
		out = append(out, "authz_default_module")
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// tsortHooks is apr_hooks.c's sort_hook over hooks of one priority, in
// registration order, each with the names of the hooks it must follow
// and of those it must precede (names not among them are ignored).
// prepare makes one list of the hooks each must wait for: going through
// the hooks in order, a hook's predecessors join its own list and the
// hook joins the list of each of its successors. tsort then, until every
// hook is placed, takes the first not yet placed; while it still waits
// for a hook, takes the first of those instead; places it, and strikes it
// from every list. It returns the indexes in the order the hooks run.
// The names must not form a cycle (the stock modules' do not).
func tsortHooks(names []string, preds, succs [][]string) []int {
	wait := make([][]int, len(names))
	add := func(i, k int) {
		if !slices.Contains(wait[i], k) {
			wait[i] = append(wait[i], k)
		}
	}
	for i := range names {
		for _, p := range preds[i] {
			if k := slices.Index(names, p); k >= 0 {
				add(i, k)
			}
		}
		for _, s := range succs[i] {
			if k := slices.Index(names, s); k >= 0 {
				add(k, i)
			}
		}
	}
	placed := make([]bool, len(names))
	var out []int
	for len(out) < len(names) {
		n := 0
		for placed[n] {
			n++
		}
		for len(wait[n]) > 0 {
			n = wait[n][0]
		}
		placed[n] = true
		out = append(out, n)
		for i := range wait {
			if k := slices.Index(wait[i], n); k >= 0 {
				wait[i] = slices.Delete(wait[i], k, k+1)
			}
		}
	}
	return out
}

// requireExpr makes the argument line of Require user/group an expression
// when it refers to %{...} (2.4 parses it with ap_expr).
func (b *builder) requireExpr(d *apacheconf.Directive, n *policy.Node, args []string) bool {
	t, err := policy.ParseTemplate(strings.Join(args, " "))
	if err != nil {
		b.notFaithful(d, err.Error())
		return false
	}
	n.Expr = t
	return true
}

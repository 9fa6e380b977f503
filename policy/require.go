package policy

import (
	"net/netip"
	"slices"
)

// Result is the outcome of a Require node (authz_status in mod_authz_core).
type Result uint8

// The results of evaluating a Require node.
const (
	Denied Result = iota
	Granted
	Neutral
	DeniedNoUser // the answer depends on a user that is not known yet
	GeneralError
)

func (r Result) String() string {
	return [...]string{"denied", "granted", "neutral", "denied (no user)", "error"}[r]
}

// NodeKind tells a container from a leaf.
type NodeKind uint8

// The kinds of node of a Require tree.
const (
	Leaf NodeKind = iota
	All           // <RequireAll>: AND
	Any           // <RequireAny>, and the implicit container of a section: OR
)

// Provider is the kind of a Require leaf.
type Provider uint8

// The Require providers orderly evaluates.
const (
	ProvAllGranted Provider = iota
	ProvAllDenied
	ProvIP
	ProvHost
	ProvEnv
	ProvMethod
	ProvLocal
	ProvUser
	ProvValidUser
	ProvGroup
	// ProvDBMGroup is mod_authz_dbm's dbm-group (2.4): the groups of the
	// user's entry in AuthDBMGroupFile.
	ProvDBMGroup
	// ProvLDAP is one of mod_authnz_ldap's ldap-* providers (2.4): Args
	// are the form ("ldap-group") and the text after it as written.
	ProvLDAP
	// ProvFileOwner is mod_authz_owner's file-owner (2.4): the user who
	// owns r->filename (owner.go). Args are ignored, as Apache ignores
	// them.
	ProvFileOwner
	// ProvFileGroup is mod_authz_groupfile's file-group (2.4): the group
	// of r->filename, which mod_authz_owner finds, among the user's
	// groups in AuthGroupFile.
	ProvFileGroup
	// ProvDBMFileGroup is mod_authz_dbm's dbm-file-group (2.4): the same
	// with AuthDBMGroupFile.
	ProvDBMFileGroup
	// ProvOther is a provider orderly writes but does not evaluate
	// (ldap-group, dbm-group, expr, ...; translate only): Args are its
	// name and its argument line as written. It never grants.
	ProvOther
)

// Node is a node of the 2.4 Require tree. Containers hold children; leaves
// name a provider and its arguments, parsed once at load.
type Node struct {
	Kind     NodeKind
	Negate   bool
	Methods  MethodMask // the methods the node applies to
	Children []*Node

	Provider Provider
	Args     []string   // user names, group names, env names, host patterns
	Subnets  []Subnet   // ProvIP
	MethodOK MethodMask // ProvMethod
	Rule     *Rule
	// Expr, when set, replaces Args: the argument line holds %{env:...}
	// and is evaluated per request (user, group and host providers).
	Expr *Template

	// Compiled form of an IP leaf, or of a run of IP leaves merged by
	// Compile: subnet i decides for setRules[i].
	set      *addrSet
	setRules []*Rule
	merged   bool // the leaf stands for several Require ip lines
}

// Compile prepares the tree for evaluation that does not grow with the
// number of addresses: each Require ip leaf gets a prefix table, and in a
// RequireAny container a run of consecutive, non-negated Require ip leaves
// with the same methods becomes one leaf (an OR of grants is a grant;
// which line granted is still reported). It returns the compiled tree;
// the argument is not changed.
func (n *Node) Compile() *Node {
	if n == nil {
		return nil
	}
	if n.Kind == Leaf {
		if n.Provider != ProvIP {
			return n
		}
		c := *n
		idx := make([]int32, len(n.Subnets))
		rules := make([]*Rule, len(n.Subnets))
		for i := range idx {
			idx[i], rules[i] = int32(i), n.Rule
		}
		c.set, c.setRules = newAddrSet(n.Subnets, idx, make([]int32, len(idx))), rules
		return &c
	}
	c := *n
	c.Children = nil
	for i := 0; i < len(n.Children); i++ {
		ch := n.Children[i]
		if n.Kind != Any || !mergeableIP(ch) {
			c.Children = append(c.Children, ch.Compile())
			continue
		}
		j := i
		var subnets []Subnet
		var idx, owner []int32
		var rules []*Rule
		for ; j < len(n.Children) && mergeableIP(n.Children[j]) && n.Children[j].Methods == ch.Methods; j++ {
			for _, s := range n.Children[j].Subnets {
				subnets = append(subnets, s)
				idx = append(idx, int32(len(rules)))
				owner = append(owner, int32(j))
				rules = append(rules, n.Children[j].Rule)
			}
		}
		leaf := *ch
		leaf.Subnets = subnets
		leaf.set, leaf.setRules = newAddrSet(subnets, idx, owner), rules
		leaf.merged = j-i > 1
		c.Children = append(c.Children, &leaf)
		i = j - 1
	}
	return &c
}

func mergeableIP(n *Node) bool { return n.Kind == Leaf && n.Provider == ProvIP && !n.Negate }

// Identity checks passwords and group membership against the files the
// configuration names. The proxy supplies one; explain uses the same.
type Identity interface {
	// CheckPassword checks user's password in the htpasswd file.
	CheckPassword(file, user, password string) (PasswordResult, error)
	// Groups returns the groups the user is in according to the group
	// file, and false when the file does not mention the user at all.
	Groups(file, user string) ([]string, bool, error)
}

// PasswordResult is mod_authn_file's answer.
type PasswordResult uint8

// The answers of a password check.
const (
	PasswordOK PasswordResult = iota
	PasswordMismatch
	UserNotFound
)

type evalCtx struct {
	req       *Request
	user      string
	hasUser   bool
	groupFile string
	id        Identity
	tr        Tracer
	trace     bool
	groupErr  bool // a group file could not be opened (AH01665)
	// layers are the merged layers, for what fewer providers read
	// (mod_authz_dbm's file and the realm); nil reads as none set.
	layers *Layers
	dbmErr bool // a DBM group file could not be opened (AH01799)
	// ownerLogs are the log lines of the file-owner and file-group
	// providers (owner.go), nowner of them.
	ownerLogs [4]LogLine
	nowner    uint8
	// ldapErr says why an ldap-* line failed (for the log).
	ldapErr string
	// without is the Require line a counterfactual deletes (nil: none);
	// with collect, answered gathers the lines that answered
	// (necessity.go).
	without  *Rule
	collect  bool
	answered answeredSet
	// shared: the Require ip leaf just evaluated granted by more than
	// one line, so deleting any one of them leaves it granting.
	shared bool
}

// eval is apply_authz_sections of mod_authz_core (apache-access-semantics.md
// §3.4). It also returns the leaf that made the result: for a container,
// the child whose result the container took.
func (n *Node) eval(c *evalCtx, parentAll bool) (Result, *Rule) {
	if n.Kind == Leaf && c.without != nil && n.Rule == c.without && !n.merged {
		return Neutral, nil // deleted: its container skips it
	}
	if n.Methods&(MethodMask(1)<<uint(c.req.Method)) == 0 {
		if parentAll {
			if n.Kind == Leaf && c.collect {
				c.answered.add(n.Rule)
			}
			return Granted, nil
		}
		return Neutral, nil
	}
	var res Result
	var why *Rule
	if n.Kind == Leaf {
		res, why = n.leaf(c)
		if res == Granted {
			why.hit(c.req)
		}
	} else {
		res = Neutral
		for _, ch := range n.Children {
			cr, cw := ch.eval(c, n.Kind == All)
			if cr == GeneralError {
				return GeneralError, cw
			}
			if cr == Neutral {
				continue
			}
			if n.Kind == All {
				if cr == Denied {
					res, why = Denied, cw
					break
				}
				if (cr == DeniedNoUser && res != Denied) || res == Neutral {
					res, why = cr, cw
				}
			} else {
				if cr == Granted {
					res, why = Granted, cw
					break
				}
				if (cr == DeniedNoUser && res == Denied) || res == Neutral {
					res, why = cr, cw
				}
			}
		}
	}
	if n.Negate {
		switch res {
		case Granted:
			res = Denied
		case Denied, DeniedNoUser:
			res = Neutral
		}
	}
	if c.trace && n.Kind == Leaf {
		c.tr.Trace(Event{Layer: LayerAuthz, Rule: why, Text: "Require", Result: res.String()})
	}
	// A leaf that answered may be necessary; one that was neutral is
	// skipped by its container, deleted or not. Of several Require ip
	// lines made one leaf, only the line that granted can be.
	if n.Kind == Leaf && c.collect && res != Neutral && (!n.merged || res == Granted && !c.shared) {
		c.answered.add(why)
	}
	return res, why
}

func (n *Node) leaf(c *evalCtx) (Result, *Rule) {
	res, why := n.leafResult(c)
	if why == nil {
		why = n.Rule
	}
	return res, why
}

func (n *Node) leafResult(c *evalCtx) (Result, *Rule) {
	r := c.req
	args := n.Args
	if n.Expr != nil {
		args = n.Expr.Words(&r.Env)
	}
	switch n.Provider {
	case ProvAllGranted:
		return Granted, nil
	case ProvAllDenied:
		return Denied, nil
	case ProvIP:
		if n.set != nil {
			p := n.set.lookup(r.Addr)
			i := p.first
			if c.without != nil && i >= 0 && n.setRules[i] == c.without {
				i = p.other // a deleted line's addresses grant nothing
			}
			c.shared = p.other >= 0
			if i >= 0 {
				return Granted, n.setRules[i]
			}
			return Denied, nil
		}
		for _, s := range n.Subnets {
			if s.Contains(r.Addr) {
				return Granted, nil
			}
		}
		return Denied, nil
	case ProvLocal:
		a := r.Addr.Unmap()
		if (r.LocalAddr.IsValid() && a == r.LocalAddr.Unmap()) || a.IsLoopback() && (a.Is4() || a == netip.IPv6Loopback()) {
			return Granted, nil
		}
		return Denied, nil
	case ProvEnv:
		for _, v := range n.Args {
			if _, ok := r.Env.Get(v); ok {
				return Granted, nil
			}
		}
		return Denied, nil
	case ProvMethod:
		if n.MethodOK&(MethodMask(1)<<uint(r.Method)) != 0 {
			return Granted, nil
		}
		return Denied, nil
	case ProvHost:
		h, ok := r.verifiedHost()
		if !ok {
			return Denied, nil
		}
		for _, p := range args {
			if InDomain(p, h) {
				return Granted, nil
			}
		}
		return Denied, nil
	case ProvValidUser:
		if !c.hasUser {
			return DeniedNoUser, nil
		}
		return Granted, nil
	case ProvUser:
		if !c.hasUser {
			return DeniedNoUser, nil
		}
		if slices.Contains(args, c.user) {
			return Granted, nil
		}
		return Denied, nil
	case ProvGroup:
		if !c.hasUser {
			return DeniedNoUser, nil
		}
		if c.groupFile == "" || c.id == nil {
			return Denied, nil // AH01664: no group file
		}
		groups, found, err := c.id.Groups(c.groupFile, c.user)
		if err != nil {
			c.groupErr = true
			return Denied, nil // a group file that cannot be opened denies
		}
		if !found {
			return Denied, nil
		}
		// Group names compare case-insensitively: mod_authz_groupfile
		// keeps them in an APR table.
		for _, g := range args {
			for _, have := range groups {
				if equalFold(have, g) {
					return Granted, nil
				}
			}
		}
		return Denied, nil
	case ProvDBMGroup:
		return c.dbmGroup(args)
	case ProvLDAP:
		return c.ldap(args)
	case ProvFileOwner:
		return c.fileOwner()
	case ProvFileGroup:
		return c.fileGroup()
	case ProvDBMFileGroup:
		return c.dbmFileGroup()
	case ProvOther:
		return Denied, nil
	}
	panic("policy: unknown provider")
}

// Rules calls fn for every leaf rule of the tree, in order.
func (n *Node) Rules(fn func(*Rule)) {
	if n == nil {
		return
	}
	if n.Kind == Leaf {
		if n.Rule != nil {
			fn(n.Rule)
		}
		return
	}
	for _, c := range n.Children {
		c.Rules(fn)
	}
}

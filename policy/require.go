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
}

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
	d         *Decision // receives log lines
}

// eval is apply_authz_sections of mod_authz_core (apache-access-semantics.md
// §3.4).
func (n *Node) eval(c *evalCtx, parentAll bool) Result {
	if n.Methods&(MethodMask(1)<<uint(c.req.Method)) == 0 {
		if parentAll {
			return Granted
		}
		return Neutral
	}
	var res Result
	if n.Kind == Leaf {
		res = n.leaf(c)
	} else {
		res = Neutral
		for _, ch := range n.Children {
			cr := ch.eval(c, n.Kind == All)
			if cr == GeneralError {
				return GeneralError
			}
			if cr == Neutral {
				continue
			}
			if n.Kind == All {
				if cr == Denied {
					res = Denied
					break
				}
				if (cr == DeniedNoUser && res != Denied) || res == Neutral {
					res = cr
				}
			} else {
				if cr == Granted {
					res = Granted
					break
				}
				if (cr == DeniedNoUser && res == Denied) || res == Neutral {
					res = cr
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
		c.tr.Trace(Event{Layer: LayerAuthz, Rule: n.Rule, Text: "Require", Result: res.String()})
	}
	return res
}

func (n *Node) leaf(c *evalCtx) Result {
	r := c.req
	switch n.Provider {
	case ProvAllGranted:
		return Granted
	case ProvAllDenied:
		return Denied
	case ProvIP:
		for _, s := range n.Subnets {
			if s.Contains(r.Addr) {
				return Granted
			}
		}
		return Denied
	case ProvLocal:
		a := r.Addr.Unmap()
		if (r.LocalAddr.IsValid() && a == r.LocalAddr.Unmap()) || a.IsLoopback() && (a.Is4() || a == netip.IPv6Loopback()) {
			return Granted
		}
		return Denied
	case ProvEnv:
		for _, v := range n.Args {
			if _, ok := r.Env.Get(v); ok {
				return Granted
			}
		}
		return Denied
	case ProvMethod:
		if n.MethodOK&(MethodMask(1)<<uint(r.Method)) != 0 {
			return Granted
		}
		return Denied
	case ProvHost:
		h, ok := r.verifiedHost()
		if !ok {
			return Denied
		}
		for _, p := range n.Args {
			if InDomain(p, h) {
				return Granted
			}
		}
		return Denied
	case ProvValidUser:
		if !c.hasUser {
			return DeniedNoUser
		}
		return Granted
	case ProvUser:
		if !c.hasUser {
			return DeniedNoUser
		}
		if slices.Contains(n.Args, c.user) {
			return Granted
		}
		return Denied
	case ProvGroup:
		if !c.hasUser {
			return DeniedNoUser
		}
		if c.groupFile == "" || c.id == nil {
			return Denied // AH01664: no group file
		}
		groups, found, err := c.id.Groups(c.groupFile, c.user)
		if err != nil {
			if c.d != nil {
				c.d.log("authz_groupfile", "AH01665", "Could not open group file: "+c.groupFile)
			}
			return Denied // a group file that cannot be opened denies
		}
		if !found {
			return Denied
		}
		for _, g := range n.Args {
			if slices.Contains(groups, g) {
				return Granted
			}
		}
		return Denied
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

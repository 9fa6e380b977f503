package policy

import (
	"sort"
	"strings"
)

// Render writes a Require tree as Apache 2.4 configuration lines, each
// prefixed with indent. The root is the implicit <RequireAny> of a
// section: its children are written directly. Consecutive "Require ip"
// leaves of the same container are packed on one line (Apache evaluates
// each Require line separately), and containers of one child are
// flattened.
func Render(root *Node, indent string) []string {
	root = simplify(root)
	if root == nil {
		return nil
	}
	if root.Kind == Any && !root.Negate {
		return appendChildren(nil, root.Children, true, indent)
	}
	return appendNode(nil, root, indent)
}

// appendNode appends the lines of n to out, each prefixed with indent.
func appendNode(out []string, n *Node, indent string) []string {
	if n.Kind == Leaf {
		return append(out, leafText(indent, n))
	}
	name := "RequireAny"
	switch {
	case n.Kind == All:
		name = "RequireAll"
	case n.Negate:
		name = "RequireNone"
	}
	out = append(out, indent+"<"+name+">")
	// Only alternatives may share a line: "Require ip a b" is a or b.
	out = appendChildren(out, n.Children, n.Kind == Any, indent+"    ")
	return append(out, indent+"</"+name+">")
}

// appendChildren appends the lines of the nodes ns to out; with pack,
// consecutive non-negated "Require ip" leaves share a line of at most 64
// addresses (one with more has a line of its own).
func appendChildren(out []string, ns []*Node, pack bool, indent string) []string {
	for i := 0; i < len(ns); {
		if !pack || !plainIP(ns[i]) {
			out = appendNode(out, ns[i], indent)
			i++
			continue
		}
		j, addrs := i+1, len(ns[i].Subnets)
		for j < len(ns) && plainIP(ns[j]) && addrs+len(ns[j].Subnets) <= 64 {
			addrs += len(ns[j].Subnets)
			j++
		}
		b := append(make([]byte, 0, 64), indent...)
		out = append(out, string(appendSubnets(append(b, "Require ip"...), ns[i:j])))
		i = j
	}
	return out
}

// plainIP reports whether n is a "Require ip" leaf, not negated: one
// that may share its line.
func plainIP(n *Node) bool {
	return n.Kind == Leaf && n.Provider == ProvIP && !n.Negate
}

// appendSubnets appends the addresses of the "Require ip" leaves ns, each
// after a space.
func appendSubnets(b []byte, ns []*Node) []byte {
	for _, n := range ns {
		for _, s := range n.Subnets {
			b = s.AppendTo(append(b, ' '))
		}
	}
	return b
}

// appendWord appends w as one word of a directive: in double quotes
// (with '"' escaped) where it is empty, holds white space or a '"', or
// starts with a quote, which ap_getword_conf would read otherwise.
func appendWord(b []byte, w string) []byte {
	if w != "" && !strings.ContainsAny(w, " \t\"") && w[0] != '\'' {
		return append(b, w...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(w, `"`, `\"`)...)
	return append(b, '"')
}

// leafText is the Require line of a leaf, after indent.
func leafText(indent string, n *Node) string {
	b := make([]byte, 0, 64)
	b = append(b, indent...)
	b = append(b, "Require "...)
	if n.Negate {
		b = append(b, "not "...)
	}
	// words writes name and its arguments, each quoted where
	// ap_getword_conf would otherwise read it as another word (or none).
	words := func(name string, args []string) {
		b = append(append(b, name...), ' ')
		for i, a := range args {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendWord(b, a)
		}
	}
	switch n.Provider {
	case ProvAllGranted:
		b = append(b, "all granted"...)
	case ProvAllDenied:
		b = append(b, "all denied"...)
	case ProvIP:
		b = appendSubnets(append(b, "ip"...), []*Node{n})
	case ProvHost:
		words("host", n.Args)
	case ProvEnv:
		words("env", n.Args)
	case ProvLocal:
		b = append(b, "local"...)
	case ProvUser:
		words("user", n.Args)
	case ProvValidUser:
		b = append(b, "valid-user"...)
	case ProvGroup:
		words("group", n.Args)
	case ProvDBMGroup:
		words("dbm-group", n.Args)
	case ProvFileOwner, ProvFileGroup, ProvDBMFileGroup:
		// The providers ignore their arguments; they are written back.
		name := [...]string{ProvFileOwner: "file-owner", ProvFileGroup: "file-group", ProvDBMFileGroup: "dbm-file-group"}[n.Provider]
		if len(n.Args) == 0 {
			b = append(b, name...)
		} else {
			words(name, n.Args)
		}
	case ProvOther, ProvLDAP:
		// Its name and its argument line as written.
		if len(n.Args) > 0 {
			b = append(b, n.Args[0]...)
			for _, a := range n.Args[1:] {
				b = append(append(b, ' '), a...)
			}
		}
	case ProvMethod:
		var names []string
		for name, num := range builtinMethods {
			if n.MethodOK&(1<<uint(num)) != 0 && name != "HEAD" {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		words("method", names)
	}
	return string(b)
}

// simplify flattens containers of one child and same-kind nesting, and
// drops "Require all granted" from a RequireAll that has another child.
// A container already so is returned as it is, not copied.
func simplify(n *Node) *Node {
	if n == nil || n.Kind == Leaf {
		return n
	}
	// kids are the children simplified: n's own while each is as it was
	// (own), made anew from the first that is not.
	kids, own := n.Children, true
	for i, ch := range n.Children {
		s := simplify(ch)
		flat := s != nil && s.Kind == n.Kind && !s.Negate && s.Kind != Leaf // its children are n's
		if own && s == ch && s != nil && !flat {
			continue
		}
		if own {
			kids, own = append(make([]*Node, 0, len(n.Children)), n.Children[:i]...), false
		}
		switch {
		case s == nil:
		case flat:
			kids = append(kids, s.Children...)
		default:
			kids = append(kids, s)
		}
	}
	if n.Kind == All && len(kids) > 1 {
		var kept []*Node
		hasPositive := false
		for _, ch := range kids {
			if !(ch.Kind == Leaf && ch.Provider == ProvAllGranted && !ch.Negate) {
				kept = append(kept, ch)
				if !ch.Negate {
					hasPositive = true
				}
			}
		}
		if hasPositive && len(kept) != len(kids) {
			kids, own = kept, false
		}
	}
	if len(kids) == 1 && !n.Negate {
		return kids[0]
	}
	if own {
		return n
	}
	c := *n
	c.Children = kids
	return &c
}

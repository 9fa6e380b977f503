package policy

// Order is the evaluation order of Allow and Deny (mod_access_compat).
type Order uint8

// The orders. The zero value is Apache's default, deny,allow.
const (
	DenyAllow Order = iota
	AllowDeny
	MutualFailure
)

func (o Order) String() string {
	switch o {
	case AllowDeny:
		return "allow,deny"
	case MutualFailure:
		return "mutual-failure"
	}
	return "deny,allow"
}

// Satisfy says how the host-based layer and the Require layer combine.
type Satisfy uint8

// The Satisfy values. The zero value, unspecified, behaves as All.
const (
	SatisfyNoSpec Satisfy = iota
	SatisfyAll
	SatisfyAny
)

func (s Satisfy) String() string {
	switch s {
	case SatisfyAll:
		return "All"
	case SatisfyAny:
		return "Any"
	}
	return "unset (All)"
}

// AccessKind classifies one word of an Allow or Deny line.
type AccessKind uint8

// The kinds of Allow/Deny words (mod_access_compat allow_cmd).
const (
	AccessAll    AccessKind = iota // "all"
	AccessIP                       // an address, partial address or subnet
	AccessHost                     // a host name or domain suffix
	AccessEnv                      // env=NAME
	AccessNotEnv                   // env=!NAME
)

// AccessRule is one word of an Allow or Deny line: Apache stores each word
// as its own entry, so each is its own rule here too.
type AccessRule struct {
	Kind    AccessKind
	Methods MethodMask // <Limit> in force where the line stood
	Subnet  Subnet     // AccessIP
	Name    string     // AccessHost pattern, or the variable of AccessEnv/AccessNotEnv
	Word    string     // the word as written
	Rule    *Rule      // the directive it belongs to
	Part    *Part      // the word's own counter (nil: not counted)
}

func (a *AccessRule) match(r *Request) bool {
	switch a.Kind {
	case AccessAll:
		return true
	case AccessIP:
		return a.Subnet.Contains(r.Addr)
	case AccessEnv:
		_, ok := r.Env.Get(a.Name)
		return ok
	case AccessNotEnv:
		_, ok := r.Env.Get(a.Name)
		return !ok
	case AccessHost:
		h, ok := r.verifiedHost()
		return ok && InDomain(a.Name, h)
	}
	panic("policy: unknown access kind")
}

// Compat is the host-based access layer of one section: mod_access_compat's
// per-directory configuration in 2.4 (2.2's mod_authz_host, plus Satisfy,
// which 2.4 keeps in the same structure). It has no merge function: a
// section that names any of its directives replaces the inherited one
// wholesale (apache-access-semantics.md §4.1).
//
// Fill the exported fields, then call Compile once; a compiled Compat is
// read-only and safe for concurrent use.
type Compat struct {
	Order   [MaxMethods]Order
	Satisfy [MaxMethods]Satisfy
	Allows  []AccessRule
	Denys   []AccessRule

	// OrderRule and SatisfyRule name the directive that set each method's
	// value, nil for the default; nil as a whole where none is named (a
	// configuration only written out names none).
	OrderRule   *[MaxMethods]*Rule
	SatisfyRule *[MaxMethods]*Rule

	allows, denys accessList
	compiled      bool
}

// ruleOf returns the rule of method m in rules, nil if there are none.
func ruleOf(rules *[MaxMethods]*Rule, m int) *Rule {
	if rules == nil {
		return nil
	}
	return rules[m]
}

// DefaultCompat is the configuration in force where no section names a
// host-access directive: deny,allow with empty lists, which allows.
var DefaultCompat = &Compat{}

// accessList is an Allow or Deny list compiled for lookups that do not
// grow with its length: per distinct <Limit> mask, the first "all", a
// prefix table of the addresses, and the rules that need the request
// (env, host), all by their index in the list.
type accessList struct {
	groups []accessGroup
}

type accessGroup struct {
	mask MethodMask
	all  int32 // first "all", or -1
	// allOther is the first "all" of another line than all's, or -1.
	allOther int32
	ips      *addrSet
	others   []int32 // env and host words, ascending
}

func compileList(list []AccessRule) accessList {
	var l accessList
	byMask := map[MethodMask]int{}
	var subnets [][]Subnet
	var idx, owner [][]int32
	lines := map[*Rule]int32{}
	for i, a := range list {
		g, ok := byMask[a.Methods]
		if !ok {
			g = len(l.groups)
			byMask[a.Methods] = g
			l.groups = append(l.groups, accessGroup{mask: a.Methods, all: -1, allOther: -1})
			subnets, idx, owner = append(subnets, nil), append(idx, nil), append(owner, nil)
		}
		line, ok := lines[a.Rule]
		if !ok || a.Rule == nil {
			line = int32(i)
			lines[a.Rule] = line
		}
		switch gr := &l.groups[g]; a.Kind {
		case AccessAll:
			switch {
			case gr.all < 0:
				gr.all = int32(i)
			case gr.allOther < 0 && list[gr.all].Rule != a.Rule:
				gr.allOther = int32(i)
			}
		case AccessIP:
			subnets[g] = append(subnets[g], a.Subnet)
			idx[g] = append(idx[g], int32(i))
			owner[g] = append(owner[g], line)
		default:
			gr.others = append(gr.others, int32(i))
		}
	}
	for g := range l.groups {
		l.groups[g].ips = newAddrSet(subnets[g], idx[g], owner[g])
	}
	return l
}

// find is find_allowdeny: the first rule of the list, in configuration
// order, that applies to the method and matches the request.
func (l *accessList) find(list []AccessRule, r *Request) *AccessRule {
	return l.findExcept(list, r, nil)
}

// findExcept is find as if the line except were deleted: the first word
// of another line (all of them when except is nil). It costs what find
// does.
func (l *accessList) findExcept(list []AccessRule, r *Request, except *Rule) *AccessRule {
	bit := MethodMask(1) << uint(r.Method)
	best := int32(-1)
	for gi := range l.groups {
		g := &l.groups[gi]
		if g.mask&bit == 0 {
			continue
		}
		all := g.all
		if except != nil && all >= 0 && list[all].Rule == except {
			all = g.allOther
		}
		if all >= 0 && (best < 0 || all < best) {
			best = all
		}
		p := g.ips.lookup(r.Addr)
		i := p.first
		if except != nil && i >= 0 && list[i].Rule == except {
			i = p.other
		}
		if i >= 0 && (best < 0 || i < best) {
			best = i
		}
		for _, i := range g.others {
			if best >= 0 && i >= best {
				break
			}
			if (except == nil || list[i].Rule != except) && list[i].match(r) {
				best = i
				break
			}
		}
	}
	if best < 0 {
		return nil
	}
	return &list[best]
}

// Compile prepares the Allow and Deny lists for lookups. It must be
// called once, after the exported fields are set and before Check.
func (c *Compat) Compile() {
	c.allows = compileList(c.Allows)
	c.denys = compileList(c.Denys)
	c.compiled = true
}

// trace reports, for explain, every directive of a list that applies to
// the method, in order, with whether one of its words matched. It scans
// the list, which only explain pays for.
func (c *Compat) trace(tr Tracer, name string, list []AccessRule, r *Request) {
	bit := MethodMask(1) << uint(r.Method)
	for i := 0; i < len(list); {
		rule := list[i].Rule
		res := "no match"
		j := i
		for ; j < len(list) && list[j].Rule == rule; j++ {
			if list[j].Methods&bit != 0 && res == "no match" && list[j].match(r) {
				res = "match: " + list[j].Word
			}
		}
		if list[i].Methods&bit != 0 {
			tr.Trace(Event{Layer: LayerCompat, Rule: rule, Text: name, Result: res})
		}
		i = j
	}
	if len(list) == 0 {
		tr.Trace(Event{Layer: LayerCompat, Text: name, Result: "no " + name + " rules"})
	}
}

// Check evaluates Order/Allow/Deny for the request as check_dir_access
// does and reports whether access is granted, with the rule that decided
// (the Order directive, or nil, when the order's default decided). Each
// word that matched counts a match for its directive.
func (c *Compat) Check(r *Request, tr Tracer) (bool, *Rule) {
	ok, decisive, _, _ := c.check(r, tr)
	return ok, decisive
}

// check is Check, which also returns the first Allow and Deny words
// that matched, nil where none did.
func (c *Compat) check(r *Request, tr Tracer) (bool, *Rule, *AccessRule, *AccessRule) {
	if !c.compiled && (len(c.Allows) > 0 || len(c.Denys) > 0) {
		// Empty compiled lists would match nothing: fail loudly, never
		// decide on a list that was not prepared.
		panic("policy: Compat.Check before Compile")
	}
	m := r.Method
	trace := tr != nil && tr.Enabled()
	var a, d *AccessRule
	ok := false
	var decisive *Rule
	switch c.Order[m] {
	case AllowDeny:
		a = c.allows.find(c.Allows, r)
		d = c.denys.find(c.Denys, r)
		switch {
		case d != nil:
			decisive = d.Rule
		case a != nil:
			ok, decisive = true, a.Rule
		}
	case DenyAllow:
		d = c.denys.find(c.Denys, r)
		a = c.allows.find(c.Allows, r)
		switch {
		case a != nil:
			ok, decisive = true, a.Rule
		case d != nil:
			decisive = d.Rule
		default:
			ok = true
		}
	case MutualFailure:
		a = c.allows.find(c.Allows, r)
		if a != nil {
			d = c.denys.find(c.Denys, r)
			if d != nil {
				decisive = d.Rule
			} else {
				ok, decisive = true, a.Rule
			}
		}
	default:
		panic("policy: unknown order")
	}
	if trace {
		tr.Trace(Event{Layer: LayerCompat, Rule: ruleOf(c.OrderRule, m), Text: "Order", Result: c.Order[m].String()})
		if c.Order[m] == DenyAllow {
			c.trace(tr, "Deny", c.Denys, r)
			c.trace(tr, "Allow", c.Allows, r)
		} else {
			c.trace(tr, "Allow", c.Allows, r)
			if c.Order[m] == AllowDeny || a != nil {
				c.trace(tr, "Deny", c.Denys, r)
			}
		}
		res := "denied"
		if ok {
			res = "granted"
		}
		tr.Trace(Event{Layer: LayerCompat, Rule: decisive, Text: "Order/Allow/Deny", Result: res})
	}
	if a != nil {
		a.Rule.hit(r)
		a.Part.hit(r)
	}
	if d != nil {
		d.Rule.hit(r)
		d.Part.hit(r)
	}
	if decisive == nil {
		decisive = ruleOf(c.OrderRule, m)
	}
	return ok, decisive, a, d
}

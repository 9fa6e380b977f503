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
type Compat struct {
	Order   [MaxMethods]Order
	Satisfy [MaxMethods]Satisfy
	Allows  []AccessRule
	Denys   []AccessRule

	// OrderRule and SatisfyRule name the directive that set each method's
	// value, nil for the default.
	OrderRule   [MaxMethods]*Rule
	SatisfyRule [MaxMethods]*Rule
}

// DefaultCompat is the configuration in force where no section names a
// host-access directive: deny,allow with empty lists, which allows.
var DefaultCompat = &Compat{}

func find(list []AccessRule, r *Request) *AccessRule {
	bit := MethodMask(1) << uint(r.Method)
	for i := range list {
		a := &list[i]
		if a.Methods&bit == 0 {
			continue
		}
		if a.match(r) {
			return a
		}
	}
	return nil
}

// Check evaluates Order/Allow/Deny for the request as check_dir_access
// does and reports whether access is granted, with the rule that decided
// (nil when the order's default decided).
func (c *Compat) Check(r *Request, tr Tracer) (bool, *Rule) {
	m := r.Method
	ok := false
	var decisive *Rule
	trace := tr != nil && tr.Enabled()
	note := func(list string, a *AccessRule) {
		if trace {
			res := "no match"
			if a != nil {
				res = "match: " + a.Word
			}
			rule := (*Rule)(nil)
			if a != nil {
				rule = a.Rule
			}
			tr.Trace(Event{Layer: LayerCompat, Rule: rule, Text: list, Result: res})
		}
	}
	switch c.Order[m] {
	case AllowDeny:
		a := find(c.Allows, r)
		note("Allow", a)
		if a != nil {
			ok, decisive = true, a.Rule
		}
		d := find(c.Denys, r)
		note("Deny", d)
		if d != nil {
			ok, decisive = false, d.Rule
		}
	case DenyAllow:
		ok = true
		d := find(c.Denys, r)
		note("Deny", d)
		if d != nil {
			ok, decisive = false, d.Rule
		}
		a := find(c.Allows, r)
		note("Allow", a)
		if a != nil {
			ok, decisive = true, a.Rule
		}
	case MutualFailure:
		a := find(c.Allows, r)
		note("Allow", a)
		if a != nil {
			d := find(c.Denys, r)
			note("Deny", d)
			if d != nil {
				decisive = d.Rule
			} else {
				ok, decisive = true, a.Rule
			}
		}
	default:
		panic("policy: unknown order")
	}
	if decisive == nil {
		decisive = c.OrderRule[m]
	}
	return ok, decisive
}

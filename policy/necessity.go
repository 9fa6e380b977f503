package policy

// Necessity: which rules a decision needed. A rule is necessary to a
// request when deleting it (as Options.Omit deletes it: the line gone,
// nothing else changed) would have changed the answer, its status or,
// for a 401, its realm. "Decisive" is an attribution, the rule a trail
// names; necessity is a counterfactual, and it is what retirement needs:
// a rule that was never necessary to the traffic seen can be deleted
// without changing any of its answers (translate/retire).
//
// Finding it does not decide the request once per rule. Each layer
// knows which of its rules can change its own answer:
//
//   - mod_access_compat decides on whether any Allow and any Deny word
//     matched (the Order is a function of the two). Only the line of the
//     first matching word of a list can change that, and only when no
//     other line of the list matches: one more lookup per list, in a
//     prefix table that keeps, per prefix, the first match of another
//     line too (addrset.go). When a deletion would flip the layer's
//     answer, the rest of the decision runs once more with the flipped
//     answer, whatever the number of rules.
//   - mod_authz_core's tree (and 2.2's Require lines): a leaf that was
//     neutral, or not reached, is skipped by its container whether it is
//     there or not; only the leaves that answered are candidates, and
//     each runs the authorization again without it.
//
// Rules whose deletion changes more than their own words (Structural:
// the only line of its kind in a section, which then inherits its
// parent's; a Require whose <Limit> widens its container) are not
// judged here: they go with their section.

// maxAnswered bounds the Require lines a decision keeps as candidates;
// the rest are counted necessary without a check (which can only call a
// removable rule needed, never the reverse).
const maxAnswered = 8

// MaxNecessary bounds the necessary rules a Decision lists.
const MaxNecessary = 4

// needCtx collects, while a request is decided, what necessity needs.
type needCtx struct {
	compatRan   bool
	ok          bool // mod_access_compat's answer, before mod_ssl's
	allow, deny *AccessRule
	answered    answeredSet
}

// answeredSet holds the Require lines whose deletion could change their
// container's result. It lives in the evalCtx by value while the tree
// is evaluated (a pointer there would make every decision allocate).
type answeredSet struct {
	rules    [maxAnswered]*Rule
	n        uint8
	overflow []*Rule // past maxAnswered (rare: allocated)
}

func (s *answeredSet) add(r *Rule) {
	if r == nil || r.Structural {
		return
	}
	for _, x := range s.rules[:s.n] {
		if x == r {
			return
		}
	}
	if int(s.n) < len(s.rules) {
		s.rules[s.n] = r
		s.n++
		return
	}
	s.overflow = append(s.overflow, r)
}

// alteration is a counterfactual decision: mod_access_compat's answer
// given, and one Require line deleted (nil: none).
type alteration struct {
	compatOK bool
	without  *Rule
}

// compatCheck runs mod_access_compat, or takes its answer from alt.
func compatCheck(c *Compat, r *Request, tr Tracer, nc *needCtx, alt *alteration) (bool, *Rule) {
	if alt != nil {
		return alt.compatOK, nil
	}
	ok, rule, a, d := c.check(r, tr)
	if nc != nil {
		nc.compatRan, nc.ok, nc.allow, nc.deny = true, ok, a, d
	}
	return ok, rule
}

// orderAllows is check_dir_access's answer from whether an Allow and a
// Deny word matched.
func orderAllows(o Order, allow, deny bool) bool {
	if o == DenyAllow {
		return allow || !deny
	}
	return allow && !deny // allow,deny and mutual-failure
}

// necessity finds and counts the rules necessary to d. The decisions it
// runs to find them are dry: they count nothing.
func necessity(l *Layers, r *Request, id Identity, d *Decision, nc *needCtx) {
	if !nc.compatRan {
		return // the connection broke in mod_ssl: no rule can change that
	}
	r.Dry = true
	defer func() { r.Dry = false }()
	c := l.Compat
	if c == nil {
		c = DefaultCompat
	}
	var flip [2]*Rule
	o := c.Order[r.Method]
	if a := nc.allow; a != nil && a.Rule != nil && !a.Rule.Structural &&
		orderAllows(o, false, nc.deny != nil) != nc.ok && c.allows.findExcept(c.Allows, r, a.Rule) == nil {
		flip[0] = a.Rule
	}
	if dn := nc.deny; dn != nil && dn.Rule != nil && !dn.Rule.Structural &&
		orderAllows(o, nc.allow != nil, false) != nc.ok && c.denys.findExcept(c.Denys, r, dn.Rule) == nil {
		flip[1] = dn.Rule
	}
	if flip[0] != nil || flip[1] != nil {
		var alt Decision
		decideOnce(l, r, id, nil, nil, &alteration{compatOK: !nc.ok}, &alt)
		if a := alt.answers(); a != d.answers() {
			d.need(flip[0], r, a)
			d.need(flip[1], r, a)
		}
	}
	for _, x := range nc.answered.rules[:nc.answered.n] {
		requireNecessity(l, r, id, d, nc, x)
	}
	for _, x := range nc.answered.overflow {
		d.need(x, r, answer{status: -1})
	}
	if lg := l.Legacy; lg != nil {
		// 2.2: a Require line that applies to the method can change
		// whether authentication runs at all, and which module answers.
		bit := MethodMask(1) << uint(r.Method)
		seen := 0
		for i := range lg.Requires {
			q := &lg.Requires[i]
			if q.Methods&bit == 0 || q.Rule == nil || q.Rule.Structural || sameRule(lg.Requires[:i], q.Rule) {
				continue
			}
			if seen++; seen > maxAnswered {
				d.need(q.Rule, r, answer{status: -1})
				continue
			}
			requireNecessity(l, r, id, d, nc, q.Rule)
		}
	}
}

func requireNecessity(l *Layers, r *Request, id Identity, d *Decision, nc *needCtx, x *Rule) {
	var alt Decision
	decideOnce(l, r, id, nil, nil, &alteration{compatOK: nc.ok, without: x}, &alt)
	if a := alt.answers(); a != d.answers() {
		d.need(x, r, a)
	}
}

func sameRule(qs []Require22, r *Rule) bool {
	for i := range qs {
		if qs[i].Rule == r {
			return true
		}
	}
	return false
}

// answer is what the client sees of a decision: the status, and for a
// challenge its realm.
type answer struct {
	status int
	realm  string
}

func (d *Decision) answers() answer {
	if d.Status == 401 {
		return answer{d.Status, d.Realm}
	}
	return answer{status: d.Status}
}

// Necessity is a rule necessary to a decision, with the answer the
// decision would have had without it.
type Necessity struct {
	Rule   *Rule
	Status int
	Realm  string // for a 401
}

// Count counts the decision the rule was necessary to, at now (unix
// nanoseconds; 0 keeps its last-hit time).
func (n Necessity) Count(now int64) {
	st := n.Rule.stats()
	st.necessary.Add(1)
	st.hitAt(now)
}

// need records x as necessary to the decision, alt being its answer
// without x, and counts it unless the caller counts
// (Request.DeferNecessity). A rule past MaxNecessary is counted at once:
// a count too many can only call a removable rule needed.
func (d *Decision) need(x *Rule, r *Request, alt answer) {
	if x == nil {
		return
	}
	for _, y := range d.necessary[:d.nneed] {
		if y.Rule == x {
			return
		}
	}
	n := Necessity{Rule: x, Status: alt.status, Realm: alt.realm}
	if int(d.nneed) == len(d.necessary) {
		n.Count(r.Now)
		return
	}
	d.necessary[d.nneed] = n
	d.nneed++
	if !r.DeferNecessity {
		n.Count(r.Now)
	}
}

// Necessary returns the rules necessary to the decision (up to
// MaxNecessary of them), those whose deletion would have changed its
// answer, each with that answer. A dry decision lists none.
func (d *Decision) Necessary() []Necessity { return d.necessary[:d.nneed] }

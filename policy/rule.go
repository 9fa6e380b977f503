package policy

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// Rule is one legacy directive as the operator wrote it. Every node of a
// policy that came from a directive points at its Rule, so a decision can
// name the line that made it. A Rule also counts, without locks, how often
// it matched and how often it decided a request.
type Rule struct {
	ID   string // stable short hash (see design.md, "Rule IDs")
	File string // file as given to the loader
	Line int
	Text string // the directive as written, e.g. "Deny from all"
	// Default marks a synthetic rule that stands for a scope's default
	// decision, when no directive decided.
	Default bool
	// Structural marks an access line whose deletion changes more than
	// its own words: the only line of its kind in its section (which
	// then inherits its parent's), or a Require whose <Limit> widens its
	// container. Its necessity is not counted (necessity.go): it goes
	// with its section.
	Structural bool

	// Parts are the words of an Allow or Deny line, each counted on its
	// own, so that a part of a line that never matches shows.
	Parts []*Part

	own    ruleStats
	shared *ruleStats // set by Adopt: the counters of the rule this one replaces
}

// Part is one word of an Allow or Deny line ("10.0.0.0/8", "env=x",
// "all"): Apache keeps each as its own entry and stops at the first that
// matches, and so does its counter.
type Part struct {
	Word string

	own    atomic.Uint64
	shared *atomic.Uint64
}

// NewPart adds a word to r's parts and returns it.
func (r *Rule) NewPart(word string) *Part {
	p := &Part{Word: word}
	r.Parts = append(r.Parts, p)
	return p
}

// PartLabel is the label of the i-th word in metrics: the word itself,
// with "#n" after the n-th repeat of a word already in the line, so that
// every series of a rule is distinct.
func (r *Rule) PartLabel(i int) string {
	w, n := r.Parts[i].Word, 1
	for _, p := range r.Parts[:i] {
		if p.Word == w {
			n++
		}
	}
	if n == 1 {
		return w
	}
	return w + "#" + strconv.Itoa(n)
}

func (p *Part) counter() *atomic.Uint64 {
	if p.shared != nil {
		return p.shared
	}
	return &p.own
}

// Matches returns how often the word was the one that matched.
func (p *Part) Matches() uint64 { return p.counter().Load() }

// AddMatches adds counts carried over from saved state.
func (p *Part) AddMatches(n uint64) { p.counter().Add(n) }

func (p *Part) hit(req *Request) {
	if p != nil && !req.Dry {
		p.counter().Add(1)
	}
}

type ruleStats struct {
	matches   atomic.Uint64
	decisive  atomic.Uint64
	necessary atomic.Uint64 // decisions it was necessary to (necessity.go)
	// covered counts, by method, the decisions made with a section's
	// access lines in force (on the section's synthetic rule); allocated
	// by the first.
	covered  atomic.Pointer[[MaxMethods]atomic.Uint64]
	firstHit atomic.Int64 // unix nanoseconds
	lastHit  atomic.Int64 // unix nanoseconds

	example   atomic.Pointer[Example]
	exampleAt atomic.Int64 // unix nanoseconds of the example
}

// Example is a request a rule decided, kept so that an operator can ask
// how it was decided (the admin page's explain links).
type Example struct {
	Method string    `json:"method"`
	Target string    `json:"target"` // the request-target as received
	Host   string    `json:"host,omitempty"`
	Client string    `json:"client"`
	Time   time.Time `json:"time"`
	// Header is the request's header, credentials and cookies redacted.
	Header map[string][]string `json:"header,omitempty"`
}

// ExampleEvery is how often a rule takes a new example at most.
const ExampleEvery = time.Second

// ExampleDue reports whether the rule would take a new example at now
// (unix nanoseconds): one a second at most, so that the request path pays
// an atomic load per request and an allocation a second per rule.
func (r *Rule) ExampleDue(now int64) bool {
	return r != nil && now-r.stats().exampleAt.Load() >= int64(ExampleEvery)
}

// SetExample keeps e as the rule's latest example.
func (r *Rule) SetExample(e *Example) {
	st := r.stats()
	st.exampleAt.Store(e.Time.UnixNano())
	st.example.Store(e)
}

// Example returns the rule's latest example, nil if it has none.
func (r *Rule) Example() *Example { return r.stats().example.Load() }

// hitAt records a hit at now (unix nanoseconds; 0 records none).
func (st *ruleStats) hitAt(now int64) {
	if now == 0 {
		return
	}
	if st.firstHit.Load() == 0 {
		st.firstHit.CompareAndSwap(0, now)
	}
	st.lastHit.Store(now)
}

func (r *Rule) stats() *ruleStats {
	if r.shared != nil {
		return r.shared
	}
	return &r.own
}

// Adopt makes r count on old's counters, so that a reload that keeps a
// rule keeps its series continuous: hits still landing on the old policy
// while the new one is swapped in are not lost. Call it before r is in use.
func (r *Rule) Adopt(old *Rule) {
	r.shared = old.stats()
	// The same ID means the same words in the same order.
	for i, p := range r.Parts {
		if i < len(old.Parts) && old.Parts[i].Word == p.Word {
			p.shared = old.Parts[i].counter()
		}
	}
}

// String renders the rule as "file:line: text".
func (r *Rule) String() string {
	if r == nil {
		return "(default)"
	}
	if r.Default {
		return r.Text
	}
	return fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Text)
}

// Stats returns how often the rule matched, how often it decided, and when
// it last did either (zero if never).
func (r *Rule) Stats() (matches, decisive uint64, lastHit time.Time) {
	st := r.stats()
	if ns := st.lastHit.Load(); ns != 0 {
		lastHit = time.Unix(0, ns)
	}
	return st.matches.Load(), st.decisive.Load(), lastHit
}

// AddStats adds counts carried over from an earlier copy of the rule (a
// reload that kept it).
func (r *Rule) AddStats(matches, decisive uint64, lastHit time.Time) {
	st := r.stats()
	st.matches.Add(matches)
	st.decisive.Add(decisive)
	if !lastHit.IsZero() {
		st.lastHit.Store(lastHit.UnixNano())
	}
}

// Necessary returns how many decisions the rule was necessary to: its
// deletion would have changed their answer.
func (r *Rule) Necessary() uint64 { return r.stats().necessary.Load() }

// AddNecessary adds counts carried over from saved state or an earlier
// copy of the rule.
func (r *Rule) AddNecessary(n uint64) { r.stats().necessary.Add(n) }

// Cover counts a decision of method made with the access lines of the
// rule's section in force: called on a section's synthetic rule, it is
// the traffic the necessity of those lines was measured over.
func (r *Rule) Cover(method int) {
	r.AddCovered(method, 1)
}

// AddCovered adds n decisions of method to the rule's coverage.
func (r *Rule) AddCovered(method int, n uint64) {
	st := r.stats()
	c := st.covered.Load()
	if c == nil {
		st.covered.CompareAndSwap(nil, new([MaxMethods]atomic.Uint64))
		c = st.covered.Load()
	}
	c[method].Add(n)
}

// Covered returns the rule's coverage by method number (Cover); nil
// when it has none.
func (r *Rule) Covered() []uint64 {
	c := r.stats().covered.Load()
	if c == nil {
		return nil
	}
	out := make([]uint64, MaxMethods)
	for i := range c {
		out[i] = c[i].Load()
	}
	return out
}

// FirstHit returns when the rule first matched or decided (zero if never).
func (r *Rule) FirstHit() time.Time {
	if ns := r.stats().firstHit.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// Restore sets the counts of a rule from saved state (orderly's
// state_file), before the rule is in use.
func (r *Rule) Restore(matches, decisive uint64, firstHit, lastHit time.Time) {
	st := r.stats()
	st.matches.Store(matches)
	st.decisive.Store(decisive)
	if !firstHit.IsZero() {
		st.firstHit.Store(firstHit.UnixNano())
	}
	if !lastHit.IsZero() {
		st.lastHit.Store(lastHit.UnixNano())
	}
}

// Hit counts a match of the rule at now (unix nanoseconds; 0 keeps the
// last-hit time). It is for rules evaluated outside package policy, such
// as SetEnvIf.
func (r *Rule) Hit(now int64) {
	if r == nil {
		return
	}
	st := r.stats()
	st.matches.Add(1)
	st.hitAt(now)
}

// Decided counts a decision the rule made at now (unix nanoseconds; 0
// keeps the last-hit time), for rules evaluated outside package policy,
// such as a RewriteRule that answers.
func (r *Rule) Decided(now int64) {
	if r == nil {
		return
	}
	st := r.stats()
	st.decisive.Add(1)
	st.hitAt(now)
}

// hit counts a match for req, unless it is decided dry.
func (r *Rule) hit(req *Request) {
	if !req.Dry {
		r.Hit(req.Now)
	}
}

// decide counts a decision for req, unless it is decided dry.
func (r *Rule) decide(req *Request) {
	if r == nil || req.Dry {
		return
	}
	st := r.stats()
	st.decisive.Add(1)
	st.hitAt(req.Now)
}

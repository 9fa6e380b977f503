package policy

import (
	"fmt"
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

	matches  atomic.Uint64
	decisive atomic.Uint64
	lastHit  atomic.Int64 // unix nanoseconds
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
	if ns := r.lastHit.Load(); ns != 0 {
		lastHit = time.Unix(0, ns)
	}
	return r.matches.Load(), r.decisive.Load(), lastHit
}

// AddStats adds counts carried over from an earlier copy of the rule (a
// reload that kept it).
func (r *Rule) AddStats(matches, decisive uint64, lastHit time.Time) {
	r.matches.Add(matches)
	r.decisive.Add(decisive)
	if !lastHit.IsZero() {
		r.lastHit.Store(lastHit.UnixNano())
	}
}

// Hit counts a match of the rule at now (unix nanoseconds; 0 keeps the
// last-hit time). It is for rules evaluated outside package policy, such
// as SetEnvIf.
func (r *Rule) Hit(now int64) { r.hit(now) }

func (r *Rule) hit(now int64) {
	if r == nil {
		return
	}
	r.matches.Add(1)
	if now != 0 {
		r.lastHit.Store(now)
	}
}

func (r *Rule) decide(now int64) {
	if r == nil {
		return
	}
	r.decisive.Add(1)
	if now != 0 {
		r.lastHit.Store(now)
	}
}

package policy

import "fmt"

// Rule is one legacy directive as the operator wrote it. Every node of a
// policy that came from a directive points at its Rule, so a decision can
// name the line that made it.
type Rule struct {
	ID   string // stable short hash (see design.md, "Rule IDs")
	File string // file as given to the loader
	Line int
	Text string // the directive as written, e.g. "Deny from all"
}

// String renders the rule as "file:line: text".
func (r *Rule) String() string {
	if r == nil {
		return "(default)"
	}
	return fmt.Sprintf("%s:%d: %s", r.File, r.Line, r.Text)
}

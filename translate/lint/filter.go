package lint

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Filter selects findings by rule ID and severity: Only (when set) and
// Skip are rule IDs, each exact ("DIR-10") or a family ending in "*"
// ("AUTH-*"); MinSeverity drops what is less severe.
type Filter struct {
	Only, Skip  []string
	MinSeverity Severity
}

// ParseIDs reads a comma-separated list of rule IDs for a Filter, each a
// known ID or a family prefix ending in "*" that names at least one.
func ParseIDs(s string) ([]string, error) {
	var ids []string
	for _, id := range strings.Split(s, ",") {
		id = strings.ToUpper(strings.TrimSpace(id))
		if id == "" {
			continue
		}
		known := false
		for _, r := range Rules() {
			known = known || matchID(id, r.ID)
		}
		if !known {
			return nil, fmt.Errorf("no rule %q (rule IDs such as DIR-10, or a family such as AUTH-*)", id)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no rule ID in %q", s)
	}
	return ids, nil
}

func matchID(pattern, id string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(id, p)
	}
	return pattern == id
}

func matchAny(patterns []string, id string) bool {
	for _, p := range patterns {
		if matchID(p, id) {
			return true
		}
	}
	return false
}

// Apply keeps the findings of r the filter selects, in order.
func (f Filter) Apply(r *Report) {
	if len(f.Only) == 0 && len(f.Skip) == 0 && f.MinSeverity.Rank() <= Info.Rank() {
		return
	}
	kept := r.Findings[:0]
	for _, x := range r.Findings {
		if len(f.Only) > 0 && !matchAny(f.Only, x.ID) || matchAny(f.Skip, x.ID) || x.Severity.Rank() < f.MinSeverity.Rank() {
			continue
		}
		kept = append(kept, x)
	}
	r.Findings = kept
}

// WriteSummary writes the closing lines of a text report: the number of
// findings by severity, then by rule ID (most frequent first), and the
// number of files read.
func WriteSummary(w io.Writer, r *Report) error {
	// A big report has tens of thousands of findings of a few rules:
	// they are counted by the rule's index in the catalogue.
	var bySev [4]int // by Severity.Rank
	byRule := make([]int, len(rules))
	var other map[string]int // IDs the catalogue does not have
	for i := range r.Findings {
		f := &r.Findings[i]
		bySev[f.Severity.Rank()]++
		if k, ok := ruleIndex[f.ID]; ok {
			byRule[k]++
			continue
		}
		if other == nil {
			other = map[string]int{}
		}
		other[f.ID]++
	}
	type count struct {
		id string
		n  int
	}
	var ids []count
	for k, n := range byRule {
		if n > 0 {
			ids = append(ids, count{rules[k].ID, n})
		}
	}
	for id, n := range other {
		ids = append(ids, count{id, n})
	}
	slices.SortFunc(ids, func(a, b count) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.id, b.id)) })
	var b strings.Builder
	fmt.Fprintf(&b, "lint: %d findings (%d errors, %d warnings, %d infos) in %d files read\n",
		len(r.Findings), bySev[Error.Rank()], bySev[Warning.Rank()], bySev[Info.Rank()], len(r.Files))
	if len(ids) > 0 {
		b.WriteString("lint: by rule:")
		for _, c := range ids {
			fmt.Fprintf(&b, " %s %d", c.id, c.n)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

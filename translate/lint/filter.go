package lint

import (
	"fmt"
	"io"
	"sort"
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
	bySev := map[Severity]int{}
	byID := map[string]int{}
	for _, f := range r.Findings {
		bySev[f.Severity]++
		byID[f.ID]++
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if byID[ids[i]] != byID[ids[j]] {
			return byID[ids[i]] > byID[ids[j]]
		}
		return ids[i] < ids[j]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "lint: %d findings (%d errors, %d warnings, %d infos) in %d files read\n",
		len(r.Findings), bySev[Error], bySev[Warning], bySev[Info], len(r.Files))
	if len(ids) > 0 {
		b.WriteString("lint: by rule:")
		for _, id := range ids {
			fmt.Fprintf(&b, " %s %d", id, byID[id])
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

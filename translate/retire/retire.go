// Package retire finds the legacy rules that can go: those that can never
// decide a request (shadowed by rules that always decide first, under
// mod_access_compat's set-based Order semantics), those that open more
// than they seem to, and, from a metrics snapshot, those that have not
// fired.
package retire

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// Severity ranks findings.
type Severity string

// The severities.
const (
	Warning Severity = "warning" // delete it, or fix what makes it dead
	Info    Severity = "info"    // evidence for a decision
)

// Finding is one rule that can go, and why.
type Finding struct {
	Kind string `json:"kind"` // never-decides, permissive, needed, can-go, with-section, not-seen, part-not-matched, not-fired, not-decisive
	// Verdict is what the finding says the rule is: Needed, CanGo or
	// Dead; "" for findings that are evidence only.
	Verdict  string   `json:"verdict,omitempty"`
	Severity Severity `json:"severity"`
	RuleID   string   `json:"rule_id"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Text     string   `json:"directive"`
	Why      string   `json:"why"`
}

// Static analyses the configuration without traffic.
func Static(cfg *translate.Config) []Finding {
	var out []Finding
	seen := map[*translate.Section]bool{}
	for _, s := range Sections(cfg) {
		if seen[s] {
			continue
		}
		seen[s] = true
		if c := s.Conf.Compat; c != nil {
			out = append(out, compat(c)...)
			out = append(out, permissive(s, c)...)
		}
	}
	sortFindings(out)
	return dedupe(out)
}

// Sections lists every section of the main server and the virtual hosts,
// nested <Files> included (.htaccess files, read as requests come, are
// not in it).
func Sections(cfg *translate.Config) []*translate.Section {
	var out []*translate.Section
	add := func(c *translate.Config) {
		for _, list := range [][]*translate.Section{c.Dirs, c.DirMatches, c.Files, c.Locations} {
			for _, s := range list {
				out = append(out, s)
				out = append(out, s.Conf.Files...)
			}
		}
	}
	add(cfg)
	for _, v := range cfg.VHosts {
		add(v.Config)
	}
	return out
}

// compat finds the Allow and Deny lines of one section that never decide:
// for every method they apply to, either their list never decides under
// the Order in force (an "all" on the other side wins first), or an
// earlier word of their own list matches every request they match.
func compat(c *policy.Compat) []Finding {
	var out []Finding
	for _, side := range []struct {
		name  string
		list  []policy.AccessRule
		other []policy.AccessRule
	}{{"Allow", c.Allows, c.Denys}, {"Deny", c.Denys, c.Allows}} {
		for i := 0; i < len(side.list); {
			rule := side.list[i].Rule
			j := i
			for j < len(side.list) && side.list[j].Rule == rule {
				j++
			}
			why := ""
			dead := true
			for k := i; k < j && dead; k++ {
				w := &side.list[k]
				for m := 0; m < policy.MaxMethods && dead; m++ {
					bit := policy.MethodMask(1) << uint(m)
					if w.Methods&bit == 0 {
						continue
					}
					if r := listNeverDecides(c, side.name, m); r != "" {
						why = r
						continue
					}
					if e := coveredBy(side.list[:k], w, bit); e != nil {
						if e.Rule != rule {
							why = fmt.Sprintf("%s:%d (%q) matches every request it matches, and comes first", e.Rule.File, e.Rule.Line, e.Rule.Text)
						} else {
							why = fmt.Sprintf("its word %q matches every request %q does", e.Word, w.Word)
						}
						continue
					}
					dead = false
				}
			}
			if dead && rule != nil {
				out = append(out, Finding{Kind: "never-decides", Verdict: Dead, Severity: Warning, RuleID: rule.ID, File: rule.File, Line: rule.Line, Text: rule.Text,
					Why: "can never decide a request: " + why})
			}
			i = j
		}
	}
	return out
}

// listNeverDecides says why the Allow or Deny list never decides method
// m under the section's Order, or "".
func listNeverDecides(c *policy.Compat, name string, m int) string {
	bit := policy.MethodMask(1) << uint(m)
	all := func(list []policy.AccessRule) *policy.AccessRule {
		for i := range list {
			if list[i].Kind == policy.AccessAll && list[i].Methods&bit != 0 {
				return &list[i]
			}
		}
		return nil
	}
	any := func(list []policy.AccessRule) bool {
		for i := range list {
			if list[i].Methods&bit != 0 {
				return true
			}
		}
		return false
	}
	at := func(a *policy.AccessRule) string {
		return fmt.Sprintf("%s:%d (%q)", a.Rule.File, a.Rule.Line, a.Rule.Text)
	}
	switch c.Order[m] {
	case policy.DenyAllow:
		if a := all(c.Allows); name == "Deny" && a != nil {
			return "under Order deny,allow an Allow that matches wins, and " + at(a) + " matches everyone"
		}
	case policy.AllowDeny:
		if d := all(c.Denys); name == "Allow" && d != nil {
			return "under Order allow,deny a Deny that matches wins, and " + at(d) + " matches everyone"
		}
	case policy.MutualFailure:
		if d := all(c.Denys); name == "Allow" && d != nil {
			return "under Order mutual-failure a Deny that matches wins, and " + at(d) + " matches everyone"
		}
		if name == "Deny" && !any(c.Allows) {
			return "under Order mutual-failure a Deny only decides for a client an Allow matched, and there is no Allow"
		}
	}
	return ""
}

// coveredBy returns an earlier word of the list that applies to the method
// and matches every request w matches, or nil.
func coveredBy(earlier []policy.AccessRule, w *policy.AccessRule, bit policy.MethodMask) *policy.AccessRule {
	for i := range earlier {
		e := &earlier[i]
		if e.Methods&bit == 0 {
			continue
		}
		switch {
		case e.Kind == policy.AccessAll:
			return e
		case e.Kind == policy.AccessIP && w.Kind == policy.AccessIP:
			if contains(e.Subnet, w.Subnet) {
				return e
			}
		case e.Kind == w.Kind && (e.Kind == policy.AccessEnv || e.Kind == policy.AccessNotEnv) && e.Name == w.Name:
			return e
		case e.Kind == policy.AccessHost && w.Kind == policy.AccessHost && policy.InDomain(e.Name, strings.TrimPrefix(w.Name, ".")):
			return e
		}
	}
	return nil
}

// contains reports whether every address of b is in a (contiguous masks).
func contains(a, b policy.Subnet) bool {
	pa, ok1 := a.Prefix()
	pb, ok2 := b.Prefix()
	if !ok1 || !ok2 || pa.Addr().Is4() != pb.Addr().Is4() {
		return false
	}
	return pa.Bits() <= pb.Bits() && pa.Contains(pb.Addr())
}

// permissive finds "Allow from all" with "Satisfy Any" where the section
// asks for a user: the host layer lets everyone in, so the password is
// never asked for.
func permissive(s *translate.Section, c *policy.Compat) []Finding {
	if s.Conf.Authz == nil && s.Conf.Requires22 == nil {
		return nil
	}
	var out []Finding
	for i := range c.Allows {
		a := &c.Allows[i]
		if a.Kind != policy.AccessAll {
			continue
		}
		for m := 0; m < policy.MaxMethods; m++ {
			bit := policy.MethodMask(1) << uint(m)
			sat := c.Satisfy[m]
			if s.Conf.Satisfy22Set&bit != 0 {
				sat = s.Conf.Satisfy22[m]
			}
			if a.Methods&bit != 0 && sat == policy.SatisfyAny {
				out = append(out, Finding{Kind: "permissive", Severity: Warning, RuleID: a.Rule.ID, File: a.Rule.File, Line: a.Rule.Line, Text: a.Rule.Text,
					Why: "with Satisfy Any this lets everyone in, so the section's Require (a password) is never asked for"})
				break
			}
		}
	}
	return out
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].File != fs[j].File {
			return fs[i].File < fs[j].File
		}
		return fs[i].Line < fs[j].Line
	})
}

func dedupe(fs []Finding) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, f := range fs {
		k := f.Kind + "\x00" + f.RuleID
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

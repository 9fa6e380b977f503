package retire

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// The verdicts a rule or a section can get from traffic (Finding.Verdict).
// Static analysis adds "dead" (a line that can never be necessary).
const (
	Needed = "needed" // deleting it would have changed some answer seen
	CanGo  = "can go" // deleting it would have changed no answer seen
	Dead   = "dead"   // deleting it can change no answer at all (static)

	// A section's access configuration as a whole (all its Order, Allow,
	// Deny, Satisfy, Require and Auth* lines together).
	SectionNeeded = "section needed"
	SectionCanGo  = "section can go"
)

// Index is what the verdicts need of a configuration beside its rules:
// the section each access line belongs to (by the section's synthetic
// rule, whose coverage counts the requests decided with the section in
// force), and the access lines that read each environment variable.
type Index struct {
	section map[*policy.Rule]*policy.Rule // access line → its section's synthetic rule
	readers map[string][]reader           // variable (lower case) → the lines that test it
	sets    map[*policy.Rule][]string     // SetEnvIf line → the variables it sets (lower case)
	dead    map[string]bool               // lines Static finds can never decide, by ID
	secs    []*translate.Section          // the sections with an access configuration
}

// reader is an access line that tests a variable: it matches when the
// variable is set (negated: unset).
type reader struct {
	rule    *policy.Rule
	negated bool
}

// IndexOf indexes cfg's sections (virtual hosts and .htaccess files read
// so far included).
func IndexOf(cfg *translate.Config) *Index {
	ix := &Index{section: map[*policy.Rule]*policy.Rule{},
		readers: map[string][]reader{}, sets: map[*policy.Rule][]string{}, dead: map[string]bool{}}
	for _, f := range Static(cfg) {
		if f.Verdict == Dead {
			ix.dead[f.RuleID] = true
		}
	}
	ix.addSections(Sections(cfg))
	for _, e := range cfg.ServerEnv {
		ix.addEnv(e)
	}
	for _, v := range cfg.VHosts {
		for _, e := range v.Config.ServerEnv {
			ix.addEnv(e)
		}
	}
	return ix
}

// addSections indexes the access lines of secs and the variables they
// read.
func (ix *Index) addSections(secs []*translate.Section) {
	add := func(sec, line *policy.Rule) {
		if line == nil || sec == nil || ix.section[line] != nil {
			return
		}
		ix.section[line] = sec
	}
	read := func(name string, line *policy.Rule, negated bool) {
		k := strings.ToLower(name)
		ix.readers[k] = append(ix.readers[k], reader{line, negated})
	}
	var node func(n *policy.Node, sec *policy.Rule, negated bool)
	node = func(n *policy.Node, sec *policy.Rule, negated bool) {
		if n == nil {
			return
		}
		neg := negated != n.Negate
		if n.Kind != policy.Leaf {
			for _, c := range n.Children {
				node(c, sec, neg)
			}
			return
		}
		add(sec, n.Rule)
		if n.Provider == policy.ProvEnv {
			for _, v := range n.Args {
				read(v, n.Rule, neg)
			}
		}
	}
	for _, s := range secs {
		c := s.Conf
		if c.HasAccess() && s.Default != nil && !slices.Contains(ix.secs, s) {
			ix.secs = append(ix.secs, s)
		}
		if cp := c.Compat; cp != nil {
			for _, list := range [][]policy.AccessRule{cp.Allows, cp.Denys} {
				for _, a := range list {
					add(s.Default, a.Rule)
					switch a.Kind {
					case policy.AccessEnv:
						read(a.Name, a.Rule, false)
					case policy.AccessNotEnv:
						read(a.Name, a.Rule, true)
					}
				}
			}
		}
		if z := c.Authz; z != nil {
			node(z.Root, s.Default, false)
		}
		for _, q := range c.Requires22 {
			add(s.Default, q.Rule)
		}
	}
	for _, s := range secs {
		for _, e := range s.Conf.SetEnv {
			ix.addEnv(e)
		}
	}
}

// addEnv notes the variables a SetEnvIf entry sets ("!name": unsets).
func (ix *Index) addEnv(e *translate.EnvRule) {
	if e.Rule == nil {
		return
	}
	for _, f := range e.Features {
		v := strings.ToLower(f.Name)
		if f.Unset {
			v = "!" + v // unsets: its deletion sets the variable more often
		}
		if !slices.Contains(ix.sets[e.Rule], v) {
			ix.sets[e.Rule] = append(ix.sets[e.Rule], v)
		}
	}
}

// evidence is what the counters say, from one scrape or over a window.
type evidence struct {
	when      string // "since orderly started", "in the last 7d"
	necessary map[string]float64
	covered   map[string]map[string]float64 // section rule ID → method → requests
	// sections is the necessity of the sections' access configurations,
	// by their synthetic rules' IDs (nil: not counted by that orderly).
	sections map[string]float64
}

// coverage is the requests decided with sec in force, in total and as
// "GET 12, POST 3".
func (ev *evidence) coverage(sec *policy.Rule) (float64, string) {
	if sec == nil {
		return 0, ""
	}
	by := ev.covered[sec.ID]
	methods := make([]string, 0, len(by))
	total := 0.0
	for m, n := range by {
		total += n
		if n > 0 {
			methods = append(methods, m)
		}
	}
	sort.Slice(methods, func(i, j int) bool {
		return by[methods[i]] > by[methods[j]] || by[methods[i]] == by[methods[j]] && methods[i] < methods[j]
	})
	var parts []string
	for _, m := range methods {
		parts = append(parts, fmt.Sprintf("%s %.0f", m, by[m]))
	}
	return total, strings.Join(parts, ", ")
}

// verdicts judges each access line and each SetEnvIf line by necessity
// (policy.Rule.Necessary). Settings and synthetic rules get no verdict of
// their own.
func verdicts(rules []*policy.Rule, ix *Index, ev *evidence) []Finding {
	if ix == nil {
		ix = &Index{}
	}
	verdict := map[*policy.Rule]string{}
	var out []Finding
	finding := func(r *policy.Rule, kind, v string, sev Severity, why string) {
		verdict[r] = v
		out = append(out, Finding{Kind: kind, Verdict: v, Severity: sev, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text, Why: why})
	}
	for _, r := range rules {
		if !decides(r) {
			continue
		}
		n, ok := ev.necessary[r.ID]
		if !ok {
			continue // not in the scrape: added since, or too young
		}
		total, methods := ev.coverage(ix.section[r])
		switch {
		case ix.dead[r.ID]:
			verdict[r] = Dead // Static says so, and why
		case r.Structural:
			out = append(out, Finding{Kind: "with-section", Severity: Info, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text,
				Why: "deleting it would change how its section merges (the section's only line of its kind, or one whose <Limit> widens its container): it is judged with its section"})
		case n > 0:
			finding(r, "needed", Needed, Info, fmt.Sprintf("necessary to %.0f requests %s: deleting it would have changed their answer", n, ev.when))
		case total > 0:
			finding(r, "can-go", CanGo, Warning, fmt.Sprintf("deleting it would have changed none of the %.0f requests decided with its section in force %s (%s); traffic not seen is not covered", total, ev.when, methods))
		default:
			out = append(out, Finding{Kind: "not-seen", Severity: Info, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text,
				Why: "no request was decided with its section in force " + ev.when + ": no evidence either way"})
		}
	}
	// A SetEnvIf line goes with the lines that read what it sets: needed
	// if one of them is; it can go when none is and none tests for the
	// variable's absence (deleting the SetEnvIf line would make such a
	// line match more, not less).
	for _, r := range rules {
		vars, ok := ix.sets[r]
		if !ok {
			continue
		}
		var needed, negated, unjudged []string
		readers := 0
		for _, v := range vars {
			if strings.HasPrefix(v, "!") {
				negated = append(negated, r.Text)
				continue
			}
			for _, rd := range ix.readers[v] {
				readers++
				switch {
				case rd.negated:
					negated = append(negated, rd.rule.Text)
				case verdict[rd.rule] == Needed:
					needed = append(needed, rd.rule.Text)
				case verdict[rd.rule] != CanGo:
					unjudged = append(unjudged, rd.rule.Text)
				}
			}
		}
		switch {
		case len(needed) > 0:
			finding(r, "needed", Needed, Info, fmt.Sprintf("sets %s, which %q reads, and that line is needed", strings.Join(vars, ", "), needed[0]))
		case len(negated) > 0 || len(unjudged) > 0:
			// Nothing to say: a reader has no verdict, or tests absence.
		case readers == 0:
			finding(r, "can-go", CanGo, Warning, fmt.Sprintf("sets %s, which no access line reads (other modules, such as CustomLog env= or mod_rewrite, may)", strings.Join(vars, ", ")))
		default:
			finding(r, "can-go", CanGo, Warning, fmt.Sprintf("sets %s, and every access line that reads it can go %s", strings.Join(vars, ", "), ev.when))
		}
	}
	// A section's access configuration is judged as a whole by its own
	// counterfactual (walk's sectionsNecessary): that each of its lines
	// can go on its own says nothing of deleting them all, as its settings
	// (Order allow,deny alone refuses everyone) may be what decides.
	if ev.sections != nil {
		for _, s := range ix.secs {
			out = append(out, sectionVerdict(s, ev)...)
		}
	}
	return out
}

// sectionVerdict judges the access configuration of s as a whole.
func sectionVerdict(s *translate.Section, ev *evidence) []Finding {
	n, ok := ev.sections[s.Default.ID]
	if !ok {
		return nil
	}
	var lines []string
	for _, r := range s.Lines {
		if translate.IsSectionAccess(r.Text) {
			lines = append(lines, fmt.Sprintf("%d", r.Line))
		}
	}
	f := Finding{RuleID: s.Default.ID, File: s.Default.File, Line: s.Default.Line, Text: s.String()}
	what := "its access lines (" + strings.Join(lines, ", ") + ")"
	if len(lines) == 1 {
		what = "its access line (" + lines[0] + ")"
	}
	if s.Kind == translate.KindHtaccess {
		what = "the .htaccess file's access lines"
	}
	total, methods := ev.coverage(s.Default)
	switch {
	case n > 0:
		f.Kind, f.Verdict, f.Severity = "section-needed", SectionNeeded, Info
		f.Why = fmt.Sprintf("deleting %s together would have changed the answer to %.0f requests %s", what, n, ev.when)
	case total > 0:
		f.Kind, f.Verdict, f.Severity = "section-can-go", SectionCanGo, Warning
		f.Why = fmt.Sprintf("deleting %s together would have changed none of the %.0f requests decided with it in force %s (%s); traffic not seen is not covered", what, total, ev.when, methods)
	default:
		return nil
	}
	return []Finding{f}
}

// FromCounters judges rules by their own counters (policy.Rule's
// Necessary and Covered), as a live orderly holds them: what the admin
// page shows, and what FromMetrics reads back from a scrape. when says
// over what ("since orderly started"). methods names method numbers.
func FromCounters(rules []*policy.Rule, ix *Index, when string, methods *policy.Methods) []Finding {
	ev := &evidence{when: when, necessary: map[string]float64{}, covered: map[string]map[string]float64{}, sections: map[string]float64{}}
	for _, r := range rules {
		if r.Default {
			ev.sections[r.ID] += float64(r.Necessary())
		} else {
			ev.necessary[r.ID] += float64(r.Necessary())
		}
		for num, n := range r.Covered() {
			if n == 0 {
				continue
			}
			if ev.covered[r.ID] == nil {
				ev.covered[r.ID] = map[string]float64{}
			}
			ev.covered[r.ID][methods.Name(num)] += float64(n)
		}
	}
	out := verdicts(rules, ix, ev)
	sortFindings(out)
	return out
}

// AddSections indexes more sections, such as the .htaccess files a
// running orderly has read.
func (ix *Index) AddSections(secs []*translate.Section) {
	ix.addSections(secs)
}

// Demoted is the verdict of a rule demoted to shadow-only
// (legacy.demote): evaluated and counted, no longer enforced.
const Demoted = "demoted"

// MarkDemoted gives each demoted rule the verdict Demoted in place of the
// traffic verdicts findings held for it, with the disagreements counted
// under it against the legacy policy with it (against="demoted": the
// requests its deletion let through, or would refuse) when against has
// them (nil: no traffic read), over when. Static findings stay.
func MarkDemoted(findings []Finding, rules []*policy.Rule, demoted map[string]bool, against map[string]float64, when string) []Finding {
	if len(demoted) == 0 {
		return findings
	}
	out := findings[:0:0]
	for _, f := range findings {
		if demoted[f.RuleID] && f.Verdict != Dead && f.Kind != "never-decides" && f.Kind != "permissive" {
			continue
		}
		out = append(out, f)
	}
	seen := map[string]bool{}
	for _, r := range rules {
		if !demoted[r.ID] || seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		why := "demoted (legacy.demote): evaluated and counted, no longer enforced; read a scrape (-metrics) or the fleet (-prometheus) for the disagreements its demotion made"
		sev := Info
		if against != nil {
			n := against[r.ID]
			why = fmt.Sprintf("demoted (legacy.demote): %.0f disagreements %s between the legacy policy without it and with it (against=\"demoted\")", n, when)
			if n == 0 {
				why += ": deleting it changed no answer seen; traffic not seen is not covered"
				sev = Warning
			} else {
				why += ": its deletion changes answers, keep it (or fix what depends on it)"
			}
		}
		out = append(out, Finding{Kind: "demoted", Verdict: Demoted, Severity: sev, RuleID: r.ID, File: r.File, Line: r.Line, Text: r.Text, Why: why})
	}
	return out
}

// DemotedDisagreements reads a scrape's orderly_shadow_disagreements_total
// with against="demoted", summed by rule.
func DemotedDisagreements(exposition io.Reader) (map[string]float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(exposition)
	if err != nil {
		return nil, fmt.Errorf("reading the metrics: %w", err)
	}
	out := map[string]float64{}
	if f := fams["orderly_shadow_disagreements_total"]; f != nil {
		for _, m := range f.GetMetric() {
			if a, _ := label(m, "against"); a != "demoted" {
				continue
			}
			if id, ok := label(m, "rule_id"); ok {
				out[id] += m.GetCounter().GetValue()
			}
		}
	}
	return out, nil
}

// DemotedFromPrometheus asks a Prometheus server for the fleet's
// against="demoted" disagreements over the window, summed by rule.
func DemotedFromPrometheus(ctx context.Context, base, window string) (map[string]float64, error) {
	if _, err := model.ParseDuration(window); err != nil {
		return nil, fmt.Errorf("window %q: %v", window, err)
	}
	return query(ctx, base, `sum by (rule_id) (increase(orderly_shadow_disagreements_total{against="demoted"}[`+window+`]))`)
}

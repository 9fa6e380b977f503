package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// explanation is orderly explain -format json: one request's decision and
// why. Its shape is a contract (docs/commands.md documents it): fields are
// added, never renamed or removed. Optional strings are omitted when
// empty; lists are never null.
type explanation struct {
	Request  explainRequest  `json:"request"`
	Policy   string          `json:"policy"`  // "legacy" or "native"
	Verdict  string          `json:"verdict"` // "allow" or "deny"
	Status   int             `json:"status"`  // the status refused with; 0 when allowed
	Layer    string          `json:"layer"`   // the layer that decided: compat, authz, authn, ssl, config, request, none
	Rule     *explainRule    `json:"rule"`    // the rule that decided; null when the request line itself was refused
	URI      string          `json:"uri,omitempty"`
	Filename string          `json:"filename,omitempty"`
	PathInfo string          `json:"path_info,omitempty"`
	Index    string          `json:"index,omitempty"` // the DirectoryIndex file whose check decided
	Rewrite  *explainRewrite `json:"rewrite,omitempty"`
	// Sections are the sections that applied, in Apache's merge order.
	Sections []explainSection `json:"sections"`
	// CompatFrom and RequireFrom are the sections whose
	// Order/Allow/Deny/Satisfy and Require were in force; null for
	// Apache's defaults.
	CompatFrom  *explainSection `json:"compat_from"`
	RequireFrom *explainSection `json:"require_from"`
	Trail       []explainEvent  `json:"trail"`
	// Logs are the error-log lines serve writes, without the time,
	// pid and client prefix.
	Logs         []string            `json:"logs"`
	Semantics    explainSemantics    `json:"semantics"`
	Differences  []explainDifference `json:"differences"`
	NotEvaluated []explainDifference `json:"not_evaluated"` // legacy.forward_unfaithful: the backend must enforce these
}

type explainRequest struct {
	Method string `json:"method"`
	Target string `json:"target"`
	Client string `json:"client"`
	User   string `json:"user,omitempty"`
}

// explainRule is a legacy rule: its ID is the one legacy.demote and the
// metrics' rule_id label take. A default rule has only text and default.
type explainRule struct {
	ID      string `json:"id,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Text    string `json:"text"`
	Default bool   `json:"default,omitempty"`
}

type explainRewrite struct {
	Phase  string       `json:"phase"`  // "server" or "directory"
	Action string       `json:"action"` // "status", "redirect", "file", "passthrough", "internal redirect", "same"
	From   string       `json:"from"`
	To     string       `json:"to"`
	Rule   *explainRule `json:"rule"`
}

type explainSection struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Section string `json:"section"` // e.g. "<Directory /var/www/admin>"
}

// explainEvent is one step of the trail: a rule evaluated (rule set), or
// one of Apache's defaults (rule null, its name in directive).
type explainEvent struct {
	Layer     string       `json:"layer"`
	Rule      *explainRule `json:"rule"`
	Directive string       `json:"directive"`
	Result    string       `json:"result"`
}

// explainSemantics is the decision under the other semantics: where it
// differs, an upgrade that keeps mod_access_compat changes the answer.
type explainSemantics struct {
	InForce string `json:"in_force"` // "2.2" or "2.4-compat"
	Other   string `json:"other"`
	// OtherLoads is false when the configuration does not load under
	// Other; the fields below are then empty.
	OtherLoads   bool         `json:"other_loads"`
	OtherVerdict string       `json:"other_verdict,omitempty"`
	OtherStatus  int          `json:"other_status,omitempty"`
	OtherLayer   string       `json:"other_layer,omitempty"`
	OtherRule    *explainRule `json:"other_rule,omitempty"`
	Same         bool         `json:"same"` // both decide alike (allow, or deny with the same status)
}

type explainDifference struct {
	At   string `json:"at"` // file:line, or "(whole configuration)"
	Text string `json:"text"`
}

// newExplanation is the JSON form of what printExplain prints; section
// files are shown relative to base when below it.
func newExplanation(method, target string, addr netip.Addr, user, which string, res walk.Result, events []policy.Event, base string) *explanation {
	rel := func(f string) string {
		if r, err := filepath.Rel(base, f); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return f
	}
	section := func(s *translate.Section) *explainSection {
		if s == nil {
			return nil
		}
		return &explainSection{File: rel(s.Pos.File), Line: s.Pos.Line, Section: s.String()}
	}
	ex := &explanation{
		Request:      explainRequest{Method: method, Target: target, Client: addr.String(), User: user},
		Policy:       which,
		Verdict:      verdictWord(res),
		Status:       res.Status,
		Layer:        res.Layer.String(),
		URI:          res.URI,
		Filename:     res.Filename,
		PathInfo:     res.PathInfo,
		Index:        res.Index,
		Sections:     []explainSection{},
		Trail:        []explainEvent{},
		Logs:         []string{},
		Differences:  []explainDifference{},
		NotEvaluated: []explainDifference{},
	}
	if res.Layer != policy.LayerRequest {
		ex.Rule = ruleJSON(res.Rule)
		ex.CompatFrom, ex.RequireFrom = section(res.CompatFrom), section(res.AuthzFrom)
	}
	if rw := res.Rewritten; rw != nil {
		ex.Rewrite = &explainRewrite{Phase: rw.Phase, Action: rw.Action, From: rw.From, To: rw.To, Rule: ruleJSON(rw.Rule)}
	}
	for _, s := range res.Sections {
		ex.Sections = append(ex.Sections, *section(s))
	}
	for _, e := range events {
		ev := explainEvent{Layer: e.Layer.String(), Rule: ruleJSON(e.Rule), Directive: e.Text, Result: e.Result}
		if e.Rule != nil {
			ev.Directive = e.Rule.Text
		}
		ex.Trail = append(ex.Trail, ev)
	}
	for _, l := range res.Logs() {
		ex.Logs = append(ex.Logs, fmt.Sprintf("[%s:error] %s: %s", l.Module, l.Code, l.Message()))
	}
	return ex
}

// addSemantics adds the decision under the other semantics, the
// differences between the two, and what orderly does not evaluate.
func (ex *explanation) addSemantics(rc *runtimeConfig, cfg *translate.Config, req *walk.Request, res walk.Result) {
	other, ores, err := decideOther(rc, cfg, req)
	ex.Semantics = explainSemantics{InForce: string(cfg.Semantics), Other: string(other), OtherLoads: err == nil}
	if err == nil {
		ex.Semantics.OtherVerdict = verdictWord(ores)
		ex.Semantics.OtherStatus = ores.Status
		ex.Semantics.OtherLayer = ores.Layer.String()
		ex.Semantics.OtherRule = ruleJSON(ores.Rule)
		ex.Semantics.Same = ores.Allowed() == res.Allowed() && ores.Status == res.Status
		for _, d := range cfg.Differences {
			ex.Differences = append(ex.Differences, explainDifference{At: differenceAt(rc, d), Text: d.Text})
		}
	}
	for _, d := range cfg.Unfaithful {
		ex.NotEvaluated = append(ex.NotEvaluated, explainDifference{At: d.Pos.String(), Text: d.Text})
	}
}

// verdictWord is "allow" or "deny".
func verdictWord(res walk.Result) string {
	if res.Allowed() {
		return "allow"
	}
	return "deny"
}

// ruleJSON is r as explain -format json shows it; nil for nil.
func ruleJSON(r *policy.Rule) *explainRule {
	switch {
	case r == nil:
		return nil
	case r.Default:
		return &explainRule{Text: r.Text, Default: true}
	}
	return &explainRule{ID: r.ID, File: r.File, Line: r.Line, Text: r.Text}
}

// write writes ex as indented JSON.
func (ex *explanation) write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ex)
}

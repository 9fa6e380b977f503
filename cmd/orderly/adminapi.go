package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/retire"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// The admin listener's JSON API (docs/admin-api.md), which the admin page
// itself reads: GET /api/v1/scopes, /api/v1/rules, /api/v1/disagreements,
// and /api/v1/explain?rule=ID, the explanation of a rule's example
// request as `orderly explain` prints it.

// apiStatus is what every answer starts with: the configuration in force.
type apiStatus struct {
	Generation  uint64    `json:"generation"`
	Loaded      time.Time `json:"loaded"`
	ReloadOK    bool      `json:"reload_ok"`
	ReloadError string    `json:"reload_error,omitempty"`
	Now         time.Time `json:"now"`
	Started     time.Time `json:"started"`
}

type apiScope struct {
	Name          string  `json:"name"`
	Host          string  `json:"host"`
	Path          string  `json:"path"`
	Mode          string  `json:"mode"`
	Enforce       string  `json:"enforce"`
	Shadow        string  `json:"shadow"`
	Percent       float64 `json:"percent"`
	Requests      uint64  `json:"requests"`      // since the process started
	Disagreements uint64  `json:"disagreements"` // since the process started
	StepSeconds   int     `json:"step_seconds"`  // of Series
	Series        []point `json:"series"`        // oldest first; the last is the step in progress
	HourRequests  uint64  `json:"hour_requests"` // over Series
	HourDisagrees uint64  `json:"hour_disagreements"`
}

type apiScopes struct {
	apiStatus
	Scopes []apiScope `json:"scopes"`
}

type apiRule struct {
	ID        string          `json:"id"`
	Policy    string          `json:"policy"`
	Where     string          `json:"where"`
	Text      string          `json:"text"`
	Kind      string          `json:"kind"`    // access, setting, setenvif, default
	Verdict   string          `json:"verdict"` // needed, can go, dead, demoted, with section, not seen; "" for settings
	Why       string          `json:"why,omitempty"`
	Matches   uint64          `json:"matches"`
	Decisive  uint64          `json:"decisive"`
	Necessary uint64          `json:"necessary"`
	FirstHit  *time.Time      `json:"first_hit,omitempty"`
	LastHit   *time.Time      `json:"last_hit,omitempty"`
	Demoted   bool            `json:"demoted,omitempty"`
	Against   uint64          `json:"demoted_disagreements,omitempty"` // against="demoted"
	Parts     []apiPart       `json:"parts,omitempty"`
	Example   *policy.Example `json:"example,omitempty"`
}

type apiPart struct {
	Word    string `json:"word"`
	Matches uint64 `json:"matches"`
}

type apiSection struct {
	ID       string    `json:"id"` // the section's synthetic rule
	Policy   string    `json:"policy"`
	Section  string    `json:"section"`
	Where    string    `json:"where"`
	Requests uint64    `json:"requests"` // decided with its access lines in force
	Methods  string    `json:"methods"`  // those, by method: "GET 12, POST 3"
	Matches  uint64    `json:"matches"`  // of its rules
	Verdict  string    `json:"verdict"`  // of its access lines together: section needed, section can go; "" for no evidence
	Why      string    `json:"why,omitempty"`
	Rules    []apiRule `json:"rules"`
}

type apiRules struct {
	apiStatus
	Since    string         `json:"since"` // what the traffic verdicts cover
	Verdicts map[string]int `json:"verdicts"`
	Sections []apiSection   `json:"sections"`
	Other    []apiRule      `json:"other"` // rules of no section (server-level SetEnvIf, the built-in defaults)
}

type apiDisagreements struct {
	apiStatus
	Groups  []proxy.DisagreementGroup `json:"groups"`
	Total   uint64                    `json:"total"`
	Dropped uint64                    `json:"dropped"` // disagreements of groups beyond proxy.MaxDisagreementGroups
}

// adminAPI serves the JSON API.
type adminAPI struct {
	h       *proxy.Handler
	rl      *reloader
	hist    *scopeHistory
	started time.Time
	since   time.Time // when the rule counters started (the state file's first start)
}

func (a *adminAPI) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/scopes", a.scopes)
	mux.HandleFunc("GET /api/v1/rules", a.rules)
	mux.HandleFunc("GET /api/v1/disagreements", a.disagreements)
	mux.HandleFunc("GET /api/v1/explain", a.explain)
}

func (a *adminAPI) status() apiStatus {
	_, gen := a.h.Policies()
	s := apiStatus{Generation: gen, Now: time.Now().UTC(), Started: a.started.UTC()}
	a.rl.mu.Lock()
	s.Loaded, s.ReloadOK, s.ReloadError = a.rl.loaded.UTC(), a.rl.lastErr == "", a.rl.lastErr
	a.rl.mu.Unlock()
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func (a *adminAPI) scopes(w http.ResponseWriter, _ *http.Request) {
	p, _ := a.h.Policies()
	out := apiScopes{apiStatus: a.status(), Scopes: []apiScope{}}
	series := a.hist.snapshot(time.Now())
	totals := a.hist.metrics.ScopeTotals()
	for _, s := range p.InForce() {
		sc := apiScope{Name: s.Name, Host: s.Host, Path: s.Path, Mode: string(s.Mode), Enforce: s.Enforce, Shadow: s.Shadow,
			Percent: s.Percent, StepSeconds: int(HistoryStep / time.Second), Series: series[s.Name]}
		if s.Shadow == "" {
			sc.Percent = 100
		}
		for _, n := range totals[s.Name].Requests {
			sc.Requests += n
		}
		sc.Disagreements = totals[s.Name].Disagreements
		for _, pt := range sc.Series {
			sc.HourRequests += pt.Requests
			sc.HourDisagrees += pt.Disagreements
		}
		out.Scopes = append(out.Scopes, sc)
	}
	writeJSON(w, out)
}

func (a *adminAPI) disagreements(w http.ResponseWriter, _ *http.Request) {
	out := apiDisagreements{apiStatus: a.status()}
	out.Groups, out.Dropped = a.h.DisagreementGroups()
	if out.Groups == nil {
		out.Groups = []proxy.DisagreementGroup{}
	}
	for _, g := range out.Groups {
		out.Total += g.Count
	}
	out.Total += out.Dropped
	writeJSON(w, out)
}

// rules judges every rule in force by its counters (retire.FromCounters,
// retire.Static, the demoted list) and groups them by the section they
// are written in: a setting (Order, AuthName, Satisfy) has no verdict of
// its own and shows with its section.
func (a *adminAPI) rules(w http.ResponseWriter, _ *http.Request) {
	p, _ := a.h.Policies()
	out := apiRules{apiStatus: a.status(), Verdicts: map[string]int{}, Sections: []apiSection{}, Other: []apiRule{}}
	out.Since = sinceText(a.since, a.started)
	groups, _ := a.h.DisagreementGroups()
	against := map[string]uint64{}
	for _, g := range groups {
		if g.Against == proxy.AgainstDemoted {
			against[g.RuleID] += g.Count
		}
	}
	placed := map[*policy.Rule]bool{}
	add := func(pol string, e *walk.Engine) {
		if e == nil {
			return
		}
		cfg := e.Config()
		judged := map[string]retire.Finding{}
		ix := retire.IndexOf(cfg)
		ix.AddSections(e.HtaccessSections())
		secs := engineSections(e)
		for _, f := range retire.FromCounters(e.Rules(), ix, out.Since, cfg.Methods) {
			judged[f.RuleID] = f
		}
		for _, f := range retire.Static(cfg) {
			if f.Verdict == retire.Dead {
				judged[f.RuleID] = f
			}
		}
		row := func(r *policy.Rule) apiRule {
			placed[r] = true
			return a.ruleRow(r, pol, p.Demoted[r.ID], judged, against[r.ID])
		}
		for _, s := range secs {
			if s.Default == nil {
				continue
			}
			ex := sectionExample(s)
			sec := apiSection{ID: s.Default.ID, Policy: pol, Section: s.String(), Where: fmt.Sprintf("%s:%d", s.Default.File, s.Default.Line)}
			for _, n := range s.Default.Covered() {
				sec.Requests += n
			}
			sec.Methods = coverage(s.Default, cfg.Methods)
			if f, ok := judged[s.Default.ID]; ok && strings.HasPrefix(f.Kind, "section-") {
				sec.Verdict, sec.Why = f.Verdict, f.Why
				out.Verdicts[f.Verdict]++
			}
			for _, r := range append(slices.Clip(s.Lines), s.Default) {
				ar := row(r)
				if ar.Example == nil {
					ar.Example = ex
				}
				sec.Matches += ar.Matches
				sec.Rules = append(sec.Rules, ar)
			}
			out.Sections = append(out.Sections, sec)
		}
		for _, r := range e.Rules() {
			if !placed[r] {
				out.Other = append(out.Other, row(r))
			}
		}
	}
	add(proxy.PolicyLegacy, p.Legacy)
	add(proxy.PolicyNative, p.Native)
	// The sections whose rules fire first, then as written.
	slices.SortStableFunc(out.Sections, func(x, y apiSection) int { return cmp.Compare(y.Matches, x.Matches) })
	count := func(rs []apiRule) {
		for _, r := range rs {
			if r.Verdict != "" {
				out.Verdicts[r.Verdict]++
			}
		}
	}
	for _, s := range out.Sections {
		count(s.Rules)
	}
	count(out.Other)
	writeJSON(w, out)
}

// sinceText says over what the counters' verdicts are: "since orderly
// started (TIME)", or since the state file's first start.
func sinceText(since, started time.Time) string {
	if since.IsZero() || !since.Before(started) {
		return "since orderly started (" + started.UTC().Format(time.RFC3339) + ")"
	}
	return "since " + since.UTC().Format(time.RFC3339) + " (kept in state_file across restarts)"
}

// engineSections are the sections of an engine's configuration, its
// .htaccess files read so far included.
func engineSections(e *walk.Engine) []*translate.Section {
	return append(retire.Sections(e.Config()), e.HtaccessSections()...)
}

// sectionExample is the latest example of the rules written in s: the
// request to explain for a rule of s that decided none itself (a Deny
// that a Satisfy Any outweighs, a setting).
func sectionExample(s *translate.Section) *policy.Example {
	var ex *policy.Example
	for _, r := range append(slices.Clip(s.Lines), s.Default) {
		if e := r.Example(); e != nil && (ex == nil || e.Time.After(ex.Time)) {
			ex = e
		}
	}
	return ex
}

// coverage is a section's requests by method, "GET 12, POST 3".
func coverage(r *policy.Rule, methods *policy.Methods) string {
	type mc struct {
		name string
		n    uint64
	}
	var ms []mc
	for m, n := range r.Covered() {
		if n > 0 {
			ms = append(ms, mc{methods.Name(m), n})
		}
	}
	slices.SortFunc(ms, func(a, b mc) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.name, b.name)) })
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%s %d", m.name, m.n)
	}
	return strings.Join(parts, ", ")
}

// ruleKind says what a rule is, for its verdict: the access lines and
// SetEnvIf lines get one, settings and synthetic rules go with their
// section.
func ruleKind(r *policy.Rule) string {
	if r.Default {
		return "default"
	}
	word, _, _ := strings.Cut(r.Text, " ")
	switch strings.ToLower(word) {
	case "allow", "deny", "require":
		return "access"
	case "setenvif", "setenvifnocase", "browsermatch", "browsermatchnocase":
		return "setenvif"
	}
	return "setting"
}

func (a *adminAPI) ruleRow(r *policy.Rule, pol string, demoted bool, judged map[string]retire.Finding, against uint64) apiRule {
	m, dec, last := r.Stats()
	row := apiRule{ID: r.ID, Policy: pol, Where: fmt.Sprintf("%s:%d", r.File, r.Line), Text: r.Text, Kind: ruleKind(r),
		Matches: m, Decisive: dec, Necessary: r.Necessary(), Demoted: demoted, Against: against, Example: r.Example()}
	if r.File == "" {
		row.Where = "(built in)"
	}
	if f := r.FirstHit(); !f.IsZero() {
		f = f.UTC()
		row.FirstHit = &f
	}
	if !last.IsZero() {
		last = last.UTC()
		row.LastHit = &last
	}
	for _, p := range r.Parts {
		row.Parts = append(row.Parts, apiPart{p.Word, p.Matches()})
	}
	f, ok := judged[r.ID]
	if r.Default {
		ok = false // its section's verdict is the section's (apiSection)
	}
	switch {
	case demoted:
		row.Verdict = "demoted"
		row.Why = fmt.Sprintf("shadow-only: evaluated and counted, no longer enforced; %d disagreements against the legacy policy with it (against=\"demoted\"): delete it when they stay at zero", against)
	case ok && f.Verdict != "":
		row.Verdict, row.Why = f.Verdict, f.Why
	case ok && f.Kind == "with-section":
		row.Verdict, row.Why = "with section", f.Why
	case ok && f.Kind == "not-seen":
		row.Verdict, row.Why = "not seen", f.Why
	}
	return row
}

// explain answers how the policy in force decides a rule's example
// request, as `orderly explain` prints it (text/plain).
func (a *adminAPI) explain(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("rule")
	p, _ := a.h.Policies()
	var rule *policy.Rule
	engine, name := p.Legacy, proxy.PolicyLegacy
	for _, c := range []struct {
		name string
		e    *walk.Engine
	}{{proxy.PolicyLegacy, p.Legacy}, {proxy.PolicyNative, p.Native}} {
		if c.e == nil || rule != nil {
			continue
		}
		for _, x := range c.e.Rules() {
			if x.ID == id {
				rule, engine, name = x, c.e, c.name
				break
			}
		}
	}
	if rule == nil {
		http.Error(w, "no rule "+id+" in force", http.StatusNotFound)
		return
	}
	ex, of := rule.Example(), "the latest request rule "+rule.ID+" ("+rule.Text+") decided"
	if ex == nil {
		for _, s := range engineSections(engine) {
			if s.Default == rule || slices.Contains(s.Lines, rule) {
				ex, of = sectionExample(s), "rule "+rule.ID+" ("+rule.Text+") decided none itself: the latest request a rule of its section "+s.String()+" decided"
				break
			}
		}
	}
	if ex == nil {
		http.Error(w, "rule "+id+" has decided no request yet, nor any rule of its section: no example to explain", http.StatusNotFound)
		return
	}
	addr, err := netip.ParseAddr(ex.Client)
	if err != nil {
		http.Error(w, "the example's client: "+err.Error(), http.StatusInternalServerError)
		return
	}
	hdr := http.Header{}
	var fields []translate.HeaderField
	for k, vs := range ex.Header {
		for _, v := range vs {
			hdr.Add(k, v)
			fields = append(fields, translate.HeaderField{Name: k, Value: v})
		}
	}
	slices.SortStableFunc(fields, func(x, y translate.HeaderField) int { return cmp.Compare(x.Name, y.Name) })
	req := &walk.Request{Method: ex.Method, Target: ex.Target, Proto: "HTTP/1.1", Header: hdr, Headers: translate.MergeFields(fields), Host: ex.Host,
		ClientAddr: addr, LocalAddr: netip.MustParseAddr("127.0.0.1"), Dry: true}
	tl := &traceLog{}
	res := engine.Decide(req, tl)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "policy:   %s (generation in force)\nexample:  %s, at %s, with its header fields in alphabetical order (their order as received is not kept) and no credentials (passwords are not kept: an answer that needed them is the one without)\n",
		name, of, ex.Time.Format(time.RFC3339))
	a.rl.mu.Lock()
	base := filepath.Dir(a.rl.path)
	a.rl.mu.Unlock()
	printExplain(w, ex.Method, ex.Target, addr, "", res, tl.events, base)
}

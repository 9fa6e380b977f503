package proxy

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// ShadowSampleRate is how many disagreement samples a second the shadow
// log takes at most (with a burst of as many); the rest are counted in
// orderly_shadow_samples_dropped_total.
const ShadowSampleRate = 10

// redacted are the request headers a shadow sample never shows.
var redacted = map[string]bool{"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "Set-Cookie": true}

// RecentSamples is how many of the latest disagreement samples the admin
// page shows.
const RecentSamples = 50

// shadowLog takes disagreement samples, rate-limited: it writes them as
// JSON lines (when it has a writer) and keeps the latest for the admin
// page.
type shadowLog struct {
	w io.Writer // nil: keep only

	mu     sync.Mutex
	tokens float64
	last   time.Time
	recent [RecentSamples]Sample
	next   int // where the next sample goes in recent
	n      int // samples in recent

	groups   map[groupKey]*DisagreementGroup
	overflow uint64 // disagreements of groups over MaxDisagreementGroups
}

// MaxDisagreementGroups bounds the groups of disagreements kept in memory
// (a scope, what it was compared with, a direction and a rule each);
// disagreements of groups beyond it are only counted (GroupsDropped).
const MaxDisagreementGroups = 1000

// groupKey is what the disagreements of a group share.
type groupKey struct {
	Scope, Against, Direction, RuleID string
}

// DisagreementGroup is every disagreement of one scope, comparison,
// direction and rule since the process started: how many, when the first
// and the last were, the generation of the configuration of the last, and
// the latest sample taken of them (none when the rate limit dropped
// every one).
type DisagreementGroup struct {
	Scope      string    `json:"scope"`
	Against    string    `json:"against"`
	Direction  string    `json:"direction"`
	RuleID     string    `json:"rule_id"`
	Count      uint64    `json:"count"`
	First      time.Time `json:"first"`
	Last       time.Time `json:"last"`
	Generation uint64    `json:"generation"`
	Sample     *Sample   `json:"sample,omitempty"`
}

// count records one disagreement in its group and returns the group.
func (l *shadowLog) count(now time.Time, k groupKey, gen uint64) *DisagreementGroup {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.groups[k]
	if g == nil {
		if l.groups == nil {
			l.groups = map[groupKey]*DisagreementGroup{}
		}
		if len(l.groups) >= MaxDisagreementGroups {
			l.overflow++
			return nil
		}
		g = &DisagreementGroup{Scope: k.Scope, Against: k.Against, Direction: k.Direction, RuleID: k.RuleID, First: now.UTC()}
		l.groups[k] = g
	}
	g.Count++
	g.Last, g.Generation = now.UTC(), gen
	return g
}

// Groups returns a copy of the groups of disagreements, the most recent
// first, and how many disagreements fell beyond MaxDisagreementGroups.
func (l *shadowLog) Groups() ([]DisagreementGroup, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]DisagreementGroup, 0, len(l.groups))
	for _, g := range l.groups {
		c := *g
		if g.Sample != nil {
			s := *g.Sample
			c.Sample = &s
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b DisagreementGroup) int {
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return cmp.Compare(a.Scope+a.Against+a.Direction+a.RuleID, b.Scope+b.Against+b.Direction+b.RuleID)
	})
	return out, l.overflow
}

// Recent returns the latest samples, newest first.
func (l *shadowLog) Recent() []Sample {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Sample, 0, l.n)
	for i := 1; i <= l.n; i++ {
		out = append(out, l.recent[(l.next-i+RecentSamples)%RecentSamples])
	}
	return out
}

// Sample is one disagreement as the shadow log writes it and the admin
// page shows it: the request (credentials and cookies redacted), the
// decision in force and what it was compared with.
type Sample struct {
	Time time.Time `json:"time"`
	// Scope is the scope of the request; Against what the decision in
	// force was compared with: "backend", "policy" (the scope's other
	// policy) or "demoted" (the legacy policy with its demoted rules).
	Scope      string              `json:"scope"`
	Against    string              `json:"against"`
	Direction  string              `json:"direction"`
	Client     string              `json:"client"`
	Method     string              `json:"method"`
	URI        string              `json:"uri"`
	Host       string              `json:"host"`
	Header     map[string][]string `json:"header"`
	Orderly    SampleDecision      `json:"orderly"`
	Other      *SampleDecision     `json:"other,omitempty"`
	Backend    *SampleBackend      `json:"backend,omitempty"`
	Generation uint64              `json:"generation"`
}

// SampleDecision is one policy's decision with its trail: the rules it
// went through, in order, with what each did.
type SampleDecision struct {
	Policy   string   `json:"policy"`
	Decision string   `json:"decision"`
	Status   int      `json:"status,omitempty"`
	Layer    string   `json:"layer"`
	RuleID   string   `json:"rule_id,omitempty"`
	Rule     string   `json:"rule,omitempty"`
	Trail    []string `json:"trail,omitempty"`
}

type SampleBackend struct {
	Status int `json:"status"`
}

// redact copies a request header, credentials and cookies replaced.
func redact(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		if redacted[k] {
			v = []string{"[redacted]"}
		}
		out[k] = v
	}
	return out
}

// trail collects a decision's steps that name a rule.
type trail []string

func (t *trail) Enabled() bool { return true }

func (t *trail) Trace(ev policy.Event) {
	s := ev.Text
	if ev.Rule != nil && !ev.Rule.Default {
		s = ev.Rule.ID + " " + ev.Rule.String()
	}
	if ev.Result != "" {
		s += " => " + ev.Result
	}
	*t = append(*t, s)
}

// describe re-runs a decision dry with a tracer (only samples pay for
// it) and reports it.
func describe(name string, e *walk.Engine, req *walk.Request) (d SampleDecision) {
	d.Policy = name
	if e == nil {
		return d
	}
	defer func() {
		if recover() != nil {
			d.Decision = "error"
		}
	}()
	r := *req
	r.Dry = true
	var t trail
	res := e.Decide(&r, &t)
	d.Decision, d.Status, d.Layer, d.Trail = decisionName(&res.Decision), res.Status, res.Layer.String(), t
	if res.Rule != nil {
		d.RuleID, d.Rule = res.Rule.ID, res.Rule.String()
	}
	return d
}

// allow takes a token if one is left.
func (l *shadowLog) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens += now.Sub(l.last).Seconds() * ShadowSampleRate
	} else {
		l.tokens = ShadowSampleRate
	}
	l.tokens = min(l.tokens, ShadowSampleRate)
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// sample writes one disagreement, or reports that the rate limit dropped it.
func (l *shadowLog) sample(now time.Time, h *Handler, v verdict, against, direction string, g *DisagreementGroup, r *http.Request, req *walk.Request, client netip.Addr, backendStatus int, pol *active) bool {
	if !l.allow(now) {
		return false
	}
	p := pol.p
	enforced := p.engine(v.policy)
	if v.policy == PolicyLegacy && p.LegacyEnforced != nil {
		enforced = p.LegacyEnforced
	}
	s := Sample{
		Time: now.UTC(), Scope: v.scope.Name, Against: against, Direction: direction,
		Client: client.String(), Method: r.Method, URI: r.RequestURI, Host: r.Host,
		Orderly:    describe(v.policy, enforced, req),
		Generation: pol.gen,
	}
	switch against {
	case AgainstBackend:
		s.Backend = &SampleBackend{Status: backendStatus}
	case AgainstPolicy:
		o := describe(v.otherPolicy, p.engine(v.otherPolicy), req)
		s.Other = &o
	case AgainstDemoted:
		o := describe(PolicyLegacy+" (with demoted rules)", p.Legacy, req)
		s.Other = &o
	}
	s.Header = redact(r.Header)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recent[l.next] = s
	if g != nil {
		c := s
		g.Sample = &c
	}
	l.next = (l.next + 1) % RecentSamples
	l.n = min(l.n+1, RecentSamples)
	if l.w != nil {
		b, err := json.Marshal(s)
		if err != nil {
			return false
		}
		l.w.Write(append(b, '\n'))
	}
	return true
}

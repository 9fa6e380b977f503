package proxy

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// verdict is the joint verdict of one request: the decision in force,
// the other policy's beside it, and the full legacy policy's when
// demoted rules made the enforced one differ.
type verdict struct {
	scope  *Scope
	policy string      // the policy whose decision is in force
	res    walk.Result // the decision in force
	// other is the decision of the scope's other policy (nil: the scope
	// has none, or its evaluation failed).
	other       *walk.Result
	otherPolicy string
	// full is the legacy policy's decision with its demoted rules, when
	// the decision in force is legacy's without them.
	full *walk.Result
}

// newAndOld returns the decisions of the scope's Enforce and Shadow
// policies, whichever decided.
func (v *verdict) newAndOld() (newRes, oldRes *walk.Result) {
	if v.other == nil {
		return nil, nil
	}
	if v.policy == v.scope.Enforce {
		return &v.res, v.other
	}
	return v.other, &v.res
}

// examples keeps the request as an example of the rules that decided it,
// in force and in shadow, where they take one (policy.Rule.ExampleDue).
func (v *verdict) examples(now time.Time, r *http.Request, client netip.Addr) {
	ns := now.UnixNano()
	for _, res := range [...]*walk.Result{&v.res, v.other} {
		if res != nil && res.Rule.ExampleDue(ns) {
			res.Rule.SetExample(&policy.Example{Method: r.Method, Target: r.RequestURI, Host: r.Host, Client: client.String(), Time: now.UTC(), Header: redact(r.Header)})
		}
	}
}

// shadowDecide evaluates a policy whose answer is not enforced. It can
// never change the response: a failure is counted and gives no decision.
func (h *Handler) shadowDecide(e *walk.Engine, req *walk.Request) (res *walk.Result) {
	defer func() {
		if err := recover(); err != nil {
			h.cfg.Logger.Error("shadow evaluation failed", "err", err, "uri", req.Target)
			if h.cfg.Metrics != nil {
				h.cfg.Metrics.shadowErrors.Inc()
			}
			res = nil
		}
	}()
	r := e.Decide(req, nil)
	return &r
}

// Against names what a shadow comparison compared with.
const (
	AgainstBackend = "backend" // the backend's answer (it still enforces the legacy rules)
	AgainstPolicy  = "policy"  // the scope's other policy
	AgainstDemoted = "demoted" // the legacy policy with its demoted rules
)

// compare counts the disagreements of a verdict: the policies with each
// other, the enforced legacy policy with the full one, and in shadow mode
// the decision with the backend's status. A sample of each goes to the
// shadow log.
func (h *Handler) compare(v verdict, r *http.Request, req *walk.Request, client netip.Addr, backendStatus int, pol *active) {
	if newRes, oldRes := v.newAndOld(); newRes != nil {
		if dir, rule := direction(newRes.Allowed(), oldRes.Allowed(), newRes.Rule, oldRes.Rule); dir != "" {
			h.cfg.Metrics.disagreement(v.scope.Name, AgainstPolicy, dir, rule)
			h.sample(v, AgainstPolicy, dir, rule, r, req, client, backendStatus, pol)
		}
	}
	if v.full != nil {
		if dir, rule := direction(v.res.Allowed(), v.full.Allowed(), v.res.Rule, v.full.Rule); dir != "" {
			h.cfg.Metrics.disagreement(v.scope.Name, AgainstDemoted, dir, rule)
			h.sample(v, AgainstDemoted, dir, rule, r, req, client, backendStatus, pol)
		}
	}
	if backendStatus != 0 {
		if dir := h.cfg.Metrics.Compare(v.scope.Name, &v.res.Decision, backendStatus); dir != "" {
			h.sample(v, AgainstBackend, dir, v.res.Rule, r, req, client, backendStatus, pol)
		}
	}
}

// direction compares a new answer with an old one: would_newly_deny when
// the new refuses what the old allows (the new side's rule is the one to
// look at), would_newly_allow the other way (the old side's rule).
func direction(newAllowed, oldAllowed bool, newRule, oldRule *policy.Rule) (string, *policy.Rule) {
	switch {
	case !newAllowed && oldAllowed:
		return "would_newly_deny", newRule
	case newAllowed && !oldAllowed:
		return "would_newly_allow", oldRule
	}
	return "", nil
}

// sample records one disagreement in its group (DisagreementGroups) and
// takes a sample of it when the rate limit allows.
func (h *Handler) sample(v verdict, against, dir string, rule *policy.Rule, r *http.Request, req *walk.Request, client netip.Addr, backendStatus int, pol *active) {
	now := time.Now()
	g := h.shadow.count(now, groupKey{Scope: v.scope.Name, Against: against, Direction: dir, RuleID: ruleID(rule)}, pol.gen)
	if !h.shadow.sample(now, h, v, against, dir, g, r, req, client, backendStatus, pol) && h.cfg.Metrics != nil {
		h.cfg.Metrics.dropped.Inc()
	}
}

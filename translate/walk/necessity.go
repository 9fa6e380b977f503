package walk

import (
	"net/http"
	"slices"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// subNecessary keeps what a subrequest's decision needed, for
// countNecessary; past the room it has, a rule is counted at once.
func (r *Request) subNecessary(d *policy.Decision) {
next:
	for _, n := range d.Necessary() {
		for _, m := range r.subNeed[:r.nSubNeed] {
			if m.Rule == n.Rule {
				continue next
			}
		}
		if int(r.nSubNeed) == len(r.subNeed) {
			n.Count(r.Now)
			continue
		}
		r.subNeed[r.nSubNeed] = n
		r.nSubNeed++
	}
}

// countNecessary counts the rules necessary to the main request's
// decision that the final answer depends on. One is not, where the main
// decision granted and without the rule would have refused with the very
// answer the request got anyway (an index subrequest refused it): the
// refusal would have come sooner, the same. Every other one counts, a
// count too many only ever calling a removable rule needed.
//
// A rule necessary to a subrequest's decision counts too, once per
// request whatever the number of decisions it was necessary to.
func (e *Engine) countNecessary(req *Request, res *Result) {
	var counted [2 * policy.MaxNecessary]*policy.Rule
	k := 0
	for _, n := range res.main.sec[:res.main.nsec] {
		if slices.Contains(req.secNeed[:req.nSecNeed], n.Rule) ||
			res.main.allowed && res.Status != 0 && n.Status == res.Status && (n.Status != http.StatusUnauthorized || n.Realm == res.Realm) &&
				e.dirRedirects(res.main.sections).ErrorURL(n.Status) == "" {
			continue
		}
		n.Rule.AddNecessary(1)
	}
	for _, n := range res.main.need[:res.main.n] {
		if res.main.allowed && res.Status != 0 && n.Status == res.Status && (n.Status != http.StatusUnauthorized || n.Realm == res.Realm) &&
			e.dirRedirects(res.main.sections).ErrorURL(n.Status) == "" {
			continue
		}
		n.Count(req.Now)
		counted[k] = n.Rule
		k++
	}
	for _, n := range req.subNeed[:req.nSubNeed] {
		if !slices.Contains(counted[:k], n.Rule) {
			n.Count(req.Now)
		}
	}
	req.nSubNeed, req.nSecNeed = 0, 0
}

// sectionAlt is the access decision's layers as they would be without
// one section's access configuration (translate.DirConf.WithoutAccess).
type sectionAlt struct {
	sec    *translate.Section
	layers *policy.Layers
}

// sectionAlts returns m's alternatives, one for each section with an
// access configuration of its own.
func (e *Engine) sectionAlts(m *merged) []sectionAlt {
	if p := m.alts.Load(); p != nil {
		return *p
	}
	alts := []sectionAlt{}
	for i, s := range m.sections {
		if s.Default == nil || !s.Conf.HasAccess() {
			continue
		}
		without := *s
		without.Conf = s.Conf.WithoutAccess()
		secs := slices.Clone(m.sections)
		secs[i] = &without
		alts = append(alts, sectionAlt{sec: s, layers: e.mergeNow(secs).layers})
	}
	m.alts.Store(&alts)
	return alts
}

// sectionsNecessary finds the sections whose access configuration is
// necessary to decision d of pr, made with m: deciding again without it
// answers otherwise (another status, or for a 401 another realm). Each is
// counted once per request on the section's synthetic rule
// (Rule.Necessary), in the main request and its subrequests alike; a
// count too many only ever calls a removable section needed.
//
// A subrequest's are counted at once; the main request's wait for the
// final answer (countNecessary), which may make one of them moot.
func (e *Engine) sectionsNecessary(m *merged, pr *policy.Request, d *policy.Decision, req *Request, main *mainDecision) {
	if pr.Dry {
		return
	}
	for _, alt := range e.sectionAlts(m) {
		if slices.Contains(req.secNeed[:req.nSecNeed], alt.sec.Default) {
			continue
		}
		q := *pr
		q.Dry, q.DeferNecessity = true, false
		a := policy.Decide(alt.layers, &q, e.id, nil)
		if a.Status == d.Status && (d.Status != http.StatusUnauthorized || a.Realm == d.Realm) {
			continue
		}
		n := policy.Necessity{Rule: alt.sec.Default, Status: a.Status, Realm: a.Realm}
		if main != nil && int(main.nsec) < len(main.sec) {
			main.sec[main.nsec] = n
			main.nsec++
			continue
		}
		alt.sec.Default.AddNecessary(1)
		if int(req.nSecNeed) < len(req.secNeed) {
			req.secNeed[req.nSecNeed] = alt.sec.Default
			req.nSecNeed++
		}
	}
}

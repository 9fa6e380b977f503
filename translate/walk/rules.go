package walk

import (
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// adopt makes the rules of to that kept their ID count on the counters
// of their copies in from.
func adopt(to, from []*policy.Rule) {
	byID := make(map[string]*policy.Rule, len(from))
	for _, r := range from {
		byID[r.ID] = r
	}
	for _, r := range to {
		if o := byID[r.ID]; o != nil && o != r {
			r.Adopt(o)
		}
	}
}

// Inherit carries the counters of old, the engine this one replaces on a
// reload, to the rules that kept their ID: those of the configuration
// now, those of .htaccess files as they are read. It returns how many
// configuration rules kept theirs. Call it before e is in use.
func (e *Engine) Inherit(old *Engine) int {
	prior := map[string]*policy.Rule{}
	for id, r := range old.prior {
		prior[id] = r // saved state not yet claimed by an .htaccess file
	}
	for _, r := range old.Rules() {
		prior[r.ID] = r
	}
	kept := 0
	for _, r := range e.cfg.Rules {
		if o := prior[r.ID]; o != nil {
			r.Adopt(o)
			kept++
		}
	}
	e.prior = prior
	for i := range e.hosts {
		e.hosts[i].e.prior = prior
	}
	return kept
}

// Restore gives the counters of saved rules (orderly's state_file) to the
// rules with their IDs: those of the configuration now, those of .htaccess
// files as they are read. It returns the rules of saved that no rule has
// claimed yet. Call it before e is in use.
func (e *Engine) Restore(saved []*policy.Rule) []*policy.Rule {
	byID := map[string]*policy.Rule{}
	for _, r := range saved {
		byID[r.ID] = r
	}
	for _, r := range e.cfg.Rules {
		if s := byID[r.ID]; s != nil {
			r.Adopt(s)
			delete(byID, r.ID)
		}
	}
	if e.prior == nil {
		e.prior = map[string]*policy.Rule{}
	}
	for id, r := range byID {
		e.prior[id] = r
	}
	for i := range e.hosts {
		e.hosts[i].e.prior = e.prior
	}
	var left []*policy.Rule
	for _, r := range byID {
		left = append(left, r)
	}
	return left
}

// Unclaimed returns the saved or inherited rules no rule in force has
// claimed yet (the .htaccess files not read since), so that saving state
// does not lose them.
func (e *Engine) Unclaimed() []*policy.Rule {
	have := map[string]bool{}
	for _, r := range e.Rules() {
		have[r.ID] = true
	}
	var out []*policy.Rule
	for id, r := range e.prior {
		if !have[id] {
			out = append(out, r)
		}
	}
	return out
}

// HtaccessRules returns the rules of the .htaccess files read so far.
func (e *Engine) HtaccessRules() []*policy.Rule {
	var out []*policy.Rule
	e.ht.Range(func(_, v any) bool {
		if h := v.(*htEntry); h.sec != nil {
			out = append(out, h.sec.Rules...)
		} else if h.broken != nil {
			out = append(out, h.broken.rule)
		}
		return true
	})
	return out
}

// HtaccessSections returns the .htaccess files read so far, as sections.
func (e *Engine) HtaccessSections() []*translate.Section {
	var out []*translate.Section
	e.ht.Range(func(_, v any) bool {
		if h := v.(*htEntry); h.sec != nil {
			out = append(out, h.sec)
		}
		return true
	})
	return out
}

// Rules returns every rule the engine decides with: the configuration's
// (virtual hosts' included) and those of the .htaccess files read so far.
func (e *Engine) Rules() []*policy.Rule {
	out := append(append([]*policy.Rule(nil), e.cfg.Rules...), e.HtaccessRules()...)
	for _, h := range e.hosts {
		out = append(out, h.e.HtaccessRules()...)
		out = append(out, h.v.Config.Default)
	}
	return out
}

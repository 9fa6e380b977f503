package policy

import (
	"testing"
	"time"
)

// A rule that adopts another counts on its counters: hits on either copy
// show on both, and adopting an adopter reaches the first counters.
func TestRuleAdopt(t *testing.T) {
	at := func(ns int64) *Request { return &Request{Now: ns} }
	old := &Rule{ID: "a"}
	old.hit(at(1))
	old.decide(at(2))
	r := &Rule{ID: "a"}
	r.Adopt(old)
	r.hit(at(3))
	old.decide(at(4))
	third := &Rule{ID: "a"}
	third.Adopt(r)
	third.hit(at(5))
	for _, x := range []*Rule{old, r, third} {
		m, d, last := x.Stats()
		if m != 3 || d != 2 || !last.Equal(time.Unix(0, 5)) {
			t.Errorf("stats %d %d %v, want 3 2 %v", m, d, last, time.Unix(0, 5))
		}
	}
}

// A dry decision changes no counter and no hit time.
func TestRuleDry(t *testing.T) {
	r := &Rule{ID: "a"}
	r.hit(&Request{Now: 7, Dry: true})
	r.decide(&Request{Now: 8, Dry: true})
	if m, d, last := r.Stats(); m != 0 || d != 0 || !last.IsZero() || !r.FirstHit().IsZero() {
		t.Errorf("dry: stats %d %d %v first %v, want nothing", m, d, last, r.FirstHit())
	}
}

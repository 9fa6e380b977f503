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

// TestCheckNeedsCompile: lists that were never compiled would match
// nothing, and could let a denied request through; Check refuses them.
func TestCheckNeedsCompile(t *testing.T) {
	c := &Compat{Denys: []AccessRule{{Kind: AccessAll, Methods: AllMethods, Word: "all"}}}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Check on an uncompiled list did not panic")
			}
		}()
		c.Check(&Request{}, nil)
	}()
	c.Compile()
	if ok, _ := c.Check(&Request{}, nil); ok {
		t.Error("Deny from all allowed once compiled")
	}
	if ok, _ := DefaultCompat.Check(&Request{}, nil); !ok {
		t.Error("the default (no lists) does not allow")
	}
}

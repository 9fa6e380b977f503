package policy

import (
	"testing"
	"time"
)

// A rule that adopts another counts on its counters: hits on either copy
// show on both, and adopting an adopter reaches the first counters.
func TestRuleAdopt(t *testing.T) {
	old := &Rule{ID: "a"}
	old.hit(1)
	old.decide(2)
	r := &Rule{ID: "a"}
	r.Adopt(old)
	r.hit(3)
	old.decide(4)
	third := &Rule{ID: "a"}
	third.Adopt(r)
	third.hit(5)
	for _, x := range []*Rule{old, r, third} {
		m, d, last := x.Stats()
		if m != 3 || d != 2 || !last.Equal(time.Unix(0, 5)) {
			t.Errorf("stats %d %d %v, want 3 2 %v", m, d, last, time.Unix(0, 5))
		}
	}
}

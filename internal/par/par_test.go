package par

import (
	"sync/atomic"
	"testing"
)

func TestDo(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000} {
		seen := make([]atomic.Int32, n)
		Do(n, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Errorf("n=%d: iteration %d ran %d times", n, i, c)
			}
		}
	}
}

func TestDoWith(t *testing.T) {
	var workers atomic.Int32
	sums := make([]int, 100)
	DoWith(len(sums), func() func(int) {
		workers.Add(1)
		mine := 0 // state of this goroutine alone
		return func(i int) { mine++; sums[i] = i * 2 }
	})
	for i, s := range sums {
		if s != i*2 {
			t.Fatalf("iteration %d: %d", i, s)
		}
	}
	if w := workers.Load(); w < 1 || w > 100 {
		t.Errorf("%d workers", w)
	}
}

// Package par runs the iterations of a loop on every core, for the batch
// commands (lint, translate) whose work splits into independent pieces.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Do calls f(0) to f(n-1), each once, on as many goroutines as there are
// cores, and returns when all have returned.
func Do(n int, f func(i int)) {
	DoWith(n, func() func(int) { return f })
}

// DoWith is Do for iterations that need state of their own: worker is
// called once on each goroutine, and the function it returns runs that
// goroutine's iterations. The calling goroutine is one of them: it works
// rather than wait for the others to be scheduled.
func DoWith(n int, worker func() func(i int)) {
	var next atomic.Int64
	run := func() {
		f := worker()
		for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
			f(i)
		}
	}
	k := min(runtime.GOMAXPROCS(0), n)
	if k <= 0 {
		return
	}
	var wg sync.WaitGroup
	for range k - 1 {
		wg.Go(run)
	}
	run()
	wg.Wait()
}

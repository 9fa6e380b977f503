package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// batchGC tunes the runtime for lint and translate: short runs over a
// configuration held whole in memory, where collecting as the heap grows
// costs a fifth of the time for nothing. Garbage is collected only past a
// memory bound, unless GOGC or GOMEMLIMIT says otherwise.
//
// With the collector off every allocation is fresh memory, and on Linux a
// fault per 4 KiB page then takes a third of the run; batchHeap (Linux
// only) lets the kernel back the first batchHeapSize bytes of the heap
// with huge pages instead.
func batchGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(768 << 20)
	// Nor is the heap profiled: a sample every 512 KiB allocated (the
	// default) walks the stack and keeps a bucket for it, for a profile
	// no batch command writes.
	runtime.MemProfileRate = 0
	batchHeap(batchHeapSize)
}

// batchHeapSize is how much heap batchHeap prepares: more than lint or
// translate allocate for 1,000 virtual hosts (about 40 MiB). Only what is
// used is backed.
const batchHeapSize = 128 << 20

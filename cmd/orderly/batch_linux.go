package main

import (
	"bytes"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// batchHeap asks for transparent huge pages under the next n bytes of heap
// when the kernel gives them only where asked (enabled = madvise, the
// default of most distributions). The runtime maps its heap a few MiB at a
// time and asks for no huge pages itself, so the memory is taken in one
// allocation, advised, and handed back to the runtime's page heap by a
// collection: the small objects allocated next are carved from it (the
// page allocator takes the lowest free address first), and a 2 MiB fault
// replaces 512 of 4 KiB.
//
// The advice is only advice: if the kernel has no huge page to give, it
// falls back to small ones, as without it.
func batchHeap(n int) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return
	}
	b := make([]byte, n) // fresh memory: the runtime does not touch it
	if unix.Madvise(b, unix.MADV_HUGEPAGE) != nil {
		return
	}
	runtime.GC()
}

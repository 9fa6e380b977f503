package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestBatchHeap checks that the small objects allocated after batchHeap
// lie in memory advised for huge pages (whether the kernel backs it so
// depends on its free memory: logged). It runs in a process of its own,
// as lint and translate do: in the test binary's, the pages other tests
// freed lie below the advised memory and would be taken first.
func TestBatchHeap(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		t.Skipf("transparent huge pages are not in madvise mode here (%q, %v): batchHeap does nothing", bytes.TrimSpace(mode), err)
	}
	if os.Getenv("ORDERLY_BATCHHEAP_CHILD") != "1" {
		// Where the runtime carves the next objects from is its choice:
		// on a loaded machine a fresh process has, rarely, put them
		// outside the advised memory. One process in three must find them
		// inside; a batchHeap that advises nothing fails all three.
		var failed []string
		for range 3 {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBatchHeap$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "ORDERLY_BATCHHEAP_CHILD=1")
			out, err := cmd.CombinedOutput()
			if err == nil && bytes.Contains(out, []byte("--- PASS: TestBatchHeap")) {
				t.Logf("in a fresh process (after %d that failed):\n%s", len(failed), out)
				return
			}
			failed = append(failed, fmt.Sprintf("(%v)\n%s", err, out))
		}
		t.Fatalf("the check failed in three fresh processes:\n%s", strings.Join(failed, "\n"))
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	batchHeap(64 << 20)
	objs := make([]*[64]byte, 0, 1<<17)
	for range cap(objs) { // 8 MiB of small objects, written
		p := new([64]byte)
		p[0] = 1
		objs = append(objs, p)
	}
	// The first can lie below the advised memory's first 2 MiB boundary,
	// where a huge page does not fit.
	for _, i := range []int{len(objs) / 2, len(objs) - 1} {
		flags, huge := mapping(t, uintptr(unsafe.Pointer(objs[i])))
		if !slices.Contains(flags, "hg") {
			t.Errorf("object %d at %p: its mapping's VmFlags are %v, with no hg (huge pages advised)", i, objs[i], flags)
		}
		if huge == 0 {
			// The advice is orderly's; backing it is the kernel's, which
			// may find no free huge page when memory is fragmented (seen
			// under a loaded test run).
			t.Logf("object %d at %p: its mapping has no AnonHugePages yet (the kernel found no huge page)", i, objs[i])
		}
	}
}

// mapping returns the VmFlags and AnonHugePages (KiB) of the mapping of
// this process that holds address a, from /proc/self/smaps.
func mapping(t *testing.T, a uintptr) (flags []string, hugeKiB int) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			if in {
				break
			}
			in = lo <= a && a < hi
			continue
		}
		if !in {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			flags = strings.Fields(rest)
		}
		if rest, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &hugeKiB)
		}
	}
	if flags == nil {
		t.Fatalf("no mapping holds %#x", a)
	}
	return flags, hugeKiB
}

package apachetest

import (
	"os"
	"sort"
	"testing"
	"time"
)

func TestReloadDist(t *testing.T) {
	docroot, conf := site(t, denyPrivate)
	s := Start(t, oracle(docroot, conf))
	os.Setenv("XDEBUG", "1")
	var ds []time.Duration
	for i := 0; i < 100; i++ {
		os.Stderr.WriteString("RELOAD " + time.Now().Format("05.000") + "\n")
		t0 := time.Now()
		s.Reload(t, oracle(docroot, conf))
		ds = append(ds, time.Since(t0))
		if time.Since(t0) > 200*time.Millisecond {
			t.Logf("slow reload %d: %v", i, time.Since(t0))
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	t.Log(ds[0], ds[50], ds[90], ds[95], ds[99])
}

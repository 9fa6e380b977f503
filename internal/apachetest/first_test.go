package apachetest

import (
	"os"
	"sort"
	"testing"
	"time"
)

func TestFirstReload(t *testing.T) {
	docroot, conf := site(t, denyPrivate)
	withReq := os.Getenv("XREQ") != ""
	var ds []time.Duration
	for i := 0; i < 30; i++ {
		s := Start(t, oracle(docroot, conf))
		if withReq {
			Do(s.Addr, Request{Method: "OPTIONS", Target: "*"})
		}
		os.Setenv("XDEBUG", "1")
		os.Stderr.WriteString("RELOAD\n")
		t0 := time.Now()
		s.Reload(t, oracle(docroot, conf))
		ds = append(ds, time.Since(t0))
		os.Unsetenv("XDEBUG")
		if time.Since(t0) > 300*time.Millisecond {
			t.Logf("slow reload %d: %v\n%s", i, time.Since(t0), s.ErrorLog())
		}
		s.Stop()
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	t.Log(ds[0], ds[15], ds[27], ds[29])
}

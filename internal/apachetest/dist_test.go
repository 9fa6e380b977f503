package apachetest

import (
	"sort"
	"testing"
	"time"
)

func TestReloadDist(t *testing.T) {
	docroot, conf := site(t, denyPrivate)
	s := Start(t, oracle(docroot, conf))
	var ds []time.Duration
	for i := 0; i < 100; i++ {
		t0 := time.Now()
		s.Reload(t, oracle(docroot, conf))
		ds = append(ds, time.Since(t0))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	t.Log(ds[0], ds[50], ds[90], ds[95], ds[99])
}

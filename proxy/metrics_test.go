package proxy

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderly-proxy/orderly/policy"
)

func TestMetricsLint(t *testing.T) {
	m := NewMetrics()
	m.observe(&policy.Decision{Status: 403, Layer: policy.LayerCompat}, time.Now())
	problems, err := testutil.GatherAndLint(m.Registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("deny", "compat")); got != 1 {
		t.Errorf("deny/compat = %v, want 1", got)
	}
}

package proxy

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/orderly-proxy/orderly/policy"
)

// Metrics are the request-path metrics, on their own registry.
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  prometheus.Histogram
	backend  prometheus.Counter
	disagree *prometheus.CounterVec
	dropped  prometheus.Counter

	reloads    *prometheus.CounterVec
	reloadOK   prometheus.Gauge
	reloadTime prometheus.Gauge
	generation prometheus.Gauge
	guardOK    prometheus.Gauge // guard.go
}

// NewMetrics returns the metrics of one orderly process, with the Go and
// process collectors. rules lists the legacy rules in force (nil: none).
func NewMetrics(rules func() []*policy.Rule) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orderly_requests_total",
			Help: "Requests decided, by decision (allow, deny, challenge, error), the layer that decided and the mode.",
		}, []string{"decision", "layer", "mode"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "orderly_request_duration_seconds",
			Help:    "Time from the request's arrival to the end of its response, backend included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		backend: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orderly_backend_errors_total",
			Help: "Requests orderly let through that the backend could not answer (502).",
		}),
	}
	m.disagree = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orderly_shadow_disagreements_total",
		Help: "Shadow mode: requests where orderly's decision and the backend's answer differ, by direction (would_newly_deny: orderly would refuse what the backend served; would_newly_allow: orderly would let through what the backend refused) and the rule that decided.",
	}, []string{"direction", "rule_id"})
	m.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "orderly_shadow_samples_dropped_total",
		Help: "Shadow disagreements not written to the shadow log: over its rate limit.",
	})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orderly_config_reloads_total",
		Help: "Configuration reloads (SIGHUP or POST /-/reload), by result (success, failure).",
	}, []string{"result"})
	m.reloadOK = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "orderly_config_last_reload_successful",
		Help: "Whether the last configuration reload succeeded (1) or was rejected and the previous configuration kept (0).",
	})
	m.reloadTime = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "orderly_config_last_reload_success_timestamp_seconds",
		Help: "When the configuration in force was loaded.",
	})
	m.generation = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "orderly_config_generation",
		Help: "Generation of the configuration in force: 1 at start, one more for each successful reload.",
	})
	reg.MustRegister(m.requests, m.latency, m.backend, m.disagree, m.dropped, m.reloads, m.reloadOK, m.reloadTime, m.generation)
	m.guardOK = newGuardGauge(reg)
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	m.Loaded(1, true)
	if rules != nil {
		reg.MustRegister(newRuleCollector(rules))
	}
	for _, d := range []string{"allow", "deny", "challenge", "error"} {
		for _, l := range []policy.Layer{policy.LayerNone, policy.LayerCompat, policy.LayerAuthz, policy.LayerAuthn, policy.LayerConfig, policy.LayerRequest} {
			for _, mode := range []Mode{ModeEnforce, ModeShadow, ModeObserve} {
				m.requests.WithLabelValues(d, l.String(), string(mode))
			}
		}
	}
	return m
}

// Loaded records a configuration load: the generation in force and
// whether the attempt succeeded (a failed one keeps the generation).
func (m *Metrics) Loaded(generation uint64, ok bool) {
	if !ok {
		m.reloads.WithLabelValues("failure").Inc()
		m.reloadOK.Set(0)
		return
	}
	if generation > 1 {
		m.reloads.WithLabelValues("success").Inc()
	}
	m.reloadOK.Set(1)
	m.reloadTime.SetToCurrentTime()
	m.generation.Set(float64(generation))
}

// Handler serves the registry in the exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

func (m *Metrics) observe(d *policy.Decision, start time.Time, mode Mode) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(decisionName(d), d.Layer.String(), string(mode)).Inc()
	m.latency.Observe(time.Since(start).Seconds())
}

// Compare counts a shadow disagreement between orderly's decision and the
// backend's status (a refusal is a 401 or a 403 on either side) and
// returns its direction, "" when they agree.
func (m *Metrics) Compare(d *policy.Decision, backendStatus int) string {
	refused := backendStatus == http.StatusUnauthorized || backendStatus == http.StatusForbidden
	var direction string
	switch {
	case d.Allowed() && refused:
		direction = "would_newly_allow"
	case !d.Allowed() && !refused:
		direction = "would_newly_deny"
	default:
		return ""
	}
	if m != nil {
		id := "-"
		if d.Rule != nil {
			id = d.Rule.ID
		}
		m.disagree.WithLabelValues(direction, id).Inc()
	}
	return direction
}

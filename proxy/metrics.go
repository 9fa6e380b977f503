package proxy

import (
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

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
	logDrops *prometheus.CounterVec // orderly_log_lines_dropped_total: LogLinesDropped

	shadowErrors prometheus.Counter
	backendUp    *prometheus.GaugeVec
	scopeReqs    *prometheus.CounterVec
	scopeInfo    *prometheus.GaugeVec
	scopeShare   *prometheus.GaugeVec
	demoted      atomic.Pointer[map[string]bool]
	methods      atomic.Pointer[policy.Methods] // the legacy configuration's registry

	reloads    *prometheus.CounterVec
	reloadOK   prometheus.Gauge
	reloadTime prometheus.Gauge
	generation prometheus.Gauge
	guardOK    prometheus.Gauge // guard.go
	since      prometheus.Gauge // when the rule counters started
	ldap       *ldapCollector   // ldapmetrics.go

	// orderly_requests_total's children by decision, layer and mode,
	// each looked up once (WithLabelValues hashes its labels under a
	// lock shared by every request) and created on first use, as before.
	reqChildren [4][8][3]atomic.Pointer[counterRef]
}

type counterRef struct{ prometheus.Counter }

// scopeCounts are orderly_scope_requests_total's children for one scope,
// resolved when its configuration is put in force.
type scopeCounts struct {
	m               *Metrics
	enforce, shadow [4]prometheus.Counter // by decisionIndex
}

// decisionNames are decisionName's values, by decisionIndex.
var decisionNames = [4]string{"allow", "deny", "challenge", "error"}

func decisionIndex(d *policy.Decision) int {
	switch {
	case d.Status == 0:
		return 0
	case d.Status == http.StatusUnauthorized:
		return 2
	case d.Status == http.StatusForbidden:
		return 1
	}
	return 3
}

func modeIndex(m Mode) int {
	switch m {
	case ModeEnforce:
		return 0
	case ModeShadow:
		return 1
	case ModeObserve:
		return 2
	}
	return -1
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
		Help: "Requests where two answers differ, by scope, what the decision was compared with (backend: the backend's answer in shadow mode; policy: the scope's other policy; demoted: the legacy policy with its demoted rules), direction (would_newly_deny: the new side refuses what the old allows; would_newly_allow: the other way; the new side is orderly against the backend, the scope's enforce policy against its shadow policy, the legacy policy without its demoted rules against the one with them) and the rule that makes the difference (the refusing side's).",
	}, []string{"scope", "against", "direction", "rule_id"})
	m.backendUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "orderly_backend_up",
		Help: "Whether each backend URL is up (1): its last health check answered and no request to it has failed since (passive detection).",
	}, []string{"backend"})
	m.shadowErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "orderly_shadow_errors_total",
		Help: "Shadow evaluations that failed; the response was not affected.",
	})
	m.scopeReqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orderly_scope_requests_total",
		Help: "Requests by scope, the policy whose decision was in force (legacy or native) and the decision.",
	}, []string{"scope", "policy", "decision"})
	m.scopeInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "orderly_scope_info",
		Help: "The scopes in force, with their mode, the policy each enforces and the one it shadows (\"\" for none); always 1.",
	}, []string{"scope", "mode", "enforce", "shadow"})
	m.scopeShare = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "orderly_scope_enforce_ratio",
		Help: "Share of each scope's clients (0 to 1) its enforce policy decides; the others are decided by its shadow policy.",
	}, []string{"scope"})
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
	reg.MustRegister(m.requests, m.latency, m.backend, m.disagree, m.dropped, m.reloads, m.reloadOK, m.reloadTime, m.generation,
		m.shadowErrors, m.scopeReqs, m.scopeInfo, m.scopeShare, m.backendUp)
	m.guardOK = newGuardGauge(reg)
	m.logDrops = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orderly_log_lines_dropped_total",
		Help: "Log lines not written, by log (error, access, shadow): the log's writer queue was full, its output failed, or serve was stopping.",
	}, []string{"log"})
	reg.MustRegister(m.logDrops)
	for _, l := range []string{"error", "access", "shadow"} {
		m.logDrops.WithLabelValues(l)
	}
	m.since = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "orderly_counters_since_timestamp_seconds",
		Help: "When the rule counters started, in seconds since the epoch: the process's start, or the first start recorded in its state_file. The retirement verdicts are about the traffic since then.",
	})
	reg.MustRegister(m.since)
	m.since.SetToCurrentTime()
	m.ldap = newLDAPCollector()
	reg.MustRegister(m.ldap)
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	// The default scope until a handler shows its own.
	m.setPolicies(&Policies{scopes: []*Scope{{Name: DefaultScope, Mode: ModeEnforce, Enforce: PolicyLegacy, Percent: 100}}})
	m.Loaded(1, true)
	if rules != nil {
		reg.MustRegister(newRuleCollector(rules, m.isDemoted, m.methodName))
	}
	for _, d := range []string{"allow", "deny", "challenge", "error"} {
		for _, l := range []policy.Layer{policy.LayerNone, policy.LayerCompat, policy.LayerAuthz, policy.LayerAuthn, policy.LayerConfig, policy.LayerRequest, policy.LayerSSL} {
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

// CountingSince records when the rule counters started (the state
// file's first start, when it has one).
func (m *Metrics) CountingSince(t time.Time) {
	m.since.Set(float64(t.UnixNano()) / 1e9)
}

// LogLinesDropped is the counter of the lines orderly serve's writer of
// log (error, access or shadow) drops, for logwriter.New.
func (m *Metrics) LogLinesDropped(log string) prometheus.Counter {
	return m.logDrops.WithLabelValues(log)
}

// Handler serves the registry in the exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

func (m *Metrics) observe(d *policy.Decision, start time.Time, mode Mode) {
	if m == nil {
		return
	}
	m.requestCounter(d, mode).Inc()
	m.latency.Observe(time.Since(start).Seconds())
}

// requestCounter is orderly_requests_total's child for d in mode.
func (m *Metrics) requestCounter(d *policy.Decision, mode Mode) prometheus.Counter {
	di, mi := decisionIndex(d), modeIndex(mode)
	if mi < 0 || int(d.Layer) >= len(m.reqChildren[0]) {
		return m.requests.WithLabelValues(decisionName(d), d.Layer.String(), string(mode))
	}
	slot := &m.reqChildren[di][d.Layer][mi]
	if c := slot.Load(); c != nil {
		return c.Counter
	}
	c := m.requests.WithLabelValues(decisionNames[di], d.Layer.String(), string(mode))
	slot.Store(&counterRef{c})
	return c
}

// setPolicies shows the scopes of a new configuration and its demoted
// rules.
func (m *Metrics) setPolicies(p *Policies) {
	if m == nil {
		return
	}
	m.scopeInfo.Reset()
	m.scopeShare.Reset()
	for _, s := range p.scopes {
		m.scopeInfo.WithLabelValues(s.Name, string(s.Mode), s.Enforce, s.Shadow).Set(1)
		m.scopeShare.WithLabelValues(s.Name).Set(s.Percent / 100)
		counts := &scopeCounts{m: m}
		for i, pol := range []string{s.Enforce, s.Shadow} {
			if pol == "" {
				continue
			}
			for di, d := range decisionNames {
				c := m.scopeReqs.WithLabelValues(s.Name, pol, d)
				if i == 0 {
					counts.enforce[di] = c
				} else {
					counts.shadow[di] = c
				}
			}
		}
		s.counts = counts
		for _, a := range []string{AgainstBackend, AgainstPolicy, AgainstDemoted} {
			for _, d := range []string{"would_newly_deny", "would_newly_allow"} {
				m.disagree.WithLabelValues(s.Name, a, d, "-")
			}
		}
	}
	demoted := p.Demoted
	m.demoted.Store(&demoted)
	if p.Legacy != nil {
		m.methods.Store(p.Legacy.Config().Methods)
	}
}

func (m *Metrics) methodName(n int) string { return m.methods.Load().Name(n) }

func (m *Metrics) backendState(u *url.URL, up bool) {
	v := 0.0
	if up {
		v = 1
	}
	m.backendUp.WithLabelValues(u.Redacted()).Set(v)
}

func (m *Metrics) isDemoted(id string) bool {
	d := m.demoted.Load()
	return d != nil && (*d)[id]
}

func (m *Metrics) observeScope(v *verdict) {
	if m == nil {
		return
	}
	sc := v.scope
	if c := sc.counts; c != nil && c.m == m {
		di := decisionIndex(&v.res.Decision)
		switch {
		case v.policy == sc.Enforce && c.enforce[di] != nil:
			c.enforce[di].Inc()
			return
		case v.policy == sc.Shadow && c.shadow[di] != nil:
			c.shadow[di].Inc()
			return
		}
	}
	m.scopeReqs.WithLabelValues(sc.Name, v.policy, decisionName(&v.res.Decision)).Inc()
}

// Compare counts a disagreement in scope between orderly's decision and
// the backend's status (a refusal is a 401 or a 403 on either side) and
// returns its direction, "" when they agree.
func (m *Metrics) Compare(scope string, d *policy.Decision, backendStatus int) string {
	refused := backendStatus == http.StatusUnauthorized || backendStatus == http.StatusForbidden
	dir, _ := direction(d.Allowed(), !refused, d.Rule, nil)
	if dir != "" {
		m.disagreement(scope, AgainstBackend, dir, d.Rule)
	}
	return dir
}

// disagreement counts one disagreement under the rule that makes it.
func (m *Metrics) disagreement(scope, against, dir string, rule *policy.Rule) {
	if m == nil {
		return
	}
	m.disagree.WithLabelValues(scope, against, dir, ruleID(rule)).Inc()
}

// ruleID is the rule_id label of a disagreement: "-" for none.
func ruleID(rule *policy.Rule) string {
	if rule == nil {
		return "-"
	}
	return rule.ID
}

// ScopeTotal is what a scope has seen since the process started: the
// requests it decided, by the policy that decided them, and the
// disagreements counted in it.
type ScopeTotal struct {
	Requests      map[string]uint64 // by policy
	Disagreements uint64
}

// ScopeTotals reads the per-scope counters (orderly_scope_requests_total
// and orderly_shadow_disagreements_total) as Prometheus would scrape them.
func (m *Metrics) ScopeTotals() map[string]ScopeTotal {
	out := map[string]ScopeTotal{}
	if m == nil {
		return out
	}
	each := func(c prometheus.Collector, f func(labels map[string]string, v uint64)) {
		ch := make(chan prometheus.Metric, 64)
		go func() { c.Collect(ch); close(ch) }()
		for pm := range ch {
			var d dto.Metric
			if pm.Write(&d) != nil || d.Counter == nil {
				continue
			}
			labels := map[string]string{}
			for _, l := range d.Label {
				labels[l.GetName()] = l.GetValue()
			}
			f(labels, uint64(d.Counter.GetValue()))
		}
	}
	each(m.scopeReqs, func(l map[string]string, v uint64) {
		t := out[l["scope"]]
		if t.Requests == nil {
			t.Requests = map[string]uint64{}
		}
		t.Requests[l["policy"]] += v
		out[l["scope"]] = t
	})
	each(m.disagree, func(l map[string]string, v uint64) {
		t := out[l["scope"]]
		t.Disagreements += v
		out[l["scope"]] = t
	})
	return out
}

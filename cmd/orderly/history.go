package main

import (
	"sync"
	"time"

	"github.com/orderly-proxy/orderly/proxy"
)

// The admin page's time series: every HistoryStep, the requests and the
// disagreements of each scope since the step before, and its enforce
// share, kept for HistoryPoints steps (an hour) in memory only.
const (
	HistoryStep   = 10 * time.Second
	HistoryPoints = 360
)

// point is one step of a scope's series.
type point struct {
	Time          int64   `json:"t"`             // unix seconds, the step's end
	Requests      uint64  `json:"requests"`      // decided in the step
	Enforced      uint64  `json:"enforced"`      // of those, enforced by the scope's enforce policy (0 in shadow and observe modes)
	Disagreements uint64  `json:"disagreements"` // counted in the step
	Percent       float64 `json:"percent"`       // the share of clients enforced at the step's end (0 in shadow and observe modes)
}

// scopeHistory keeps the series of every scope seen, by name.
type scopeHistory struct {
	metrics *proxy.Metrics
	h       *proxy.Handler

	mu     sync.Mutex
	last   map[string]proxy.ScopeTotal // the totals at the last step
	series map[string][]point          // oldest first, at most HistoryPoints
}

func newScopeHistory(m *proxy.Metrics, h *proxy.Handler) *scopeHistory {
	s := &scopeHistory{metrics: m, h: h, series: map[string][]point{}}
	s.last = m.ScopeTotals()
	return s
}

// run takes a step every HistoryStep until done is closed.
func (s *scopeHistory) run(done <-chan struct{}) {
	t := time.NewTicker(HistoryStep)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			s.step(now)
		}
	}
}

// step closes a step at now: each scope in force gets a point.
func (s *scopeHistory) step(now time.Time) {
	totals := s.metrics.ScopeTotals()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.points(now, totals) {
		name := p.scope
		ser := append(s.series[name], p.point)
		if len(ser) > HistoryPoints {
			ser = ser[len(ser)-HistoryPoints:]
		}
		s.series[name] = ser
	}
	s.last = totals
}

type scopePoint struct {
	scope string
	point
}

// points are the scopes' points from the last step to totals (s.mu held).
func (s *scopeHistory) points(now time.Time, totals map[string]proxy.ScopeTotal) []scopePoint {
	p, _ := s.h.Policies()
	var out []scopePoint
	for _, sc := range p.InForce() {
		cur, prev := totals[sc.Name], s.last[sc.Name]
		var reqs, enforced uint64
		for pol, n := range cur.Requests {
			d := n - min(n, prev.Requests[pol])
			reqs += d
			if pol == sc.Enforce {
				enforced += d
			}
		}
		pct := sc.Percent
		switch {
		case sc.Mode != proxy.ModeEnforce:
			// Shadow and observe enforce nothing: the backend decides.
			pct, enforced = 0, 0
		case sc.Shadow == "":
			pct = 100
		}
		out = append(out, scopePoint{sc.Name, point{
			Time: now.Unix(), Requests: reqs, Enforced: enforced,
			Disagreements: cur.Disagreements - min(cur.Disagreements, prev.Disagreements), Percent: pct,
		}})
	}
	return out
}

// snapshot returns each scope's series with a last point for the step in
// progress (from the last step to now), so that the page shows traffic
// as soon as it comes.
func (s *scopeHistory) snapshot(now time.Time) map[string][]point {
	totals := s.metrics.ScopeTotals()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]point{}
	for _, p := range s.points(now, totals) {
		out[p.scope] = append(append([]point(nil), s.series[p.scope]...), p.point)
	}
	return out
}

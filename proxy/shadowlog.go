package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/orderly-proxy/orderly/policy"
)

// ShadowSampleRate is how many disagreement samples a second the shadow
// log takes at most (with a burst of as many); the rest are counted in
// orderly_shadow_samples_dropped_total.
const ShadowSampleRate = 10

// redacted are the request headers a shadow sample never shows.
var redacted = map[string]bool{"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "Set-Cookie": true}

// shadowLog writes disagreement samples as JSON lines, rate-limited.
type shadowLog struct {
	w io.Writer

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

type shadowSample struct {
	Time       time.Time           `json:"time"`
	Direction  string              `json:"direction"`
	Client     string              `json:"client"`
	Method     string              `json:"method"`
	URI        string              `json:"uri"`
	Host       string              `json:"host"`
	Header     map[string][]string `json:"header"`
	Orderly    shadowDecision      `json:"orderly"`
	Backend    shadowBackend       `json:"backend"`
	Generation uint64              `json:"generation"`
}

type shadowDecision struct {
	Decision string `json:"decision"`
	Status   int    `json:"status,omitempty"`
	Layer    string `json:"layer"`
	RuleID   string `json:"rule_id,omitempty"`
	Rule     string `json:"rule,omitempty"`
}

type shadowBackend struct {
	Status int `json:"status"`
}

// allow takes a token if one is left.
func (l *shadowLog) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens += now.Sub(l.last).Seconds() * ShadowSampleRate
	} else {
		l.tokens = ShadowSampleRate
	}
	l.tokens = min(l.tokens, ShadowSampleRate)
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// sample writes one disagreement, or reports that the rate limit dropped it.
func (l *shadowLog) sample(now time.Time, direction string, r *http.Request, client netip.Addr, d *policy.Decision, backendStatus int, gen uint64) bool {
	if !l.allow(now) {
		return false
	}
	s := shadowSample{
		Time: now.UTC(), Direction: direction, Client: client.String(), Method: r.Method, URI: r.RequestURI, Host: r.Host,
		Header:     map[string][]string{},
		Orderly:    shadowDecision{Decision: decisionName(d), Status: d.Status, Layer: d.Layer.String()},
		Backend:    shadowBackend{Status: backendStatus},
		Generation: gen,
	}
	for k, v := range r.Header {
		if redacted[k] {
			v = []string{"[redacted]"}
		}
		s.Header[k] = v
	}
	if d.Rule != nil {
		s.Orderly.RuleID, s.Orderly.Rule = d.Rule.ID, d.Rule.String()
	}
	b, err := json.Marshal(s)
	if err != nil {
		return false
	}
	l.mu.Lock()
	l.w.Write(append(b, '\n'))
	l.mu.Unlock()
	return true
}

package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// HealthCheck says how a Pool watches its backends.
type HealthCheck struct {
	// Path is requested (GET) on each backend every Interval; any answer
	// below 500 within Timeout means up. An empty Path turns active
	// checks off: every backend is up until a request to it fails.
	Path     string
	Interval time.Duration
	Timeout  time.Duration
	// FailTimeout is how long a backend that failed a request (no
	// answer: refused, reset, timed out) is left out before it is tried
	// again, unless an active check finds it up sooner.
	FailTimeout time.Duration
	// NoPassive turns passive detection off: a failed request does not
	// take its backend out.
	NoPassive bool
	// Header is sent with every check (the backend guard's token).
	Header http.Header
}

// Pool is the backend URLs of one backend block, used round-robin among
// those up. A backend is down when its last active check failed (one
// left unanswered while requests to the backend are answered does not
// count: the backend is slow, not down), or for FailTimeout after a
// request to it failed (passive detection); with none up, requests get
// 502 at once rather than waiting on a dead one.
type Pool struct {
	targets []*target
	check   HealthCheck
	next    atomic.Uint64
	checked atomic.Bool // one round of active checks has run
	// onChange, when set, is told of every change of a backend's state.
	onChange func(u *url.URL, up bool)
}

type target struct {
	url       *url.URL
	basePath  string       // url's path without its final slash, put before every request's
	conns     *connPool    // idle connections to it (backendclient.go)
	checkUp   atomic.Bool  // the last active check's verdict
	downUntil atomic.Int64 // unix nanoseconds: left out after a failure until then
	answered  atomic.Int64 // unix nanoseconds: a request to it last got an answer below 500
	reported  atomic.Int32 // the state last told to onChange: 0 unknown, 1 up, 2 down
}

// NewPool returns a pool of urls, all up until checked.
func NewPool(urls []*url.URL, hc HealthCheck) *Pool {
	if hc.Interval <= 0 {
		hc.Interval = 5 * time.Second
	}
	if hc.Timeout <= 0 {
		hc.Timeout = 2 * time.Second
	}
	if hc.FailTimeout <= 0 {
		hc.FailTimeout = 10 * time.Second
	}
	p := &Pool{check: hc}
	for _, u := range urls {
		t := &target{url: u, basePath: strings.TrimSuffix(u.Path, "/"), conns: newConnPool(hostPort(u))}
		t.checkUp.Store(true)
		p.targets = append(p.targets, t)
	}
	if hc.Path == "" {
		p.checked.Store(true)
	}
	return p
}

// URLs returns the backends' URLs.
func (p *Pool) URLs() []*url.URL {
	out := make([]*url.URL, len(p.targets))
	for i, t := range p.targets {
		out[i] = t.url
	}
	return out
}

func (t *target) up(now int64) bool {
	return t.checkUp.Load() && t.downUntil.Load() <= now
}

// pick returns the next backend that is up, or nil when none is.
func (p *Pool) pick() *target {
	now := time.Now().UnixNano()
	n := uint64(len(p.targets))
	start := p.next.Add(1)
	for i := range n {
		if t := p.targets[(start+i)%n]; t.up(now) {
			return t
		}
	}
	return nil
}

// failed records that a request to t got no answer.
func (p *Pool) failed(t *target) {
	if p.check.NoPassive {
		return
	}
	t.downUntil.Store(time.Now().Add(p.check.FailTimeout).UnixNano())
	p.report(t)
}

// Ready reports whether active checks have run and a backend is up.
func (p *Pool) Ready() bool {
	if !p.checked.Load() {
		return false
	}
	now := time.Now().UnixNano()
	for _, t := range p.targets {
		if t.up(now) {
			return true
		}
	}
	return false
}

// Run checks the backends every Interval until ctx ends, through
// transport. Without a check path it returns at once.
func (p *Pool) Run(ctx context.Context, transport http.RoundTripper) {
	if p.check.Path == "" {
		return
	}
	client := &http.Client{Transport: transport, Timeout: p.check.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for {
		done := make(chan struct{}, len(p.targets))
		for _, t := range p.targets {
			go func() {
				p.probe(ctx, client, t)
				done <- struct{}{}
			}()
		}
		for range p.targets {
			<-done
		}
		p.checked.Store(true)
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.check.Interval):
		}
	}
}

func (p *Pool) probe(ctx context.Context, client *http.Client, t *target) {
	start := time.Now()
	u := *t.url
	u.Path = singleJoin(u.Path, p.check.Path)
	u.RawPath = ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	ok, timedOut := false, false
	if err == nil {
		for k, v := range p.check.Header {
			req.Header[k] = v
		}
		req.Header.Set("User-Agent", "orderly-health-check")
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			ok = resp.StatusCode < 500
		}
		var ne net.Error
		timedOut = errors.As(err, &ne) && ne.Timeout()
	}
	if timedOut && t.answered.Load() > start.Add(-p.check.Interval).UnixNano() {
		// The check got no answer in time, but requests to the backend
		// are being answered: it is slow (or orderly is short of CPU),
		// not down. Leaving it out would turn a slow-down into 502s for
		// everyone (make soak, TestSlowCheckWhileServing): keep the last
		// verdict.
		return
	}
	t.checkUp.Store(ok)
	if ok {
		// A backend that answers again is used again at once.
		t.downUntil.Store(0)
	}
	p.report(t)
}

func (p *Pool) report(t *target) {
	if p.onChange == nil {
		return
	}
	state := int32(2)
	if t.up(time.Now().UnixNano()) {
		state = 1
	}
	if t.reported.Swap(state) != state {
		p.onChange(t.url, state == 1)
	}
}

// hostPort is the address to dial for u, with the scheme's port when u
// has none, and the name TLS checks ("" for http).
func hostPort(u *url.URL) (addr, tlsName string) {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if u.Scheme == "https" {
		tlsName = u.Hostname()
	}
	return net.JoinHostPort(u.Hostname(), port), tlsName
}

// singleJoin joins a base path and a check path with one slash.
func singleJoin(base, path string) string {
	switch {
	case base == "" || base == "/":
		if path == "" || path[0] != '/' {
			return "/" + path
		}
		return path
	case base[len(base)-1] == '/' && path != "" && path[0] == '/':
		return base + path[1:]
	case base[len(base)-1] != '/' && (path == "" || path[0] != '/'):
		return base + "/" + path
	}
	return base + path
}

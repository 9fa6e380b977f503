package proxy

import (
	"net/http"
	"net/netip"
	"sync"
)

// clientLimiter bounds the requests in flight per client address, so
// that one client (a slowloris, a scraper) cannot take every connection.
type clientLimiter struct {
	max int

	mu       sync.Mutex
	inFlight map[netip.Addr]int
}

func newClientLimiter(max int) *clientLimiter {
	if max <= 0 {
		return nil
	}
	return &clientLimiter{max: max, inFlight: map[netip.Addr]int{}}
}

// acquire counts a request of a; false when a has max in flight already.
func (l *clientLimiter) acquire(a netip.Addr) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[a] >= l.max {
		return false
	}
	l.inFlight[a]++
	return true
}

func (l *clientLimiter) release(a netip.Addr) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if n := l.inFlight[a]; n <= 1 {
		delete(l.inFlight, a)
	} else {
		l.inFlight[a] = n - 1
	}
	l.mu.Unlock()
}

// requestLineTooLong reports whether the request line is over max bytes
// (Apache's LimitRequestLine: it answers 414).
func requestLineTooLong(r *http.Request, max int) bool {
	return max > 0 && len(r.Method)+1+len(r.RequestURI)+1+len(r.Proto) > max
}

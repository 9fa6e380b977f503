package proxy

import (
	"net/http"
	"net/netip"
	"sync"
)

// clientLimiter bounds the requests in flight per client address, so
// that one client (a slowloris, a scraper) cannot take every connection.
// The counts are kept in shards by address, each with its own lock: no
// lock is shared by every request.
type clientLimiter struct {
	max    int
	shards [limiterShards]limiterShard
}

const limiterShards = 32

type limiterShard struct {
	mu       sync.Mutex
	inFlight map[netip.Addr]int
	_        [40]byte // a cache line of its own
}

func newClientLimiter(max int) *clientLimiter {
	if max <= 0 {
		return nil
	}
	l := &clientLimiter{max: max}
	for i := range l.shards {
		l.shards[i].inFlight = map[netip.Addr]int{}
	}
	return l
}

// shard is a's shard: the low bytes of the address, where clients differ.
func (l *clientLimiter) shard(a netip.Addr) *limiterShard {
	b := a.As16()
	h := uint32(b[15]) | uint32(b[14])<<8 | uint32(b[13])<<16 | uint32(b[12])<<24
	h ^= uint32(b[7]) | uint32(b[6])<<8 | uint32(b[5])<<16 | uint32(b[4])<<24
	h *= 0x9E3779B1
	return &l.shards[h>>27] // 32 shards: the top 5 bits
}

// acquire counts a request of a; false when a has max in flight already.
func (l *clientLimiter) acquire(a netip.Addr) bool {
	if l == nil {
		return true
	}
	s := l.shard(a)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[a] >= l.max {
		return false
	}
	s.inFlight[a]++
	return true
}

func (l *clientLimiter) release(a netip.Addr) {
	if l == nil {
		return
	}
	s := l.shard(a)
	s.mu.Lock()
	if n := s.inFlight[a]; n <= 1 {
		delete(s.inFlight, a)
	} else {
		s.inFlight[a] = n - 1
	}
	s.mu.Unlock()
}

// requestLineTooLong reports whether the request line is over max bytes
// (Apache's LimitRequestLine: it answers 414).
func requestLineTooLong(r *http.Request, max int) bool {
	return max > 0 && len(r.Method)+1+len(r.RequestURI)+1+len(r.Proto) > max
}

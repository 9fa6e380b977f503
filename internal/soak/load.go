package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The phases of a run, by the time a request started, as fractions of
// the duration: warm-up (connections being opened), baseline, slowloris
// (slow clients open), and the rest, with the backend restart.
const (
	phaseWarm = iota
	phaseBase
	phaseSlow
	phaseAfter
	nPhases
)

var phaseNames = [nPhases]string{"warm-up", "baseline", "slowloris", "restart"}

// The slowloris phase ends at half time, so that the second half, whose
// memory is compared with the first's, has no slow clients.
var phaseStart = [nPhases + 1]float64{0, 0.1, 0.3, 0.5, 1}

// restartAt is when the backend is stopped, as a fraction of the duration.
const restartAt = 0.75

// paths is what every connection asks for, in turn (from a different
// start for each connection); expect gives the status the soak's legacy
// rules answer (scripts/soak.sh writes them).
var paths = []string{"/", "/staff/", "/private/data.html", "/index.html", "/backup.sql", "/staff/index.html"}

// clientIP is connection i's X-Forwarded-For address: 10.0.0.1 onwards,
// 250 per /24, so that connections 0 to 499 are in 10.0.0.0/23.
func clientIP(i int) string {
	return fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)
}

func expect(path string, i int) int {
	switch path {
	case "/", "/index.html":
		return http.StatusOK // Allow from all
	case "/staff/", "/staff/index.html":
		if i < 500 { // Allow from 10.0.0.0/23
			return http.StatusOK
		}
		return http.StatusForbidden
	}
	return http.StatusForbidden // /private: Deny from all; *.sql: <FilesMatch> Deny from all
}

// Failure causes.
const (
	causeConnect = "connect" // the connection to orderly could not be opened
	causeConn    = "conn"    // the connection broke (reset, EOF) mid-request
	causeTimeout = "timeout" // no whole answer within -timeout
	causeStatus  = "status"  // an answer with another status than the rules give (502 aside)
	cause502     = "502"
)

type failure struct {
	at     time.Duration // since the start
	conn   int
	cause  string
	detail string
}

// load is the keep-alive clients and what they saw.
type load struct {
	o     options
	t0    time.Time
	end   time.Time
	dialr net.Dialer

	requests, answered, dials, serverClosed atomic.Int64
	perSecond                               []atomic.Int64 // answers with the expected status, by second

	mu        sync.Mutex
	lat       [][]time.Duration // latencies of answers with the expected status, by second
	fails     map[string]int
	firstFail map[string]time.Duration
	lastFail  map[string]time.Duration
	sample    []failure // the first failures of each cause, for the report
	badStatus map[int]int
	ports     map[int]bool // local ports of the open connections
}

func newLoad(o options, t0 time.Time) *load {
	return &load{
		o: o, t0: t0, end: t0.Add(o.duration),
		dialr:     net.Dialer{Timeout: o.timeout},
		perSecond: make([]atomic.Int64, int(o.duration/time.Second)+2),
		lat:       make([][]time.Duration, int(o.duration/time.Second)+2),
		fails:     map[string]int{}, firstFail: map[string]time.Duration{}, lastFail: map[string]time.Duration{},
		badStatus: map[int]int{}, ports: map[int]bool{},
	}
}

func (l *load) fail(i int, at time.Duration, cause, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fails[cause] == 0 {
		l.firstFail[cause] = at
	}
	l.fails[cause]++
	l.lastFail[cause] = at
	if n := l.fails[cause]; n <= 5 && cause != cause502 {
		l.sample = append(l.sample, failure{at, i, cause, detail})
	}
}

// conn is one keep-alive connection to orderly.
type conn struct {
	nc   net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	port int
}

func (l *load) dial() (*conn, error) {
	nc, err := l.dialr.Dial("tcp", l.o.target)
	if err != nil {
		return nil, err
	}
	l.dials.Add(1)
	port := nc.LocalAddr().(*net.TCPAddr).Port
	l.mu.Lock()
	l.ports[port] = true
	l.mu.Unlock()
	return &conn{nc: nc, br: bufio.NewReader(nc), bw: bufio.NewWriter(nc), port: port}, nil
}

func (l *load) hangUp(c *conn) {
	c.nc.Close()
	l.mu.Lock()
	delete(l.ports, c.port)
	l.mu.Unlock()
}

// do sends one GET and reads the whole answer. closed reports that the
// server will close the connection after it.
func (c *conn) do(path, ip string, timeout time.Duration) (status int, closed bool, err error) {
	c.nc.SetDeadline(time.Now().Add(timeout))
	fmt.Fprintf(c.bw, "GET %s HTTP/1.1\r\nHost: soak.test\r\nUser-Agent: orderly-soak\r\nX-Forwarded-For: %s\r\n\r\n", path, ip)
	if err := c.bw.Flush(); err != nil {
		return 0, true, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, true, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Close, err
}

// worker is connection i: one request at a time on one connection, paced
// at -rate, until the end; a broken connection is opened again.
func (l *load) worker(i int) {
	ip := clientIP(i)
	var period time.Duration
	next := time.Now()
	if l.o.rate > 0 {
		period = time.Duration(float64(time.Second) / l.o.rate)
		next = next.Add(time.Duration(i) * period / time.Duration(l.o.conns))
	}
	var c *conn
	defer func() {
		if c != nil {
			l.hangUp(c)
		}
	}()
	for k := i; ; k++ {
		if period > 0 {
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
			next = next.Add(period)
			if now := time.Now(); next.Before(now.Add(-period)) {
				next = now // fell behind: do not burst to catch up
			}
		}
		start := time.Now()
		if !start.Before(l.end) {
			return
		}
		at := start.Sub(l.t0)
		if c == nil {
			var err error
			if c, err = l.dial(); err != nil {
				l.requests.Add(1)
				l.fail(i, at, classify(err, causeConnect), err.Error())
				time.Sleep(50 * time.Millisecond)
				continue
			}
		}
		path := paths[k%len(paths)]
		l.requests.Add(1)
		status, closed, err := c.do(path, ip, l.o.timeout)
		took := time.Since(start)
		switch {
		case err != nil:
			l.fail(i, at, classify(err, causeConn), fmt.Sprintf("GET %s: %v", path, err))
		case status == http.StatusBadGateway:
			l.answered.Add(1)
			l.fail(i, at, cause502, "")
		case status != expect(path, i):
			l.answered.Add(1)
			l.fail(i, at, causeStatus, fmt.Sprintf("GET %s from %s: %d, want %d", path, ip, status, expect(path, i)))
			l.mu.Lock()
			l.badStatus[status]++
			l.mu.Unlock()
		default:
			l.answered.Add(1)
			if s := int(at / time.Second); s < len(l.perSecond) {
				l.perSecond[s].Add(1)
			}
			if s := int(at / time.Second); s < len(l.lat) {
				l.mu.Lock()
				l.lat[s] = append(l.lat[s], took)
				l.mu.Unlock()
			}
		}
		if err != nil || closed {
			if err == nil {
				l.serverClosed.Add(1)
			}
			l.hangUp(c)
			c = nil
		}
	}
}

func classify(err error, otherwise string) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
		return causeTimeout
	}
	return otherwise
}

// openPorts returns the local ports of the open connections.
func (l *load) openPorts() map[int]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[int]bool, len(l.ports))
	for p := range l.ports {
		m[p] = true
	}
	return m
}

// stats are latency percentiles and throughput of one phase.
type stats struct {
	n        int
	rps      float64
	p50, p99 time.Duration
	max      time.Duration
}

func (l *load) phaseStats(p int) stats {
	from := time.Duration(phaseStart[p] * float64(l.o.duration))
	to := time.Duration(phaseStart[p+1] * float64(l.o.duration))
	return l.stats(from, to)
}

// stats are the latencies of the answers to requests started from from
// (a whole second) until to.
func (l *load) stats(from, to time.Duration) stats {
	var d []time.Duration
	l.mu.Lock()
	for s := int(from / time.Second); s < int(to/time.Second) && s < len(l.lat); s++ {
		d = append(d, l.lat[s]...)
	}
	l.mu.Unlock()
	sort.Slice(d, func(a, b int) bool { return d[a] < d[b] })
	s := stats{n: len(d), rps: float64(len(d)) / (to - from).Seconds()}
	if len(d) > 0 {
		s.p50, s.p99, s.max = d[len(d)/2], d[len(d)*99/100], d[len(d)-1]
	}
	return s
}

func (s stats) String() string {
	return fmt.Sprintf("%7d answers  %7.0f req/s  p50 %-8s p99 %-8s max %s",
		s.n, s.rps, round(s.p50), round(s.p99), round(s.max))
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	}
	return d.Round(time.Microsecond).String()
}

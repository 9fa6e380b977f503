package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The backend client: orderly's own HTTP/1.1 client for the trusted 2.4
// backend, in place of http.Transport. A request is written with the
// standard library's request writer ((*http.Request).Write) and its
// answer read with http.ReadResponse, on the handler's goroutine, over
// keep-alive connections pooled per backend: no read and write loops and
// no channel hand-offs per request, as http.Transport has. Only a request
// with a body has its body written by a second goroutine while the
// handler waits for the answer, as http.Transport does, so that a backend
// that answers before it has read the whole body (413, 401, a stream
// that echoes) is heard.
//
// What http.Transport did and this client does too:
//   - Expect: 100-continue: the headers go first, the body once the
//     backend answers 100 or after ExpectContinueTimeout; a final answer
//     without 100 that closes the connection means the body is not sent.
//   - interim answers (1xx but 101) are handed to the caller, which
//     passes them on to the client.
//   - ResponseHeaderTimeout, from the end of the request's write.
//   - the request's context: when the client goes away, the backend
//     connection is closed, whatever the request is waiting on.
//   - a connection the backend closed while it was idle: a request that
//     fails on a reused connection before any answer is tried again on
//     another, when nothing of it was written or it is replayable (GET,
//     HEAD, OPTIONS, TRACE or with an Idempotency-Key, without a body),
//     as net/http does (persistConn.shouldRetryRequest); a request that
//     is not replayable is only sent on a connection found alive.
//   - header names and values are checked as http.Transport checks them
//     (a value with a CR or LF is refused, not sent).
//
// What it does not do: it never adds Accept-Encoding: gzip to a request
// that had none and so never decompresses an answer (http.Transport did
// both, unasked); the backend answers each client in the encoding the
// client asked for, as it would answer it directly.

// Backend connection defaults, those of NewTransport.
const (
	backendDialTimeout     = 3 * time.Second
	backendKeepAlive       = 30 * time.Second
	backendIdleTimeout     = 2 * time.Minute
	backendMaxIdle         = 256
	backendExpectContinue  = time.Second
	backendResponseTimeout = 60 * time.Second
	// A connection idle for longer than this is checked before it is
	// used for a request that cannot be retried... and for any request:
	// the backend's KeepAliveTimeout (5 s by default) closes such ones.
	backendCheckIdle = time.Second
	// How long a connection whose answer was read waits for its request
	// body to be written before it is closed rather than reused
	// (net/http's maxWriteWaitBeforeConnReuse).
	backendWriteWait = 50 * time.Millisecond
	poolShards       = 8
)

// backendClient sends requests to the backends of a Pool.
type backendClient struct {
	dialer                net.Dialer
	responseHeaderTimeout time.Duration
	expectContinueTimeout time.Duration
	idleTimeout           time.Duration
	// tlsConfig is the base of each https connection's (its ServerName
	// set per backend); nil is the defaults, as http.Transport's
	// (tests set their own roots).
	tlsConfig *tls.Config
}

func newBackendClient(responseHeaderTimeout time.Duration) *backendClient {
	if responseHeaderTimeout <= 0 {
		responseHeaderTimeout = backendResponseTimeout
	}
	return &backendClient{
		dialer:                net.Dialer{Timeout: backendDialTimeout, KeepAlive: backendKeepAlive},
		responseHeaderTimeout: responseHeaderTimeout,
		expectContinueTimeout: backendExpectContinue,
		idleTimeout:           backendIdleTimeout,
	}
}

// backendConn is one connection to a backend.
type backendConn struct {
	conn   net.Conn
	tcp    net.Conn // the TCP connection under conn (conn itself without TLS)
	br     *bufio.Reader
	bw     *bufio.Writer
	nwrite atomic.Int64 // bytes written to conn
	idle   int64        // unix nanoseconds: when it was last put back
	reused bool
	pool   *connPool
	// abort tears the connection's exchange down (its deadlines in the
	// past): what the end of a request's context does. Made once per
	// connection, not once per exchange.
	abort func()
}

// Write counts what reaches the connection, so that a request that
// failed before any of it was written is known to be safe to retry.
func (c *backendConn) Write(p []byte) (int, error) {
	n, err := c.conn.Write(p)
	c.nwrite.Add(int64(n))
	return n, err
}

// connPool is one backend's idle connections, in shards that each have
// their own lock, so that no lock is shared by every request.
type connPool struct {
	addr       string // host:port
	tlsName    string // the server name for TLS; "" for http
	shards     [poolShards]poolShard
	next       atomic.Uint32
	sweeping   atomic.Bool
	maxIdle    int // per shard
	idleTimout time.Duration
}

type poolShard struct {
	mu    sync.Mutex
	conns []*backendConn
	_     [40]byte // a cache line of its own
}

func newConnPool(addr, tlsName string) *connPool {
	return &connPool{addr: addr, tlsName: tlsName, maxIdle: backendMaxIdle / poolShards, idleTimout: backendIdleTimeout}
}

// get returns an idle connection that is (as far as can be told) alive,
// or nil. check asks for every connection to be checked; otherwise only
// one idle for longer than backendCheckIdle is.
func (p *connPool) get(check bool) *backendConn {
	now := time.Now().UnixNano()
	start := p.next.Add(1)
	for i := range uint32(poolShards) {
		s := &p.shards[(start+i)%poolShards]
		for {
			s.mu.Lock()
			n := len(s.conns)
			if n == 0 {
				s.mu.Unlock()
				break
			}
			c := s.conns[n-1]
			s.conns[n-1] = nil
			s.conns = s.conns[:n-1]
			s.mu.Unlock()
			idle := time.Duration(now - c.idle)
			if idle > p.idleTimout || (check || idle > backendCheckIdle) && !alive(c.tcp) {
				c.conn.Close()
				continue
			}
			c.reused = true
			return c
		}
	}
	return nil
}

// put hands c back for another request, or closes it when the pool is
// full.
func (p *connPool) put(c *backendConn) {
	c.idle = time.Now().UnixNano()
	start := p.next.Add(1)
	for i := range uint32(poolShards) {
		s := &p.shards[(start+i)%poolShards]
		s.mu.Lock()
		if len(s.conns) < p.maxIdle {
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			p.sweepLater()
			return
		}
		s.mu.Unlock()
	}
	c.conn.Close()
}

// sweepLater closes, in a while, the connections idle for longer than
// the idle timeout, and goes on doing so while any is left.
func (p *connPool) sweepLater() {
	if p.sweeping.Load() || !p.sweeping.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(p.idleTimout/2, func() {
		cutoff := time.Now().Add(-p.idleTimout).UnixNano()
		left := 0
		for i := range p.shards {
			s := &p.shards[i]
			s.mu.Lock()
			kept := s.conns[:0]
			for _, c := range s.conns {
				if c.idle < cutoff {
					c.conn.Close()
					continue
				}
				kept = append(kept, c)
			}
			clear(s.conns[len(kept):])
			s.conns = kept
			left += len(kept)
			s.mu.Unlock()
		}
		p.sweeping.Store(false)
		if left > 0 {
			p.sweepLater()
		}
	})
}

// closeIdle closes every idle connection (tests, shutdown).
func (p *connPool) closeIdle() {
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		for _, c := range s.conns {
			c.conn.Close()
		}
		s.conns = nil
		s.mu.Unlock()
	}
}

func (c *backendClient) dial(ctx context.Context, p *connPool) (*backendConn, error) {
	conn, err := c.dialer.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	bc := &backendConn{conn: conn, tcp: conn, pool: p}
	bc.abort = func() { bc.conn.SetDeadline(aLongTimeAgo) }
	if p.tlsName != "" {
		cfg := &tls.Config{}
		if c.tlsConfig != nil {
			cfg = c.tlsConfig.Clone()
		}
		cfg.ServerName = p.tlsName
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		bc.conn = tc
	}
	bc.br = bufio.NewReaderSize(bc.conn, 4<<10)
	bc.bw = bufio.NewWriterSize(bc, 4<<10)
	return bc, nil
}

// errNothingWritten marks a failure before any byte of the request was
// written.
type nothingWrittenError struct{ error }

func (e nothingWrittenError) Unwrap() error { return e.error }

// errResponseHeaderTimeout is http.Transport's for the same case.
var errResponseHeaderTimeout = errors.New("net/http: timeout awaiting response headers")

// validate checks what http.Transport checks before it sends a request.
func validate(out *http.Request) error {
	for k, vv := range out.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("net/http: invalid header field name %q", k)
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("net/http: invalid header field value for %q", k)
			}
		}
	}
	if out.Method != "" && !validMethod(out.Method) {
		return fmt.Errorf("net/http: invalid method %q", out.Method)
	}
	return nil
}

func validMethod(m string) bool {
	return len(m) > 0 && strings.IndexFunc(m, func(r rune) bool { return !httpguts.IsTokenRune(r) }) < 0
}

// replayable is net/http's Request.isReplayable for a request whose body
// cannot be had again.
func replayable(out *http.Request) bool {
	if out.Body != nil && out.Body != http.NoBody {
		return false
	}
	switch out.Method {
	case "", "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	_, a := out.Header["Idempotency-Key"]
	_, b := out.Header["X-Idempotency-Key"]
	return a || b
}

// interimSink is told of each interim answer (1xx but 101) of an
// exchange, before its final answer.
type interimSink interface {
	interim(code int, header http.Header)
}

// do sends out to the backend of p, for as long as ctx lasts (out's own
// context is not looked at), and returns its final answer; on1xx, when
// not nil, is told of each interim answer (1xx but 101) first. The answer's Body
// hands the connection back to p when read to its end, and closes it
// otherwise; a 101's Body is the connection itself.
func (c *backendClient) do(ctx context.Context, p *connPool, out *http.Request, on1xx interimSink) (*http.Response, error) {
	if err := validate(out); err != nil {
		return nil, err
	}
	canRetry := replayable(out)
	for {
		bc := p.get(!canRetry)
		if bc == nil {
			var err error
			if bc, err = c.dial(ctx, p); err != nil {
				return nil, err
			}
		}
		resp, err := c.exchange(ctx, bc, out, on1xx)
		if err == nil {
			return resp, nil
		}
		// net/http's persistConn.shouldRetryRequest: only on a reused
		// connection (a new one failing means the backend is at fault),
		// and only what can be sent again.
		var nw nothingWrittenError
		nothing := errors.As(err, &nw)
		if bc.reused && ctx.Err() == nil && !errors.Is(err, errResponseHeaderTimeout) &&
			(nothing && (out.Body == nil || out.Body == http.NoBody) || canRetry) {
			continue
		}
		if nothing {
			err = nw.error
		}
		return nil, err
	}
}

// exchange writes out on bc and reads the answer.
func (c *backendClient) exchange(ctx context.Context, bc *backendConn, out *http.Request, on1xx interimSink) (*http.Response, error) {
	// The client gone: the connection is torn down, whatever waits on it.
	stop := context.AfterFunc(ctx, bc.abort)
	start := bc.nwrite.Load()
	fail := func(err error) (*http.Response, error) {
		stop()
		bc.conn.Close()
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, errResponseHeaderTimeout
		}
		if bc.nwrite.Load() == start {
			return nil, nothingWrittenError{err}
		}
		return nil, err
	}

	var bw *bodyWriter
	if out.Body == nil || out.Body == http.NoBody {
		err := out.Write(bc.bw)
		if err == nil {
			err = bc.bw.Flush()
		}
		if err != nil {
			return fail(err)
		}
		bc.conn.SetReadDeadline(time.Now().Add(c.responseHeaderTimeout))
	} else {
		bw = c.startBody(bc, out)
	}

	var resp *http.Response
	for {
		r, err := http.ReadResponse(bc.br, out)
		if err != nil {
			if bw != nil {
				// The body's write failed (and closed the connection), or
				// the read did: say why the body's did, as http.Transport.
				if werr := bw.waitBriefly(); werr != nil {
					err = werr
				}
			}
			return fail(err)
		}
		code := r.StatusCode
		if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
			// Interim answers: passed on, then (100) the body follows.
			if on1xx != nil {
				on1xx.interim(code, r.Header)
			}
			if code == http.StatusContinue && bw != nil {
				bw.proceed(true)
			}
			continue
		}
		resp = r
		break
	}
	if bw != nil {
		// A final answer before 100 Continue: the body goes unless the
		// connection closes after the answer (net/http's readResponse).
		bw.proceed(!resp.Close && !out.Close)
		bw.headersRead()
	}
	bc.conn.SetReadDeadline(time.Time{})
	if ctx.Err() != nil {
		// The deadline just cleared may have been the context's.
		bc.conn.SetDeadline(aLongTimeAgo)
	}

	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The connection is the tunnel's now; the caller closes it when
		// the context ends.
		stop()
		resp.Body = &tunnel{br: bc.br, conn: bc.conn}
		return resp, nil
	}
	body := &backendBody{rc: resp.Body, bc: bc, bw: bw, stop: stop, keep: !resp.Close && !out.Close}
	if resp.Body == http.NoBody {
		body.release(true)
		return resp, nil
	}
	resp.Body = body
	return resp, nil
}

var aLongTimeAgo = time.Unix(1, 0)

// startBody writes out (headers and body) on bc from a goroutine of its
// own; with Expect: 100-continue the body waits for proceed.
func (c *backendClient) startBody(bc *backendConn, out *http.Request) *bodyWriter {
	bw := &bodyWriter{done: make(chan struct{}), bc: bc, timeout: c.responseHeaderTimeout}
	req := out
	if out.ProtoAtLeast(1, 1) && httpguts.HeaderValuesContainsToken(out.Header["Expect"], "100-continue") {
		bw.cont = make(chan bool, 1)
		gated := *out
		gated.Body = &continueGate{ReadCloser: out.Body, cont: bw.cont, timeout: c.expectContinueTimeout}
		req = &gated
	}
	go func() {
		err := req.Write(bc.bw)
		if err == nil {
			err = bc.bw.Flush()
		}
		if err != nil {
			bw.err = err
			bc.conn.Close() // wakes the handler's read of the answer
		} else {
			bw.mu.Lock()
			if !bw.answered {
				bc.conn.SetReadDeadline(time.Now().Add(bw.timeout))
			}
			bw.mu.Unlock()
		}
		close(bw.done)
	}()
	return bw
}

// bodyWriter is the goroutine that writes a request with a body.
type bodyWriter struct {
	done     chan struct{}
	err      error // set before done is closed
	bc       *backendConn
	cont     chan bool // Expect: 100-continue: true sends the body, false does not
	timeout  time.Duration
	mu       sync.Mutex
	answered bool
}

// proceed tells a body held for 100 Continue whether to go.
func (w *bodyWriter) proceed(send bool) {
	if w.cont != nil {
		select {
		case w.cont <- send:
		default:
		}
	}
}

// headersRead stops the write from setting the answer's deadline once the
// answer has come.
func (w *bodyWriter) headersRead() {
	w.mu.Lock()
	w.answered = true
	w.mu.Unlock()
}

// ended reports whether the write ended within backendWriteWait.
func (w *bodyWriter) ended() bool {
	select {
	case <-w.done:
		return true
	default:
	}
	t := time.NewTimer(backendWriteWait)
	defer t.Stop()
	select {
	case <-w.done:
		return true
	case <-t.C:
		return false
	}
}

// waitBriefly returns the write's error, if it ended within
// backendWriteWait (a write that failed closed the connection and so
// ends at once).
func (w *bodyWriter) waitBriefly() error {
	if w.ended() {
		return w.err
	}
	return nil
}

// written reports whether the request was written whole within
// backendWriteWait.
func (w *bodyWriter) written() bool {
	return w.ended() && w.err == nil
}

// errBodyNotSent ends a request write whose body is not to be sent.
var errBodyNotSent = errors.New("request body not sent: the backend answered without 100 Continue")

// continueGate holds a body back until the backend answers 100 Continue,
// or says it does not want it, or ExpectContinueTimeout passes.
type continueGate struct {
	io.ReadCloser
	cont    chan bool
	timeout time.Duration
	opened  bool
}

func (g *continueGate) Read(p []byte) (int, error) {
	if !g.opened {
		t := time.NewTimer(g.timeout)
		select {
		case send := <-g.cont:
			if !send {
				t.Stop()
				return 0, errBodyNotSent
			}
		case <-t.C:
		}
		t.Stop()
		g.opened = true
	}
	return g.ReadCloser.Read(p)
}

// backendBody is an answer's body: read to its end, it hands the
// connection back to the pool when nothing else was left on it.
type backendBody struct {
	rc   io.ReadCloser
	bc   *backendConn
	bw   *bodyWriter
	stop func() bool
	keep bool
	done bool
}

func (b *backendBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.release(true)
	} else if err != nil {
		b.release(false)
	}
	return n, err
}

// Close closes the connection unless the body was read to its end.
func (b *backendBody) Close() error {
	if !b.done {
		b.release(false)
	}
	return nil
}

// release ends the exchange: the connection goes back to the pool when
// the answer was read whole, nothing follows it, the request was written
// whole and the client is still there; it is closed otherwise.
func (b *backendBody) release(eof bool) {
	b.done = true
	bc := b.bc
	ok := eof && b.keep && bc.br.Buffered() == 0 && (b.bw == nil || b.bw.written())
	if !b.stop() || !ok {
		bc.conn.Close()
		return
	}
	bc.pool.put(bc)
}

// tunnel is a 101's body: the connection, with what was already read
// into its buffer first.
type tunnel struct {
	br   *bufio.Reader
	conn net.Conn
}

func (t *tunnel) Read(p []byte) (int, error)  { return t.br.Read(p) }
func (t *tunnel) Write(p []byte) (int, error) { return t.conn.Write(p) }
func (t *tunnel) Close() error                { return t.conn.Close() }

// CloseWrite half-closes the tunnel, when the connection can.
func (t *tunnel) CloseWrite() error {
	if cw, ok := t.conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

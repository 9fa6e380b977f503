package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/orderly-proxy/orderly/policy"
)

// Forwarding a request to the backend and its answer to the client: what
// httputil.ReverseProxy did for orderly (with orderly's Rewrite and
// ModifyResponse), over the backend client (backendclient.go). The
// request the backend gets:
//   - the client's headers less the hop-by-hop ones (RFC 9110 7.6.1:
//     Connection and the headers it names, Proxy-Connection, Keep-Alive,
//     Proxy-Authenticate, Proxy-Authorization, TE, Trailer,
//     Transfer-Encoding, Upgrade), with "TE: trailers" kept when the
//     client sent it and a WebSocket upgrade kept as such (any other
//     protocol would carry requests orderly never decides: the request
//     goes on as a plain one);
//   - the path orderly decided on, normalised as Apache normalised it,
//     under the backend URL's path, with the client's query;
//   - the client's Host, and X-Forwarded-For (the client's address after
//     what trusted proxies said), X-Forwarded-Host and X-Forwarded-Proto
//     of orderly's own making: any a client sent is dropped, as is
//     Forwarded;
//   - the user header (UserHeader) and the guard header (GuardHeader) of
//     orderly's own making only;
//   - no User-Agent when the client sent none.
// The answer: the backend's less its hop-by-hop headers, with Digest's
// Authentication-Info added; trailers passed on; flushed as it comes when
// its length is unknown or it is an event stream; interim answers (1xx)
// passed on as they come.

// hopHeaders are the headers that concern one connection only.
var hopHeaders = []string{
	"Connection",
	"Proxy-Connection",
	"Keep-Alive",
	"Proxy-Authenticate",
	"Proxy-Authorization",
	"Te",
	"Trailer",
	"Transfer-Encoding",
	"Upgrade",
}

func isHopHeader(k string) bool {
	for _, h := range hopHeaders {
		if k == h {
			return true
		}
	}
	return false
}

// removeHopHeaders removes the hop-by-hop headers from h.
func removeHopHeaders(h http.Header) {
	for _, f := range h["Connection"] {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" {
				h.Del(sf)
			}
		}
	}
	for _, f := range hopHeaders {
		delete(h, f)
	}
}

// upgradeType is the protocol a request or answer switches to, if any.
func upgradeType(h http.Header) string {
	if !httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade") {
		return ""
	}
	return h.Get("Upgrade")
}

func isPrint(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// errClientProtocol is a request orderly cannot forward for what the
// client asked: its answer is 502, as before, but the backend is not at
// fault.
type errClientProtocol struct{ error }

// outgoing builds the request the backend gets for r.
func (h *Handler) outgoing(r *http.Request, info *passInfo) (*http.Request, error) {
	in := r.Header
	hdr := make(http.Header, len(in)+4)
	// The client's headers, less the hop-by-hop ones and those
	// Connection names, and less the forwarding headers orderly makes.
	// The values are shared with r, capped so that an append copies.
	named := in["Connection"]
	for k, vv := range in {
		switch k {
		case "Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto":
			continue
		}
		if isHopHeader(k) || len(named) > 0 && connectionNames(named, k) {
			continue
		}
		hdr[k] = vv[:len(vv):len(vv)]
	}
	upType := upgradeType(in)
	if !isPrint(upType) {
		return nil, errClientProtocol{fmt.Errorf("client tried to switch to invalid protocol %q", upType)}
	}
	if httpguts.HeaderValuesContainsToken(in["Te"], "trailers") {
		hdr["Te"] = []string{"trailers"}
	}
	// Only WebSocket may turn the connection into a tunnel: any other
	// protocol (h2c) would carry requests to the backend that orderly
	// never decides. The request goes on as a plain one.
	if upType != "" && strings.EqualFold(upType, "websocket") {
		hdr["Connection"] = []string{"Upgrade"}
		hdr["Upgrade"] = []string{upType}
	}
	if info.fromHeader {
		if prior := in["X-Forwarded-For"]; prior != nil {
			hdr["X-Forwarded-For"] = prior
		}
	}
	// The request, its URL and SetXForwarded's header values are one
	// allocation.
	o := new(outgoingRequest)
	xf := o.xf[:]
	if clientIP, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		if prior := hdr["X-Forwarded-For"]; len(prior) > 0 {
			clientIP = strings.Join(prior, ", ") + ", " + clientIP
		}
		xf[0] = clientIP
		hdr["X-Forwarded-For"] = xf[0:1:1]
	} else {
		delete(hdr, "X-Forwarded-For")
	}
	xf[1] = r.Host
	hdr["X-Forwarded-Host"] = xf[1:2:2]
	if r.TLS == nil {
		hdr["X-Forwarded-Proto"] = protoHTTP
	} else {
		hdr["X-Forwarded-Proto"] = protoHTTPS
	}
	delete(hdr, h.userKey)
	if info.user != "" {
		hdr[h.userKey] = []string{info.user}
	}
	delete(hdr, GuardHeader)
	if h.guard != nil {
		hdr[GuardHeader] = h.guard
	}
	if _, ok := hdr["User-Agent"]; !ok {
		hdr["User-Agent"] = emptyValue // no Go-http-client User-Agent
	}

	t := info.target
	// The backend gets the path orderly decided on, normalised as Apache
	// normalised it, so that both decide on the same file: no encoding or
	// dot-segment trick can mean one thing here and another there.
	raw := r.URL.EscapedPath()
	if info.path != "" {
		raw = info.path
	}
	raw = t.basePath + raw
	o.url = url.URL{Scheme: t.url.Scheme, Host: t.url.Host, Path: pathUnescape(raw), RawPath: raw,
		RawQuery: r.URL.RawQuery, ForceQuery: r.URL.ForceQuery}
	o.req = http.Request{
		Method:        r.Method,
		URL:           &o.url,
		Proto:         r.Proto,
		ProtoMajor:    r.ProtoMajor,
		ProtoMinor:    r.ProtoMinor,
		Header:        hdr,
		Host:          r.Host,
		ContentLength: r.ContentLength,
	}
	out := &o.req
	if s := r.TransferEncoding; s != nil {
		out.TransferEncoding = append([]string(nil), s...)
	}
	if r.Trailer != nil {
		out.Trailer = r.Trailer.Clone()
	}
	if r.ContentLength != 0 && r.Body != nil {
		out.Body = r.Body
	}
	// The context is the backend client's argument: no copy of out for it.
	return out, nil
}

// outgoingRequest holds the request the backend gets with its URL and
// the values of its X-Forwarded-For and X-Forwarded-Host headers.
type outgoingRequest struct {
	req http.Request
	url url.URL
	xf  [2]string
}

var (
	protoHTTP  = []string{"http"}
	protoHTTPS = []string{"https"}
	emptyValue = []string{""}
)

// connectionNames reports whether the Connection header values name k.
func connectionNames(named []string, k string) bool {
	for _, f := range named {
		for sf := range strings.SplitSeq(f, ",") {
			if sf = textproto.TrimString(sf); sf != "" && textproto.CanonicalMIMEHeaderKey(sf) == k {
				return true
			}
		}
	}
	return false
}

// closeGuard is the request body as the backend client reads it: closing
// it (when the handler returns) stops any later read, which could
// outlive the handler (ReverseProxy's noopCloseReader); the client's body
// itself is the server's to close.
type closeGuard struct {
	rc     io.ReadCloser
	closed atomic.Bool
}

func (c *closeGuard) Read(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, errors.New("read on the request body after the handler returned")
	}
	return c.rc.Read(p)
}

func (c *closeGuard) Close() error {
	c.closed.Store(true)
	return nil
}

// forward sends r to the backend info.target and its answer to w.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, info *passInfo) {
	out, err := h.outgoing(r, info)
	if err != nil {
		h.backendFailed(w, r, info, err)
		return
	}
	if out.Body != nil {
		g := &closeGuard{rc: out.Body}
		out.Body = g
		defer g.Close()
	}
	on1xx := &interimWriter{w: w}
	var resp *http.Response
	if h.cfg.Transport != nil {
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, header textproto.MIMEHeader) error {
			on1xx.interim(code, http.Header(header))
			return nil
		}}
		out = out.WithContext(httptrace.WithClientTrace(r.Context(), trace))
		resp, err = h.cfg.Transport.RoundTrip(out)
	} else {
		resp, err = h.backend.do(r.Context(), info.target.conns, out, on1xx)
	}
	on1xx.finish()
	if err != nil {
		h.backendFailed(w, r, info, err)
		return
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		noteAnswer(resp, info)
		h.upgrade(w, r, out, resp, info)
		return
	}
	removeHopHeaders(resp.Header)
	noteAnswer(resp, info)
	rh := w.Header()
	for k, vv := range resp.Header {
		if prior, ok := rh[k]; ok {
			rh[k] = append(prior, vv...)
		} else {
			rh[k] = vv
		}
	}
	announced := len(resp.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range resp.Trailer {
			keys = append(keys, k)
		}
		rh.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(resp.StatusCode)
	if err := h.copyBody(w, resp); err != nil {
		resp.Body.Close()
		// The answer is under way: all that can be done is to abort it
		// (ReverseProxy: http.ErrAbortHandler). Outside a server (tests
		// calling ServeHTTP) there is nothing to abort.
		if r.Context().Value(http.ServerContextKey) != nil {
			panic(http.ErrAbortHandler)
		}
		return
	}
	resp.Body.Close() // fills resp.Trailer
	if len(resp.Trailer) > 0 {
		// Chunked, so that the trailers can follow.
		http.NewResponseController(w).Flush()
	}
	if len(resp.Trailer) == announced {
		copyHeader(rh, resp.Trailer)
		return
	}
	for k, vv := range resp.Trailer {
		k = http.TrailerPrefix + k
		for _, v := range vv {
			rh.Add(k, v)
		}
	}
}

// interimWriter passes the backend's interim answers (1xx but 101) on to
// the client until the final answer is under way.
type interimWriter struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	done bool
}

// interim writes one interim answer, unless finish was called.
func (i *interimWriter) interim(code int, header http.Header) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.done {
		return
	}
	rh := i.w.Header()
	copyHeader(rh, header)
	i.w.WriteHeader(code)
	clear(rh)
}

// finish stops the interim answers: the final one is next.
func (i *interimWriter) finish() {
	i.mu.Lock()
	i.done = true
	i.mu.Unlock()
}

func copyHeader(dst, src http.Header) {
	for k, vv := range src {
		for _, v := range vv {
			dst.Add(k, v)
		}
	}
}

// copyBody copies the answer's body to w, with a pooled buffer; an answer
// of unknown length, or an event stream, is flushed as it comes.
func (h *Handler) copyBody(w http.ResponseWriter, resp *http.Response) error {
	flush := resp.ContentLength == -1
	if !flush {
		if ct := resp.Header.Get("Content-Type"); ct != "" && strings.HasPrefix(strings.ToLower(ct), "text/event-stream") {
			if base, _, _ := mime.ParseMediaType(ct); base == "text/event-stream" {
				flush = true
			}
		}
	}
	var fl http.Flusher
	if flush {
		rc := http.NewResponseController(w)
		fl = flusherFunc(func() { rc.Flush() })
		rc.Flush() // the headers go at once, before any of the body
	}
	bp := h.buffers.Get().(*[]byte)
	defer h.buffers.Put(bp)
	buf := *bp
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			if !errors.Is(rerr, context.Canceled) {
				h.cfg.Logger.Error("backend answer unreadable during the body copy", "err", rerr)
			}
			return rerr
		}
	}
}

type flusherFunc func()

func (f flusherFunc) Flush() { f() }

// backendFailed answers a request the backend gave no answer to: 400 or
// 413 when the client's body was at fault, 502 otherwise, taking the
// backend out for a while (passive detection) unless the client went
// away or asked for what cannot be forwarded.
func (h *Handler) backendFailed(w http.ResponseWriter, r *http.Request, info *passInfo, err error) {
	if info.clientFault() {
		st, lb := info.faultStatus()
		if lb != nil {
			h.writeLog(info.client, r, []policy.LogLine{{Module: "http", Level: "info", Code: "AH01591",
				Subject: fmt.Sprintf("Read content length of %d is larger than the configured limit of %d", lb.n.Load(), lb.limit)}}, "")
		} else {
			h.cfg.Logger.Warn("client request body unreadable", "err", err, "uri", r.RequestURI)
		}
		w.WriteHeader(st)
		return
	}
	backend := ""
	if info.target != nil {
		backend = info.target.url.String()
		// No answer, and not because the client went away or asked for
		// what cannot be forwarded: leave this backend out for a while.
		var cp errClientProtocol
		if r.Context().Err() == nil && !errors.As(err, &cp) {
			h.cfg.Pool.failed(info.target)
		}
	}
	h.cfg.Logger.Error("backend request failed", "err", err, "uri", r.RequestURI, "backend", backend)
	if h.cfg.Metrics != nil {
		h.cfg.Metrics.backend.Inc()
	}
	w.WriteHeader(http.StatusBadGateway)
}

// noteAnswer notes that the backend answered a request, for the health
// checks (probe), and adds Digest's Authentication-Info.
func noteAnswer(resp *http.Response, info *passInfo) {
	if info.target != nil && resp.StatusCode < 500 {
		// At most one store a millisecond: every request would write the
		// same word otherwise.
		now := time.Now().UnixNano()
		if now-info.target.answered.Load() > int64(time.Millisecond) {
			info.target.answered.Store(now)
		}
	}
	// mod_auth_digest's add_auth_info: on an answer that is not an error.
	if info.authInfo != "" && resp.StatusCode < 400 {
		resp.Header.Set("Authentication-Info", info.authInfo)
	}
}

// upgrade turns a 101 answer into a tunnel between the client and the
// backend (httputil.ReverseProxy's handleUpgradeResponse).
func (h *Handler) upgrade(w http.ResponseWriter, r *http.Request, out *http.Request, resp *http.Response, info *passInfo) {
	reqUp, resUp := upgradeType(out.Header), upgradeType(resp.Header)
	fail := func(err error) {
		resp.Body.Close()
		h.backendFailed(w, r, info, err)
	}
	if !isPrint(resUp) {
		fail(fmt.Errorf("backend tried to switch to invalid protocol %q", resUp))
		return
	}
	if !strings.EqualFold(reqUp, resUp) {
		fail(fmt.Errorf("backend tried to switch protocol %q when %q was requested", resUp, reqUp))
		return
	}
	back, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		fail(errors.New("internal error: 101 switching protocols response with non-writable body"))
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if errors.Is(err, http.ErrNotSupported) {
		fail(fmt.Errorf("can't switch protocols using non-Hijacker ResponseWriter type %T", w))
		return
	}
	// The end of the request's context closes the backend's side.
	stop := make(chan struct{})
	go func() {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
		back.Close()
	}()
	defer close(stop)
	if err != nil {
		h.backendFailed(w, r, info, fmt.Errorf("Hijack failed on protocol switch: %v", err))
		return
	}
	defer conn.Close()
	copyHeader(w.Header(), resp.Header)
	resp.Header = w.Header()
	resp.Body = nil // the headers only: the body is the tunnel
	if err := resp.Write(brw); err != nil {
		h.cfg.Logger.Error("backend request failed", "err", fmt.Errorf("response write: %v", err), "uri", r.RequestURI)
		return
	}
	if err := brw.Flush(); err != nil {
		h.cfg.Logger.Error("backend request failed", "err", fmt.Errorf("response flush: %v", err), "uri", r.RequestURI)
		return
	}
	errc := make(chan error, 2)
	go tunnelCopy(errc, back, conn)
	go tunnelCopy(errc, conn, back)
	if err := <-errc; err == nil {
		<-errc
	}
}

// tunnelCopy copies src to dst, then half-closes dst.
func tunnelCopy(errc chan<- error, dst io.Writer, src io.Reader) {
	if _, err := io.Copy(dst, src); err != nil {
		errc <- err
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		errc <- cw.CloseWrite()
		return
	}
	errc <- errTunnelDone
}

var errTunnelDone = errors.New("hijacked connection copy complete")

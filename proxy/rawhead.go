package proxy

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// SetEnvIf reads headers_in (apache-access-semantics.md §7): the header
// fields as the client sent them, in order, names as spelled, fields of
// one name merged into the first. Go's server keeps neither order nor
// spelling, takes Host, Transfer-Encoding and (with chunked) Trailer out
// of Request.Header, and adds "Cache-Control: no-cache" beside "Pragma:
// no-cache". Where the policy has SetEnvIf rules that Go's form cannot
// answer (walk.Engine.WantsRawHeaders), the listener Handler.Listener
// returns keeps the head of each request a connection carries, as read
// from the wire: a parser that follows the connection's bytes as they go
// to Go's server, with the framing Go's server uses (Content-Length, or
// chunked with trailers), queues every request head, and the handler takes
// the head of the request it serves.
//
// The parser only accepts what both Apache (HttpProtocolOptions Strict)
// and Go read alike: CRLF line ends, no folded lines, HTTP/1.0 and 1.1,
// chunk-size lines of hex digits alone. Anything else stops it for the
// rest of the connection, whose requests are then decided on Go's form
// (goHeaders), which refuses (500) what it cannot know. A head is used
// only when its request line and its fields, read as Go reads them, are
// exactly the request Go's server gave the handler (rawHead.view), so
// that the parser and Go's server can never disagree about which bytes
// make which request without the head being dropped.

// maxRawHead bounds a request head: Go's DefaultMaxHeaderBytes and the
// 4096 bytes of slack its server allows (a longer head gets a 431).
const maxRawHead = http.DefaultMaxHeaderBytes + 4096

// maxRawQueue bounds the heads a connection keeps that no handler took
// (requests Go's server answers itself, such as OPTIONS *, or another
// handler in front of this one).
const maxRawQueue = 16

// maxChunkLine is Go's bound on a chunk-size line and on a trailer.
const maxChunkLine = 4096

// Listener returns ln with, on each connection it accepts while the
// policy wants them (walk.Engine.WantsRawHeaders), the request heads as
// the client sent them kept for SetEnvIf. Serve the handler's plain
// HTTP listener through it; TLS connections cannot be followed below Go's
// TLS server, and their requests are decided on Go's form of them.
func (h *Handler) Listener(ln net.Listener) net.Listener {
	return &headListener{Listener: ln, want: h.wantsRaw}
}

// wantsRaw reports whether a policy in force has SetEnvIf rules that need
// the request heads as sent.
func (h *Handler) wantsRaw() bool {
	a := h.active.Load()
	if a == nil || a.p == nil {
		return false
	}
	p := a.p
	return p.Legacy != nil && p.Legacy.WantsRawHeaders() ||
		p.LegacyEnforced != nil && p.LegacyEnforced.WantsRawHeaders() ||
		p.Native != nil && p.Native.WantsRawHeaders()
}

type headListener struct {
	net.Listener
	want func() bool
}

func (l *headListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil || !l.want() {
		return c, err
	}
	hc := &headConn{Conn: c}
	hc.local = &headAddr{Addr: c.LocalAddr(), c: hc}
	return hc, nil
}

// headConn is a connection whose request heads are kept. Go's server
// puts LocalAddr in each request's context (http.LocalAddrContextKey):
// that is how the handler finds the connection.
type headConn struct {
	net.Conn
	local *headAddr

	mu sync.Mutex // Go's server reads in the background while a handler runs
	p  headParser
}

// headAddr is the connection's local address, carrying the connection.
type headAddr struct {
	net.Addr
	c *headConn
}

func (c *headConn) LocalAddr() net.Addr { return c.local }

func (c *headConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.p.feed(b[:n])
		c.mu.Unlock()
	}
	return n, err
}

// CloseWrite lets Go's server half-close the connection, as it does a
// *net.TCPConn's.
func (c *headConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// take returns the head of r, the request Go's server read: the first
// queued head with r's request line, dropping those before it (requests
// no handler of this listener saw); nil when there is none.
func (c *headConn) take(r *http.Request) *rawHead {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := &c.p.heads
	for len(*q) > 0 {
		h := (*q)[0]
		(*q)[0] = nil
		*q = (*q)[1:]
		if h.method == r.Method && h.target == r.RequestURI && h.proto == r.Proto {
			return h
		}
	}
	return nil
}

// rawHeaders returns headers_in for r as SetEnvIf reads it: from the head
// its connection kept, when there is one that is exactly r; else Go's
// form of r; for a request a front proxy describes (forward-auth), what
// the front passed on.
func rawHeaders(r *http.Request, described bool) translate.Headers {
	if described {
		return (*frontHeaders)(r)
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*headAddr); ok {
		if h := a.c.take(r); h != nil {
			if v, ok := h.view(r); ok {
				return v
			}
		}
	}
	return (*goHeaders)(r)
}

type headState uint8

const (
	stHead      headState = iota // reading a request head
	stBody                       // n bytes of a Content-Length body left
	stChunkSize                  // reading a chunk-size line
	stChunkData                  // n bytes of chunk data left
	stChunkEnd                   // reading the CRLF after chunk data
	stTrailer                    // reading the trailer section
	stStopped                    // not following the connection any more
)

// headParser follows one connection's bytes.
type headParser struct {
	st        headState
	cur       []byte // stHead: the head so far; stChunkSize, stChunkEnd, stTrailer: the line(s) so far
	line      int    // stHead, stTrailer: where the current line starts in cur
	n         int64  // stBody, stChunkData: bytes left
	afterPOST bool   // the last request was a POST: Go skips up to 4 CR or LF before the next
	skipped   int
	last      bool // stop once this request's body is read
	heads     []*rawHead
}

var crlf = []byte("\r\n")

// feed follows b, the next bytes of the connection.
func (p *headParser) feed(b []byte) {
	for len(b) > 0 {
		switch p.st {
		case stStopped:
			return
		case stHead:
			if len(p.cur) == 0 && p.afterPOST && p.skipped < 4 && (b[0] == '\r' || b[0] == '\n') {
				// net/http (*conn).readRequest: RFC 7230 section 3
				// tolerance for old buggy clients.
				p.skipped++
				b = b[1:]
				continue
			}
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				p.cur = append(p.cur, b...)
				b = nil
				if len(p.cur) > maxRawHead {
					p.stop()
				}
				continue
			}
			p.cur = append(p.cur, b[:i+1]...)
			b = b[i+1:]
			if len(p.cur) > maxRawHead {
				p.stop()
				continue
			}
			l := p.cur[p.line:]
			if len(l) < 2 || l[len(l)-2] != '\r' {
				p.stop() // a bare LF: Go reads it as a line end, Apache refuses it
				continue
			}
			if len(l) > 2 {
				p.line = len(p.cur)
				continue
			}
			if p.line == 0 {
				p.stop() // an empty request line
				continue
			}
			p.head()
		case stBody, stChunkData:
			k := int64(len(b))
			if k > p.n {
				k = p.n
			}
			p.n -= k
			b = b[k:]
			if p.n == 0 {
				if p.st == stBody {
					p.next()
				} else {
					p.st = stChunkEnd
				}
			}
		case stChunkSize, stChunkEnd:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				p.cur = append(p.cur, b...)
				b = nil
				if len(p.cur) > maxChunkLine {
					p.stop()
				}
				continue
			}
			p.cur = append(p.cur, b[:i+1]...)
			b = b[i+1:]
			l := p.cur
			p.cur = p.cur[:0]
			if p.st == stChunkEnd {
				if len(l) != 2 || l[0] != '\r' {
					p.stop()
					continue
				}
				p.st = stChunkSize
				continue
			}
			n, ok := chunkSize(l)
			switch {
			case !ok:
				p.stop()
			case n == 0:
				p.st, p.line = stTrailer, 0
			default:
				p.st, p.n = stChunkData, n
			}
		case stTrailer:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				p.cur = append(p.cur, b...)
				b = nil
				if len(p.cur) > maxChunkLine {
					p.stop()
				}
				continue
			}
			p.cur = append(p.cur, b[:i+1]...)
			b = b[i+1:]
			l := p.cur[p.line:]
			switch {
			case len(p.cur) > maxChunkLine || len(l) < 2 || l[len(l)-2] != '\r':
				p.stop()
			case len(l) > 2:
				p.line = len(p.cur)
			default:
				p.cur, p.line = p.cur[:0], 0
				p.next()
			}
		}
	}
}

// next starts on the next request's head.
func (p *headParser) next() {
	p.st = stHead
	if p.last {
		p.stop()
	}
}

// stop gives up following the connection.
func (p *headParser) stop() {
	p.st, p.cur = stStopped, nil
}

// chunkSize reads a chunk-size line: hex digits and CRLF, nothing else
// (no extension, no white space; Go accepts a few more forms, this parser
// stops at them).
func chunkSize(l []byte) (int64, bool) {
	if len(l) < 3 || len(l) > 16+2 || l[len(l)-2] != '\r' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(l[:len(l)-2]), 16, 63)
	if err != nil || l[0] == '+' {
		return 0, false
	}
	return int64(n), true
}

// rawHead is one request head as sent.
type rawHead struct {
	method, target, proto string
	fields                []translate.HeaderField // in order, names as spelled, values without surrounding blanks
	chunked               bool
}

// head reads the head in cur, queues it, and sets what follows: its body
// as Go's server frames it (net/http readTransfer).
func (p *headParser) head() {
	text := string(p.cur[:len(p.cur)-2])
	p.cur, p.line, p.skipped = p.cur[:0], 0, 0
	reqLine, rest, _ := strings.Cut(text, "\r\n")
	method, rest2, ok1 := strings.Cut(reqLine, " ")
	target, proto, ok2 := strings.Cut(rest2, " ")
	if !ok1 || !ok2 || method == "" || target == "" || proto != "HTTP/1.1" && proto != "HTTP/1.0" ||
		strings.IndexByte(text, '\r') != strings.Index(text, "\r\n") {
		p.stop()
		return
	}
	h := &rawHead{method: method, target: target, proto: proto}
	var te, cl []string
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\r\n")
		if strings.IndexByte(line, '\r') >= 0 {
			p.stop() // a bare CR
			return
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !validFieldName(name) {
			p.stop() // also a folded line, which starts with a blank
			return
		}
		value = strings.Trim(value, " \t")
		h.fields = append(h.fields, translate.HeaderField{Name: name, Value: value})
		switch {
		case regex.EqualFold(name, "Transfer-Encoding"):
			te = append(te, value)
		case regex.EqualFold(name, "Content-Length"):
			cl = append(cl, value)
		}
	}
	p.afterPOST = method == "POST"
	if len(p.heads) == maxRawQueue {
		copy(p.heads, p.heads[1:])
		p.heads = p.heads[:maxRawQueue-1]
	}
	p.heads = append(p.heads, h)
	if proto == "HTTP/1.0" {
		te = nil // Go ignores Transfer-Encoding on HTTP/1.0 (issue 12785)
	}
	switch {
	case len(te) > 0:
		if len(te) != 1 || !regex.EqualFold(te[0], "chunked") {
			p.stop() // Go answers 501 and closes
			return
		}
		h.chunked = true
		p.st = stChunkSize
	case len(cl) > 0:
		for _, v := range cl[1:] {
			if v != cl[0] {
				p.stop() // Go answers 400
				return
			}
		}
		n, err := strconv.ParseUint(cl[0], 10, 63)
		if err != nil || cl[0][0] == '+' {
			p.stop()
			return
		}
		p.st, p.n = stBody, int64(n)
		if n == 0 {
			p.st = stHead
		}
	default:
		p.st = stHead
	}
	if method == http.MethodConnect || headerHas(h.fields, "Upgrade") {
		// What follows may be another protocol (a WebSocket once the
		// backend agrees): stop after this request's body.
		p.last = true
		if p.st == stHead {
			p.stop()
		}
	}
}

func headerHas(fs []translate.HeaderField, name string) bool {
	for _, f := range fs {
		if regex.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}

// validFieldName reports a field name of token characters (RFC 9110
// tchar), as Go's server and Apache's strict parser require.
func validFieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// view checks that h is exactly r, the request Go's server read from the
// same bytes (its request line, and its fields once Go has done with
// them what its server does), and returns headers_in as Apache has it
// for h. ok is false when h is not r.
func (h *rawHead) view(r *http.Request) (translate.Headers, bool) {
	if h.method != r.Method || h.target != r.RequestURI || h.proto != r.Proto {
		return nil, false
	}
	// What Go's server makes of the fields (readRequest, readTransfer,
	// fixPragmaCacheControl).
	want := make(http.Header, len(h.fields))
	for _, f := range h.fields {
		want.Add(f.Name, f.Value)
	}
	hosts := want["Host"]
	delete(want, "Host")
	delete(want, "Transfer-Encoding")
	if h.chunked {
		delete(want, "Content-Length")
		delete(want, "Trailer")
	} else if cl := want["Content-Length"]; len(cl) > 1 {
		want["Content-Length"] = cl[:1]
	}
	if p := want["Pragma"]; len(p) > 0 && p[0] == "no-cache" && want["Cache-Control"] == nil {
		want["Cache-Control"] = []string{"no-cache"}
	}
	if len(want) != len(r.Header) {
		return nil, false
	}
	for k, vs := range want {
		got := r.Header[k]
		if len(got) != len(vs) {
			return nil, false
		}
		for i := range vs {
			if got[i] != vs[i] {
				return nil, false
			}
		}
	}
	absolute := !strings.HasPrefix(h.target, "/") && h.target != "*"
	if !absolute && (len(hosts) > 1 || len(hosts) == 1 && hosts[0] != r.Host) ||
		h.chunked != (len(r.TransferEncoding) == 1 && r.TransferEncoding[0] == "chunked") {
		return nil, false
	}
	// What Apache makes of them (ap_read_request, ap_check_request_header).
	fields := translate.MergeFields(h.fields)
	v := &rawView{fields: fields, host: -1}
	te, cl := -1, -1
	for i, f := range fields {
		switch {
		case regex.EqualFold(f.Name, "Transfer-Encoding"):
			te = i
		case regex.EqualFold(f.Name, "Content-Length"):
			cl = i
		case regex.EqualFold(f.Name, "Host"):
			v.host = i
		}
	}
	if te >= 0 && cl >= 0 || absolute && v.host >= 0 {
		// Apache drops Content-Length beside Transfer-Encoding, and
		// replaces the Host field of an absolute-form request by the
		// target's host: a copy, since fields may be h's.
		fields = append(translate.HeaderFields(nil), fields...)
		if absolute && v.host >= 0 {
			fields[v.host].Value, v.hostOK = absoluteHost(r.URL.Host)
		}
		if te >= 0 && cl >= 0 {
			fields = append(fields[:cl], fields[cl+1:]...)
			if v.host > cl {
				v.host--
			}
		}
		v.fields = fields
	}
	if !absolute {
		v.hostOK = true
	}
	return v, true
}

// rawView is headers_in from a request's head as sent (Headers). The
// Host field of an absolute-form target may be one orderly cannot make
// as Apache does (hostOK false).
type rawView struct {
	fields translate.HeaderFields
	host   int // the Host field's index, or -1
	hostOK bool
}

// Get implements translate.Headers.
func (v *rawView) Get(name string) (string, bool, translate.Exactness) {
	val, found, k := v.fields.Get(name)
	if found && !v.hostOK && regex.EqualFold(name, "Host") {
		return "", false, translate.Unknown
	}
	return val, found, k
}

// LastMatch implements translate.Headers.
func (v *rawView) LastMatch(re, _ *regex.Regexp) (string, bool, translate.Exactness) {
	last := -1
	for i, f := range v.fields {
		ok, err := re.MatchString(f.Name)
		if err != nil {
			return "", false, translate.Unknown // the regex did not finish
		}
		if ok {
			last = i
		}
	}
	switch {
	case last < 0:
		return "", false, translate.Exact
	case last == v.host && !v.hostOK:
		return "", false, translate.Unknown
	}
	return v.fields[last].Value, true, translate.Exact
}

// absoluteHost is the Host field Apache gives a request whose target is
// in absolute form (server/vhost.c construct_host_header, with
// fix_hostname_non_v6): the target's host name in lower case, less one
// final dot, and ":" and the port as written when the target has one.
// ok is false for what orderly does not make as Apache does (an IPv6
// literal, a name Apache refuses or changes otherwise).
func absoluteHost(hostport string) (string, bool) {
	host, port, hasPort := hostport, "", false
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		host, port, hasPort = hostport[:i], hostport[i+1:], true
	}
	if host == "" || strings.Contains(host, "..") || strings.TrimLeft(host, "0123456789") == "" {
		return "", false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			return "", false
		}
	}
	if strings.TrimLeft(port, "0123456789") != "" {
		return "", false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if hasPort {
		host += ":" + port
	}
	return host, true
}

// goHeaders is Go's form of a request as translate.Headers, for requests
// whose head was not kept: Request.Header with what Go's server took out
// of it put back (Host, Transfer-Encoding), and Unknown where Go's form
// cannot tell what Apache has: the spelling of a chunked request's
// Transfer-Encoding (known but for case), its Trailer field, a
// Cache-Control that Go may have added, the Host field of an HTTP/1.0
// absolute-form request, and which of several header names a regex
// matches last. An HTTP/1.0 request's Transfer-Encoding, which Go drops,
// is taken to be absent, and an HTTP/1.0 request's empty Host field too.
type goHeaders http.Request

// Get implements translate.Headers.
func (g *goHeaders) Get(name string) (string, bool, translate.Exactness) {
	r := (*http.Request)(g)
	switch {
	case regex.EqualFold(name, "Host"):
		if r.URL == nil || r.URL.Host == "" || strings.HasPrefix(r.RequestURI, "/") {
			return r.Host, r.Host != "", translate.Exact
		}
		if !r.ProtoAtLeast(1, 1) {
			return "", false, translate.Unknown // whether the client sent one
		}
		if v, ok := absoluteHost(r.URL.Host); ok {
			return v, true, translate.Exact
		}
		return "", false, translate.Unknown
	case regex.EqualFold(name, "Transfer-Encoding"):
		if len(r.TransferEncoding) > 0 {
			return r.TransferEncoding[0], true, translate.ExactFold
		}
	case regex.EqualFold(name, "Trailer"):
		if r.Trailer != nil {
			return "", false, translate.Unknown
		}
	case regex.EqualFold(name, "Cache-Control"):
		if maybeAddedCacheControl(r.Header) {
			return "", false, translate.Unknown
		}
	}
	return translate.HeaderMap(r.Header).Get(name)
}

// maybeAddedCacheControl reports a Cache-Control field that Go's server
// may have added (net/http fixPragmaCacheControl).
func maybeAddedCacheControl(h http.Header) bool {
	p, cc := h["Pragma"], h["Cache-Control"]
	return len(p) > 0 && p[0] == "no-cache" && len(cc) == 1 && cc[0] == "no-cache"
}

// LastMatch implements translate.Headers: known only when at most one
// name can match (and then but for the name's case).
func (g *goHeaders) LastMatch(_, fold *regex.Regexp) (string, bool, translate.Exactness) {
	r := (*http.Request)(g)
	n, name := 0, ""
	failed := false
	match := func(s string) bool {
		ok, err := fold.MatchString(s)
		failed = failed || err != nil
		return ok
	}
	for k := range r.Header {
		if match(k) {
			n, name = n+1, k
		}
	}
	// The fields Go's server took out of Request.Header.
	if _, found, k := g.Get("Host"); (found || k == translate.Unknown) && match("Host") {
		n, name = n+1, "Host"
	}
	if len(r.TransferEncoding) > 0 && match("Transfer-Encoding") {
		n, name = n+1, "Transfer-Encoding"
	}
	if r.Trailer != nil && match("Trailer") {
		n, name = n+1, "Trailer"
	}
	if failed {
		return "", false, translate.Unknown // the regex did not finish
	}
	switch n {
	case 0:
		return "", false, translate.Exact
	case 1:
		if v, found, k := g.Get(name); k == translate.Exact {
			return v, found, translate.ExactFold
		}
	}
	return "", false, translate.Unknown
}

// frontHeaders is headers_in for a request a front proxy describes to
// the forward-auth endpoint (ForwardAuth): the front passes the client's
// fields on, but puts its own framing and connection fields in place of
// the client's (nginx's proxy module: Content-Length, Transfer-Encoding,
// Connection, Keep-Alive, TE, Expect, Upgrade), adds fields of its own,
// and Go's server keeps no order: those fields, and header-name regexes
// that any name can match, are Unknown. Host is the X-Forwarded-Host the
// front sent, the Host field the legacy server behind it saw.
type frontHeaders http.Request

// Get implements translate.Headers.
func (f *frontHeaders) Get(name string) (string, bool, translate.Exactness) {
	r := (*http.Request)(f)
	switch {
	case regex.EqualFold(name, "Host"):
		return r.Host, r.Host != "", translate.Exact
	case frontOwn(name), regex.EqualFold(name, "Cache-Control") && maybeAddedCacheControl(r.Header):
		return "", false, translate.Unknown
	}
	return translate.HeaderMap(r.Header).Get(name)
}

// frontOwn reports the fields a front proxy sets itself rather than pass
// the client's on.
func frontOwn(name string) bool {
	for _, n := range [...]string{"Content-Length", "Transfer-Encoding", "Trailer", "Connection", "Keep-Alive", "TE", "Expect", "Upgrade", "Proxy-Connection"} {
		if regex.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// LastMatch implements translate.Headers.
func (f *frontHeaders) LastMatch(_, fold *regex.Regexp) (string, bool, translate.Exactness) {
	r := (*http.Request)(f)
	// A match, or a regex that did not finish: Unknown either way.
	match := func(s string) bool {
		ok, err := fold.MatchString(s)
		return ok || err != nil
	}
	if match("Host") || match("Transfer-Encoding") || match("Content-Length") {
		return "", false, translate.Unknown
	}
	for k := range r.Header {
		if match(k) {
			return "", false, translate.Unknown
		}
	}
	return "", false, translate.Exact
}

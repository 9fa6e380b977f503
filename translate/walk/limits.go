package walk

import (
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// The phases of a request around the access decision that can refuse or
// limit it (translate/limits.go reads their directives):
//
//   - reading the request (server/protocol.c ap_read_request): with the
//     configuration of the server the connection's address chose, before
//     the host is chosen by name: HttpProtocolOptions RegisteredMethods
//     (501), the Host header (fix_hostname, 400), StrictHostCheck (400).
//     The request line, the header fields and an HTTP/1.1 request whose
//     Host is empty are refused in the proxy (proxy/limits_head.go), by
//     the same server's limits (RequestLimits);
//   - the body: LimitRequestBody of the configuration in force
//     (Result.BodyLimit), which the proxy applies.
//
// The redirects of translate_name and fixups, and ErrorDocument URLs, are
// in redirect.go.

// Decide decides req as Apache does: the request itself, the virtual
// host, the redirects of translate_name, the section walk and access
// control (with the redirects of fixups), and the ErrorDocument of a
// refusal. tr may be nil.
func (e *Engine) Decide(req *Request, tr policy.Tracer) Result {
	base := e.baseServer()
	if res, ok := base.readRequest(req, e); ok {
		res.engine = base
		base.errorDocument(req, &res)
		return res
	}
	h := e.hostFor(req)
	req.rw = rewriteRun{target: req.Target}
	var res Result
	ok := false
	if !h.serverRewriteOn() {
		res, ok = h.translateRedirect(req)
	}
	if !ok {
		res = h.decide(req, tr)
	}
	if res.Rewritten != nil {
		// orderly decides on the rewritten target, and forwards the
		// request as the client sent it: the backend rewrites it again.
		_, res.clientURI, _ = h.target(req.Target)
	}
	res.engine = h
	h.errorDocument(req, &res)
	h.countNecessary(req, &res)
	return res
}

// baseServer is the server the address the request reached chose
// (conn->base_server, ap_update_vhost_given_ip): the first virtual host
// of the address, else the main server.
func (e *Engine) baseServer() *Engine {
	if set := e.addressHosts(); len(set) > 0 {
		return set[0].e
	}
	return e
}

// addressHosts are the virtual hosts bound to the legacy address: those
// naming the IP exactly, else the wildcard ones, in configuration order.
func (e *Engine) addressHosts() []hostEngine {
	return e.hostSets[tlsAny].hosts
}

// RequestLimits are the limits Apache reads a request with: those of the
// server the address chose, whichever host the Host header names.
func (e *Engine) RequestLimits() *translate.ServerLimits {
	return &e.baseServer().cfg.Limits
}

// readRequest is what ap_read_request refuses (e is the base server;
// top the engine with the virtual hosts, for StrictHostCheck).
func (e *Engine) readRequest(req *Request, top *Engine) (Result, bool) {
	var res Result
	lim := &e.cfg.Limits
	if lim.Protocol.Registered() && e.cfg.Methods.Number(req.Method) == policy.MethodInvalid {
		// AH02423 (debug): Unrecognized HTTP method (disallowed by RegisteredMethods).
		res.Status, res.Layer = http.StatusNotImplemented, policy.LayerRequest
		return res, true
	}
	strict := lim.Protocol.Strict()
	if strict && userinfo(req.Target) {
		// AH02422 (debug): URI must not contain a username/password.
		res.Status, res.Layer = http.StatusBadRequest, policy.LayerRequest
		return res, true
	}
	host, ok := fixHostname(req.Host, strict)
	if !ok {
		// AH00550 (debug): Client sent malformed Host header.
		res.Status, res.Layer = http.StatusBadRequest, policy.LayerRequest
		return res, true
	}
	if lim.StrictHostCheck == 1 && host != "" && !top.hostMatches(host) {
		res.Status, res.Layer = http.StatusBadRequest, policy.LayerRequest
		res.AddLogs([]policy.LogLine{top.strictHostLog(host)})
		return res, true
	}
	return res, false
}

// userinfo reports whether an absolute-form target names a user
// (apr_uri_parse's user or password).
func userinfo(target string) bool {
	i := strings.Index(target, "://")
	if i < 0 || strings.HasPrefix(target, "/") {
		return false
	}
	auth := target[i+3:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	return strings.Contains(auth, "@")
}

// fixHostname is fix_hostname (server/vhost.c): the host name of a Host
// header, lower case, without its port and trailing dot, and whether
// Apache accepts it; under Strict (HttpProtocolOptions) also
// strict_hostname_check. An empty header is no host.
func fixHostname(h string, strict bool) (string, bool) {
	if h == "" {
		return "", true
	}
	digits := true
	for i := 0; i < len(h); i++ {
		if h[i] < '0' || h[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		return h, !strict // AH02416: purely numeric host names not allowed
	}
	host, ok := parseAddrPort(h)
	if !ok {
		return "", false
	}
	if strings.HasPrefix(h, "[") {
		return strings.ToLower(host), v6Literal(host)
	}
	upper := false
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case c == '.' && i+1 < len(host) && host[i+1] == '.', c == '/', c == '\\':
			return "", false
		case 'A' <= c && c <= 'Z':
			upper = true
		}
	}
	if upper {
		host = asciiLower(host) // apr_tolower: ASCII only, as in the C locale
	}
	host = strings.TrimSuffix(host, ".")
	if strict && !strictHostname(host) {
		return "", false // AH02415
	}
	return host, true
}

// asciiLower lower-cases the ASCII letters of s and leaves every other
// byte as it is.
func asciiLower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// parseAddrPort is apr_parse_addr_port for a Host header: the host
// without its port, and false where APR refuses it (a port out of range,
// a bracketed address that apr_inet_pton does not take for IPv6, a scope
// ID, which fix_hostname refuses).
func parseAddrPort(s string) (string, bool) {
	last := len(s) - 1
	ch := last
	for ch >= 0 && s[ch] >= '0' && s[ch] <= '9' {
		ch--
	}
	if ch >= 0 && s[ch] == ':' && ch < last {
		if ch == 0 {
			return "", false
		}
		if p := atoiC(s[ch+1:]); p < 1 || p > 65535 {
			return "", false
		}
		s = s[:ch]
	}
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") || strings.IndexByte(s, ']') != len(s)-1 || strings.Contains(s, "%") {
			return "", false
		}
		inner := s[1 : len(s)-1]
		if !inetPton6(inner) {
			return "", false
		}
		return inner, true
	}
	return s, true
}

// atoiC is C's atoi over the digits of a port, as apr_parse_addr_port
// reads it on Linux: strtol, which saturates at LONG_MAX, cast to a
// 32-bit int, so that "4294967376" is port 80 (2^32 + 80) and a longer
// run of digits is -1 (TestHostNameApache).
func atoiC(digits string) int32 {
	var n int64
	for i := 0; i < len(digits); i++ {
		d := int64(digits[i] - '0')
		if n > (math.MaxInt64-d)/10 {
			return -1 // int32(LONG_MAX)
		}
		n = n*10 + d
	}
	return int32(n)
}

// inetPton6 reports whether apr_inet_pton (APR's network_io/unix/inet_pton.c,
// after BIND 4.9.4) takes s for an IPv6 address. It is laxer than
// RFC 4291 and netip in two ways Apache shows (TestHostNameApache): a
// group may have more than four hex digits when its value fits in 16 bits
// ("00001"), and a colon may end the address after "::" ("1::2:"); an
// embedded IPv4 address may have leading zeros ("::ffff:1.2.3.04").
func inetPton6(s string) bool {
	if strings.HasPrefix(s, ":") && !strings.HasPrefix(s, "::") {
		return false
	}
	if strings.HasPrefix(s, ":") {
		s = s[1:]
	}
	words, val, sawDigit, gap := 0, 0, false, false
	tok := 0 // start of the current group
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
			val = val<<4 | hexVal(c)
			if val > 0xffff {
				return false
			}
			sawDigit = true
		case c == ':':
			tok = i + 1
			if !sawDigit {
				if gap {
					return false
				}
				gap = true
				continue
			}
			if words == 8 {
				return false
			}
			words++
			sawDigit, val = false, 0
		case c == '.' && words <= 6 && inetPton4(s[tok:]):
			return words+2 == 8 || gap
		default:
			return false
		}
	}
	if sawDigit {
		if words == 8 {
			return false
		}
		words++
	}
	return words == 8 || gap
}

// inetPton4 is apr_inet_pton's inet_pton4: four decimal parts of at most
// 255 each, leading zeros allowed.
func inetPton4(s string) bool {
	parts, val, sawDigit := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			val = val*10 + int(c-'0')
			if val > 255 {
				return false
			}
			if !sawDigit {
				parts++
				if parts > 4 {
					return false
				}
				sawDigit = true
			}
		case c == '.' && sawDigit:
			if parts == 4 {
				return false
			}
			val, sawDigit = 0, false
		default:
			return false
		}
	}
	return parts == 4
}

func hexVal(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// v6Literal is fix_hostname_v6_literal's check.
func v6Literal(h string) bool {
	double := false
	for i := 0; i < len(h); i++ {
		c := h[i]
		next := byte(0)
		if i+1 < len(h) {
			next = h[i+1]
		}
		switch {
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
		case c == ':':
			if next == ':' {
				if double {
					return false
				}
				double = true
			} else if next == '.' {
				return false
			}
		case c == '.':
			if next == ':' || next == '.' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// strictHostname is strict_hostname_check: letters, digits, "-", "_"
// and dots; a dotted-decimal name has four parts without leading zeros;
// otherwise the last label starts with a letter.
func strictHostname(h string) bool {
	dotted, zeros, dots := true, false, 0
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_':
			dotted = false
		case c == '.':
			dots++
			if i+2 < len(h) && h[i+1] == '0' && h[i+2] >= '0' && h[i+2] <= '9' {
				zeros = true
			}
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	if dotted {
		if h[0] == '.' || len(h) > 1 && h[0] == '0' && h[1] >= '0' && h[1] <= '9' {
			zeros = true
		}
		return !zeros && dots == 3
	}
	if i := strings.LastIndexByte(h, '.'); i >= 0 && i+1 < len(h) {
		c := h[i+1]
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	return true
}

// hostMatches is update_server_from_aliases under StrictHostCheck: the
// host names a ServerName or ServerAlias of a virtual host of the
// address (or its <VirtualHost> address as written), or, with none, the
// main server's ServerName.
func (e *Engine) hostMatches(host string) bool {
	set := e.addressHosts()
	if len(set) == 0 {
		return host == e.cfg.Limits.Name
	}
	for _, h := range set {
		if h.v.Name == host || h.v.Name == "" && host == e.cfg.Limits.Name {
			return true
		}
		for _, a := range h.v.Aliases {
			if a == host || strings.ContainsAny(a, "*?[") && fnmatchFold(a, host) {
				return true
			}
		}
	}
	for _, h := range set {
		for _, a := range h.v.Addrs {
			if !a.Wildcard && a.IP.String() == host {
				return true
			}
		}
	}
	return false
}

// strictHostLog is the warning StrictHostCheck writes (AH10156, AH10157).
func (e *Engine) strictHostLog(host string) policy.LogLine {
	set := e.addressHosts()
	if len(set) == 0 {
		return policy.LogLine{Module: "core", Code: "AH10156", Subject: "Requested hostname '" + host + "' did not match any ServerName/ServerAlias in the global server configuration "}
	}
	v := set[0].v
	return policy.LogLine{Module: "core", Code: "AH10157", Subject: "Requested hostname '" + host + "' did not match any ServerName/ServerAlias in the matching virtual host (default vhost for current connection is " + v.Pos.File + ":" + strconv.Itoa(v.Pos.Line) + ")"}
}

// BodyLimit is LimitRequestBody for the answer res stands for (0: none),
// and whether Apache reads the body against it before that answer:
// always for a request it serves (its handler reads or discards the
// body); for a refusal, redirect or error, only Apache 2.4, which
// discards the body before it answers unless the status closes the
// connection (ap_die; 400, 413, 414, 500, 501, ...). A request whose
// body is over the limit is then answered 413.
func (r *Result) BodyLimit() (int64, bool) {
	e := r.engine
	if e == nil {
		return 0, false
	}
	v22 := e.cfg.Semantics == translate.Legacy22
	if r.Status != 0 && (v22 || dropsConnection(r.Status)) {
		return 0, false
	}
	sections := r.Sections
	if r.Status == 0 && r.Index != "" {
		// mod_dir serves the index with its subrequest's configuration
		// (ap_internal_fast_redirect).
		var sub Result
		shareWalk(&sub, r)
		if _, _, st := e.walk(r.URI+r.Index, &sub); st == 0 {
			sections = sub.Sections
		}
	}
	n := int64(-1)
	if l := e.dirLimits(sections); l != nil {
		n = l.Body
	}
	if n < 0 {
		n = defaultBodyLimit(e.cfg)
	}
	return n, n > 0
}

// defaultBodyLimit is LimitRequestBody where nothing sets it: 1 GiB from
// Apache 2.4.54, none before.
func defaultBodyLimit(cfg *translate.Config) int64 {
	if cfg.Semantics == translate.Legacy22 {
		return 0
	}
	v := cfg.Version
	if v == "" {
		v = translate.DefaultVersion(cfg.Semantics)
	}
	var maj, min, patch int
	parts := strings.SplitN(v, ".", 3)
	if len(parts) == 3 {
		maj, _ = strconv.Atoi(parts[0])
		min, _ = strconv.Atoi(parts[1])
		patch, _ = strconv.Atoi(strings.TrimRightFunc(parts[2], func(r rune) bool { return r < '0' || r > '9' }))
	}
	if maj > 2 || maj == 2 && (min > 4 || min == 4 && patch >= 54) {
		return 1 << 30
	}
	return 0
}

// dropsConnection is ap_status_drops_connection.
func dropsConnection(status int) bool {
	switch status {
	case 400, 408, 411, 413, 414, 500, 503, 501:
		return true
	}
	return false
}

// dirLimits merges what the server and sections set of LimitRequestBody
// (Defaults first, then the sections in merge order).
func (e *Engine) dirLimits(sections []*translate.Section) *translate.DirLimits {
	l := e.cfg.Defaults.Limits
	for _, s := range sections {
		if s.Conf.Limits != nil {
			l = translate.MergeDirLimits(l, s.Conf.Limits)
		}
	}
	return l
}

// HostName is the host name Apache 2.4 takes from a Host header
// (fix_hostname, server/vhost.c, without HttpProtocolOptions Strict):
// lower case, without its port and trailing dot, an IPv6 literal without
// its brackets; and whether Apache accepts the header (it answers 400
// otherwise). An empty header is no host. It is the one normalisation of
// the Host header: virtual-host selection here and orderly's scopes use
// it (TestHostNameApache in internal/differential runs it against Apache).
func HostName(h string) (string, bool) { return fixHostname(h, false) }

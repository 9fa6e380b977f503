// Package proxy is orderly's request path: it finds the client address,
// asks the walk engine for Apache's decision, answers refusals the way
// Apache 2.4 would (status, WWW-Authenticate, error-log line), and
// reverse-proxies everything else to the 2.4 backend. It takes a plain
// Config and never sees HCL.
//
// proxy imports policy and translate/walk; nothing below it imports proxy.
package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// DefaultUserHeader is the request header that carries the authenticated
// user's name to the backend.
const DefaultUserHeader = "X-Remote-User"

// Config is the runtime configuration of the request path.
type Config struct {
	// Backend is the 2.4 server, when Pool is nil.
	Backend *url.URL
	// Pool, when set, is the backend URLs with their health checks; its
	// Run is the caller's to start.
	Pool           *Pool
	TrustedProxies []netip.Prefix
	// UserHeader names the header that tells the backend who authenticated.
	// orderly always removes any copy the client sent.
	UserHeader string
	// ErrorLog receives Apache 2.4 error-log lines for refusals (AH01797,
	// AH01630, AH01617, ...). Nil discards them. ErrorLog, AccessLog and
	// ShadowLog are written from many requests at once, one or more whole
	// lines a Write and no lock around it: each must be safe for
	// concurrent use and keep a Write whole (orderly serve's
	// logwriter.Writer, an *os.File; a bytes.Buffer serves a test that
	// sends one request at a time).
	ErrorLog io.Writer
	Logger   *slog.Logger
	// Transport, when set, sends the requests to the backend in place of
	// orderly's own backend client (tests).
	Transport http.RoundTripper
	// BackendTimeout bounds the wait for the backend's answer headers,
	// from the end of the request's write (60 s when 0).
	BackendTimeout time.Duration
	// Metrics, when set, count decisions, latency and backend errors.
	Metrics *Metrics
	// Resolver verifies client host names for host rules; nil means no
	// client ever has a name, so host rules never match.
	Resolver *Resolver
	// AccessLog, when set, receives one line per request in Apache's
	// combined format followed by what orderly decided: the deciding
	// rule's ID, the decision and the policy generation (written
	// concurrently: see ErrorLog).
	AccessLog io.Writer
	// Mode is enforce (the default), shadow or observe.
	Mode Mode
	// ShadowLog, when set in shadow mode, receives a JSON line for each
	// disagreement (at most ShadowSampleRate a second; credentials and
	// cookies redacted; written concurrently: see ErrorLog).
	ShadowLog io.Writer
	// RuleHeader, when set, names a response header that carries the
	// deciding rule's ID on orderly's refusals, so that they can be told
	// apart from the backend's.
	RuleHeader string
	// MaxPerClient bounds the requests in flight per client address
	// (429 beyond); 0 is no bound.
	MaxPerClient int
	// MaxRequestLine bounds the request line in bytes (414 beyond, as
	// Apache's LimitRequestLine); 0 is no bound.
	MaxRequestLine int
	// GuardToken, when set, is sent to the backend in GuardHeader with
	// every forwarded request (guard.go). Any copy a client sent is
	// always removed.
	GuardToken string
	// ForwardedTLS: a request from one of TrustedProxies is taken to have
	// come over TLS, with the client certificate, that its
	// X-Forwarded-Proto and X-Forwarded-Client-Cert headers say
	// (tlsinfo.go).
	ForwardedTLS bool
}

// Mode is what orderly does with its decisions.
type Mode string

const (
	// ModeEnforce: orderly refuses what the legacy rules refuse.
	ModeEnforce Mode = "enforce"
	// ModeShadow: orderly forwards every request and compares its
	// decision with the backend's answer (the backend still enforces the
	// legacy rules), counting every disagreement.
	ModeShadow Mode = "shadow"
	// ModeObserve: orderly forwards every request and only counts.
	ModeObserve Mode = "observe"
)

// active is the configuration in force and its generation (1 at start,
// one more per swap), loaded together so that a request's log names the
// policy that decided it.
type active struct {
	p   *Policies
	gen uint64
}

// Handler is the enforcing reverse proxy.
type Handler struct {
	cfg     Config
	active  atomic.Pointer[active]
	backend *backendClient
	shadow  *shadowLog
	limit   *clientLimiter
	// Fixed at New: the canonical user header, the guard header's value
	// (nil without a token), the answers' copy buffers.
	userKey string
	guard   []string
	buffers sync.Pool

	noBackend    atomic.Int64 // 502s for want of a backend since the last log line
	noBackendLog atomic.Int64 // when that line was last written (unix nanoseconds)
}

// NewTransport returns a transport tuned for one backend: no proxy from
// the environment, enough idle connections for a busy front. The health
// checks and the guard probes use one; requests go through orderly's own
// backend client (backendclient.go), which has the same settings.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   3 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256, // a busy front reuses them rather than open and close hundreds a second
		IdleConnTimeout:       2 * time.Minute,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// New returns a Handler deciding with e, the legacy policy, in cfg.Mode
// everywhere.
func New(cfg Config, e *walk.Engine) *Handler {
	return NewWith(cfg, &Policies{Legacy: e})
}

// NewWith returns a Handler deciding with p.
func NewWith(cfg Config, p *Policies) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.UserHeader == "" {
		cfg.UserHeader = DefaultUserHeader
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeEnforce
	}
	if cfg.Pool == nil {
		cfg.Pool = NewPool([]*url.URL{cfg.Backend}, HealthCheck{NoPassive: true})
	}
	logger := cfg.Logger
	metrics := cfg.Metrics
	cfg.Pool.onChange = func(u *url.URL, up bool) {
		if up {
			logger.Info("backend up", "backend", u.Redacted())
		} else {
			logger.Warn("backend down: left out until it answers again", "backend", u.Redacted())
		}
		if metrics != nil {
			metrics.backendState(u, up)
		}
	}
	if metrics != nil {
		for _, u := range cfg.Pool.URLs() {
			metrics.backendState(u, true)
		}
	}
	h := &Handler{cfg: cfg, shadow: &shadowLog{w: cfg.ShadowLog}, limit: newClientLimiter(cfg.MaxPerClient),
		backend: newBackendClient(cfg.BackendTimeout), userKey: textproto.CanonicalMIMEHeaderKey(cfg.UserHeader)}
	if cfg.GuardToken != "" {
		h.guard = []string{cfg.GuardToken}
	}
	h.buffers.New = func() any { b := make([]byte, 32<<10); return &b }
	h.install(p, 1)
	return h
}

func (h *Handler) install(p *Policies, gen uint64) {
	p.prepare(h.cfg.Mode)
	h.cfg.Metrics.setPolicies(p) // before the requests see p: it resolves their counters
	h.active.Store(&active{p: p, gen: gen})
}

// SetEngine swaps in e as the legacy policy, with no scopes (reload), and
// returns the new generation. Only one goroutine may swap at a time.
func (h *Handler) SetEngine(e *walk.Engine) uint64 {
	return h.SetPolicies(&Policies{Legacy: e})
}

// SetPolicies swaps the configuration in force atomically (reload) and
// returns the new generation. Only one goroutine may swap at a time.
func (h *Handler) SetPolicies(p *Policies) uint64 {
	gen := h.active.Load().gen + 1
	h.install(p, gen)
	return gen
}

// Ready reports whether a backend is up (after the first health checks).
func (h *Handler) Ready() bool { return h.cfg.Pool.Ready() }

// Engine returns the legacy engine in force.
func (h *Handler) Engine() *walk.Engine { return h.active.Load().p.Legacy }

// Disagreements returns the latest sampled disagreements, newest first.
func (h *Handler) Disagreements() []Sample { return h.shadow.Recent() }

// DisagreementGroups returns every disagreement since the process
// started, grouped by scope, comparison, direction and rule, the most
// recent first, and how many fell beyond MaxDisagreementGroups.
func (h *Handler) DisagreementGroups() ([]DisagreementGroup, uint64) { return h.shadow.Groups() }

// Policies returns the configuration in force and its generation.
func (h *Handler) Policies() (*Policies, uint64) {
	a := h.active.Load()
	return a.p, a.gen
}

type passInfo struct {
	target     *target    // the backend chosen
	client     netip.Addr // the client address serve found
	user       string
	authInfo   string // Digest's Authentication-Info, for an answer that is not an error
	fromHeader bool
	path       string      // the path orderly decided on, encoded for the wire
	body       *clientBody // the request body, when there is one
}

// The request path. serve takes every request through these steps, in
// this order, one function each; a step computes once, in the exchange,
// what the later ones reuse:
//
//  1. client: the client address (X-Forwarded-For only from trusted
//     proxies) and the request's form (400).
//  2. limits: what Apache refuses while it reads the request (414, 400)
//     and the bound on a client's requests in flight (429).
//  3. target: the request as the walk decides it (walk.Request) and,
//     when a scope has a path, the path Apache normalises it to.
//  4. scope: the request's scope and cohort: which policy decides and
//     which is evaluated beside it.
//  5. decide: the decisions of those policies, and LimitRequestBody.
//  6. answer: the refusal as Apache answers it (refuse), or the request
//     proxied to the backend (pass), or for forward-auth a 200 (grant).
//  7. account: metrics, the rules' examples, the shadow comparisons.
//     The access-log line is deferred in serve, so that a response the
//     proxy aborts is logged too.

// exchange is one request on its way through serve's steps.
type exchange struct {
	w        http.ResponseWriter // rec, when there is one
	r        *http.Request
	rec      *recorder // what was answered, for the access log and shadow mode
	authOnly bool      // forward-auth: answer 200 instead of proxying
	start    time.Time
	pol      *active // the configuration in force, loaded once

	client     netip.Addr
	fromHeader bool // client is from X-Forwarded-For

	req    *walk.Request
	path   string // the normalised path, when a scope has a path
	pathOK bool   // path is set: Apache takes the target

	v verdict
}

// ServeHTTP decides the request and either answers the refusal or proxies it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.serve(w, r, false)
}

// serve decides r and answers its refusal, or, when it is let through,
// proxies it to the backend, or with authOnly answers 200 (forward-auth).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, authOnly bool) {
	x := &exchange{w: w, r: r, authOnly: authOnly, start: time.Now(), pol: h.active.Load()}
	if h.cfg.AccessLog != nil || x.pol.p.anyShadow {
		x.rec = &recorder{ResponseWriter: w}
		x.w = x.rec
	}
	if !h.client(x) || !h.limits(x) {
		return
	}
	defer h.limit.release(x.client)
	if body := r.Body; r.ContentLength != 0 && body != nil {
		// The steps wrap r.Body (LimitRequestBody, the client's faults);
		// the server finds its own again when the handler returns, so that
		// it knows a body held for 100 Continue was never asked for (it
		// then closes the connection at once rather than wait for a body
		// the client will not send).
		defer func() { r.Body = body }()
	}
	h.target(x)
	h.scope(x)
	h.decide(x)
	if h.cfg.AccessLog != nil {
		defer h.writeAccess(x.rec, r, x.client, x.start, &x.v.res.Decision, x.pol.gen, &x.v)
	}
	h.answer(x)
	h.account(x)
}

// client finds the client address and refuses (400) a request whose
// X-Forwarded-For cannot be read, or whose form Apache refuses or would
// read otherwise (badForm).
func (h *Handler) client(x *exchange) bool {
	client, fromHeader, ok := clientAddr(x.r, h.cfg.TrustedProxies)
	if !ok {
		d := policy.Decision{Status: http.StatusBadRequest, Layer: policy.LayerRequest}
		h.refuse(x.w, x.r, netip.Addr{}, d, "")
		h.cfg.Metrics.observe(&d, x.start, ModeEnforce)
		if h.cfg.AccessLog != nil {
			h.writeAccess(x.rec, x.r, netip.Addr{}, x.start, &d, x.pol.gen, nil)
		}
		return false
	}
	x.client, x.fromHeader = client, fromHeader
	if badForm(x.r) {
		h.early(x, policy.Decision{Status: http.StatusBadRequest, Layer: policy.LayerRequest})
		return false
	}
	return true
}

// limits refuses what Apache refuses while it reads the request: a
// request line over MaxRequestLine (414), then the legacy server's
// limits (limits_head.go); then it counts the request against the
// client's bound (429 beyond), which the caller releases.
func (h *Handler) limits(x *exchange) bool {
	if requestLineTooLong(x.r, h.cfg.MaxRequestLine) {
		h.early(x, policy.Decision{Status: http.StatusRequestURITooLong, Layer: policy.LayerRequest})
		return false
	}
	if e := x.pol.p.Legacy; e != nil {
		if d, ok := headLimits(x.r, e.RequestLimits()); !ok {
			h.early(x, d)
			return false
		}
	}
	if !h.limit.acquire(x.client) {
		x.w.Header().Set("Retry-After", "1")
		h.early(x, policy.Decision{Status: http.StatusTooManyRequests, Layer: policy.LayerRequest})
		return false
	}
	return true
}

// early answers a refusal made before any policy decides.
func (h *Handler) early(x *exchange, d policy.Decision) {
	h.refuse(x.w, x.r, x.client, d, "")
	h.cfg.Metrics.observe(&d, x.start, ModeEnforce)
}

// target builds the request as the walk decides it and, when a scope
// has a path, finds the path Apache normalises the target to.
func (h *Handler) target(x *exchange) {
	r := x.r
	// The user header is orderly's to set: rewrite never passes on a
	// client's copy. SetEnvIf still sees it, as Apache did.
	auth, hasAuth := r.Header.Get("Authorization"), len(r.Header.Values("Authorization")) > 0
	local := netip.Addr{}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		local = localAddr(la)
	}
	ti := h.tlsInfo(r) // tlsinfo.go
	x.req = &walk.Request{
		Method:     r.Method,
		Target:     r.RequestURI,
		Host:       r.Host,
		Proto:      r.Proto,
		Header:     r.Header,
		Headers:    rawHeaders(r, x.authOnly),
		ClientAddr: x.client,
		LocalAddr:  local,
		Auth:       parseAuthorization(auth, hasAuth),
		Now:        x.start.UnixNano(),
		TLSInfo:    ti,
		// The scheme of the URLs orderly builds (redirects) is the
		// client's: https behind a TLS-terminating proxy it believes
		// (forwarded_tls) too.
		TLS: ti.On,
	}
	if h.cfg.Resolver != nil {
		x.req.Resolver = h.cfg.Resolver
	}
	if p := x.pol.p; p.byPath {
		x.path, x.pathOK = p.Legacy.PathOf(x.req) // the walk takes what it parsed
	}
}

// localAddr is the address of the connection's own end: read from the
// TCP address itself (under rawhead's wrapper) rather than formatted and
// parsed for every request; any other kind of address is parsed.
func localAddr(a net.Addr) netip.Addr {
	if h, ok := a.(*headAddr); ok {
		a = h.Addr
	}
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort().Addr().Unmap()
	}
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// scope finds the request's scope and its cohort: which of the scope's
// policies decides, and which is evaluated beside it.
func (h *Handler) scope(x *exchange) {
	v := &x.v
	v.scope = x.pol.p.scope(x.r.Host, x.path, x.pathOK)
	sc := v.scope
	v.policy, v.otherPolicy = sc.Enforce, sc.Shadow
	if sc.Shadow != "" && !sc.inEnforceCohort(x.client, x.req.Auth.User) {
		v.policy, v.otherPolicy = sc.Shadow, sc.Enforce
	}
}

// decide evaluates the scope's policies and, in enforce mode, applies
// the body limit to the decision in force (LimitRequestBody, 413).
func (h *Handler) decide(x *exchange) {
	p, v, req := x.pol.p, &x.v, x.req
	if v.policy == PolicyLegacy && p.LegacyEnforced != nil {
		// Demoted rules: the full legacy policy counts, the policy without
		// them decides, dry.
		v.full = h.shadowDecide(p.Legacy, req)
		dry := *req
		dry.Dry = true
		v.res = p.LegacyEnforced.Decide(&dry, nil)
	} else {
		v.res = p.engine(v.policy).Decide(req, nil)
	}
	if v.otherPolicy != "" {
		v.other = h.shadowDecide(p.engine(v.otherPolicy), req)
	}
	// With cohorts by user, the client names the user: one that no policy
	// verified must not choose the laxer policy. A request its cohort's
	// policy lets through without authenticating anyone, and the other
	// refuses, is refused.
	if v.scope.ByUser && req.Auth.User != "" && v.other != nil && v.res.Allowed() && v.res.User == "" && !v.other.Allowed() {
		v.policy, v.otherPolicy = v.otherPolicy, v.policy
		v.res, *v.other = *v.other, v.res
	}
	if v.scope.Mode == ModeEnforce {
		if x.authOnly {
			authBodyLimit(x.r, &v.res) // forwardauth_body.go
		} else {
			bodyLimit(x.r, &v.res) // limits_body.go
		}
	}
}

// answer refuses the request as Apache would when its scope enforces a
// refusal; otherwise it proxies the request (pass) or, for forward-auth,
// grants it.
func (h *Handler) answer(x *exchange) {
	w, r, res, mode := x.w, x.r, &x.v.res, x.v.scope.Mode
	if mode == ModeEnforce && !res.Allowed() {
		if res.Location != "" && res.Status >= 300 && res.Status <= 399 {
			w.Header().Set("Location", res.Location)
		}
		h.refuse(w, r, x.client, res.Decision, res.Filename)
		return
	}
	if mode == ModeEnforce {
		// Apache logs a compat denial even when Satisfy Any lets the
		// request through; so does orderly.
		h.writeLog(x.client, r, res.Logs(), "")
	}
	if x.authOnly {
		h.grant(w, res)
	} else {
		h.pass(w, r, res, x.client, x.fromHeader)
	}
}

// account counts the decision, keeps the request as an example of the
// rules that decided it, and compares the decision with the other
// policy's and, in shadow mode, with the backend's answer.
func (h *Handler) account(x *exchange) {
	v, mode := &x.v, x.v.scope.Mode
	h.cfg.Metrics.observe(&v.res.Decision, x.start, mode)
	h.cfg.Metrics.observeScope(v)
	v.examples(x.start, x.r, x.client)
	status := 0
	if mode == ModeShadow && !x.authOnly {
		status = x.rec.status
		if status == 0 {
			status = http.StatusOK
		}
	}
	// Forward-auth has no backend answer to compare with: the caller
	// proxies.
	h.compare(*v, x.r, x.req, x.client, status, x.pol)
}

// pass forwards the request: with the path orderly decided on and the
// user it authenticated, when it granted access; as received otherwise
// (shadow and observe forward what orderly would refuse, for the backend
// to decide).
func (h *Handler) pass(w http.ResponseWriter, r *http.Request, res *walk.Result, client netip.Addr, fromHeader bool) {
	info := &passInfo{client: client, fromHeader: fromHeader, target: h.cfg.Pool.pick()}
	if info.target == nil {
		// Every backend is down: say so at once rather than wait on one,
		// and log it once a second at most, with how many were refused.
		h.noBackend.Add(1)
		if now := time.Now().UnixNano(); now-h.noBackendLog.Load() >= int64(time.Second) && h.noBackendLog.Swap(now) != now {
			h.cfg.Logger.Error("no backend available", "uri", r.RequestURI, "requests_answered_502", h.noBackend.Swap(0))
		}
		if h.cfg.Metrics != nil {
			h.cfg.Metrics.backend.Inc()
		}
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	if res.Allowed() {
		info.user, info.path = res.User, encodePath(res.ForwardURI(), res.SlashesKept)
		info.authInfo = res.AuthInfo
	}
	if r.Body != nil && r.Body != http.NoBody {
		info.body = &clientBody{ReadCloser: r.Body}
		r.Body = info.body
	}
	h.forward(w, r, info) // forward.go
}

// refuse answers a refusal as Apache would and writes its error-log lines.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, client netip.Addr, d policy.Decision, filename string) {
	// One more line, after Apache's own (which fail2ban and log tooling
	// match exactly), names the rule that decided.
	note := ""
	if d.Rule != nil {
		note = fmt.Sprintf("orderly refused (%d) by rule %s: %s", d.Status, d.Rule.ID, d.Rule)
	}
	h.writeLog(client, r, d.Logs(), note)
	if h.cfg.RuleHeader != "" && d.Rule != nil {
		w.Header().Set(h.cfg.RuleHeader, d.Rule.ID)
	}
	if d.Status == http.StatusUnauthorized && !d.NoChallenge {
		if d.Challenge != "" {
			w.Header().Set("WWW-Authenticate", d.Challenge) // Digest
		} else {
			w.Header().Set("WWW-Authenticate", `Basic realm="`+d.Realm+`"`)
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
	w.WriteHeader(d.Status)
	fmt.Fprintf(w, "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>%d %s</title>\n</head><body>\n<h1>%s</h1>\n</body></html>\n",
		d.Status, http.StatusText(d.Status), http.StatusText(d.Status))
}

// writeLog writes Apache 2.4 error-log lines:
// [Wed Nov 25 22:25:58.130432 2026] [access_compat:error] [pid 1:tid 1] [client 203.0.113.50:0] AH01797: ...
// and then, when note is set, an [orderly:info] line with it.
func (h *Handler) writeLog(client netip.Addr, r *http.Request, lines []policy.LogLine, note string) {
	if h.cfg.ErrorLog == nil || len(lines) == 0 && note == "" {
		return
	}
	now := time.Now().Format("Mon Jan 02 15:04:05.000000 2006")
	port := "0"
	if _, p, err := net.SplitHostPort(r.RemoteAddr); err == nil && !client.IsValid() {
		port = p
	}
	var b strings.Builder
	for _, l := range lines {
		level, msg := l.Level, l.Message()
		if level == "" {
			level = "error"
		}
		if l.Code != "" {
			msg = l.Code + ": " + msg
		}
		fmt.Fprintf(&b, "[%s] [%s:%s] [pid %d:tid %d] [client %s:%s] %s\n",
			now, l.Module, level, os.Getpid(), os.Getpid(), client, port, msg)
	}
	if note != "" {
		fmt.Fprintf(&b, "[%s] [orderly:info] [pid %d:tid %d] [client %s:%s] %s\n",
			now, os.Getpid(), os.Getpid(), client, port, note)
	}
	io.WriteString(h.cfg.ErrorLog, b.String())
}

// encodePath escapes a decided (decoded) URI for the request line: bytes
// outside RFC 3986's pchar set and "/" are percent-encoded. When
// slashesKept (AllowEncodedSlashes NoDecode), a "%2F" in uri is an escape
// Apache kept undecoded and stays as it is; otherwise every "%" is a
// literal percent sign, decoded from "%25", and is sent as "%25": sent as
// it is, "%2F" would be decoded again by a backend with AllowEncodedSlashes
// On, into a slash that moves the request to another file (a bypass:
// TestSecurityCorpus, path/double-encoded-slash-host-on).
func encodePath(uri string, slashesKept bool) string {
	if uri == "" || uri == "*" {
		return ""
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(uri); i++ {
		c := uri[i]
		switch {
		case slashesKept && c == '%' && i+2 < len(uri) && (uri[i+1:i+3] == "2F" || uri[i+1:i+3] == "2f"):
			b.WriteString(uri[i : i+3])
			i += 2
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// pathUnescape decodes a path for url.URL.Path; RawPath carries the
// encoding actually sent.
func pathUnescape(raw string) string {
	p, err := url.PathUnescape(raw)
	if err != nil {
		return raw
	}
	return p
}

package ldapauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// Options are mod_ldap's server-wide settings.
type Options struct {
	// CacheEntries and CacheTTL are LDAPCacheEntries and LDAPCacheTTL
	// (the search cache); OpCacheEntries and OpCacheTTL are
	// LDAPOpCacheEntries and LDAPOpCacheTTL (the compare caches). As in
	// mod_ldap, 0 entries for either turns off every cache.
	CacheEntries   int
	CacheTTL       time.Duration
	OpCacheEntries int
	OpCacheTTL     time.Duration
	// ConnectionTimeout is LDAPConnectionTimeout: the bound on connecting
	// to each host of a URL's list before trying the next.
	ConnectionTimeout time.Duration
	// Timeout is LDAPTimeout: the bound on each bind, search and compare
	// (0: none).
	Timeout time.Duration
	// Retries and RetryDelay are LDAPRetries and LDAPRetryDelay: how often
	// an operation is tried again, on a new connection, when the server
	// is down or does not answer.
	Retries    int
	RetryDelay time.Duration
	// TrustedMode is LDAPTrustedMode, the security of a URL that names
	// none.
	TrustedMode Mode
	// TrustedCAFiles are PEM files of CAs (LDAPTrustedGlobalCert
	// CA_BASE64) that server certificates must chain to (none: the
	// system's). A file that cannot be read fails every TLS connection,
	// and nothing else, as OpenLDAP fails to make its TLS context.
	TrustedCAFiles []string
	// VerifyServerCert is LDAPVerifyServerCert.
	VerifyServerCert bool
	// ConnectionPoolTTL is LDAPConnectionPoolTTL: an idle connection older
	// than this is not reused (negative: no limit).
	ConnectionPoolTTL time.Duration
	// MaxIdle bounds the idle connections kept per host list and security
	// (default 8).
	MaxIdle int
	// Now is the clock of the caches (default time.Now).
	Now func() time.Time
	// Counters, when set, are the counters the caches count into, shared
	// with other clients (so that they outlive this one); nil: the
	// client's own.
	Counters *Counters
}

// DefaultOptions returns mod_ldap's defaults (util_ldap_create_config).
func DefaultOptions() Options {
	return Options{
		CacheEntries:      1024,
		CacheTTL:          600 * time.Second,
		OpCacheEntries:    1024,
		OpCacheTTL:        600 * time.Second,
		ConnectionTimeout: 10 * time.Second,
		Timeout:           60 * time.Second,
		Retries:           3,
		TrustedMode:       ModeNone,
		VerifyServerCert:  true,
		ConnectionPoolTTL: -1,
		MaxIdle:           8,
	}
}

// A Client talks to LDAP servers for any number of Configs, as mod_ldap
// does for a server: pooled connections per host list, and the caches
// per AuthLDAPURL. Safe for concurrent use.
type Client struct {
	opts   Options
	tlsCfg *tls.Config
	// tlsErr is why the TLS configuration could not be made: every TLS
	// connection fails with it.
	tlsErr error
	now    func() time.Time
	pwKey  []byte // keys the hashes of cached passwords
	cache  *cacheSet
	ctr    *Counters

	mu     sync.Mutex
	pools  map[poolKey]*pool
	closed bool // Close was called: connections are no longer pooled
}

// cacheSet is mod_ldap's cache: one set of caches per AuthLDAPURL, shared
// by every virtual host (and so by the clients of [Client.WithServer]).
type cacheSet struct {
	mu     sync.Mutex
	caches map[string]*urlCaches
}

// Counters are the counters of the caches of one or more clients
// ([Options.Counters]). Safe for concurrent use.
type Counters struct {
	search, compare, dn counters
}

// NewCounters returns counters at zero.
func NewCounters() *Counters { return &Counters{} }

// Stats returns the counters; the Entries fields are zero (they are a
// client's: [Client.CacheStats]).
func (c *Counters) Stats() CacheStats {
	var s CacheStats
	c.search.add(&s.Search)
	c.compare.add(&s.Compare)
	c.dn.add(&s.DNCompare)
	return s
}

// NewClient returns a Client with the options (nil: DefaultOptions). A
// trusted CA file that cannot be read or holds no certificate fails the
// client's TLS connections (LDAPS and STARTTLS), as OpenLDAP's TLS
// context fails to load, not NewClient; the error is only that of
// making the key of cached passwords.
func NewClient(o *Options) (*Client, error) {
	opts := DefaultOptions()
	if o != nil {
		opts = *o
	}
	if opts.MaxIdle <= 0 {
		opts.MaxIdle = 8
	}
	c := &Client{opts: opts, now: opts.Now, pools: map[poolKey]*pool{}, cache: &cacheSet{caches: map[string]*urlCaches{}}, ctr: opts.Counters}
	if c.now == nil {
		c.now = time.Now
	}
	if c.ctr == nil {
		c.ctr = NewCounters()
	}
	c.pwKey = make([]byte, 32)
	if _, err := rand.Read(c.pwKey); err != nil {
		return nil, err
	}
	c.tlsCfg = &tls.Config{InsecureSkipVerify: !opts.VerifyServerCert, MinVersion: tls.VersionTLS12}
	if len(opts.TrustedCAFiles) > 0 {
		pool := x509.NewCertPool()
		for _, f := range opts.TrustedCAFiles {
			b, err := os.ReadFile(f)
			if err != nil {
				c.tlsErr = fmt.Errorf("LDAP: Could not open SSL trusted certificate authority file - %s: %v", f, err)
				break
			}
			if !pool.AppendCertsFromPEM(b) {
				c.tlsErr = fmt.Errorf("LDAP: no PEM certificate in trusted certificate authority file - %s", f)
				break
			}
		}
		c.tlsCfg.RootCAs = pool
	}
	return c, nil
}

// WithServer returns a client with c's options but the connection
// security mode and connection pool TTL of a virtual host
// (LDAPTrustedMode and LDAPConnectionPoolTTL, which mod_ldap keeps per
// virtual host): it has connections of its own, as each virtual host of
// mod_ldap has its pool, and shares c's caches and counters, as every
// virtual host shares mod_ldap's cache.
func (c *Client) WithServer(mode Mode, poolTTL time.Duration) *Client {
	v := &Client{opts: c.opts, tlsCfg: c.tlsCfg, tlsErr: c.tlsErr, now: c.now, pwKey: c.pwKey, cache: c.cache, ctr: c.ctr, pools: map[poolKey]*pool{}}
	v.opts.TrustedMode, v.opts.ConnectionPoolTTL = mode, poolTTL
	return v
}

// Close closes every pooled connection, and each connection in use when
// it is given back. The Client stays usable, without a pool.
func (c *Client) Close() error {
	c.mu.Lock()
	pools := c.pools
	c.pools = map[poolKey]*pool{}
	c.closed = true
	c.mu.Unlock()
	for _, p := range pools {
		p.closeAll()
	}
	return nil
}

// CacheStats returns the counters of the caches (of every client that
// counts into the same [Counters]) and the entries the client's caches
// hold now (shared with the clients of [Client.WithServer]).
func (c *Client) CacheStats() CacheStats {
	s := c.ctr.Stats()
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	for _, uc := range c.cache.caches {
		s.Search.Entries += uc.search.len()
		s.Compare.Entries += uc.compare.len()
		s.DNCompare.Entries += uc.dnCompare.len()
	}
	return s
}

// cachesFor returns the caches of a URL (util_ald_create_caches), nil when
// caching is off.
func (c *Client) cachesFor(url string) *urlCaches {
	if c.opts.CacheEntries <= 0 || c.opts.OpCacheEntries <= 0 {
		return nil
	}
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	uc := c.cache.caches[url]
	if uc == nil {
		uc = &urlCaches{
			search:    newOpCache[string, searchNode](c.opts.CacheEntries, c.opts.CacheTTL, c.now, &c.ctr.search),
			compare:   newOpCache[compareKey, compareNode](c.opts.OpCacheEntries, c.opts.OpCacheTTL, c.now, &c.ctr.compare),
			dnCompare: newOpCache[dnCompareKey, struct{}](c.opts.OpCacheEntries, c.opts.OpCacheTTL, c.now, &c.ctr.dn),
		}
		c.cache.caches[url] = uc
	}
	return uc
}

func (c *Client) hashPW(pw string) [32]byte {
	m := hmac.New(sha256.New, c.pwKey)
	m.Write([]byte(pw))
	var h [32]byte
	copy(h[:], m.Sum(nil))
	return h
}

// LDAP result codes as util_ldap.c sees them (OpenLDAP's values; the
// negative ones are the client library's).
const (
	resSuccess             = 0
	resSizeLimitExceeded   = 4
	resCompareFalse        = 5
	resCompareTrue         = 6
	resNoSuchAttribute     = 16
	resConstraintViolation = 19
	resNoSuchObject        = 32
	resProxyAuthzFailure   = 47
	resInappropriateAuth   = 48
	resInvalidCredentials  = 49
	resInsufficientAccess  = 50
	resUnavailable         = 52
	resOther               = 80
	resServerDown          = -1
	resTimeout             = -5
	resFilterError         = -7
	resParamError          = -9
	resConnectError        = -11
)

// An OpError is a failed LDAP operation: the result code (OpenLDAP's
// numbering: negative for the client's own errors) and what failed. It
// never holds a password.
type OpError struct {
	Code   int
	Op     string // "bind", "search", "compare", "connect", ...
	Reason string
	Err    error
}

func (e *OpError) Error() string {
	s := fmt.Sprintf("ldap %s: %s (%d)", e.Op, resultName(e.Code), e.Code)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *OpError) Unwrap() error { return e.Err }

func resultName(code int) string {
	switch code {
	case resServerDown:
		return "Can't contact LDAP server"
	case resTimeout:
		return "Timed out"
	case resFilterError:
		return "Bad search filter"
	case resParamError:
		return "Bad parameter to an ldap routine"
	case resConnectError:
		return "Connect error"
	}
	if code >= 0 {
		if s, ok := ldap.LDAPResultCodeMap[uint16(code)]; ok {
			return s
		}
	}
	return "Unknown error"
}

// codeOf maps a go-ldap error to the OpenLDAP result code that
// ldap_*_s would have returned.
func codeOf(err error) int {
	if err == nil {
		return resSuccess
	}
	var le *ldap.Error
	if errors.As(err, &le) {
		switch le.ResultCode {
		case ldap.ErrorNetwork:
			if le.Err != nil && strings.Contains(le.Err.Error(), "timed out") {
				return resTimeout
			}
			return resServerDown
		case ldap.ErrorFilterCompile:
			return resFilterError
		case ldap.ErrorUnexpectedMessage, ldap.ErrorUnexpectedResponse, ldap.ErrorMalformedPacket:
			return resServerDown
		}
		if le.ResultCode < 200 {
			return int(le.ResultCode)
		}
		return resOther
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return resTimeout
	}
	return resServerDown
}

// serverDown is AP_LDAP_IS_SERVER_DOWN.
func serverDown(code int) bool { return code == resServerDown || code == resUnavailable }

type poolKey struct {
	hosts string
	mode  Mode
}

type pool struct {
	mu   sync.Mutex
	idle []*conn
}

func (p *pool) closeAll() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, cn := range idle {
		cn.l.Close()
	}
}

// conn is one LDAP connection and who it is bound as.
type conn struct {
	l        *ldap.Conn
	bound    bool
	bindDN   string
	bindHash [32]byte
	lastUsed time.Time
}

func (c *Client) secure(m Mode) Mode {
	if m == ModeUnset {
		m = c.opts.TrustedMode
	}
	if m == ModeUnset {
		m = ModeNone
	}
	return m
}

func (c *Client) poolFor(k poolKey) *pool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pools[k]
	if p == nil {
		p = &pool{}
		c.pools[k] = p
	}
	return p
}

// hostSpec is one server of a host list.
type hostSpec struct{ host, port string }

// parseHosts splits a host list as OpenLDAP's ldap_url_parsehosts does
// (blanks or commas between hosts, host[:port], [v6]:port, hex escapes),
// each host without a port getting the default one.
func parseHosts(hosts string, defPort int) ([]hostSpec, error) {
	var out []hostSpec
	for _, spec := range strings.FieldsFunc(hosts, func(r rune) bool { return r == ' ' || r == ',' }) {
		h, port := spec, strconv.Itoa(defPort)
		if i := strings.IndexByte(spec, ':'); i >= 0 {
			hasPort := true
			if strings.IndexByte(spec[i+1:], ':') >= 0 {
				// More than one colon: an IPv6 address.
				if spec[0] == '[' {
					j := strings.IndexByte(spec, ']')
					if j < 0 {
						return nil, &OpError{Code: resParamError, Op: "connect", Reason: "bad host " + spec}
					}
					h = spec[1:j]
					rest := spec[j+1:]
					switch {
					case rest == "":
						hasPort = false
					case rest[0] != ':':
						return nil, &OpError{Code: resParamError, Op: "connect", Reason: "bad host " + spec}
					default:
						i = j + 1
					}
				} else {
					hasPort = false
				}
			} else {
				h = spec[:i]
			}
			if hasPort {
				b := append([]byte(spec[i+1:]), 0)
				hexUnescape(b, 0)
				n, ok := strtolAll(cstr(b, 0))
				if !ok {
					return nil, &OpError{Code: resParamError, Op: "connect", Reason: "bad port in " + spec}
				}
				port = strconv.Itoa(int(int32(n)))
			}
		}
		b := append([]byte(h), 0)
		hexUnescape(b, 0)
		out = append(out, hostSpec{host: cstr(b, 0), port: port})
	}
	if len(out) == 0 {
		return nil, &OpError{Code: resParamError, Op: "connect", Reason: "no LDAP host"}
	}
	return out, nil
}

// strtolAll is strtol(s, &next, 10) that must read all of s and at least
// one digit.
func strtolAll(s string) (int64, bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i || j != len(s) {
		return 0, false
	}
	return cstrtol(s), true
}

// dial connects to the first host of the list that answers, as libldap
// does: each host in turn, each bounded by LDAPConnectionTimeout.
func (c *Client) dial(ctx context.Context, hosts string, mode Mode) (*conn, error) {
	defPort := PortLDAP
	if mode == ModeSSL {
		defPort = PortLDAPS
	}
	specs, err := parseHosts(hosts, defPort)
	if err != nil {
		return nil, err
	}
	var errs []string
	for _, hs := range specs {
		d := net.Dialer{Timeout: max(c.opts.ConnectionTimeout, 0)}
		addr := net.JoinHostPort(hs.host, hs.port)
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if mode != ModeNone && c.tlsErr != nil {
			nc.Close()
			return nil, &OpError{Code: resConnectError, Op: "tls", Reason: addr, Err: c.tlsErr}
		}
		tc := c.tlsCfg.Clone()
		tc.ServerName = hs.host
		isTLS := false
		if mode == ModeSSL {
			tlsConn := tls.Client(nc, tc)
			hctx, cancel := c.handshakeCtx(ctx)
			err := tlsConn.HandshakeContext(hctx)
			cancel()
			if err != nil {
				nc.Close()
				errs = append(errs, addr+": "+err.Error())
				continue
			}
			nc, isTLS = tlsConn, true
		}
		l := ldap.NewConn(nc, isTLS)
		l.SetTimeout(c.opts.Timeout)
		l.Start()
		if mode == ModeSTARTTLS {
			if err := l.StartTLS(tc); err != nil {
				l.Close()
				// apr_ldap_set_option(APR_LDAP_OPT_TLS) failing is fatal.
				return nil, &OpError{Code: resConnectError, Op: "starttls", Reason: addr, Err: err}
			}
		}
		return &conn{l: l, lastUsed: c.now()}, nil
	}
	return nil, &OpError{Code: resServerDown, Op: "connect", Reason: strings.Join(errs, "; ")}
}

// handshakeCtx bounds an LDAPS handshake: OpenLDAP bounds it by the
// network timeout (LDAPConnectionTimeout, ldap_int_tls_start), and by
// nothing when none is set.
func (c *Client) handshakeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.ConnectionTimeout > 0 {
		return context.WithTimeout(ctx, c.opts.ConnectionTimeout)
	}
	return context.WithCancel(ctx)
}

func (c *Client) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.Timeout > 0 {
		return context.WithTimeout(ctx, c.opts.Timeout)
	}
	return context.WithCancel(ctx)
}

func (c *Client) get(ctx context.Context, k poolKey) (*conn, error) {
	p := c.poolFor(k)
	p.mu.Lock()
	for len(p.idle) > 0 {
		cn := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if cn.l.IsClosing() || (c.opts.ConnectionPoolTTL >= 0 && c.now().Sub(cn.lastUsed) > c.opts.ConnectionPoolTTL) {
			cn.l.Close()
			continue
		}
		p.mu.Unlock()
		return cn, nil
	}
	p.mu.Unlock()
	return c.dial(ctx, k.hosts, k.mode)
}

func (c *Client) put(k poolKey, cn *conn) {
	if cn.l.IsClosing() {
		return
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		cn.l.Close()
		return
	}
	cn.lastUsed = c.now()
	p := c.poolFor(k)
	p.mu.Lock()
	if len(p.idle) < c.opts.MaxIdle {
		p.idle = append(p.idle, cn)
		cn = nil
	}
	p.mu.Unlock()
	if cn != nil {
		cn.l.Close()
	}
}

// session is one use of a pooled connection with the credentials it must
// be bound with (util_ldap_connection_t from uldap_connection_find).
type session struct {
	c      *Client
	key    poolKey
	bindDN string
	bindPW string
	cn     *conn
}

func (c *Client) session(cfg *Config, bindDN, bindPW string) *session {
	mode := ModeUnset
	if cfg.URL != nil {
		mode = cfg.URL.Mode
	}
	return &session{c: c, key: poolKey{hosts: cfg.Hosts, mode: c.secure(mode)}, bindDN: bindDN, bindPW: bindPW}
}

func (s *session) close() {
	if s.cn != nil {
		s.c.put(s.key, s.cn)
		s.cn = nil
	}
}

// drop closes the connection after the server went away
// (uldap_connection_unbind).
func (s *session) drop() {
	if s.cn != nil {
		s.cn.l.Close()
		s.cn = nil
	}
}

// open connects and binds with the session's credentials unless the
// connection is bound with them already (uldap_connection_open), trying
// again on a new connection while the server is down.
func (s *session) open(ctx context.Context) error {
	h := s.c.hashPW(s.bindPW)
	var last error
	for failures := 0; failures <= s.c.opts.Retries; failures++ {
		if failures > 0 && s.c.opts.RetryDelay > 0 {
			if err := sleep(ctx, s.c.opts.RetryDelay); err != nil {
				return &OpError{Code: resServerDown, Op: "bind", Err: err}
			}
		}
		if s.cn == nil {
			cn, err := s.c.get(ctx, s.key)
			if err != nil {
				var oe *OpError
				if errors.As(err, &oe) && !serverDown(oe.Code) {
					return err
				}
				last = err
				continue
			}
			s.cn = cn
		}
		if s.cn.bound && s.cn.bindDN == s.bindDN && s.cn.bindHash == h {
			return nil
		}
		s.cn.bound = false
		err := s.withCtx(ctx, func(l *ldap.Conn) error {
			_, err := l.SimpleBind(&ldap.SimpleBindRequest{Username: s.bindDN, Password: s.bindPW, AllowEmptyPassword: true})
			return err
		})
		code := codeOf(err)
		if code == resSuccess {
			s.cn.bound, s.cn.bindDN, s.cn.bindHash = true, s.bindDN, h
			return nil
		}
		last = &OpError{Code: code, Op: "bind", Reason: "LDAP: ldap_simple_bind() failed", Err: err}
		if !serverDown(code) && code != resTimeout {
			s.drop()
			return last
		}
		s.drop()
	}
	return last
}

// withCtx runs f on the connection, closing it if ctx ends first.
func (s *session) withCtx(ctx context.Context, f func(l *ldap.Conn) error) error {
	l := s.cn.l
	stop := context.AfterFunc(ctx, func() { l.Close() })
	err := f(l)
	if !stop() && err != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retry runs op, opening the session first, as the start_over loops of
// util_ldap.c do: a server that is down (or, when onTimeout says so, an
// operation that timed out) costs the connection and is tried again up
// to LDAPRetries times. A failure to connect or bind ends it.
func (s *session) retry(ctx context.Context, onTimeout func(failures int) bool, op func(l *ldap.Conn) error) error {
	var last error
	for failures := 0; failures <= s.c.opts.Retries; failures++ {
		if failures > 0 && s.c.opts.RetryDelay > 0 {
			if err := sleep(ctx, s.c.opts.RetryDelay); err != nil {
				return &OpError{Code: resServerDown, Op: "retry", Err: err}
			}
		}
		if err := s.open(ctx); err != nil {
			return err
		}
		err := s.withCtx(ctx, op)
		code := codeOf(err)
		var oe *OpError
		if errors.As(err, &oe) {
			code = oe.Code
		}
		if serverDown(code) || (code == resTimeout && onTimeout(failures)) {
			s.drop()
			last = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		return err
	}
	if last == nil {
		last = &OpError{Code: resServerDown, Op: "retry"}
	}
	return last
}

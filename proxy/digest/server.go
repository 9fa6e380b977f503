package digest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// A Server holds what mod_auth_digest keeps for the whole server, shared
// by every scope and realm: the secret that signs nonces, the counter of
// client numbers (the opaque), the counter of one-time nonces and the
// table of clients. One Server serves a whole orderly process, as Apache's
// shared memory serves all of its children. It is safe for concurrent
// use.
//
// Clients are tracked only where a scope needs it: a first challenge
// carries an opaque (a new client number) only under AuthDigestNcCheck On
// or with one-time nonces (AuthDigestNonceLifetime 0). Then, as
// client_update_nonce and check_and_record_nonce of Apache 2.4.71, once a
// request is fully verified (response digest and nonce):
//
//   - NcCheck On: a nonce newer than the one the client last used starts
//     a new count; with the same nonce the nc must be higher than the
//     highest seen with it (not necessarily by one, since the client also
//     counts requests that needed no authentication); anything else is a
//     replay: 401, AH01774, a new nonce, not stale. A client that is not
//     in the table (never was, or forgotten) gets 401 stale=true with a
//     new opaque (AH10618). An nc that is not a hex number is refused
//     (AH01773).
//   - NcCheck Off (the default) with a lifetime other than 0: nothing is
//     tracked, and a request can be replayed, nc and all, for as long as
//     its nonce lives.
//   - One-time nonces: a nonce is accepted once, and only if it is newer
//     than the last one the client used (AH01779 and stale=true
//     otherwise); the nc is not checked.
//
// Releases up to 2.4.62 counted differently: every request
// carrying the opaque raised the count as it was read, before any
// check, the nc had to equal that count exactly, a challenge reset it,
// and one-time nonces compared the last nonce issued.
type Server struct {
	secret  [SecretLen]byte
	clients *clientTable
	nextID  atomic.Uint32 // client_id_counter: the next client number
	otn     atomic.Uint32 // otn_counter: one-time nonces issued
}

// Options configure a Server.
type Options struct {
	// Secret signs the nonces. Apache draws 20 random bytes when it
	// starts (and keeps them across graceful restarts); nil does the
	// same. A fixed secret makes nonces reproducible, for tests; it must
	// be SecretLen bytes.
	Secret []byte
	// MaxClients bounds the client table (DefaultMaxClients if 0). See
	// ClientsForShmemSize for Apache's bound.
	MaxClients int
}

// NewServer returns a Server with the options.
func NewServer(opt Options) (*Server, error) {
	s := &Server{}
	switch len(opt.Secret) {
	case 0:
		if _, err := rand.Read(s.secret[:]); err != nil {
			return nil, fmt.Errorf("digest: generating the secret: %w", err)
		}
	case SecretLen:
		copy(s.secret[:], opt.Secret)
	default:
		return nil, fmt.Errorf("digest: the secret has %d bytes, not %d", len(opt.Secret), SecretLen)
	}
	if opt.MaxClients < 0 {
		return nil, errors.New("digest: MaxClients is negative")
	}
	max := opt.MaxClients
	if max == 0 {
		max = DefaultMaxClients
	}
	s.clients = newClientTable(max)
	s.nextID.Store(1)
	return s, nil
}

// A Request is what authentication needs to know of a request.
type Request struct {
	// Method is the request method (r->method), used in H(A2). A method
	// of "CONNECT" changes how the uri parameter is compared.
	Method string
	// URI is the request-target exactly as the client sent it
	// (r->unparsed_uri), which the uri parameter normally equals.
	URI string
	// Path is the path of the request as authentication sees it
	// (r->parsed_uri.path): after httpd's normalisation (ap_normalize_path)
	// and unescaping (ap_unescape_url_ex), before any translation. It is
	// compared only when the uri parameter differs from URI; if empty,
	// the path of URI is used undecoded.
	Path string
	// ServerName and ServerPort are ap_get_server_name and
	// ap_get_server_port (with UseCanonicalName Off: the host and port
	// of the Host field, else the ServerName and the listening port).
	ServerName string
	ServerPort int
	// DefaultPort is ap_default_port: 80, or 443 over TLS (0 means 80).
	DefaultPort int
	// Proxied is set when mod_proxy handles the request (r->proxyreq:
	// ProxyPass, RewriteRule [P]): the challenge then has no domain.
	Proxied bool
	// QueryStringHack is set when the environment variable
	// AuthDigestEnableQueryStringHack is (BrowserMatch, SetEnvIf).
	QueryStringHack bool
	// Authorization is the Authorization field value (see FieldValue)
	// and HasAuthorization whether there is one.
	Authorization    string
	HasAuthorization bool
	// Time is when the request was read (r->request_time); zero means
	// now.
	Time time.Time
}

func (r *Request) usec() int64 {
	if r.Time.IsZero() {
		return time.Now().UnixMicro()
	}
	return r.Time.UnixMicro()
}

// Reason says why authentication ended as it did.
type Reason int

const (
	Granted          Reason = iota // credentials verified
	NoAuthName                     // 500 AH01780: no AuthName for the scope
	NoCredentials                  // 401: no Authorization field
	WrongScheme                    // 401 AH01781: not Digest
	Malformed                      // 401 AH01782: a needed parameter is missing or malformed
	URIMismatch                    // 400 AH01783, AH01785, AH01786: uri is not the request's
	BadOpaque                      // 401 AH01787: opaque is not a client number
	RealmMismatch                  // 401 AH01788: realm is not the scope's
	BadAlgorithm                   // 401 AH01789: algorithm is not MD5 (MD5-sess included)
	UserNotFound                   // 401 AH01790: no provider knows the user
	UserDenied                     // 401 AH01791: a provider refused the user
	ProviderFailed                 // 500: a provider failed (its own log code)
	BadQOP                         // 401 AH10560: qop is missing (RFC 2069) or not auth
	PasswordMismatch               // 401 AH01794: the response digest is wrong
	BadNonce                       // 401 stale AH01776: the nonce is not one this server made for this realm and opaque
	FutureNonce                    // 401 stale AH01777: the nonce is from the future
	ExpiredNonce                   // 401 stale AH01778: the nonce is older than its lifetime
	BadNC                          // 401 AH01773: nc is not a hex number
	UnknownClient                  // 401 stale AH10618: the client is not (or no longer) in the table
	NonceUsed                      // 401 stale AH01779: a one-time nonce was used before
	Replay                         // 401 AH01774: the nonce-count did not increase
	Refused                        // 401: authorization refused the user (Challenge)
)

var reasonNames = [...]string{
	"granted", "no AuthName", "no credentials", "wrong scheme", "malformed",
	"uri mismatch", "bad opaque", "realm mismatch", "bad algorithm",
	"user not found", "user denied", "provider failed", "bad qop",
	"password mismatch", "bad nonce", "nonce from the future",
	"nonce expired", "bad nc", "unknown client", "nonce used", "replay",
	"refused",
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// A LogEntry is one message Apache writes to its error log.
type LogEntry struct {
	Code    string // "AH01794"
	Level   string // "error" or "info"
	Message string // as Apache words it, without the module and client prefix
}

// A Result is the outcome of Authenticate.
type Result struct {
	// Status is 200 for a granted request, else the status Apache
	// answers: 400, 401 or 500.
	Status int
	Reason Reason
	// User is r->user: the username parameter, set once the field is
	// Valid, whatever the outcome after that (Apache logs it, %u).
	User string
	// Logs are the messages Apache logs for the request at level info
	// or above, in order: none for a request without an Authorization
	// field, an info message for AuthDigestEnableQueryStringHack
	// (AH01784), the reason of a failure. A provider's failure is logged
	// by the provider: its ProviderError's code is used.
	Logs []LogEntry
	// Challenge is the WWW-Authenticate field value to send with a 401,
	// and Stale whether it says stale=true. A 400 or 500 has none.
	Challenge string
	Stale     bool
	// AuthInfo is, for a granted request, the Authentication-Info field
	// value that add_auth_info adds to a response that is not an error
	// (rspauth, a nextnonce if the nonce expires within 30 seconds or
	// is a one-time nonce, cnonce, nc, qop).
	AuthInfo string
}

// LogCode is the code of the last message logged, the one that says why
// the request failed ("" if none).
func (r Result) LogCode() string {
	if len(r.Logs) == 0 {
		return ""
	}
	return r.Logs[len(r.Logs)-1].Code
}

// infoCodes are the codes mod_auth_digest logs at level info; the others
// are errors.
var infoCodes = map[string]bool{"AH01784": true, "AH01778": true, "AH10618": true, "AH01779": true}

func logEntry(code, msg string) LogEntry {
	level := "error"
	if infoCodes[code] {
		level = "info"
	}
	return LogEntry{Code: code, Level: level, Message: msg}
}

// exchange is one authentication in progress: digest_header_rec.
type exchange struct {
	s    *Server
	cfg  *Config
	req  *Request
	cred *Credentials
	hdr  HeaderStatus
	now  int64
	logs []LogEntry
}

func (s *Server) newExchange(cfg *Config, req *Request) *exchange {
	x := &exchange{s: s, cfg: cfg, req: req, now: req.usec()}
	if req.HasAuthorization {
		x.cred, x.hdr = Parse(req.Authorization)
	} else {
		x.cred, x.hdr = &Credentials{}, NoHeader
	}
	return x
}

// challenge is note_digest_auth_failure: the WWW-Authenticate value for
// this exchange. A client that sent no opaque gets a new client number
// where the scope tracks clients; one that sent an opaque that is not a
// known client number gets a new one and stale=true; a known one keeps
// its opaque, exactly as sent.
func (x *exchange) challenge(stale bool) (string, bool) {
	cfg := x.cfg
	var opaque string
	hasOpaque := false
	switch {
	case !x.cred.Has(ParamOpaque):
		if cfg.NcCheck || cfg.lifetimeUsec() == 0 {
			opaque, hasOpaque = x.s.newClient(), true
		}
	case !x.s.clients.exists(x.cred.clientID):
		opaque, hasOpaque = x.s.newClient(), true
		stale = true
	default:
		opaque, hasOpaque = x.cred.Opaque, true
	}
	realm := cfg.realm()
	nonce := x.s.genNonce(cfg, x.now, opaque, realm)

	var b strings.Builder
	b.WriteString(`Digest realm="`)
	b.WriteString(realm)
	b.WriteString(`", nonce="`)
	b.WriteString(nonce)
	b.WriteString(`", algorithm=MD5`)
	if hasOpaque {
		b.WriteString(`, opaque="`)
		b.WriteString(opaque)
		b.WriteString(`"`)
	}
	if len(cfg.Domain) > 0 && !x.req.Proxied {
		b.WriteString(`, domain="`)
		b.WriteString(strings.Join(cfg.Domain, " "))
		b.WriteString(`"`)
	}
	if stale {
		b.WriteString(", stale=true")
	}
	b.WriteString(`, qop="auth"`)
	return b.String(), stale
}

// newClient is client_generate: the next client number, added to the
// table, as the opaque (lowercase hex). Number 0, after the counter
// wraps, is skipped.
func (s *Server) newClient() string {
	id := s.nextID.Add(1) - 1
	if id == 0 {
		id = s.nextID.Add(1) - 1
	}
	s.clients.add(id)
	return fmt.Sprintf("%x", id)
}

func (x *exchange) fail(status int, reason Reason, code, msg string) Result {
	logs := x.logs
	if code != "" {
		logs = append(logs, logEntry(code, msg))
	}
	return Result{Status: status, Reason: reason, User: x.user(), Logs: logs}
}

func (x *exchange) unauthorized(reason Reason, stale bool, code, msg string) Result {
	r := x.fail(http.StatusUnauthorized, reason, code, msg)
	r.Challenge, r.Stale = x.challenge(stale)
	return r
}

func (x *exchange) user() string {
	if x.hdr == Valid {
		return x.cred.Username
	}
	return ""
}

// Challenge returns the 401 for a request that passed authentication but
// that authorization refused (Require user, group...), as
// hook_note_digest_auth_failure: a new challenge, not stale.
func (s *Server) Challenge(cfg *Config, req *Request) Result {
	x := s.newExchange(cfg, req)
	return x.unauthorized(Refused, false, "", "")
}

// Authenticate authenticates a request to a scope with AuthType Digest,
// as authenticate_digest_user of Apache 2.4.71 does, with lookup as the
// AuthDigestProvider list (see Providers and HTDigestFile). In order:
//
//  1. no AuthName: 500 (AH01780);
//  2. no Authorization field (401, no log), not Digest (401, AH01781),
//     or Invalid (401, AH01782): a new challenge;
//  3. the uri parameter is not the request's (see uriCheck): 400, no
//     challenge (AH01783, AH01785, AH01786);
//  4. an opaque that is not a client number: 401 (AH01787);
//  5. a realm that is not the scope's (compared exactly with the quoted
//     AuthName): 401 (AH01788);
//  6. an algorithm other than MD5 (any case; MD5-sess included): 401
//     (AH01789);
//  7. the lookup: user not found 401 (AH01790), ErrDenied 401 (AH01791),
//     another error 500;
//  8. a qop other than auth (any case), or none (RFC 2069): 401
//     (AH10560);
//  9. the response digest, compared in constant time: 401 (AH01794);
//  10. the nonce: not made by this server for this realm and opaque
//     (AH01776), from the future (AH01777) or older than the lifetime
//     (AH01778): 401 stale=true;
//  11. the nonce-count and one-time nonces, where the scope tracks them
//     (see Server).
//
// Every 401 carries a challenge. The nonce is checked after the password
// so that a good password with an old nonce gets stale=true, which
// clients retry silently.
func (s *Server) Authenticate(cfg *Config, req *Request, lookup Lookup) Result {
	x := s.newExchange(cfg, req)
	c := x.cred
	if !cfg.HasAuthName {
		return x.fail(http.StatusInternalServerError, NoAuthName, "AH01780", "need AuthName: "+req.Path)
	}
	realm := cfg.realm()

	switch x.hdr {
	case NoHeader:
		return x.unauthorized(NoCredentials, false, "", "")
	case NotDigest:
		return x.unauthorized(WrongScheme, false, "AH01781",
			fmt.Sprintf("client used wrong authentication scheme `%s': %s", c.Scheme, req.Path))
	case Invalid:
		return x.unauthorized(Malformed, false, "AH01782",
			"missing user, realm, nonce, uri, digest, cnonce, or nonce_count in authorization header: "+req.Path)
	}

	code, msg, hack := uriCheck(c.URI, req)
	if hack {
		x.logs = append(x.logs, logEntry("AH01784", "applying AuthDigestEnableQueryStringHack to uri <"+req.URI+">"))
	}
	if code != "" {
		return x.fail(http.StatusBadRequest, URIMismatch, code, msg)
	}
	if c.Has(ParamOpaque) && c.clientID == 0 {
		return x.unauthorized(BadOpaque, false, "AH01787", fmt.Sprintf("received invalid opaque - got `%s'", c.Opaque))
	}
	if c.Realm != realm {
		return x.unauthorized(RealmMismatch, false, "AH01788",
			fmt.Sprintf("realm mismatch - got `%s' but expected `%s'", c.Realm, realm))
	}
	if c.Has(ParamAlgorithm) && !equalFoldASCII(c.Algorithm, "MD5") {
		return x.unauthorized(BadAlgorithm, false, "AH01789",
			fmt.Sprintf("unknown algorithm `%s' received: %s", c.Algorithm, req.Path))
	}

	if lookup == nil {
		lookup = Providers()
	}
	ha1, found, err := lookup(c.Username, realm)
	switch {
	case errors.Is(err, ErrDenied):
		return x.unauthorized(UserDenied, false, "AH01791",
			fmt.Sprintf("user `%s' in realm `%s' denied by provider: %s", c.Username, realm, req.Path))
	case err != nil:
		var pe *ProviderError
		if errors.As(err, &pe) {
			return x.fail(http.StatusInternalServerError, ProviderFailed, pe.Code, pe.Err.Error())
		}
		r := x.fail(http.StatusInternalServerError, ProviderFailed, "", "")
		r.Logs = append(r.Logs, LogEntry{Level: "error", Message: err.Error()})
		return r
	case !found:
		return x.unauthorized(UserNotFound, false, "AH01790",
			fmt.Sprintf("user `%s' in realm `%s' not found: %s", c.Username, realm, req.Path))
	}

	if !c.Has(ParamQOP) || !equalFoldASCII(c.QOP, "auth") {
		qop := "(null)"
		if c.Has(ParamQOP) {
			qop = c.QOP
		}
		return x.unauthorized(BadQOP, false, "AH10560",
			fmt.Sprintf("invalid or missing qop value '%s', RFC 2069 is no longer supported: %s", qop, req.Path))
	}
	expected := ResponseDigest(ha1, c.Nonce, c.NC, c.CNonce, c.QOP, req.Method, c.URI)
	if !equalConstantTime(expected, c.Response) {
		return x.unauthorized(PasswordMismatch, false, "AH01794",
			fmt.Sprintf("user %s: password mismatch: %s", c.Username, req.Path))
	}

	// check_nonce
	nonceTime, wantHash, ok := s.verifyNonce(c.Nonce, c.Opaque, realm)
	if !ok {
		return x.unauthorized(BadNonce, true, "AH01776",
			fmt.Sprintf("invalid nonce %s received - hash is not %s", c.Nonce, wantHash))
	}
	lifetime := cfg.lifetimeUsec()
	dt := x.now - nonceTime
	if lifetime > 0 && dt < 0 {
		return x.unauthorized(FutureNonce, true, "AH01777",
			fmt.Sprintf("invalid nonce %s received - user attempted time travel", c.Nonce))
	}
	if lifetime > 0 && dt > lifetime {
		return x.unauthorized(ExpiredNonce, true, "AH01778",
			fmt.Sprintf("user %s: nonce expired (%.2f seconds old - max lifetime %.2f) - sending new nonce",
				c.Username, float64(dt/1_000_000), float64(lifetime/1_000_000)))
	}

	// check_and_record_nonce
	if cfg.NcCheck || lifetime == 0 {
		n, end, _ := strtol(c.NC, 16)
		if end < len(c.NC) && !isSpace(c.NC[end]) {
			return x.unauthorized(BadNC, false, "AH01773", fmt.Sprintf("invalid nc %s received - not a number", c.NC))
		}
		nc := uint64(n) // unsigned long from long
		st, tracked, known := s.clients.update(c.clientID, lifetime == 0, nonceTime, nc)
		switch {
		case !known:
			return x.unauthorized(UnknownClient, true, "AH10618",
				fmt.Sprintf("client %d is no longer known - sending new nonce", c.clientID))
		case st == nonceStale:
			return x.unauthorized(NonceUsed, true, "AH01779",
				fmt.Sprintf("user %s: one-time-nonce %s already used - sending new nonce", c.Username, c.Nonce))
		case st == nonceBadCount:
			return x.unauthorized(Replay, false, "AH01774",
				fmt.Sprintf("Warning, possible replay attack: nonce-count check failed: %d is not above %d for nonce %s", nc, tracked, c.Nonce))
		}
	}

	return Result{Status: http.StatusOK, Reason: Granted, User: c.Username, Logs: x.logs, AuthInfo: x.authInfo(ha1, nonceTime)}
}

// authInfo is add_auth_info: the Authentication-Info value of a granted
// request.
func (x *exchange) authInfo(ha1 string, nonceTime int64) string {
	c, cfg := x.cred, x.cfg
	var b strings.Builder
	b.WriteString(`rspauth="`)
	b.WriteString(rspauth(ha1, c.Nonce, c.NC, c.CNonce, c.QOP, c.URI))
	b.WriteString(`"`)
	lifetime := cfg.lifetimeUsec()
	next := ""
	switch {
	case lifetime > 0 && x.now-nonceTime > lifetime-nextNonceDelta.Microseconds():
		next = x.s.genNonce(cfg, x.now, c.Opaque, cfg.realm())
	case lifetime == 0 && c.clientID != 0:
		next = x.s.genNonce(cfg, 0, c.Opaque, cfg.realm())
	}
	if next != "" {
		b.WriteString(`, nextnonce="`)
		b.WriteString(next)
		b.WriteString(`"`)
	}
	b.WriteString(`, cnonce="`)
	b.WriteString(escapeQuotes(c.CNonce))
	b.WriteString(`", nc=`)
	b.WriteString(c.NC)
	b.WriteString(", qop=")
	b.WriteString(c.QOP)
	return b.String()
}

// equalConstantTime compares the expected digest with the one sent in
// time that depends only on the length of the expected one.
func equalConstantTime(expected, got string) bool {
	if len(got) != len(expected) {
		return false // Parse already refuses a response not of 32 bytes
	}
	var v byte
	for i := 0; i < len(expected); i++ {
		v |= expected[i] ^ got[i]
	}
	return v == 0
}

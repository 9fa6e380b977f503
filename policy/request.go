package policy

import (
	"net/netip"
)

// Request is what access control sees of one HTTP request (Apache's
// request_rec fields that mod_access_compat, mod_authz_* and mod_auth_basic
// read).
type Request struct {
	Method    int        // method number (Methods.Number)
	Addr      netip.Addr // client address (2.4: useragent_addr)
	LocalAddr netip.Addr // the address the client connected to
	Env       Env        // subprocess_env when access checks run
	URI       string     // decoded, normalised path (for log lines)
	Filename  string     // r->filename after the directory walk (for log lines)
	Now       int64      // unix nanoseconds, for rules' last-hit times; 0 leaves them alone
	// Dry evaluates without counting: no rule's counters or hit times
	// change. A policy enforced with some rules demoted to shadow-only is
	// decided dry, the full policy beside it counts.
	Dry bool
	// DeferNecessity leaves counting the decision's necessary rules to
	// the caller (Decision.Necessary, Necessity.Count), which knows the
	// final answer: the directory walk, whose answer an index subrequest
	// can make the same with or without a rule.
	DeferNecessity bool

	// Credentials from the Authorization header.
	Auth Credentials
	// Digest is what Digest authentication reads of the request (nil:
	// AuthType Digest answers 500).
	Digest *DigestRequest
	// LDAP is the request's LDAP state (nil: a new one when asked).
	LDAP *LDAPState

	// Host gives the client's double-reverse verified host name. It is
	// asked only when a host rule is reached. Nil means no name.
	Host HostNamer

	// Owners tells who owns Filename (Require file-owner, file-group,
	// dbm-file-group). It is asked only when such a line is reached. Nil
	// means the file cannot be stat'ed.
	Owners FileOwners

	// SSL is what mod_ssl's hooks do for this request (ssl.go); the zero
	// value when mod_ssl is not loaded.
	SSL SSL
}

// HostNamer gives a client's double-reverse verified host name, lowercased,
// or false when there is none. Implementations look it up once per request.
type HostNamer interface {
	VerifiedHost() (string, bool)
}

func (r *Request) verifiedHost() (string, bool) {
	if r.Host == nil {
		return "", false
	}
	return r.Host.VerifiedHost()
}

// Credentials is the Authorization header as mod_auth_basic reads it.
type Credentials struct {
	Present  bool   // an Authorization header was sent
	Basic    bool   // its scheme was Basic (case-insensitive)
	User     string // before the first ':' of the decoded value
	Password string
}

// Env is the request environment (r->subprocess_env): names compare
// case-insensitively, as in every APR table; existence is what access
// rules test.
type Env struct {
	kv []string // name, value, name, value ...; names kept as first set
}

// Get returns the value of name and whether it is set.
func (e *Env) Get(name string) (string, bool) {
	for i := 0; i < len(e.kv); i += 2 {
		if equalFold(e.kv[i], name) {
			return e.kv[i+1], true
		}
	}
	return "", false
}

// Set sets name to value.
func (e *Env) Set(name, value string) {
	for i := 0; i < len(e.kv); i += 2 {
		if equalFold(e.kv[i], name) {
			e.kv[i+1] = value
			return
		}
	}
	e.kv = append(e.kv, name, value)
}

// Unset removes name.
func (e *Env) Unset(name string) {
	for i := 0; i < len(e.kv); i += 2 {
		if equalFold(e.kv[i], name) {
			e.kv = append(e.kv[:i], e.kv[i+2:]...)
			return
		}
	}
}

// Len returns the number of variables set.
func (e *Env) Len() int { return len(e.kv) / 2 }

// At returns the i-th variable.
func (e *Env) At(i int) (name, value string) { return e.kv[2*i], e.kv[2*i+1] }

// InDomain is Apache's in_domain (mod_authz_host, mod_access_compat): a
// case-insensitive suffix match on a label boundary. "example.org" matches
// "example.org" and "www.example.org" but not "badexample.org";
// ".example.org" does not match the apex.
func InDomain(pattern, host string) bool {
	dl, hl := len(pattern), len(host)
	if dl == 0 || dl > hl {
		return false
	}
	if !equalFold(host[hl-dl:], pattern) {
		return false
	}
	return dl == hl || pattern[0] == '.' || host[hl-dl-1] == '.'
}

package ldapauth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-ldap/ldap/v3"
)

// Result is an authentication outcome (authn_status).
type Result int

const (
	AuthGranted      Result = iota // AUTH_GRANTED
	AuthDenied                     // AUTH_DENIED: wrong password, or refused by the server (401)
	AuthUserNotFound               // AUTH_USER_NOT_FOUND: the next provider is asked, else 401
	AuthGeneralError               // AUTH_GENERAL_ERROR: 500
)

func (r Result) String() string {
	return [...]string{"granted", "denied", "user not found", "general error"}[r]
}

// Authn is the LDAP state of one request (authn_ldap_request_t): what
// [Client.Authenticate] found, whatever the outcome, or what the first
// authorization check found for a user that another module
// authenticated. Keep it for the request's authorization checks.
type Authn struct {
	Result Result
	// User is the name the client sent (req->user).
	User string
	// DN is the user's entry ("" unless found).
	DN string
	// Attrs holds the values of the URL's attributes, keyed as the URL
	// names them (nil when the URL names none).
	Attrs map[string][]string
	// Err says why authentication did not succeed: an *OpError for an
	// LDAP failure. It holds no password.
	Err error

	attrs    []string   // the URL's attributes, in order
	vals     [][]string // their values
	password string     // set once granted: AuthLDAPSearchAsUser, CompareAsUser
}

// RemoteUser returns what Apache makes r->user after a granted
// authentication: the DN with AuthLDAPRemoteUserIsDN, else the first
// value of AuthLDAPRemoteUserAttribute when the URL asks for that
// attribute (values joined by "; "), else the name sent.
func (a *Authn) RemoteUser(cfg *Config) string {
	u := a.User
	if cfg.RemoteUserIsDN {
		u = a.DN
	}
	if cfg.RemoteUserAttribute != "" {
		for i, name := range a.attrs {
			if name == cfg.RemoteUserAttribute {
				u = strings.Join(a.vals[i], "; ")
			}
		}
	}
	return u
}

// Env returns the variables Apache sets from the URL's attributes, each
// named prefix+ATTRIBUTE (upper case) with the values joined by "; ":
// prefix "AUTHENTICATE_" after authentication, Config.AuthorizePrefix
// after an authorization that granted (set_request_vars).
func (a *Authn) Env(prefix string) map[string]string {
	if len(a.attrs) == 0 || a.vals == nil {
		return nil
	}
	env := make(map[string]string, len(a.attrs))
	for i, name := range a.attrs {
		env[prefix+strings.ToUpper(name)] = strings.Join(a.vals[i], "; ")
	}
	return env
}

func (a *Authn) setVals(attrs []string, vals [][]string) {
	a.attrs, a.vals = attrs, vals
	if len(attrs) == 0 {
		a.Attrs = nil
		return
	}
	a.Attrs = make(map[string][]string, len(attrs))
	for i, name := range attrs {
		if i < len(vals) {
			a.Attrs[name] = vals[i]
		}
	}
}

// filterLength is FILTER_LENGTH (MAX_STRING_LEN).
const filterLength = 8192

// buildFilter is authn_ldap_build_filter: (&(filter)(attribute=user))
// with the user's * ( ) \ escaped by a backslash; (attribute=user) alone
// for the 2.4 filter "none" (or an empty one). In 2.4 a filter that does
// not fit in FILTER_LENGTH bytes is an error (ok false: AH02622, AH02623);
// 2.2 cuts it short, leaving a filter the LDAP library refuses.
func buildFilter(cfg *Config, user, filter string) (string, bool) {
	user = cstring(user)
	if filter == "" && cfg.URL != nil {
		filter = cfg.URL.Filter
	}
	attr := "uid"
	if cfg.URL != nil {
		attr = cfg.URL.Attribute
	}
	end := filterLength - 1
	if cfg.Version == Apache22 {
		b := []byte("(&(" + filter + ")(" + attr + "=")
		if len(b) > end {
			b = b[:end]
		}
		for i := 0; i < len(user) && len(b) < end; i++ {
			if strings.IndexByte(`*()\`, user[i]) >= 0 {
				b = append(b, '\\')
				if len(b) >= end {
					break
				}
			}
			b = append(b, user[i])
		}
		if len(b)+2 <= end {
			b = append(b, ')', ')')
		}
		return string(b), true
	}
	nofilter := filter == "" || strings.EqualFold(filter, "none")
	var b []byte
	if nofilter {
		b = []byte("(" + attr + "=")
	} else {
		b = []byte("(&(" + filter + ")(" + attr + "=")
	}
	for i := 0; i < len(user); i++ {
		if strings.IndexByte(`*()\`, user[i]) >= 0 {
			if len(b)+2 >= end {
				return string(b), false
			}
			b = append(b, '\\', user[i])
		} else {
			if len(b)+1 >= end {
				return string(b), false
			}
			b = append(b, user[i])
		}
	}
	if nofilter {
		if len(b)+1 >= end {
			return string(b), false
		}
		b = append(b, ')')
	} else {
		if len(b)+2 >= end {
			return string(b), false
		}
		b = append(b, ')', ')')
	}
	return string(b), true
}

// wireFilter turns a filter as libldap reads it into one go-ldap reads
// the same way: the LDAPv2 escapes \* \( \) \\ that Apache writes become
// RFC 4515 hex escapes, and bytes that are not UTF-8 are hex-escaped
// (libldap sends them as they are).
func wireFilter(f string) string {
	var b strings.Builder
	for i := 0; i < len(f); {
		c := f[i]
		if c == '\\' && i+1 < len(f) && !isHex(f[i+1]) && strings.IndexByte(`*()\`, f[i+1]) >= 0 {
			fmt.Fprintf(&b, `\%02x`, f[i+1])
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(f[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\%02x`, c)
		} else {
			b.WriteString(f[i : i+n])
		}
		i += n
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func searchAttrs(cfg *Config) []string {
	if cfg.URL != nil && len(cfg.URL.Attributes) > 0 {
		return cfg.URL.Attributes
	}
	return []string{"1.1"} // Apache asks for all and reads none
}

func entryVals(e *ldap.Entry, attrs []string) [][]string {
	if len(attrs) == 0 {
		return nil
	}
	vals := make([][]string, len(attrs))
	for i, a := range attrs {
		vals[i] = e.GetEqualFoldAttributeValues(a)
	}
	return vals
}

func (c *Client) scope(cfg *Config) int {
	if cfg.URL.Scope == ScopeOne {
		return ldap.ScopeSingleLevel
	}
	return ldap.ScopeWholeSubtree
}

// CheckPassword authenticates user with password as
// authn_ldap_check_password does, and returns the outcome, the user's DN
// and the values of the URL's attributes. err is non-nil when the outcome
// is not AuthGranted and an LDAP operation failed: for the log (it holds
// no password); AuthGeneralError is the case for a 500.
func (c *Client) CheckPassword(ctx context.Context, cfg *Config, user, password string) (Result, string, map[string][]string, error) {
	a := c.Authenticate(ctx, cfg, user, password)
	return a.Result, a.DN, a.Attrs, a.Err
}

// Authenticate is CheckPassword returning the request's LDAP state, which
// the authorization checks of the same request take.
func (c *Client) Authenticate(ctx context.Context, cfg *Config, user, password string) *Authn {
	user, password = cstring(user), cstring(password)
	a := &Authn{User: user}
	if cfg.URL == nil {
		a.Result, a.Err = AuthGeneralError, fmt.Errorf("no AuthLDAPURL")
		return a
	}
	if cfg.Version == Apache24 && password == "" {
		// "A bind to the server with an empty password always succeeds".
		a.Result, a.Err = AuthDenied, fmt.Errorf("auth_ldap authenticate: empty password specified")
		return a
	}
	bindDN, bindPW := cfg.BindDN, cfg.BindPassword
	if cfg.Version == Apache24 && cfg.InitialBindAsUser {
		bindDN, bindPW = initialBindDN(cfg, user), password
	}
	s := c.session(cfg, bindDN, bindPW)
	defer s.close()
	filter, ok := buildFilter(cfg, user, "")
	if !ok {
		a.Result, a.Err = AuthGeneralError, fmt.Errorf("auth_ldap authenticate: ldap filter too long (>%d)", filterLength)
		return a
	}
	dn, vals, err := c.checkUserID(ctx, cfg, s, filter, password)
	if err != nil {
		a.Err = err
		code := resServerDown
		var oe *OpError
		if errors.As(err, &oe) {
			code = oe.Code
		}
		switch {
		case !cfg.BindAuthoritative:
			a.Result = AuthUserNotFound
		case cfg.Version == Apache24 && strings.EqualFold(cfg.URL.Filter, "none") && code == resOther:
			a.Result = AuthUserNotFound
		case code == resNoSuchObject:
			a.Result = AuthUserNotFound
		case code >= resProxyAuthzFailure && code <= resInsufficientAccess, code == resConstraintViolation:
			// LDAP_SECURITY_ERROR, LDAP_CONSTRAINT_VIOLATION
			a.Result = AuthDenied
		default:
			a.Result = AuthGeneralError
		}
		return a
	}
	a.Result, a.DN, a.password = AuthGranted, dn, password
	a.setVals(cfg.URL.Attributes, vals)
	return a
}

// initialBindDN is ldap_determine_binddn: AuthLDAPInitialBindPattern's
// template filled from the user name when the pattern matches.
func initialBindDN(cfg *Config, user string) string {
	if cfg.InitialBindPattern == nil {
		return user
	}
	m := cfg.InitialBindPattern.FindStringSubmatchIndex(user)
	if m == nil {
		return user
	}
	return pregsub(cfg.InitialBindSubst, user, m)
}

// pregsub is ap_pregsub: the template with & and $0..$9 replaced by the
// match and its groups, and \ escaping the next character.
func pregsub(tmpl, src string, m []int) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		no := -1
		switch {
		case c == '&':
			no = 0
		case c == '$' && i+1 < len(tmpl) && tmpl[i+1] >= '0' && tmpl[i+1] <= '9':
			i++
			no = int(tmpl[i] - '0')
		}
		if no < 0 {
			if c == '\\' && i+1 < len(tmpl) && (tmpl[i+1] == '\\' || tmpl[i+1] == '$' || tmpl[i+1] == '&') {
				i++
				c = tmpl[i]
			}
			b.WriteByte(c)
			continue
		}
		if 2*no+1 < len(m) && m[2*no] >= 0 {
			b.WriteString(src[m[2*no]:m[2*no+1]])
		}
	}
	return b.String()
}

// checkUserID is uldap_cache_checkuserid: the search cache (a hit needs
// the same, non-empty password that bound last time), else a search for
// exactly one entry and a bind as it with the password.
func (c *Client) checkUserID(ctx context.Context, cfg *Config, s *session, filter, password string) (string, [][]string, error) {
	uc := c.cachesFor(cfg.URL.Raw)
	pwHash := c.hashPW(password)
	if uc != nil {
		if n, ok := uc.search.get(filter); ok {
			switch {
			case c.now().Sub(n.lastbind) > c.opts.CacheTTL:
				uc.search.remove(filter)
				c.ctr.search.misses.Add(1)
			case n.hasPW && password != "" && n.pwHash == pwHash:
				c.ctr.search.hits.Add(1)
				return n.dn, n.vals, nil
			default:
				c.ctr.search.misses.Add(1)
			}
		} else {
			c.ctr.search.misses.Add(1)
		}
	}
	if libldapRefuses(filter) {
		return "", nil, &OpError{Code: resFilterError, Op: "search", Reason: "ldap_search_ext_s() for user failed"}
	}
	attrs := cfg.URL.Attributes
	var dn string
	var vals [][]string
	err := s.retry(ctx, func(int) bool { return true }, func(l *ldap.Conn) error {
		e, err := c.searchUser(l, cfg, filter)
		if err != nil {
			return err
		}
		dn = e.DN
		if password == "" {
			return &OpError{Code: resInvalidCredentials, Op: "bind", Reason: "Empty password not allowed"}
		}
		// The connection is bound as the user from now on, whatever the
		// outcome: it must bind again before its next use.
		s.cn.bound = false
		_, err = l.SimpleBind(&ldap.SimpleBindRequest{Username: dn, Password: password, AllowEmptyPassword: true})
		if err != nil {
			return &OpError{Code: codeOf(err), Op: "bind", Reason: "ldap_simple_bind() to check user credentials failed", Err: err}
		}
		vals = entryVals(e, attrs)
		return nil
	})
	if err != nil {
		return dn, nil, err
	}
	if uc != nil {
		now := c.now()
		uc.search.update(filter, func(old searchNode, exists bool) (searchNode, bool) {
			if exists && old.dn == dn && old.hasPW && old.pwHash == pwHash {
				old.lastbind = now
				return old, true
			}
			return searchNode{dn: dn, pwHash: pwHash, hasPW: true, vals: vals, lastbind: now}, true
		})
	}
	return dn, vals, nil
}

// searchUser searches for the user's entry as uldap_cache_checkuserid and
// uldap_cache_getuserdn do: exactly one entry, else "User not found" or
// "User is not unique".
func (c *Client) searchUser(l *ldap.Conn, cfg *Config, filter string) (*ldap.Entry, error) {
	res, err := l.Search(&ldap.SearchRequest{
		BaseDN: cfg.URL.BaseDN, Scope: c.scope(cfg), DerefAliases: int(cfg.Deref),
		Filter: wireFilter(filter), Attributes: searchAttrs(cfg),
	})
	if err != nil {
		return nil, &OpError{Code: codeOf(err), Op: "search", Reason: "ldap_search_ext_s() for user failed", Err: err}
	}
	if len(res.Entries) != 1 {
		reason := "User not found"
		if len(res.Entries) > 1 {
			reason = "User is not unique (search found two or more matches)"
		}
		return nil, &OpError{Code: resNoSuchObject, Op: "search", Reason: reason}
	}
	return res.Entries[0], nil
}

// getUserDN is uldap_cache_getuserdn: checkUserID without the password.
func (c *Client) getUserDN(ctx context.Context, cfg *Config, s *session, filter string) (string, [][]string, error) {
	uc := c.cachesFor(cfg.URL.Raw)
	if uc != nil {
		if n, ok := uc.search.get(filter); ok {
			if c.now().Sub(n.lastbind) > c.opts.CacheTTL {
				uc.search.remove(filter)
				c.ctr.search.misses.Add(1)
			} else {
				c.ctr.search.hits.Add(1)
				return n.dn, n.vals, nil
			}
		} else {
			c.ctr.search.misses.Add(1)
		}
	}
	if libldapRefuses(filter) {
		return "", nil, &OpError{Code: resFilterError, Op: "search", Reason: "ldap_search_ext_s() for user failed"}
	}
	attrs := cfg.URL.Attributes
	var dn string
	var vals [][]string
	err := s.retry(ctx, func(int) bool { return false }, func(l *ldap.Conn) error {
		e, err := c.searchUser(l, cfg, filter)
		if err != nil {
			return err
		}
		dn, vals = e.DN, entryVals(e, attrs)
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if uc != nil {
		now := c.now()
		uc.search.update(filter, func(old searchNode, exists bool) (searchNode, bool) {
			switch {
			case !exists || old.dn != dn:
				return searchNode{dn: dn, vals: vals, lastbind: now}, true
			case !old.hasPW:
				old.lastbind = now
				return old, true
			}
			return old, false
		})
	}
	return dn, vals, nil
}

// libldapRefuses reports whether libldap's filter parser
// (ldap_pvt_put_filter) refuses f where go-ldap takes it: a filter that
// opens with a second "(" (spaces between allowed), as "Require
// ldap-filter (a=b)" makes of the filter Apache builds,
// "(&((a=b))(uid=x))", which go-ldap reads as "(&(a=b)(uid=x))" and
// libldap refuses (LDAP_FILTER_ERROR).
func libldapRefuses(f string) bool {
	i := 0
	space := func() {
		for i < len(f) && (f[i] == ' ' || f[i] == '\t' || f[i] == '\n') {
			i++
		}
	}
	var filter func() (refused, ok bool)
	filter = func() (bool, bool) {
		if i >= len(f) || f[i] != '(' {
			return false, false
		}
		i++
		space()
		if i >= len(f) {
			return false, false
		}
		switch f[i] {
		case '(':
			return true, true
		case '&', '|', '!':
			i++
			for space(); i < len(f) && f[i] == '('; space() {
				if refused, ok := filter(); refused || !ok {
					return refused, ok
				}
			}
			if i >= len(f) || f[i] != ')' {
				return false, false
			}
			i++
			return false, true
		}
		// A simple filter runs to its right parenthesis (find_right_paren:
		// balanced, escapes skipped).
		for depth := 1; i < len(f); i++ {
			switch f[i] {
			case '\\':
				i++
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					i++
					return false, true
				}
			}
		}
		return false, false
	}
	space()
	refused, _ := filter()
	return refused
}

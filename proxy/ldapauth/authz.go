package ldapauth

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-ldap/ldap/v3"
)

// Decision is an authorization outcome (authz_status).
type Decision int

const (
	AuthzDenied       Decision = iota // AUTHZ_DENIED
	AuthzGranted                      // AUTHZ_GRANTED
	AuthzNeutral                      // AUTHZ_NEUTRAL (never returned by the ldap-* providers)
	AuthzGeneralError                 // AUTHZ_GENERAL_ERROR (never returned by the ldap-* providers)
	AuthzDeniedNoUser                 // AUTHZ_DENIED_NO_USER: no authenticated user yet
)

func (d Decision) String() string {
	return [...]string{"denied", "granted", "neutral", "general error", "denied (no user)"}[d]
}

// Require names the Require forms of mod_authnz_ldap.
type Require string

const (
	RequireUser      Require = "ldap-user"
	RequireGroup     Require = "ldap-group"
	RequireDN        Require = "ldap-dn"
	RequireAttribute Require = "ldap-attribute"
	RequireFilter    Require = "ldap-filter"
	// RequireSearch (2.4.63 and later): granted when the filter, searched
	// under the URL's base and scope, finds exactly one entry. It needs no
	// user, so mod_authz_core decides it before authentication: denied
	// there is a 403.
	RequireSearch Require = "ldap-search"
)

// Request is what the authorization checks of one HTTP request share.
type Request struct {
	// User is r->user: the authenticated user, as the authentication
	// left it (the DN with AuthLDAPRemoteUserIsDN, ...); "" for none.
	User string
	// Authn is the request's LDAP state: the result of Authenticate when
	// mod_authnz_ldap was asked to authenticate (granted or not), nil
	// otherwise. The first check fills it in for a user that another
	// module authenticated, and later checks reuse it.
	Authn *Authn
}

type opType int

const (
	opSearch opType = iota
	opCompare
	opCompareAndSearch
)

// authzSession is get_connection_for_authz: the configured bind DN, or
// the user's own DN and password when this module authenticated the user
// and AuthLDAPSearchAsUser / AuthLDAPCompareAsUser say so.
func (c *Client) authzSession(cfg *Config, req *Request, t opType) *session {
	dn, pw := cfg.BindDN, cfg.BindPassword
	if a := req.Authn; cfg.Version == Apache24 && a != nil && a.password != "" {
		if (t == opSearch && cfg.SearchAsUser) || (t == opCompare && cfg.CompareAsUser) ||
			(t == opCompareAndSearch && cfg.CompareAsUser && cfg.SearchAsUser) {
			dn, pw = a.DN, a.password
		}
	}
	return c.session(cfg, dn, pw)
}

// fixup creates the request's LDAP state for a user that another module
// authenticated: a search for r->user's DN. 2.4 (get_dn_for_nonldap_authn)
// searches whenever the state has no DN, also after this module failed to
// authenticate and a later provider succeeded; 2.2 only when this module
// was not asked at all (its "if (!req)" block).
func (c *Client) fixup(ctx context.Context, cfg *Config, req *Request, s *session) error {
	if req.Authn != nil && (cfg.Version == Apache22 || req.Authn.DN != "") {
		return nil
	}
	filter, ok := buildFilter(cfg, req.User, "")
	if !ok {
		return fmt.Errorf("auth_ldap authorize: ldap filter too long (>%d)", filterLength)
	}
	dn, vals, err := c.getUserDN(ctx, cfg, s, filter)
	if err != nil {
		return fmt.Errorf("auth_ldap authorise: User DN not found: %w", err)
	}
	a := req.Authn
	if a == nil {
		a = &Authn{}
		req.Authn = a
	}
	a.User, a.DN = req.User, dn
	a.setVals(cfg.URL.Attributes, vals)
	return nil
}

var errNoDN = errors.New("auth_ldap authorize: user's DN has not been defined; failing authorization")

// Authorize decides one "Require <form> <args>" line as mod_authnz_ldap
// 2.4's provider for the form does (ldapuser_check_authorization and its
// siblings). args is the line's argument after ap_expr has evaluated it
// (for a line without %{...} that is the text after the form, quotes
// and all). The error, if any, says why the check failed (an LDAP error
// among them): Apache then denies, it never answers 500 from here.
func (c *Client) Authorize(ctx context.Context, cfg *Config, req *Request, form Require, args string) (Decision, error) {
	if cfg.Version != Apache24 {
		return AuthzDenied, errors.New("ldapauth: Authorize is for Apache 2.4; use Authorize22")
	}
	if form == RequireSearch {
		return c.authorizeSearch(ctx, cfg, req, args)
	}
	if req.User == "" {
		return AuthzDeniedNoUser, nil
	}
	if cfg.URL == nil {
		return AuthzDenied, errors.New("no AuthLDAPURL")
	}
	var t opType
	switch form {
	case RequireUser, RequireGroup, RequireAttribute:
		t = opCompare
	case RequireDN, RequireFilter:
		t = opSearch
	default:
		return AuthzDenied, fmt.Errorf("ldapauth: unknown Require form %q", form)
	}
	s := c.authzSession(cfg, req, t)
	defer func() { s.close() }()
	if err := c.fixup(ctx, cfg, req, s); err != nil {
		return AuthzDenied, err
	}
	a := req.Authn
	url := cfg.URL.Raw
	var last error
	note := func(code int, err error) {
		if err != nil {
			last = err
		}
	}
	switch form {
	case RequireUser:
		if a.DN == "" {
			return AuthzDenied, errNoDN
		}
		if code, err := c.compare(ctx, s, url, a.DN, cfg.URL.Attribute, args); code == resCompareTrue {
			return AuthzGranted, nil
		} else {
			note(code, err)
		}
		for t := args; ; {
			var w string
			if w, t = getwordConf(t); w == "" {
				break
			}
			code, err := c.compare(ctx, s, url, a.DN, cfg.URL.Attribute, w)
			if code == resCompareTrue {
				return AuthzGranted, nil
			}
			note(code, err)
		}
	case RequireGroup:
		value := a.DN
		if cfg.GroupAttributeIsDN {
			if a.DN == "" {
				return AuthzDenied, errNoDN
			}
		} else {
			if a.User == "" {
				a.User = req.User
			}
			value = a.User
		}
		attrs := cfg.groupAttributes()
		for _, attr := range attrs {
			code, err := c.compare(ctx, s, url, args, attr, value)
			if code == resCompareTrue {
				return AuthzGranted, nil
			}
			note(code, err)
		}
		// Nested groups need searches and compares: a new handle.
		s.close()
		s = c.authzSession(cfg, req, opCompareAndSearch)
		for _, attr := range attrs {
			code := c.checkSubgroups(ctx, s, url, args, attr, value, cfg.subGroupAttributes(), cfg.subGroupClasses(), 0, cfg.MaxSubGroupDepth, cfg.Deref)
			if code == resCompareTrue {
				return AuthzGranted, nil
			}
		}
	case RequireDN:
		if a.DN == "" {
			return AuthzDenied, errNoDN
		}
		code, err := c.compareDN(ctx, s, url, a.DN, args, cfg.CompareDNOnServer, cfg.Deref)
		if code == resCompareTrue {
			return AuthzGranted, nil
		}
		note(code, err)
	case RequireAttribute:
		if a.DN == "" {
			return AuthzDenied, errNoDN
		}
		for t := args; t != ""; {
			var name, value string
			name, t = getword(t, '=')
			value, t = getwordConf(t)
			code, err := c.compare(ctx, s, url, a.DN, name, value)
			if code == resCompareTrue {
				return AuthzGranted, nil
			}
			note(code, err)
		}
	case RequireFilter:
		if a.DN == "" {
			return AuthzDenied, errNoDN
		}
		if args != "" {
			filter, ok := buildFilter(cfg, a.User, args)
			if !ok {
				return AuthzDenied, fmt.Errorf("auth_ldap authorize: ldap filter too long (>%d)", filterLength)
			}
			dn, _, err := c.getUserDN(ctx, cfg, s, filter)
			if err != nil {
				return AuthzDenied, err
			}
			if cfg.CompareAsUser {
				s.close()
				s = c.authzSession(cfg, req, opCompare)
			}
			code, err := c.compareDN(ctx, s, url, a.DN, dn, cfg.CompareDNOnServer, cfg.Deref)
			if code == resCompareTrue {
				return AuthzGranted, nil
			}
			note(code, err)
		}
	}
	return AuthzDenied, last
}

// authorizeSearch is ldapsearch_check_authorization.
func (c *Client) authorizeSearch(ctx context.Context, cfg *Config, req *Request, filter string) (Decision, error) {
	if cfg.URL == nil {
		return AuthzDenied, errors.New("no AuthLDAPURL")
	}
	if req.Authn == nil {
		req.Authn = &Authn{}
	}
	if filter == "" {
		return AuthzDenied, nil
	}
	s := c.authzSession(cfg, req, opSearch)
	defer s.close()
	dn, vals, err := c.getUserDN(ctx, cfg, s, filter)
	if err != nil || dn == "" {
		return AuthzDenied, err
	}
	req.Authn.DN = dn
	req.Authn.setVals(cfg.URL.Attributes, vals)
	return AuthzGranted, nil
}

// Status22 is the answer of 2.2's auth_checker hook.
type Status22 int

const (
	OK22           Status22 = iota // OK: access granted
	Unauthorized22                 // HTTP_UNAUTHORIZED: 401
	Declined22                     // DECLINED: the next authorization module decides
)

func (s Status22) String() string {
	return [...]string{"OK", "HTTP_UNAUTHORIZED", "DECLINED"}[s]
}

// Authorize22 decides as 2.2's authz_ldap_check_user_access: lines are the
// Require lines that apply to the request's method, each the text after
// "Require" (e.g. "ldap-group cn=admins,dc=example,dc=org"), in order.
// The hook runs before mod_authz_user's, so with AuthzLDAPAuthoritative on
// (the default) a Require valid-user beside an ldap-* line that does not
// match still ends in 401. LDAP errors never make a 500 here either.
// at is the index of the line that decided: the one that granted, or
// the one whose check needed the user's DN and found none; -1 when the
// hook refused after every line, or before any (the user's DN not
// found).
func (c *Client) Authorize22(ctx context.Context, cfg *Config, req *Request, lines []string) (s Status22, at int, err error) {
	if cfg.URL == nil {
		return Declined22, -1, nil
	}
	ldapLine := false
	for _, l := range lines {
		if w, _ := getwordWhite(l); len(w) >= 5 && w[:5] == "ldap-" {
			ldapLine = true
			break
		}
	}
	if !ldapLine {
		return Declined22, -1, nil
	}
	at = -1
	fail := func(err error) (Status22, int, error) {
		if cfg.Authoritative {
			return Unauthorized22, at, err
		}
		return Declined22, at, err
	}
	ok := func() (Status22, int, error) { return OK22, at, nil }
	sess := c.session(cfg, cfg.BindDN, cfg.BindPassword)
	defer sess.close()
	if err := c.fixup(ctx, cfg, req, sess); err != nil {
		return fail(err)
	}
	a := req.Authn
	url := cfg.URL.Raw
	var last error
	note := func(err error) {
		if err != nil {
			last = err
		}
	}
	for i, line := range lines {
		at = i
		w, t := getwordWhite(line)
		switch w {
		case "ldap-user":
			if a.DN == "" {
				return fail(errNoDN)
			}
			code, err := c.compare(ctx, sess, url, a.DN, cfg.URL.Attribute, t)
			if code == resCompareTrue {
				return ok()
			}
			note(err)
			for t != "" {
				w, t = getwordConf(t)
				code, err := c.compare(ctx, sess, url, a.DN, cfg.URL.Attribute, w)
				if code == resCompareTrue {
					return ok()
				}
				note(err)
			}
		case "ldap-dn":
			if a.DN == "" {
				return fail(errNoDN)
			}
			code, err := c.compareDN(ctx, sess, url, a.DN, t, cfg.CompareDNOnServer, cfg.Deref)
			if code == resCompareTrue {
				return ok()
			}
			note(err)
		case "ldap-group":
			value := a.DN
			if cfg.GroupAttributeIsDN {
				if a.DN == "" {
					return fail(errNoDN)
				}
			} else {
				if a.User == "" {
					a.User = req.User
				}
				value = a.User
			}
			for _, attr := range cfg.groupAttributes() {
				code, err := c.compare(ctx, sess, url, t, attr, value)
				if code == resCompareTrue {
					return ok()
				}
				note(err)
			}
		case "ldap-attribute":
			if a.DN == "" {
				return fail(errNoDN)
			}
			for t != "" {
				var name, value string
				name, t = getword(t, '=')
				value, t = getwordConf(t)
				code, err := c.compare(ctx, sess, url, a.DN, name, value)
				if code == resCompareTrue {
					return ok()
				}
				note(err)
			}
		case "ldap-filter":
			if a.DN == "" {
				return fail(errNoDN)
			}
			if t != "" {
				filter, _ := buildFilter(cfg, a.User, t)
				dn, _, err := c.getUserDN(ctx, cfg, sess, filter)
				code := resNoSuchObject
				if err == nil {
					code, err = c.compareDN(ctx, sess, url, a.DN, dn, cfg.CompareDNOnServer, cfg.Deref)
				}
				if code == resCompareTrue {
					return ok()
				}
				note(err)
			}
		}
	}
	at = -1
	return fail(last)
}

// compare is uldap_cache_compare: the compare cache (TTL LDAPOpCacheTTL),
// else a compare on the server; TRUE, FALSE and noSuchAttribute are
// cached. It returns the result code (resCompareTrue for a match).
func (c *Client) compare(ctx context.Context, s *session, url, dn, attr, value string) (int, error) {
	uc := c.cachesFor(url)
	k := compareKey{dn, attr, value}
	if uc != nil {
		if n, ok := uc.compare.get(k); ok {
			if c.now().Sub(n.lastcompare) > c.opts.OpCacheTTL {
				uc.compare.remove(k)
				c.ctr.compare.misses.Add(1)
			} else {
				c.ctr.compare.hits.Add(1)
				return n.result, nil
			}
		} else {
			c.ctr.compare.misses.Add(1)
		}
	}
	code := resSuccess
	err := s.retry(ctx, func(failures int) bool { return failures == 0 }, func(l *ldap.Conn) error {
		ok, err := l.Compare(dn, attr, value)
		switch {
		case err != nil:
			code = codeOf(err)
			return &OpError{Code: code, Op: "compare", Err: err}
		case ok:
			code = resCompareTrue
		default:
			code = resCompareFalse
		}
		return nil
	})
	if err != nil {
		var oe *OpError
		if errors.As(err, &oe) {
			code = oe.Code
		} else {
			code = resServerDown
		}
	}
	if uc != nil && (code == resCompareTrue || code == resCompareFalse || code == resNoSuchAttribute) {
		now := c.now()
		uc.compare.update(k, func(old compareNode, exists bool) (compareNode, bool) {
			old.result, old.lastcompare = code, now
			return old, true
		})
	}
	return code, err
}

// compareDN is uldap_cache_comparedn: a string comparison, or with
// AuthLDAPCompareDNOnServer a base search for the required DN whose
// entry's DN must equal the user's; a match is cached.
func (c *Client) compareDN(ctx context.Context, s *session, url, dn, reqDN string, onServer bool, deref Deref) (int, error) {
	if !onServer {
		if dn == reqDN {
			return resCompareTrue, nil
		}
		return resCompareFalse, nil
	}
	uc := c.cachesFor(url)
	k := dnCompareKey{reqDN: reqDN, dn: dn}
	if uc != nil {
		if _, ok := uc.dnCompare.get(k); ok {
			c.ctr.dn.hits.Add(1)
			return resCompareTrue, nil
		}
		c.ctr.dn.misses.Add(1)
	}
	var found string
	err := s.retry(ctx, func(failures int) bool { return failures == 0 }, func(l *ldap.Conn) error {
		res, err := l.Search(&ldap.SearchRequest{BaseDN: reqDN, Scope: ldap.ScopeBaseObject, DerefAliases: int(deref),
			Filter: "(objectclass=*)", TypesOnly: true, Attributes: []string{"1.1"}})
		if err != nil {
			return &OpError{Code: codeOf(err), Op: "search", Reason: "DN Comparison ldap_search_ext_s() failed", Err: err}
		}
		if len(res.Entries) > 0 {
			found = res.Entries[0].DN
		}
		return nil
	})
	if err != nil {
		var oe *OpError
		if errors.As(err, &oe) {
			return oe.Code, err
		}
		return resServerDown, err
	}
	if len(found) == 0 || found != dn {
		return resCompareFalse, nil
	}
	if uc != nil {
		uc.dnCompare.put(k, struct{}{})
	}
	return resCompareTrue, nil
}

// checkSubgroups is uldap_cache_check_subgroups: is value in attr of a
// group nested in dn, at most max levels down? dn must be of one of the
// sub-group classes; its sub-groups (members of those classes, found
// through the sub-group attributes, cached with dn's objectClass compare)
// are each compared, then searched in turn.
func (c *Client) checkSubgroups(ctx context.Context, s *session, url, dn, attr, value string, sgAttrs, classes []string, cur, max int, deref Deref) int {
	if cur >= max {
		return resCompareFalse
	}
	result, base := resCompareFalse, -1
	for i, cls := range classes {
		result, _ = c.compare(ctx, s, url, dn, "objectClass", cls)
		if result == resCompareTrue {
			base = i
			break
		}
	}
	if result != resCompareTrue {
		return result
	}
	uc := c.cachesFor(url)
	k := compareKey{dn, "objectClass", classes[base]}
	var sgl []string
	cachedEmpty := false
	if uc != nil {
		if n, ok := uc.compare.get(k); ok && n.sglProcessed {
			if len(n.subgroups) > 0 {
				sgl = append([]string(nil), n.subgroups...)
			} else {
				cachedEmpty = true
			}
		}
	}
	if sgl == nil && !cachedEmpty {
		sgl = c.getSubgroups(ctx, s, url, dn, sgAttrs, classes, deref)
		if uc != nil {
			now := c.now()
			uc.compare.update(k, func(old compareNode, exists bool) (compareNode, bool) {
				if !exists {
					old.result, old.lastcompare = resCompareTrue, now
				}
				if old.sglProcessed {
					return old, false
				}
				old.sglProcessed = true
				old.subgroups = append([]string(nil), sgl...)
				return old, true
			})
		}
	}
	result = resCompareFalse
	for i := 0; result != resCompareTrue && i < len(sgl); i++ {
		result, _ = c.compare(ctx, s, url, sgl[i], attr, value)
		if result != resCompareTrue {
			result = c.checkSubgroups(ctx, s, url, sgl[i], attr, value, sgAttrs, classes, cur+1, max, deref)
		}
	}
	return result
}

// getSubgroups is uldap_get_subgroups: the values of the sub-group
// attributes of the group that are entries of a sub-group class, last
// first (Apache pops them off an array); nil on any error.
func (c *Client) getSubgroups(ctx context.Context, s *session, url, dn string, sgAttrs, classes []string, deref Deref) []string {
	var entry *ldap.Entry
	err := s.retry(ctx, func(failures int) bool { return failures == 0 }, func(l *ldap.Conn) error {
		res, err := l.Search(&ldap.SearchRequest{BaseDN: dn, Scope: ldap.ScopeBaseObject, DerefAliases: int(deref),
			Filter: "(objectclass=*)", Attributes: sgAttrs})
		if err != nil {
			return &OpError{Code: codeOf(err), Op: "search", Reason: "ldap_search_ext_s() for subgroups failed", Err: err}
		}
		if len(res.Entries) > 0 {
			entry = res.Entries[0]
		}
		return nil
	})
	if err != nil || entry == nil {
		return nil
	}
	var groups []string
	for _, a := range sgAttrs {
		for _, v := range entry.GetEqualFoldAttributeValues(a) {
			for _, cls := range classes {
				if r, _ := c.compare(ctx, s, url, v, "objectClass", cls); r == resCompareTrue {
					groups = append(groups, v)
					break
				}
			}
		}
	}
	for i, j := 0, len(groups)-1; i < j; i, j = i+1, j-1 {
		groups[i], groups[j] = groups[j], groups[i]
	}
	return groups
}

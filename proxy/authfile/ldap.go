package authfile

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
)

// ldapClients are the Identity's mod_ldap: one client per distinct
// server configuration of mod_ldap (the configuration's main server's,
// policy.LDAPScope.Server), made when first needed, its connections
// pooled and its caches kept for the life of the Identity; the virtual
// hosts' clients (their own LDAPTrustedMode and LDAPConnectionPoolTTL)
// share its caches, as mod_ldap's virtual hosts share its cache.
type ldapClients struct {
	byServer sync.Map // *ldapauth.ServerConfig (nil: the defaults) -> *ldapEntry
	mu       sync.Mutex
	roots    []*ldapRoot
	views    []*ldapauth.Client // every client handed out
}

type ldapEntry struct {
	once sync.Once
	c    *ldapauth.Client
	err  error
}

// ldapRoot is a client that owns its caches, for the server-wide
// settings it was made with.
type ldapRoot struct {
	opts ldapauth.Options
	c    *ldapauth.Client
}

// ldapClient returns the client of the scope's server configuration.
func (id *Identity) ldapClient(s *policy.LDAPScope) (*ldapauth.Client, error) {
	var srv *ldapauth.ServerConfig
	if s != nil {
		srv, _ = s.Server.(*ldapauth.ServerConfig)
	}
	v, ok := id.ldap.byServer.Load(srv)
	if !ok {
		v, _ = id.ldap.byServer.LoadOrStore(srv, &ldapEntry{})
	}
	e := v.(*ldapEntry)
	e.once.Do(func() { e.c, e.err = id.newLDAPClient(srv) })
	return e.c, e.err
}

// newLDAPClient makes the client of a server configuration (nil:
// mod_ldap's defaults): a view of the client of the same server-wide
// settings if there is one (ldapauth.Client.WithServer), else a new one.
func (id *Identity) newLDAPClient(srv *ldapauth.ServerConfig) (*ldapauth.Client, error) {
	o := ldapauth.DefaultOptions()
	if srv != nil {
		o = srv.Options()
	}
	for i, f := range o.TrustedCAFiles {
		o.TrustedCAFiles[i] = id.path(f)
	}
	o.Counters = id.LDAPCounters
	mode, poolTTL := o.TrustedMode, o.ConnectionPoolTTL
	wide := o
	wide.TrustedMode, wide.ConnectionPoolTTL = ldapauth.ModeNone, -1
	l := &id.ldap
	l.mu.Lock()
	defer l.mu.Unlock()
	var root *ldapauth.Client
	for _, r := range l.roots {
		if sameLDAPOptions(r.opts, wide) {
			root = r.c
			break
		}
	}
	if root == nil {
		var err error
		if root, err = ldapauth.NewClient(&wide); err != nil {
			return nil, err
		}
		l.roots = append(l.roots, &ldapRoot{opts: wide, c: root})
	}
	c := root.WithServer(mode, poolTTL)
	l.views = append(l.views, c)
	return c, nil
}

// sameLDAPOptions reports options that make the same client.
func sameLDAPOptions(a, b ldapauth.Options) bool {
	return slices.Equal(a.TrustedCAFiles, b.TrustedCAFiles) && a.Counters == b.Counters &&
		a.CacheEntries == b.CacheEntries && a.CacheTTL == b.CacheTTL && a.OpCacheEntries == b.OpCacheEntries &&
		a.OpCacheTTL == b.OpCacheTTL && a.ConnectionTimeout == b.ConnectionTimeout && a.Timeout == b.Timeout &&
		a.Retries == b.Retries && a.RetryDelay == b.RetryDelay && a.VerifyServerCert == b.VerifyServerCert &&
		a.MaxIdle == b.MaxIdle && a.TrustedMode == b.TrustedMode && a.ConnectionPoolTTL == b.ConnectionPoolTTL
}

// LDAPCacheStats returns the counters of the Identity's LDAP caches (of
// LDAPCounters, when set, which other Identities may share) and the
// entries they hold now.
func (id *Identity) LDAPCacheStats() ldapauth.CacheStats {
	l := &id.ldap
	l.mu.Lock()
	roots := slices.Clone(l.roots)
	l.mu.Unlock()
	var s ldapauth.CacheStats
	if id.LDAPCounters != nil {
		s = id.LDAPCounters.Stats()
	}
	for _, r := range roots {
		rs := r.c.CacheStats()
		if id.LDAPCounters != nil {
			rs = rs.EntriesOnly() // the counters are LDAPCounters, counted above
		}
		s.Add(rs)
	}
	return s
}

// CloseLDAP closes the pooled connections of the Identity's LDAP clients
// (a replaced configuration's), and each connection in use as it is
// given back; the clients stay usable, without a pool.
func (id *Identity) CloseLDAP() {
	l := &id.ldap
	l.mu.Lock()
	views := slices.Clone(l.views)
	l.mu.Unlock()
	for _, c := range views {
		c.Close()
	}
}

// ldapConfig is the scope's configuration (nil: the module's defaults).
func ldapConfig(s *policy.LDAPScope) *ldapauth.Config {
	if s != nil {
		if cfg, ok := s.Config.(*ldapauth.Config); ok {
			return cfg
		}
	}
	return ldapauth.NewConfig(ldapauth.Apache24)
}

// ldapContext bounds an LDAP check: the client's own timeouts
// (LDAPConnectionTimeout, LDAPTimeout, LDAPRetries) bound each operation;
// the request's context is not at hand where policy decides.
func ldapContext() context.Context { return context.Background() }

// CheckLDAPPassword implements policy.LDAPChecker:
// authn_ldap_check_password.
func (id *Identity) CheckLDAPPassword(s *policy.LDAPScope, st *policy.LDAPState, user, password string) (policy.PasswordResult, string, error) {
	c, err := id.ldapClient(s)
	if err != nil {
		return 0, "", err
	}
	cfg := ldapConfig(s)
	a := c.Authenticate(ldapContext(), cfg, user, password)
	st.Authn = a
	switch a.Result {
	case ldapauth.AuthGranted:
		return policy.PasswordOK, a.RemoteUser(cfg), nil
	case ldapauth.AuthDenied:
		return policy.PasswordMismatch, "", nil
	case ldapauth.AuthUserNotFound:
		return policy.UserNotFound, "", nil
	}
	if a.Err == nil {
		return 0, "", errors.New("auth_ldap authenticate: general error")
	}
	return 0, "", a.Err
}

// AuthorizeLDAP implements policy.LDAPChecker: mod_authnz_ldap 2.4's
// ldap-* providers.
func (id *Identity) AuthorizeLDAP(s *policy.LDAPScope, st *policy.LDAPState, user, form, args string) (policy.Result, error) {
	c, err := id.ldapClient(s)
	if err != nil {
		return policy.Denied, err
	}
	req := &ldapauth.Request{User: user}
	req.Authn, _ = st.Authn.(*ldapauth.Authn)
	d, err := c.Authorize(ldapContext(), ldapConfig(s), req, ldapauth.Require(form), args)
	if req.Authn != nil {
		st.Authn = req.Authn
	}
	switch d {
	case ldapauth.AuthzGranted:
		return policy.Granted, err
	case ldapauth.AuthzDeniedNoUser:
		return policy.DeniedNoUser, err
	}
	return policy.Denied, err
}

// AuthorizeLDAP22 implements policy.LDAPChecker: mod_authnz_ldap 2.2's
// auth_checker hook, authz_ldap_check_user_access. The scope must hold
// a 2.2 configuration (ldapauth.Apache22); another is an error, which
// refuses (401).
func (id *Identity) AuthorizeLDAP22(s *policy.LDAPScope, st *policy.LDAPState, user string, lines []string) (policy.Answer22, int, error) {
	cfg := ldapConfig(s)
	if cfg.Version != ldapauth.Apache22 {
		return policy.Unauthorized22, -1, errors.New("auth_ldap authorise: not an Apache 2.2 configuration")
	}
	c, err := id.ldapClient(s)
	if err != nil {
		return policy.Unauthorized22, -1, err
	}
	req := &ldapauth.Request{User: user}
	req.Authn, _ = st.Authn.(*ldapauth.Authn)
	ans, at, err := c.Authorize22(ldapContext(), cfg, req, lines)
	if req.Authn != nil {
		st.Authn = req.Authn
	}
	switch ans {
	case ldapauth.OK22:
		return policy.OK22, at, err
	case ldapauth.Unauthorized22:
		return policy.Unauthorized22, at, err
	}
	return policy.Declined22, at, err
}

// Identity asks LDAP servers as policy asks.
var _ policy.LDAPChecker = (*Identity)(nil)

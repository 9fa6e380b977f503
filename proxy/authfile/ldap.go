package authfile

import (
	"context"
	"errors"
	"sync"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
)

// ldapClient is the Identity's mod_ldap: one client, made when first
// needed with mod_ldap's defaults, its connections pooled and its caches
// kept for the life of the Identity.
type ldapClient struct {
	once sync.Once
	c    *ldapauth.Client
	err  error
}

func (id *Identity) ldapClient() (*ldapauth.Client, error) {
	l := &id.ldap
	l.once.Do(func() {
		o := ldapauth.DefaultOptions()
		l.c, l.err = ldapauth.NewClient(&o)
	})
	return l.c, l.err
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
	c, err := id.ldapClient()
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
	c, err := id.ldapClient()
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
	c, err := id.ldapClient()
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

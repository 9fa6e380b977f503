package policy

// LDAPScope is mod_authnz_ldap's per-directory configuration in force (of
// Apache 2.4 or 2.2, as the semantics say), as the walk compiled it:
// Config is proxy/ldapauth's Config, which policy only passes on to the
// LDAPChecker. The module has no merger: the innermost section with any
// AuthLDAP* line has them all.
type LDAPScope struct {
	Config any
	// Key is the same for scopes compiled from the same lines.
	Key string
	// Server is proxy/ldapauth's *ServerConfig: mod_ldap's server
	// configuration of the request's virtual host (its caches, timeouts,
	// trusted CAs and security mode), which policy only passes on; nil
	// for mod_ldap's defaults.
	Server any
}

// LDAPState is a request's LDAP state (mod_authnz_ldap's request_config):
// what authentication found, for the ldap-* checks of the same request.
// The walk keeps one per request, so that its subrequests share it.
type LDAPState struct {
	// Authn is proxy/ldapauth's *Authn, set by the LDAPChecker (nil
	// before mod_authnz_ldap was asked anything).
	Authn any
}

// LDAPChecker is what an Identity adds to ask an LDAP server as
// mod_authnz_ldap does. An Identity without it answers every LDAP
// authentication as a general error (500) and denies every ldap-* line.
type LDAPChecker interface {
	// CheckLDAPPassword is authn_ldap_check_password: the outcome (as
	// mod_authn_file's, with err set for a general error: the server down,
	// a bad filter...) and, when granted, r->user as
	// AuthLDAPRemoteUserAttribute and AuthLDAPRemoteUserIsDN make it, ""
	// for NULL (the attribute is requested but the entry has no value:
	// set_request_vars copies the NULL). The request's state st is
	// replaced by what authentication found.
	CheckLDAPPassword(s *LDAPScope, st *LDAPState, user, password string) (PasswordResult, string, error)
	// AuthorizeLDAP decides "Require form args" (args the text after the
	// form, as written) for user ("" for none) as mod_authnz_ldap 2.4's
	// providers do: Granted, Denied or DeniedNoUser; err says why a
	// check failed (the line then denies).
	AuthorizeLDAP(s *LDAPScope, st *LDAPState, user, form, args string) (Result, error)
	// AuthorizeLDAP22 is mod_authnz_ldap 2.2's auth_checker hook
	// (authz_ldap_check_user_access) for user over lines, the Require
	// lines of the request's method as core keeps them (Require22.Line),
	// in order: OK22, Unauthorized22, or Declined22 (no AuthLDAPURL, no
	// ldap-* line, or a refusal under AuthzLDAPAuthoritative Off). at is
	// the index of the line that decided (-1 for none: a refusal after
	// every line, or before any); err says why a check failed, for the
	// log (it never makes a 500).
	AuthorizeLDAP22(s *LDAPScope, st *LDAPState, user string, lines []string) (ans Answer22, at int, err error)
}

// checkLDAP is an ldap provider of AuthBasicProvider.
// A nil p.LDAP is the module's defaults (no AuthLDAPURL: an error). The
// user returned is r->user when granted.
func checkLDAP(p *AuthnProvider, r *Request, cr Credentials, id Identity, d *Decision) (authnResult, string) {
	lc, ok := id.(LDAPChecker)
	if !ok {
		d.log(LogLine{Module: "authnz_ldap", Code: "AH01695", User: cr.User, Subject: "LDAP is not available"})
		return authnError, ""
	}
	res, user, err := lc.CheckLDAPPassword(p.LDAP, r.ldapState(), cr.User, cr.Password)
	if err != nil {
		d.log(LogLine{Module: "authnz_ldap", Code: "AH01695", User: cr.User, Subject: err.Error()})
		return authnError, ""
	}
	return passwordResult(res), user
}

// ldapState is the request's LDAP state, or a new one for a request that
// has none.
func (r *Request) ldapState() *LDAPState {
	if r.LDAP == nil {
		r.LDAP = &LDAPState{}
	}
	return r.LDAP
}

// ldap is an ldap-* Require line: args[0] is the form, args[1] the text
// after it. An LDAP failure denies, with a log line.
func (c *evalCtx) ldap(args []string) (Result, *Rule) {
	form, line := args[0], args[1]
	if !c.hasUser && form != "ldap-search" {
		return DeniedNoUser, nil
	}
	lc, ok := c.id.(LDAPChecker)
	if !ok {
		c.ldapErr = "LDAP is not available"
		return Denied, nil
	}
	var s *LDAPScope
	if c.layers != nil {
		s = c.layers.LDAP
	}
	res, err := lc.AuthorizeLDAP(s, c.req.ldapState(), c.user, form, line)
	if err != nil {
		c.ldapErr = err.Error()
	}
	return res, nil
}

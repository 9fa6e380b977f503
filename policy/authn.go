package policy

import "strings"

// ProviderKind is the kind of an authentication provider: the module
// whose check_password answers for it.
type ProviderKind uint8

// The providers orderly evaluates.
const (
	ProviderFile ProviderKind = iota // mod_authn_file: AuthUserFile
	ProviderDBM                      // mod_authn_dbm: AuthDBMUserFile, AuthDBMType
	ProviderAnon                     // mod_authn_anon: Anonymous...
	ProviderLDAP                     // mod_authnz_ldap (2.4): AuthLDAP*
)

// An AuthnProvider is one name of AuthBasicProvider, resolved for the
// request: an <AuthnProviderAlias> is its base provider with the alias's
// configuration merged over the request's, as authn_alias_check_password
// merges it.
type AuthnProvider struct {
	Name string // as written: "file", "dbm", "anon" or an alias
	Kind ProviderKind
	// File is the password file (AuthUserFile, AuthDBMUserFile): "" when
	// none is set, which the provider answers as an error (AH01619 for
	// file; apr_dbm_open of no name for dbm).
	File string
	// DBMType is AuthDBMType: "default" when unset.
	DBMType string
	// Anon is mod_authn_anon's configuration (ProviderAnon).
	Anon *Anonymous
	// LDAP is mod_authnz_ldap's configuration (ProviderLDAP; nil: the
	// module's defaults).
	LDAP *LDAPScope
}

// Anonymous is mod_authn_anon's per-directory configuration.
type Anonymous struct {
	Users       []string // Anonymous: user IDs (compared case-insensitively)
	Any         bool     // Anonymous "*": any user ID
	NoUserID    bool     // Anonymous_NoUserId: an empty user ID is anonymous
	MustEmail   bool     // Anonymous_MustGiveEmail (default On): a password is needed
	VerifyEmail bool     // Anonymous_VerifyEmail: the password must hold '@' and '.'
	LogEmail    bool     // Anonymous_LogEmail (default On): an info line, not kept
}

// DefaultAnonymous is mod_authn_anon's configuration where a section
// sets one of its directives and leaves the others
// (create_authn_anon_dir_config).
func DefaultAnonymous() Anonymous { return Anonymous{MustEmail: true, LogEmail: true} }

// DBMIdentity is what an Identity adds to read DBM files (mod_authn_dbm,
// mod_authz_dbm). An Identity without it answers every DBM lookup as a
// file it cannot open.
type DBMIdentity interface {
	// CheckDBMPassword checks user's password in the DBM user file.
	CheckDBMPassword(file, dbmType, user, password string) (PasswordResult, error)
	// DBMGroupsRealm returns the groups of user in the DBM group file,
	// read as get_dbm_grp reads them (the key "user:realm", else "user"),
	// and false when the file has neither.
	DBMGroupsRealm(file, dbmType, user, realm string) ([]string, bool, error)
}

// authnResult is an authn_status.
type authnResult uint8

const (
	authnGranted      authnResult = iota // AUTH_GRANTED
	authnDenied                          // AUTH_DENIED: a password mismatch
	authnUserNotFound                    // AUTH_USER_NOT_FOUND: the next provider is asked
	authnError                           // AUTH_GENERAL_ERROR: 500
)

// checkProviders asks each provider in turn, as authenticate_basic_user
// does: the first answer other than "user not found" stands. The log
// line of an error is written to d. The user is r->user when granted;
// none is false when the provider left r->user NULL (mod_authnz_ldap
// with an AuthLDAPRemoteUserAttribute the user's entry lacks).
func checkProviders(l *Layers, r *Request, cr Credentials, id Identity, d *Decision) (res authnResult, user string, none bool) {
	if l.Providers == nil {
		return checkProvider(&AuthnProvider{Name: "file", Kind: ProviderFile, File: l.UserFile}, r, cr, id, d), cr.User, false
	}
	for i := range l.Providers {
		p := &l.Providers[i]
		if p.Kind == ProviderLDAP {
			if res, user := checkLDAP(p, r, cr, id, d); res != authnUserNotFound {
				return res, user, res == authnGranted && user == ""
			}
			continue
		}
		if res := checkProvider(p, r, cr, id, d); res != authnUserNotFound {
			return res, cr.User, false
		}
	}
	return authnUserNotFound, "", false
}

func checkProvider(p *AuthnProvider, r *Request, cr Credentials, id Identity, d *Decision) authnResult {
	switch p.Kind {
	case ProviderAnon:
		return checkAnonymous(p.Anon, cr.User, cr.Password)
	case ProviderDBM:
		dbm, ok := id.(DBMIdentity)
		if p.File == "" || !ok {
			d.log(LogLine{Module: "authn_dbm", Code: "AH10285", User: p.DBMType, Subject: p.File})
			return authnError
		}
		res, err := dbm.CheckDBMPassword(p.File, p.DBMType, cr.User, cr.Password)
		if err != nil {
			d.log(LogLine{Module: "authn_dbm", Code: "AH10285", User: p.DBMType, Subject: p.File})
			return authnError
		}
		return passwordResult(res)
	}
	if p.File == "" || id == nil {
		d.log(LogLine{Module: "authn_file", Code: "AH01619"})
		return authnError
	}
	res, err := id.CheckPassword(p.File, cr.User, cr.Password)
	if err != nil {
		d.log(LogLine{Module: "authn_file", Code: "AH01620", Subject: p.File})
		return authnError
	}
	return passwordResult(res)
}

func passwordResult(r PasswordResult) authnResult {
	switch r {
	case PasswordOK:
		return authnGranted
	case PasswordMismatch:
		return authnDenied
	}
	return authnUserNotFound
}

// checkAnonymous is mod_authn_anon's check_anonymous (the same in 2.2
// and 2.4): a listed user ID (or any, or an empty one under NoUserID)
// is granted when the password passes the e-mail checks, refused when it
// does not; any other user is not found.
func checkAnonymous(a *Anonymous, user, password string) authnResult {
	if a == nil || len(a.Users) == 0 && !a.Any {
		return authnUserNotFound
	}
	found := false
	switch {
	case user == "":
		found = a.NoUserID
	case a.Any:
		found = true
	default:
		for _, u := range a.Users {
			if equalFold(u, user) { // strcasecmp
				found = true
				break
			}
		}
	}
	if !found {
		return authnUserNotFound
	}
	if a.MustEmail && password == "" {
		return authnDenied
	}
	if a.VerifyEmail && (!strings.Contains(password, "@") || !strings.Contains(password, ".")) {
		return authnDenied
	}
	return authnGranted
}

// dbmGroup is mod_authz_dbm's dbmgroup_check_authorization (2.4): the
// user's groups, names compared exactly, any named group grants; no file
// set denies (AH01798); a file that cannot be opened is an error (500).
func (c *evalCtx) dbmGroup(args []string) (Result, *Rule) {
	if !c.hasUser {
		return DeniedNoUser, nil
	}
	l := c.layers
	if l == nil || l.DBMGroupFile == "" {
		return Denied, nil
	}
	dbm, ok := c.id.(DBMIdentity)
	if !ok {
		c.dbmErr = true
		return GeneralError, nil
	}
	groups, found, err := dbm.DBMGroupsRealm(l.DBMGroupFile, l.DBMGroupType, c.user, l.AuthName)
	if err != nil {
		c.dbmErr = true
		return GeneralError, nil
	}
	if !found {
		return Denied, nil
	}
	for _, w := range args {
		for _, g := range groups {
			if g == w {
				return Granted, nil
			}
		}
	}
	return Denied, nil
}

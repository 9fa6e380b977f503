package authfile

import (
	"errors"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
)

// Identity is the policy.Identity of a configuration's files: it checks
// Basic credentials against the AuthUserFile and AuthGroupFile files the
// configuration names, re-reading a file when it changes, as Apache reads
// them on every request.
type Identity struct {
	store *Store
	// Map, when set, says where orderly reads a file the configuration
	// names (legacy.path_map).
	Map func(string) string

	// LDAPCounters, when set, are the counters the LDAP caches count
	// into (shared by the Identities of successive configurations, for
	// metrics that only grow); nil: each client's own.
	LDAPCounters *ldapauth.Counters

	digest digestServer
	ldap   ldapClients
}

// NewIdentity returns an Identity with an empty file cache.
func NewIdentity() *Identity { return &Identity{store: NewStore()} }

func (id *Identity) path(p string) string {
	if id.Map != nil {
		return id.Map(p)
	}
	return p
}

// CheckPassword implements policy.Identity.
func (id *Identity) CheckPassword(file, user, password string) (policy.PasswordResult, error) {
	u, err := id.store.Users(id.path(file))
	if err != nil {
		return 0, err
	}
	switch u.Check(user, password) {
	case OK:
		return policy.PasswordOK, nil
	case Mismatch:
		return policy.PasswordMismatch, nil
	}
	return policy.UserNotFound, nil
}

// Groups implements policy.Identity.
func (id *Identity) Groups(file, user string) ([]string, bool, error) {
	g, err := id.store.Groups(id.path(file))
	if err != nil {
		return nil, false, err
	}
	gs := g.GroupsOf(user)
	return gs, len(gs) > 0, nil
}

// CheckDBMPassword checks user's password in the DBM file of the given
// AuthDBMType ("" = default), as mod_authn_dbm does (see
// Store.DBMUsers). The error is one of opening or reading the file, or
// one for a type orderly does not read: httpd answers 500 for the
// former, and orderly fails closed on the latter.
func (id *Identity) CheckDBMPassword(file, dbmType, user, password string) (policy.PasswordResult, error) {
	u, err := id.store.DBMUsers(id.path(file), dbmType)
	if err != nil {
		return 0, err
	}
	switch u.Check(user, password) {
	case OK:
		return policy.PasswordOK, nil
	case Mismatch:
		return policy.PasswordMismatch, nil
	}
	return policy.UserNotFound, nil
}

// DBMGroups returns the groups of the record of user in the DBM group
// file of the given AuthzDBMType ("" = default), and false when the file
// has no record for user (see Store.DBMGroups). Group names are to be
// compared with case, as mod_authz_dbm compares them.
//
// It looks up the key user alone. mod_authz_dbm first looks up
// "user:realm", realm being the AuthName; DBMGroupsRealm does that.
func (id *Identity) DBMGroups(file, dbmType, user string) ([]string, bool, error) {
	g, err := id.store.DBMGroups(id.path(file), dbmType)
	if err != nil {
		return nil, false, err
	}
	return g.GroupsOf(user), g.Has(user), nil
}

// DBMGroupsRealm is DBMGroups as get_dbm_grp of mod_authz_dbm (2.2 and
// 2.4) looks a user up: first under the key "user:realm", realm being
// the AuthName of the request ("user:" when there is none), and under
// the key user only if that record is absent.
func (id *Identity) DBMGroupsRealm(file, dbmType, user, realm string) ([]string, bool, error) {
	g, err := id.store.DBMGroups(id.path(file), dbmType)
	if err != nil {
		return nil, false, err
	}
	if key := user + ":" + realm; g.Has(key) {
		return g.GroupsOf(key), true, nil
	}
	return g.GroupsOf(user), g.Has(user), nil
}

// Identity reads DBM files as policy's decisions ask.
var _ policy.DBMIdentity = (*Identity)(nil)

// CheckDBMFile says, when orderly serve loads a configuration, whether it
// can read the DBM file that an AuthDBMUserFile or AuthDBMGroupFile names
// with the type dbmType in force beside it (AuthDBMType, AuthzDBMType;
// "default" where the section sets none): an error wrapping
// ErrDBMUnsupported, which says what the file is and gives the command
// that converts it to SDBM, when the type is one orderly does not read
// (DB, GDBM, NDBM, or default, which is DB: see Store.DefaultDBMType) and
// the file is there; nil otherwise.
//
// A file that is not there is no refusal: Apache, which opens the file on
// each request (fetch_dbm_value, get_dbm_grp), answers 500 for it as long
// as it is missing, and so does orderly. Nor is a type apr-util does not
// know (AH10284, 500 on each request), nor an SDBM type naming a file of
// another format, which the SDBM driver cannot open either.
func (id *Identity) CheckDBMFile(file, dbmType string) error {
	if file == "" {
		return nil
	}
	k, err := id.store.dbmKindOf(dbmType)
	if err != nil || k == dbmSDBM {
		return nil
	}
	err = refuseDBM(id.store, id.path(file), k)
	if !errors.Is(err, ErrDBMUnsupported) {
		return nil // missing or unreadable: 500 on each request, as Apache
	}
	return err
}

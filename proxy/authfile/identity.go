package authfile

import "github.com/orderly-proxy/orderly/policy"

// Identity is the policy.Identity of a configuration's files: it checks
// Basic credentials against the AuthUserFile and AuthGroupFile files the
// configuration names, re-reading a file when it changes, as Apache reads
// them on every request.
type Identity struct {
	store *Store
	// Map, when set, says where orderly reads a file the configuration
	// names (legacy.path_map).
	Map func(string) string
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

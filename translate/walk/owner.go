package walk

import (
	"io/fs"
	"os/user"
	"strconv"

	"github.com/orderly-proxy/orderly/policy"
)

// fileOwners is policy.FileOwners over the walk's file system (where
// legacy.path_map says orderly reads the files) and this machine's user
// and group database, as mod_authz_owner reads them for Require
// file-owner and file-group: apr_stat (which follows symbolic links),
// then apr_uid_name_get and apr_gid_name_get.
//
// Go's os/user asks the C library (getpwuid_r, getgrgid_r, as Apache
// does) where orderly is built with cgo; the release binary is built
// without, and reads /etc/passwd and /etc/group alone: a user or group
// only another name service knows (LDAP, sssd) has no name there, and
// its files are refused (fail closed) where Apache may grant.
type fileOwners struct {
	fs FS
}

func newFileOwners(fsys FS) *fileOwners { return &fileOwners{fs: fsys} }

// FileOwner implements policy.FileOwners. A nil fileOwners (an Engine
// made without New) stats no file.
func (o *fileOwners) FileOwner(name string) (string, policy.OwnerStatus) {
	if o == nil {
		return "", policy.OwnerNoStat
	}
	return o.lookup(name, owner, userName)
}

// FileGroup implements policy.FileOwners.
func (o *fileOwners) FileGroup(name string) (string, policy.OwnerStatus) {
	if o == nil {
		return "", policy.OwnerNoStat
	}
	return o.lookup(name, group, groupName)
}

func (o *fileOwners) lookup(name string, id func(fs.FileInfo) (uint32, bool), lookup func(uint32) (string, bool)) (string, policy.OwnerStatus) {
	fi, err := o.fs.Stat(name)
	if err != nil {
		return "", policy.OwnerNoStat
	}
	n, ok := id(fi)
	if !ok {
		return "", policy.OwnerNoInfo
	}
	s, ok := lookup(n)
	if !ok {
		return "", policy.OwnerNoName
	}
	return s, policy.OwnerFound
}

// userName is apr_uid_name_get: the name of the user id.
func userName(id uint32) (string, bool) {
	u, err := user.LookupId(strconv.FormatUint(uint64(id), 10))
	if err != nil {
		return "", false
	}
	return u.Username, true
}

// groupName is apr_gid_name_get: the name of the group id.
func groupName(id uint32) (string, bool) {
	g, err := user.LookupGroupId(strconv.FormatUint(uint64(id), 10))
	if err != nil {
		return "", false
	}
	return g.Name, true
}

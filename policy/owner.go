package policy

// FileOwners tells who owns a file, as mod_authz_owner reads r->filename
// (modules/aaa/mod_authz_owner.c of 2.4): apr_stat, which follows
// symbolic links, then apr_uid_name_get or apr_gid_name_get, which ask
// the system's user and group database (getpwuid_r, getgrgid_r). The
// answers are those of the machine orderly runs on: it must see the
// backend's files and the same users and groups (the same machine, or
// the same passwd and group databases).
type FileOwners interface {
	// FileOwner returns the name of the user who owns the file name.
	FileOwner(name string) (string, OwnerStatus)
	// FileGroup returns the name of the group that owns the file name.
	FileGroup(name string) (string, OwnerStatus)
}

// OwnerStatus says why a FileOwners lookup found no name.
type OwnerStatus uint8

// The outcomes of a FileOwners lookup.
const (
	OwnerFound  OwnerStatus = iota
	OwnerNoStat             // the file cannot be stat'ed (AH01634, AH01639)
	OwnerNoInfo             // the file system gives no owner (AH01635, AH01640)
	OwnerNoName             // the user or group ID has no name (AH01636, AH01641)
)

// ownerLogs are the log lines of mod_authz_owner's failures, for
// file-owner (fileowner_check_authorization) and for the file group
// (authz_owner_get_file_group), by OwnerStatus; [0] is r->filename NULL.
var ownerLogs = [2][4]string{
	{"AH01633", "AH01634", "AH01635", "AH01636"},
	{"AH01638", "AH01639", "AH01640", "AH01641"},
}

// fileOwner is Require file-owner, fileowner_check_authorization of
// mod_authz_owner (2.4): granted when the name of the user who owns
// r->filename is r->user, compared with strcmp; denied, and logged,
// when there is no file name, the file cannot be stat'ed, or its owner
// has no name.
func (c *evalCtx) fileOwner() (Result, *Rule) {
	if !c.hasUser {
		return DeniedNoUser, nil
	}
	owner, ok := c.owner(false)
	if !ok {
		return Denied, nil
	}
	if owner != c.user {
		c.logOwner("AH01637", owner)
		return Denied, nil
	}
	return Granted, nil
}

// fileGroup is Require file-group, filegroup_check_authorization of
// mod_authz_groupfile (2.4), which asks mod_authz_owner for the group of
// r->filename: granted when the user is a member of that group in
// AuthGroupFile (group names compared without case, as an APR table
// does). The group file is read first: none, one that cannot be opened,
// or a user in no group of it, denies without looking at the file.
func (c *evalCtx) fileGroup() (Result, *Rule) {
	if !c.hasUser {
		return DeniedNoUser, nil
	}
	if c.groupFile == "" || c.id == nil {
		c.logOwner("AH01668", "")
		return Denied, nil
	}
	groups, found, err := c.id.Groups(c.groupFile, c.user)
	switch {
	case err != nil:
		c.logOwner("AH01669", c.groupFile)
		return Denied, nil
	case !found:
		c.logOwner("AH01670", c.groupFile)
		return Denied, nil
	}
	group, ok := c.owner(true)
	if !ok {
		return Denied, nil
	}
	for _, g := range groups {
		if equalFold(g, group) {
			return Granted, nil
		}
	}
	c.logOwner("AH01671", "")
	return Denied, nil
}

// dbmFileGroup is Require dbm-file-group, dbmfilegroup_check_authorization
// of mod_authz_dbm (2.4): granted when the group of r->filename is one
// of the user's groups in AuthDBMGroupFile (its record "user:realm",
// else "user", read as Require dbm-group reads it), compared with
// strcmp. Unlike dbm-group, a group file that cannot be opened denies
// (AH01799) rather than failing.
func (c *evalCtx) dbmFileGroup() (Result, *Rule) {
	if !c.hasUser {
		return DeniedNoUser, nil
	}
	l := c.layers
	if l == nil || l.DBMGroupFile == "" {
		c.logOwner("AH01802", "")
		return Denied, nil
	}
	dbm, ok := c.id.(DBMIdentity)
	if !ok {
		c.dbmErr = true // get_dbm_grp cannot open it: AH01799
		return Denied, nil
	}
	groups, found, err := dbm.DBMGroupsRealm(l.DBMGroupFile, l.DBMGroupType, c.user, l.AuthName)
	switch {
	case err != nil:
		c.dbmErr = true
		return Denied, nil
	case !found:
		c.logOwner("AH01804", l.DBMGroupFile)
		return Denied, nil
	}
	if group, ok := c.owner(true); ok {
		for _, g := range groups {
			if g == group {
				return Granted, nil
			}
		}
	}
	c.logOwner("AH01805", "")
	return Denied, nil
}

// owner returns the name of the user (group: of the group) that owns
// r->filename, logging why there is none as mod_authz_owner does.
func (c *evalCtx) owner(group bool) (string, bool) {
	codes := &ownerLogs[0]
	if group {
		codes = &ownerLogs[1]
	}
	r := c.req
	if r.Filename == "" {
		c.logOwner(codes[0], "")
		return "", false
	}
	st := OwnerNoStat
	var name string
	if r.Owners != nil {
		if group {
			name, st = r.Owners.FileGroup(r.Filename)
		} else {
			name, st = r.Owners.FileOwner(r.Filename)
		}
	}
	switch st {
	case OwnerFound:
		return name, true
	case OwnerNoStat:
		c.logOwner(codes[st], r.Filename)
	default:
		c.logOwner(codes[min(st, OwnerNoName)], "")
	}
	return "", false
}

// logOwner keeps a log line of mod_authz_owner (or of the group modules'
// file-group providers) for authorize to write: its code, and what its
// message names beside the user and the URI (the owner, the file), which
// LogLine.Message puts in its place, so that nothing is built here.
func (c *evalCtx) logOwner(code, reason string) {
	if c.nowner < uint8(len(c.ownerLogs)) {
		l := LogLine{Module: ownerModule(code), Code: code, User: c.user, Subject: c.req.URI, Reason: reason}
		if code == "AH01671" {
			l.Level = "debug"
		}
		c.ownerLogs[c.nowner] = l
		c.nowner++
	}
}

// ownerModule is the module that logs code.
func ownerModule(code string) string {
	switch code {
	case "AH01668", "AH01669", "AH01670", "AH01671":
		return "authz_groupfile"
	case "AH01802", "AH01804", "AH01805":
		return "authz_dbm"
	}
	return "authz_owner"
}

// ownerMessage is the text of the log lines of logOwner.
func ownerMessage(l LogLine) (string, bool) {
	failed := "Authorization of user " + l.User + " to access " + l.Subject + " failed, reason: "
	switch l.Code {
	case "AH01633", "AH01638":
		return failed + "no filename available", true
	case "AH01634", "AH01639":
		return failed + "could not stat file " + l.Reason, true
	case "AH01635":
		return failed + "no file owner information available", true
	case "AH01640":
		return failed + "no file group information available", true
	case "AH01636":
		return failed + "could not get name of file owner", true
	case "AH01641":
		return failed + "could not get name of file group", true
	case "AH01637":
		return failed + "file owner " + l.Reason + " does not match.", true
	case "AH01668", "AH01802":
		return "No group file was specified in the configuration", true
	case "AH01669":
		return "Could not open group file: " + l.Reason, true
	case "AH01670":
		return failed + "user doesn't appear in group file (" + l.Reason + ").", true
	case "AH01804":
		return failed + "user doesn't appear in DBM group file (" + l.Reason + ").", true
	case "AH01671":
		return failed + "user is not part of the 'require'ed file group.", true
	case "AH01805":
		return failed + "user is not part of the 'require'ed group(s).", true
	}
	return "", false
}

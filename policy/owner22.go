package policy

// Failed22 is the reason of an authorization failure as Apache 2.2's
// mod_authz_owner, mod_authz_groupfile and mod_authz_dbm log it:
// "Authorization of user %s to access %s failed, reason: %s", with no
// message code (2.2 has none). A LogLine with one keeps what the reason
// names in Reason, and LogLine.Message builds the text.
type Failed22 uint8

// The reasons, as the 2.2.x sources write them.
const (
	notFailed22         Failed22 = iota
	noFilename22                 // "no filename available"
	noStat22                     // "could not stat file %s": the file
	noOwnerInfo22                // "no file owner information available"
	noGroupInfo22                // "no file group information available"
	noOwnerName22                // "could not get name of file owner"
	noGroupName22                // "could not get name of file group"
	ownerMismatch22              // "file owner %s does not match.": the owner
	fileGroupMismatch22          // "file group '%s' does not match.": the group
	notInGroupFile22             // "user doesn't appear in group file (%s).": the file
	notInDBMGroupFile22          // "user doesn't appear in DBM group file (%s).": the file
	notInGroups22                // "user is not part of the 'require'ed group(s)."
	unknown22                    // "unknown": mod_authz_owner refused with no reason set
)

// failed22Message is the text of a LogLine with a Failed22 reason.
func failed22Message(l LogLine) string {
	failed := "Authorization of user " + l.User + " to access " + l.Subject + " failed, reason: "
	switch l.Failed22 {
	case noFilename22:
		return failed + "no filename available"
	case noStat22:
		return failed + "could not stat file " + l.Reason
	case noOwnerInfo22:
		return failed + "no file owner information available"
	case noGroupInfo22:
		return failed + "no file group information available"
	case noOwnerName22:
		return failed + "could not get name of file owner"
	case noGroupName22:
		return failed + "could not get name of file group"
	case ownerMismatch22:
		return failed + "file owner " + l.Reason + " does not match."
	case fileGroupMismatch22:
		return failed + "file group '" + l.Reason + "' does not match."
	case notInGroupFile22:
		return failed + "user doesn't appear in group file (" + l.Reason + ")."
	case notInDBMGroupFile22:
		return failed + "user doesn't appear in DBM group file (" + l.Reason + ")."
	case notInGroups22:
		return failed + "user is not part of the 'require'ed group(s)."
	}
	return failed + "unknown"
}

// ownerCheck is mod_authz_owner's check_file_owner (2.2,
// modules/aaa/mod_authz_owner.c), an auth_checker hook of
// APR_HOOK_MIDDLE that mod_authz_groupfile's and mod_authz_dbm's follow.
// It reads the lines of the method whose first word
// (ap_getword_white) is "file-owner" or "file-group", compared with
// strcmp (case-sensitive), in order, remembering which it saw
// (required_owner: 1 file-owner, 2 file-group, 4 the file's group
// found):
//
//   - "file-owner": r->filename stat'ed (apr_stat, following a symbolic
//     link) and its owner's name (apr_uid_name_get) equal to the user
//     (strcmp) is OK at once; anything else is a reason to refuse;
//   - "file-group": the name of the file's group (apr_gid_name_get) is
//     left in AUTHZ_GROUP_NOTE for mod_authz_groupfile and mod_authz_dbm,
//     which decide whether the user is in it; no name is a reason to
//     refuse.
//
// With AuthzOwnerAuthoritative On (the default) the scan stops at the
// first reason, and at a "file-owner" line after a "file-group" one or
// the other way round; then a "file-group" whose group was found, with
// nothing else, declines (required_owner 6), and anything else seen is
// HTTP_UNAUTHORIZED, logged with the reason. With it Off the module only
// grants (a matching owner) or declines, the group noted where a
// "file-group" line found it: "file-owner" or "file-group" then reads as
// either. Lines of another keyword are not its own: without "file-owner"
// or "file-group" it declines.
func (c *chain22) ownerCheck(d *Decision) (int, *Rule, bool) {
	lg := c.l.Legacy
	auth := lg.OwnerAuthoritative
	var required uint8
	why, arg := notFailed22, ""
	var failed, seen *Rule
scan:
	for i := range lg.Requires {
		if why != notFailed22 && auth {
			break // a requirement already failed
		}
		q := &lg.Requires[i]
		if !c.applies(q) {
			continue
		}
		var group bool
		switch w, _ := q.keyword(); w {
		case "file-owner":
			if required&^1 != 0 && auth {
				break scan
			}
			required |= 1
		case "file-group":
			if required&^6 != 0 && auth {
				break scan
			}
			group = true
			required |= 2
		default:
			continue
		}
		seen = q.Rule
		name, why1 := c.fileOwner(group)
		switch {
		case why1 != notFailed22:
			why, arg, failed = why1, c.r.Filename, q.Rule
		case group:
			c.fileGroup, c.noted = name, true
			required |= 4
		case name != c.user:
			why, arg, failed = ownerMismatch22, name, q.Rule
		default:
			return c.granted(q, AuthzOwner22, "owns", c.r.Filename)
		}
	}
	if required == 0 || !auth || required == 6 {
		// Nothing of its own, not authoritative, or the file's group
		// noted for the group modules.
		if required != 0 && c.tracing() {
			c.note(seen, AuthzOwner22, "declined")
		}
		return 0, nil, false
	}
	if failed == nil {
		why, failed = unknown22, seen
	}
	c.failed22(d, "authz_owner", why, arg)
	c.refused(failed, AuthzOwner22, "does not own the file")
	return 401, failed, true
}

// fileOwner looks up the name of the user (group: of the group) that
// owns r->filename through the Request's FileOwners, or the reason
// check_file_owner gives for finding none.
func (c *chain22) fileOwner(group bool) (string, Failed22) {
	r := c.r
	if r.Filename == "" {
		return "", noFilename22
	}
	if r.Owners == nil {
		return "", noStat22
	}
	var name string
	var st OwnerStatus
	if group {
		name, st = r.Owners.FileGroup(r.Filename)
	} else {
		name, st = r.Owners.FileOwner(r.Filename)
	}
	switch {
	case st == OwnerFound:
		return name, notFailed22
	case st == OwnerNoInfo && group:
		return "", noGroupInfo22
	case st == OwnerNoInfo:
		return "", noOwnerInfo22
	case st == OwnerNoName && group:
		return "", noGroupName22
	case st == OwnerNoName:
		return "", noOwnerName22
	}
	return "", noStat22
}

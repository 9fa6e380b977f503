package policy

import (
	"net/netip"
	"strings"
	"testing"
)

// owners22 are the files of TestDecide22Owner: each with its owner and
// group ("" an ID without a name); a file in neither map cannot be
// stat'ed.
var owners22 = fakeOwners{
	owner: map[string]string{"/www/a": "alice", "/www/b": "bob", "/www/c": "bob", "/www/B": "Bob", "/www/s": "root", "/www/O": "root", "/www/ghost": ""},
	group: map[string]string{"/www/a": "ops", "/www/b": "guests", "/www/c": "ops", "/www/B": "guests", "/www/s": "staff", "/www/O": "OPS", "/www/ghost": ""},
}

// id22 is testDBMID with carol, who is in no group of the group file and
// has none in the DBM file, and dave, whom neither file has.
var id22 = func() dbmIdentity {
	id := testDBMID
	id.fakeIdentity = fakeIdentity{
		passwords: map[string]string{"alice": "wonderland", "bob": "builder", "carol": "x", "dave": "y"},
		groups:    map[string][]string{"alice": {"Staff", "ops"}, "bob": {"guests"}},
	}
	return id
}()

// TestDecide22Owner: 2.2's mod_authz_owner (check_file_owner,
// modules/aaa/mod_authz_owner.c of 2.2.x) in the auth_checker chain,
// and "file-group" as mod_authz_groupfile's check_user_access and
// mod_authz_dbm's dbm_check_auth read it after it. From the sources (no
// 2.2 server is at hand to compare with):
//
//   - check_file_owner reads the lines whose first word
//     (ap_getword_white) is "file-owner" or "file-group" (strcmp:
//     case-sensitive). "file-owner": r->filename stat'ed and its owner's
//     name equal to r->user (strcmp) is OK at once; a failure sets a
//     reason. "file-group": the name of the file's group goes into
//     AUTHZ_GROUP_NOTE (required_owner |= 4); no name sets a reason.
//     Authoritative (the default), the scan breaks at the first reason,
//     at a "file-owner" after a "file-group" ((required_owner & ~1) &&
//     authoritative) and a "file-group" after a "file-owner" ((required
//     & ~6)); then required_owner 6 (the group found, nothing else) is
//     DECLINED and anything else seen HTTP_UNAUTHORIZED, logged
//     "Authorization of user %s to access %s failed, reason: %s". Not
//     authoritative, it is OK or DECLINED, never logs.
//   - mod_authz_groupfile and mod_authz_dbm (aszPre mod_authz_owner.c)
//     read "file-group" (strcasecmp) only with the note: the group in the
//     user's groups (apr_table_get, any case; DBM: strcmp) is OK; another
//     is "file group '%s' does not match." and the end of the scan when
//     authoritative, forgotten when not (a later "group" line still
//     counts). A user in no group of the file ends the scan: "user
//     doesn't appear in group file (%s).".
func TestDecide22Owner(t *testing.T) {
	allowAll := newCompat(t, AllowDeny, SatisfyAll, []string{"all"}, nil)
	bob := Credentials{Present: true, Basic: true, User: "bob", Password: "builder"}
	carol := Credentials{Present: true, Basic: true, User: "carol", Password: "x"}
	dave := Credentials{Present: true, Basic: true, User: "dave", Password: "y"}
	var (
		debian  = DefaultChain22 // authnz_ldap, authz_owner, authz_dbm, authz_groupfile, authz_user
		noOwner = []Authz22{AuthzGroupFile22, AuthzUser22}
	)
	type cfg struct {
		chain    []Authz22
		requires []string
		file     string
		owners   FileOwners // nil: owners22
		noOwners bool       // the Request has no FileOwners
		groups   bool       // AuthGroupFile set
		dbm      bool       // AuthDBMGroupFile set
		ownerOff bool       // AuthzOwnerAuthoritative Off
		grpOff   bool       // AuthzGroupFileAuthoritative Off
	}
	for _, tc := range []struct {
		name   string
		cfg    cfg
		cred   Credentials
		status int
		rule   string
		logs   string
		reason string // what the 2.2 module's line says after "reason: "
	}{
		// file-owner, authoritative.
		{"owner: the user owns the file", cfg{chain: debian, requires: []string{"file-owner"}, file: "/www/a"}, alice, 0, "q1", "", ""},
		{"owner: another user", cfg{chain: debian, requires: []string{"file-owner"}, file: "/www/a"}, bob, 401, "q1", "authz_owner AH01631", "file owner alice does not match."},
		{"owner: names compared with case", cfg{chain: debian, requires: []string{"file-owner"}, file: "/www/B"}, bob, 401, "q1", "authz_owner AH01631", "file owner Bob does not match."},
		{"owner: no such file", cfg{chain: debian, requires: []string{"file-owner"}, file: "/www/missing"}, alice, 401, "q1", "authz_owner AH01631", "could not stat file /www/missing"},
		{"owner: no filename", cfg{chain: debian, requires: []string{"file-owner"}}, alice, 401, "q1", "authz_owner AH01631", "no filename available"},
		{"owner: an owner ID without a name", cfg{chain: debian, requires: []string{"file-owner"}, file: "/www/ghost"}, alice, 401, "q1", "authz_owner AH01631", "could not get name of file owner"},
		{"owner: no owner information", cfg{chain: debian, requires: []string{"file-owner"}, file: "/www/a", owners: fakeOwners{noInfo: true}}, alice, 401, "q1", "authz_owner AH01631", "no file owner information available"},
		{"owner: no FileOwners", cfg{chain: debian, requires: []string{"file-owner"}, file: "/www/a", noOwners: true}, alice, 401, "q1", "authz_owner AH01631", "could not stat file /www/a"},
		{"owner: the second line", cfg{chain: debian, requires: []string{"valid-user", "file-owner"}, file: "/www/b"}, bob, 0, "q2", "", ""},
		{"owner: refuses before mod_authz_user", cfg{chain: debian, requires: []string{"file-owner", "valid-user"}, file: "/www/a"}, bob, 401, "q1", "authz_owner AH01631", "file owner alice does not match."},
		{"owner: the first failure ends the scan", cfg{chain: debian, requires: []string{"file-owner", "file-owner"}, file: "/www/a"}, bob, 401, "q1", "authz_owner AH01631", "file owner alice does not match."},
		{"owner: keyword case-sensitive", cfg{chain: debian, requires: []string{"File-Owner", "valid-user"}, file: "/www/a"}, bob, 0, "q2", "", ""},
		{"owner: another method's line", cfg{chain: debian, requires: []string{"<POST> file-owner", "valid-user"}, file: "/www/a"}, bob, 0, "q2", "", ""},
		{"owner: not loaded, mod_authz_default", cfg{chain: noOwner, requires: []string{"file-owner"}, file: "/www/a"}, alice, 401, "q1", "AH01631", ""},
		// AuthzOwnerAuthoritative Off: OK or DECLINED, never logged.
		{"owner off: the owner", cfg{chain: debian, requires: []string{"file-owner", "valid-user"}, file: "/www/a", ownerOff: true}, alice, 0, "q1", "", ""},
		{"owner off: mod_authz_user next", cfg{chain: debian, requires: []string{"file-owner", "valid-user"}, file: "/www/a", ownerOff: true}, bob, 0, "q2", "", ""},
		{"owner off: mod_authz_default at the end", cfg{chain: debian, requires: []string{"file-owner"}, file: "/www/a", ownerOff: true}, bob, 401, "q1", "AH01631", ""},

		// file-group: mod_authz_owner finds the group, the group modules decide.
		{"group: a member, group file", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", groups: true}, alice, 0, "q1", "", ""},
		{"group: without case in the group file", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/s", groups: true}, alice, 0, "q1", "", ""},
		{"group: FILE-GROUP is not mod_authz_owner's: nothing noted", cfg{chain: debian, requires: []string{"FILE-GROUP", "valid-user"}, file: "/www/a", groups: true}, bob, 0, "q2", "", ""},
		{"group: not a member", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", groups: true}, bob, 401, "q1", "authz_groupfile AH01631", "file group 'ops' does not match."},
		{"group: the user in no group", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", groups: true}, carol, 401, "q1", "authz_groupfile AH01631", "user doesn't appear in group file (/etc/groups)."},
		{"group: no group name: mod_authz_owner refuses", cfg{chain: debian, requires: []string{"file-group", "valid-user"}, file: "/www/ghost", groups: true}, alice, 401, "q1", "authz_owner AH01631", "could not get name of file group"},
		{"group: no file", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/missing", groups: true}, alice, 401, "q1", "authz_owner AH01631", "could not stat file /www/missing"},
		{"group: no group information", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", owners: fakeOwners{noInfo: true}, groups: true}, alice, 401, "q1", "authz_owner AH01631", "no file group information available"},
		{"group: no group module configured", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a"}, alice, 401, "q1", "AH01631", ""},
		{"group: a group module refuses before mod_authz_user", cfg{chain: debian, requires: []string{"file-group", "valid-user"}, file: "/www/a", groups: true}, bob, 401, "q1", "authz_groupfile AH01631", "file group 'ops' does not match."},
		{"group: mod_authz_owner not loaded: no note", cfg{chain: noOwner, requires: []string{"file-group", "valid-user"}, file: "/www/a", groups: true}, bob, 0, "q2", "", ""},
		{"group: DBM, a member", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", dbm: true}, bob, 0, "q1", "", ""},
		{"group: DBM, compared with case", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/O", dbm: true}, bob, 401, "q1", "authz_dbm AH01631", "file group 'OPS' does not match."},
		{"group: DBM, not a member", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", dbm: true}, alice, 401, "q1", "authz_dbm AH01631", "file group 'ops' does not match."},
		{"group: DBM, the user in no group", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", dbm: true}, carol, 401, "q1", "authz_dbm AH01631", "file group 'ops' does not match."},
		{"group: DBM, the user not in the file", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", dbm: true}, dave, 401, "q1", "authz_dbm AH01631", "user doesn't appear in DBM group file (/etc/groups.dbm)."},
		{"group: DBM, a group line and none matched", cfg{chain: debian, requires: []string{"group admins"}, dbm: true}, bob, 401, "q1", "authz_dbm AH01631", "user is not part of the 'require'ed group(s)."},
		{"group: group file, a group line and none matched", cfg{chain: debian, requires: []string{"group admins"}, groups: true}, bob, 401, "q1", "authz_groupfile AH01631", "user is not part of the 'require'ed group(s)."},
		{"group: DBM first, the group file never asked", cfg{chain: debian, requires: []string{"file-group"}, file: "/www/a", dbm: true, groups: true}, alice, 401, "q1", "authz_dbm AH01631", "file group 'ops' does not match."},
		// The order of the lines (authoritative): the first kind wins.
		{"file-group first: file-owner not read", cfg{chain: debian, requires: []string{"file-group", "file-owner"}, file: "/www/c", groups: true}, bob, 401, "q1", "authz_groupfile AH01631", "file group 'ops' does not match."},
		{"file-group first: the group grants", cfg{chain: debian, requires: []string{"file-group", "file-owner"}, file: "/www/c", groups: true}, alice, 0, "q1", "", ""},
		{"file-owner first: the owner", cfg{chain: debian, requires: []string{"file-owner", "file-group"}, file: "/www/c", groups: true}, bob, 0, "q1", "", ""},
		{"file-owner first: its refusal is final", cfg{chain: debian, requires: []string{"file-owner", "file-group"}, file: "/www/c", groups: true}, alice, 401, "q1", "authz_owner AH01631", "file owner bob does not match."},
		// AuthzOwnerAuthoritative Off: "either owner or group must match".
		{"either: the group", cfg{chain: debian, requires: []string{"file-owner", "file-group"}, file: "/www/c", groups: true, ownerOff: true}, alice, 0, "q2", "", ""},
		{"either: the owner", cfg{chain: debian, requires: []string{"file-owner", "file-group"}, file: "/www/b", groups: true, ownerOff: true}, bob, 0, "q1", "", ""},
		{"either: neither", cfg{chain: debian, requires: []string{"file-owner", "file-group"}, file: "/www/b", groups: true, ownerOff: true}, alice, 401, "q2", "authz_groupfile AH01631", "file group 'guests' does not match."},
		{"either: no group name, nothing noted", cfg{chain: debian, requires: []string{"file-owner", "file-group", "valid-user"}, file: "/www/ghost", groups: true, ownerOff: true}, alice, 0, "q3", "", ""},
		// The group module's flag: a mismatch ends its scan or is forgotten.
		{"group file authoritative: the mismatch ends the scan", cfg{chain: debian, requires: []string{"file-group", "group guests"}, file: "/www/a", groups: true}, bob, 401, "q1", "authz_groupfile AH01631", "file group 'ops' does not match."},
		{"group file not authoritative: a later group line", cfg{chain: debian, requires: []string{"file-group", "group guests"}, file: "/www/a", groups: true, grpOff: true}, bob, 0, "q2", "", ""},
		{"group file not authoritative: declined", cfg{chain: debian, requires: []string{"file-group", "valid-user"}, file: "/www/a", groups: true, grpOff: true}, bob, 0, "q2", "", ""},
		{"a group line before: read first", cfg{chain: debian, requires: []string{"group guests", "file-group"}, file: "/www/a", groups: true}, bob, 0, "q1", "", ""},
		// The keyword is the first word as written: quotes are part of it.
		{"a quoted valid-user is nobody's", cfg{chain: debian, requires: []string{`"valid-user"`}}, bob, 401, "q1", "AH01631", ""},
		{"a quoted group is nobody's", cfg{chain: debian, requires: []string{`"group" guests`}, groups: true}, bob, 401, "q1", "AH01631", ""},
	} {
		c := tc.cfg
		l := &Layers{Compat: allowAll, AuthType: "Basic", AuthTypeRule: &Rule{ID: "authtype"}, AuthName: "R", HasAuthName: true, UserFile: "/etc/users",
			Legacy: &Legacy22{Requires: requires22(c.requires...), Chain: c.chain, UserAuthoritative: true, GroupAuthoritative: !c.grpOff, DBMAuthoritative: true, OwnerAuthoritative: !c.ownerOff}}
		if c.groups {
			l.GroupFile = "/etc/groups"
		}
		if c.dbm {
			l.DBMGroupFile, l.DBMGroupType = "/etc/groups.dbm", "SDBM"
		}
		owners := c.owners
		switch {
		case c.noOwners:
			owners = nil
		case owners == nil:
			owners = owners22
		}
		for _, tr := range []Tracer{nil, &recorder{}} {
			r := &Request{Addr: netip.MustParseAddr("10.1.2.3"), URI: "/u", Filename: c.file, Auth: tc.cred, Owners: owners, Dry: true}
			d := Decide(l, r, id22, tr)
			rule := "<nil>"
			if d.Rule != nil {
				rule = d.Rule.ID
			}
			reason := ""
			for _, x := range d.Logs() {
				if x.Failed22 != notFailed22 {
					msg := x.Message()
					prefix := "Authorization of user " + tc.cred.User + " to access /u failed, reason: "
					if !strings.HasPrefix(msg, prefix) {
						t.Errorf("%s: %q", tc.name, msg)
					}
					reason = strings.TrimPrefix(msg, prefix)
				}
			}
			if logs := logNames22(&d); d.Status != tc.status || rule != tc.rule || logs != tc.logs || reason != tc.reason {
				t.Errorf("%s (tracer %v): %d %s logs %q %q; want %d %s %q %q", tc.name, tr != nil, d.Status, rule, logs, reason, tc.status, tc.rule, tc.logs, tc.reason)
			}
		}
	}
}

// TestDecide22OwnerNoAllocs: mod_authz_owner's hook and the group
// modules' "file-group" decide without allocating, granted or refused.
func TestDecide22OwnerNoAllocs(t *testing.T) {
	allowAll := newCompat(t, AllowDeny, SatisfyAll, []string{"all"}, nil)
	bob := Credentials{Present: true, Basic: true, User: "bob", Password: "builder"}
	var id Identity = id22
	for _, tc := range []struct {
		requires []string
		file     string
		cred     Credentials
	}{
		{[]string{"file-owner"}, "/www/a", alice},
		{[]string{"file-owner"}, "/www/a", bob},
		{[]string{"file-owner"}, "/www/missing", bob},
		{[]string{"file-group"}, "/www/a", alice},
		{[]string{"file-group"}, "/www/a", bob},
		{[]string{"file-group"}, "/www/ghost", bob},
		{[]string{"file-group", "file-owner"}, "/www/c", alice},
	} {
		l := &Layers{Compat: allowAll, AuthType: "Basic", AuthName: "R", HasAuthName: true, UserFile: "/etc/users", GroupFile: "/etc/groups", DBMGroupFile: "/etc/groups.dbm", DBMGroupType: "SDBM",
			Legacy: &Legacy22{Requires: requires22(tc.requires...), Chain: DefaultChain22, UserAuthoritative: true, GroupAuthoritative: true, DBMAuthoritative: false, OwnerAuthoritative: true}}
		r := &Request{Addr: netip.MustParseAddr("10.1.2.3"), URI: "/u", Filename: tc.file, Auth: tc.cred, Owners: owners22, Dry: true}
		if n := testing.AllocsPerRun(100, func() { Decide(l, r, id, nil) }); n != 0 {
			t.Errorf("%v on %s as %s: %.1f allocations", tc.requires, tc.file, tc.cred.User, n)
		}
	}
}

// TestDecide22OwnerTrace: what explain shows of the 2.2 hooks: the line
// that granted and why, mod_authz_owner declining only where it has a
// line of its own, the refusals; and a requirement with neither line nor
// words (which core never stores) is nobody's keyword.
func TestDecide22OwnerTrace(t *testing.T) {
	allowAll := newCompat(t, AllowDeny, SatisfyAll, []string{"all"}, nil)
	bob := Credentials{Present: true, Basic: true, User: "bob", Password: "builder"}
	for _, tc := range []struct {
		requires []string
		ownerOff bool
		cred     Credentials
		want     string // the chain's events (recorder.String, the LayerAuthz ones)
	}{
		{[]string{"valid-user"}, false, bob, "mod_authz_user[q1]=granted: bob valid-user; "},
		{[]string{"file-owner", "valid-user"}, true, bob, "mod_authz_owner[q1]=declined; mod_authz_user[q2]=granted: bob valid-user; "},
		{[]string{"file-owner"}, false, alice, "mod_authz_owner[q1]=granted: alice owns /www/a; "},
		{[]string{"file-owner"}, false, bob, "mod_authz_owner[q1]=401: bob does not own the file; "},
		{[]string{"file-group"}, false, alice, "mod_authz_owner[q1]=declined; mod_authz_groupfile[q1]=granted: alice in the file's group ops; "},
		{[]string{"group guests"}, false, bob, "mod_authz_groupfile[q1]=granted: bob in guests; "},
		{[]string{"group admins"}, false, bob, "mod_authz_groupfile[q1]=401: bob in none of the groups; "},
		{[]string{"user alice"}, false, bob, "mod_authz_user[q1]=401: bob not listed; "},
	} {
		l := &Layers{Compat: allowAll, AuthType: "Basic", AuthName: "R", HasAuthName: true, UserFile: "/etc/users", GroupFile: "/etc/groups",
			Legacy: &Legacy22{Requires: requires22(tc.requires...), Chain: DefaultChain22, UserAuthoritative: true, GroupAuthoritative: true, OwnerAuthoritative: !tc.ownerOff}}
		var rec recorder
		Decide(l, &Request{Addr: netip.MustParseAddr("10.1.2.3"), URI: "/u", Filename: "/www/a", Auth: tc.cred, Owners: owners22, Dry: true}, id22, &rec)
		var chain recorder
		for _, e := range rec.ev {
			if e.Layer == LayerAuthz {
				chain.ev = append(chain.ev, e)
			}
		}
		if got := chain.String(); got != tc.want {
			t.Errorf("%v as %s: %q, want %q", tc.requires, tc.cred.User, got, tc.want)
		}
	}
	l := &Layers{Compat: allowAll, AuthType: "Basic", AuthName: "R", HasAuthName: true, UserFile: "/etc/users",
		Legacy: &Legacy22{Requires: []Require22{{Methods: AllMethods, Rule: &Rule{ID: "q"}}}, Chain: DefaultChain22, UserAuthoritative: true, OwnerAuthoritative: true}}
	if d := Decide(l, &Request{Addr: netip.MustParseAddr("10.1.2.3"), URI: "/u", Auth: bob, Dry: true}, id22, nil); d.Status != 401 {
		t.Errorf("an empty requirement: %d, want mod_authz_default's 401", d.Status)
	}
}

package policy

import (
	"net/netip"
	"strings"
	"testing"
)

// requires22 builds 2.2 Require lines, their rules named q1, q2, ...; a
// line starting with "<POST>" stands in <Limit POST>. A quoted word is
// one word without its quotes in Words (as ap_getword_conf reads it),
// and as written in Line.
func requires22(lines ...string) []Require22 {
	var out []Require22
	for i, line := range lines {
		q := Require22{Methods: AllMethods, Rule: &Rule{ID: "q" + string(rune('1'+i))}}
		if rest, ok := strings.CutPrefix(line, "<POST> "); ok {
			q.Methods, line = 1<<2, rest
		}
		q.Line = line
		for _, w := range strings.Fields(line) {
			q.Words = append(q.Words, strings.Trim(w, `"`)) // ap_getword_conf, for these lines
		}
		out = append(out, q)
	}
	return out
}

// logNames22 names the log lines of a decision: each by its code, or
// by its module where it has none (2.2's own lines).
func logNames22(d *Decision) string {
	var logs []string
	for _, x := range d.Logs() {
		if x.Code == "" {
			logs = append(logs, x.Module)
		} else {
			logs = append(logs, x.Code)
		}
	}
	return strings.Join(logs, " ")
}

// groupsFirst is the chain of mod_authz_groupfile and mod_authz_user, in
// the stock order or the other.
func groupsFirst(yes bool) []Authz22 {
	if yes {
		return []Authz22{AuthzGroupFile22, AuthzUser22}
	}
	return []Authz22{AuthzUser22, AuthzGroupFile22}
}

// TestDecide22: Apache 2.2's combination (server/request.c 2.2.34): the
// host check, Satisfy, authentication only when a Require line applies
// to the method, then mod_authz_groupfile and mod_authz_user in load
// order, the first authoritative answer deciding, and mod_authz_default
// refusing what none granted.
func TestDecide22(t *testing.T) {
	const post = 2
	denyAll := newCompat(t, DenyAllow, SatisfyAll, nil, []string{"all"})
	allowAll := newCompat(t, AllowDeny, SatisfyAll, []string{"all"}, nil)
	type cfg struct {
		c        *Compat
		satisfy  Satisfy
		requires []string
		authType string
		groups   bool // AuthGroupFile set
		userAuth bool // AuthzUserAuthoritative
		grpAuth  bool // AuthzGroupFileAuthoritative
		grpFirst bool
		notAuth  bool // AuthBasicAuthoritative Off
		dfltOff  bool // AuthzDefaultAuthoritative Off
	}
	std := func(c *Compat, sat Satisfy, requires ...string) cfg {
		return cfg{c: c, satisfy: sat, requires: requires, authType: "Basic", groups: true, userAuth: true, grpAuth: true, grpFirst: true}
	}
	with := func(c cfg, f func(*cfg)) cfg { f(&c); return c }
	bob := Credentials{Present: true, Basic: true, User: "bob", Password: "builder"}
	for _, tc := range []struct {
		name   string
		cfg    cfg
		method int
		cred   Credentials
		status int
		layer  Layer
		rule   string
		realm  string
		logs   string
	}{
		{"no Require: the host check alone", std(allowAll, SatisfyAll), 0, Credentials{}, 0, LayerCompat, "allow1", "", ""},
		{"no Require, denied", std(denyAll, SatisfyAny), 0, Credentials{}, 403, LayerCompat, "deny1", "", "AH01797"},
		{"Satisfy All: host denial is final", std(denyAll, SatisfyAll, "valid-user"), 0, alice, 403, LayerCompat, "deny1", "", "AH01797"},
		{"Satisfy Any: host grant is enough", std(allowAll, SatisfyAny, "valid-user"), 0, Credentials{}, 0, LayerCompat, "allow1", "", ""},
		{"Satisfy Any: a password gets past, denial not logged", std(denyAll, SatisfyAny, "valid-user"), 0, alice, 0, LayerAuthz, "q1", "", ""},
		{"Satisfy Any: no password", std(denyAll, SatisfyAny, "valid-user"), 0, Credentials{}, 401, LayerAuthn, "authtype", "R", ""},
		{"Satisfy Any: Require for POST only, GET", std(denyAll, SatisfyAny, "<POST> valid-user"), 0, alice, 403, LayerCompat, "deny1", "", "AH01797"},
		{"Satisfy Any: Require for POST only, POST", std(denyAll, SatisfyAny, "<POST> valid-user"), post, alice, 0, LayerAuthz, "q1", "", ""},
		{"Satisfy All: host grant, then a password", std(allowAll, SatisfyAll, "valid-user"), 0, alice, 0, LayerAuthz, "q1", "", ""},
		{"Satisfy unset is All", std(allowAll, SatisfyNoSpec, "valid-user"), 0, Credentials{}, 401, LayerAuthn, "authtype", "R", ""},
		{"Valid-User in any case", std(allowAll, SatisfyAll, "Valid-User"), 0, alice, 0, LayerAuthz, "q1", "", ""},
		{"wrong password", std(allowAll, SatisfyAll, "valid-user"), 0, aliceBad, 401, LayerAuthn, "authtype", "R", "AH01617"},
		{"unknown user, AuthBasicAuthoritative Off: 2.2's 401", with(std(allowAll, SatisfyAll, "valid-user"), func(c *cfg) { c.notAuth = true }), 0, carol, 401, LayerAuthn, "authtype", "R", "AH01618"},
		{"no AuthType", with(std(allowAll, SatisfyAll, "valid-user"), func(c *cfg) { c.authType = "" }), 0, alice, 500, LayerConfig, "authtype", "", "AH00027"},
		{"AuthType Digest: mod_authn_default", with(std(allowAll, SatisfyAll, "valid-user"), func(c *cfg) { c.authType = "Digest" }), 0, alice, 401, LayerAuthn, "authtype", "R", ""},
		{"AuthType basic in any case", with(std(allowAll, SatisfyAll, "valid-user"), func(c *cfg) { c.authType = "BASIC" }), 0, alice, 0, LayerAuthz, "q1", "", ""},
		{"Require user: listed", std(allowAll, SatisfyAll, "user bob alice"), 0, alice, 0, LayerAuthz, "q1", "", ""},
		{"Require user: case-sensitive", std(allowAll, SatisfyAll, "user Alice"), 0, alice, 401, LayerAuthz, "q1", "R", "AH01631"},
		{"Require user: the last line named", std(allowAll, SatisfyAll, "user bob", "user carol"), 0, alice, 401, LayerAuthz, "q2", "R", "AH01631"},
		{"Require user: not authoritative, mod_authz_default", with(std(allowAll, SatisfyAll, "user bob", "user carol"), func(c *cfg) { c.userAuth = false }), 0, alice, 401, LayerAuthz, "q1", "R", "AH01631"},
		{"Require group, any case", std(allowAll, SatisfyAll, "group STAFF"), 0, alice, 0, LayerAuthz, "q1", "", ""},
		{"Require group: second name", std(allowAll, SatisfyAll, "group admins ops"), 0, alice, 0, LayerAuthz, "q1", "", ""},
		{"Require group: none", std(allowAll, SatisfyAll, "group admins", "group staff"), 0, bob, 401, LayerAuthz, "q2", "R", "authz_groupfile AH01631"},
		{"Require group: second line", std(allowAll, SatisfyAll, "group admins", "group staff"), 0, alice, 0, LayerAuthz, "q2", "", ""},
		{"Require group: no AuthGroupFile", with(std(allowAll, SatisfyAll, "group staff"), func(c *cfg) { c.groups = false }), 0, alice, 401, LayerAuthz, "q1", "R", "AH01631"},
		{"Require group: another method's line", std(allowAll, SatisfyAll, "<POST> group staff", "user bob"), 0, alice, 401, LayerAuthz, "q2", "R", "AH01631"},
		{"group first, authoritative: decides before users", std(allowAll, SatisfyAll, "group admins", "user alice"), 0, alice, 401, LayerAuthz, "q1", "R", "authz_groupfile AH01631"},
		{"group first, not authoritative: users next", with(std(allowAll, SatisfyAll, "group admins", "user alice"), func(c *cfg) { c.grpAuth = false }), 0, alice, 0, LayerAuthz, "q2", "", ""},
		{"users first: a listed user passes", with(std(allowAll, SatisfyAll, "group admins", "user alice"), func(c *cfg) { c.grpFirst = false }), 0, alice, 0, LayerAuthz, "q2", "", ""},
		{"users first, authoritative: decides before groups", with(std(allowAll, SatisfyAll, "user bob", "group staff"), func(c *cfg) { c.grpFirst = false }), 0, alice, 401, LayerAuthz, "q1", "R", "AH01631"},
		{"users first, not authoritative: groups next", with(std(allowAll, SatisfyAll, "user bob", "group staff"), func(c *cfg) { c.grpFirst, c.userAuth = false, false }), 0, alice, 0, LayerAuthz, "q2", "", ""},
		{"an unknown keyword: mod_authz_default", std(allowAll, SatisfyAll, "file-owner"), 0, alice, 401, LayerAuthz, "q1", "R", "AH01631"},
		// mod_authz_default not authoritative declines; every auth_checker
		// declined is core's decl_die: 500 (2.2.34 server/request.c).
		{"an unknown keyword, AuthzDefaultAuthoritative Off: 500", with(std(allowAll, SatisfyAll, "file-owner"), func(c *cfg) { c.dfltOff = true }), 0, alice, 500, LayerConfig, "q1", "", ""},
		{"users not authoritative, default not authoritative: 500", with(std(allowAll, SatisfyAll, "user bob"), func(c *cfg) { c.userAuth, c.dfltOff = false, true }), 0, alice, 500, LayerConfig, "q1", "", ""},
		{"default not authoritative, a listed user passes", with(std(allowAll, SatisfyAll, "user alice"), func(c *cfg) { c.dfltOff = true }), 0, alice, 0, LayerAuthz, "q1", "", ""},
		{"Require for another method: nothing to check", std(allowAll, SatisfyAll, "<POST> user bob"), 0, alice, 0, LayerCompat, "allow1", "", ""},
	} {
		c := tc.cfg
		l := &Layers{Compat: c.c, AuthType: c.authType, AuthTypeRule: &Rule{ID: "authtype"}, AuthName: "R", HasAuthName: true, UserFile: "users", BasicNotAuthoritative: c.notAuth, Default: &Rule{ID: "def"},
			Legacy: &Legacy22{Requires: requires22(c.requires...), UserAuthoritative: c.userAuth, GroupAuthoritative: c.grpAuth, Chain: groupsFirst(c.grpFirst), DefaultNotAuthoritative: c.dfltOff}}
		if c.groups {
			l.GroupFile = "groups"
		}
		for m := range l.Legacy.Satisfy {
			l.Legacy.Satisfy[m] = c.satisfy
		}
		// 2.4's layers are ignored under Legacy.
		l.Authz = anyOf(leaf("ignored", ProvAllDenied))
		r := &Request{Method: tc.method, Addr: netip.MustParseAddr("10.1.2.3"), URI: "/u", Filename: "/f", Auth: tc.cred}
		var rec recorder
		for _, tr := range []Tracer{nil, &rec} {
			d := Decide(l, r, testID, tr)
			rule := "<nil>"
			if d.Rule != nil {
				rule = d.Rule.ID
			}
			if d.Status != tc.status || d.Layer != tc.layer || rule != tc.rule || d.Realm != tc.realm || logNames22(&d) != tc.logs {
				t.Errorf("%s (tracer %v): %d %s %s realm %q logs %q; want %d %s %s realm %q logs %q", tc.name, tr != nil,
					d.Status, d.Layer, rule, d.Realm, logNames22(&d), tc.status, tc.layer, tc.rule, tc.realm, tc.logs)
			}
		}
	}
}

// TestDecide22Counts: the line that granted counts a match; a refused
// user counts none.
func TestDecide22Counts(t *testing.T) {
	allowAll := newCompat(t, AllowDeny, SatisfyAll, []string{"all"}, nil)
	for _, tc := range []struct {
		requires []string
		cred     Credentials
		want     string // the lines that matched
	}{
		{[]string{"user bob", "user alice"}, alice, "q2"},
		{[]string{"user bob", "valid-user"}, alice, "q2"},
		{[]string{"group admins", "group ops"}, alice, "q2"},
		{[]string{"user bob"}, alice, ""},
	} {
		l := &Layers{Compat: allowAll, AuthType: "Basic", HasAuthName: true, UserFile: "u", GroupFile: "g",
			Legacy: &Legacy22{Requires: requires22(tc.requires...), UserAuthoritative: true, GroupAuthoritative: true}}
		Decide(l, &Request{Addr: netip.MustParseAddr("10.1.2.3"), Auth: tc.cred, Now: 1}, testID, nil)
		var got []string
		for _, q := range l.Legacy.Requires {
			if m, _, _ := q.Rule.Stats(); m > 0 {
				got = append(got, q.Rule.ID)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%v: matched %v, want %q", tc.requires, got, tc.want)
		}
	}
}

// chainIdentity reads the group file, DBM group files (testDBMID) and an
// LDAP directory (ldapIdentity's 2.2 hook) for TestDecide22Chain.
type chainIdentity struct {
	dbmIdentity
	ldap ldapIdentity
}

func (c chainIdentity) CheckLDAPPassword(s *LDAPScope, st *LDAPState, user, password string) (PasswordResult, string, error) {
	return c.ldap.CheckLDAPPassword(s, st, user, password)
}

func (c chainIdentity) AuthorizeLDAP(s *LDAPScope, st *LDAPState, user, form, args string) (Result, error) {
	return c.ldap.AuthorizeLDAP(s, st, user, form, args)
}

func (c chainIdentity) AuthorizeLDAP22(s *LDAPScope, st *LDAPState, user string, lines []string) (Answer22, int, error) {
	return c.ldap.AuthorizeLDAP22(s, st, user, lines)
}

// TestDecide22Chain: 2.2's auth_checker hooks in the orders the
// LoadModule lines can give them (translate's authz22Chain), with each
// module's authoritative flag. What each hook does, from the 2.2.x
// sources (no 2.2 server is at hand to compare with):
//
//   - mod_authz_dbm's dbm_check_auth (modules/aaa/mod_authz_dbm.c):
//     DECLINED without AuthDBMGroupFile ("if (!conf->grpfile)"); the
//     groups read once at the first "group" line (get_dbm_grp, the key
//     "user:realm" then "user"; a file that cannot be opened is
//     HTTP_INTERNAL_SERVER_ERROR); the value's groups before any ':'
//     after the first, split at ','; each word of the line
//     (ap_getword_white: quotes are not special) compared with strcmp;
//     a group line seen and none matched is HTTP_UNAUTHORIZED when
//     conf->authoritative, else DECLINED.
//   - mod_authz_groupfile's check_user_access: the same with the text
//     file, words by ap_getword_conf, names by apr_table_get (any case).
//   - mod_authnz_ldap's authz_ldap_check_user_access
//     (modules/aaa/mod_authnz_ldap.c): DECLINED without AuthLDAPURL
//     ("if (!sec->have_ldap_url)") or without a line whose keyword
//     starts with "ldap-" (strncmp, so ldap-search too); then every line
//     of the method at once, any that grants is OK, otherwise
//     "sec->auth_authoritative? HTTP_UNAUTHORIZED : DECLINED", even with
//     a valid-user line beside.
//   - mod_authz_default: what is left, 401.
func TestDecide22Chain(t *testing.T) {
	allowAll := newCompat(t, AllowDeny, SatisfyAll, []string{"all"}, nil)
	var (
		debian   = DefaultChain22 // authnz_ldap, authz_dbm, authz_groupfile, authz_user
		upstream = []Authz22{AuthzGroupFile22, AuthzLDAP22, AuthzUser22, AuthzDBM22}
		dbmFirst = []Authz22{AuthzDBM22, AuthzGroupFile22, AuthzUser22}
		grpFirst = []Authz22{AuthzGroupFile22, AuthzDBM22, AuthzUser22}
	)
	bob := Credentials{Present: true, Basic: true, User: "bob", Password: "builder"}
	carol := Credentials{Present: true, Basic: true, User: "carol", Password: "letmein"} // in /etc/users.dbm
	dave := Credentials{Present: true, Basic: true, User: "dave", Password: "passw0rd"}  // in /etc/staff.dbm
	type cfg struct {
		chain    []Authz22
		requires []string
		groups   bool   // AuthGroupFile set
		dbm      string // AuthDBMGroupFile
		ldap     string // the LDAP scope's Key ("" none: no AuthLDAP* line)
		dbmOff   bool   // AuthzDBMAuthoritative Off
		grpOff   bool   // AuthzGroupFileAuthoritative Off
		userOff  bool   // AuthzUserAuthoritative Off
	}
	for _, tc := range []struct {
		name   string
		cfg    cfg
		cred   Credentials
		status int
		rule   string
		logs   string
		asked  string // what the LDAP hook was asked
	}{
		// mod_authz_dbm alone. testDBMID: under the realm "R", alice has
		// "everyone" (the key "alice"), bob "guests" and "ops".
		{"dbm: a group of the user", cfg{chain: debian, requires: []string{"group admins ops"}, dbm: "/etc/groups.dbm"}, bob, 0, "q1", "", ""},
		{"dbm: none of them, authoritative", cfg{chain: debian, requires: []string{"group admins", "group staff"}, dbm: "/etc/groups.dbm"}, bob, 401, "q2", "authz_dbm AH01631", ""},
		{"dbm: names are compared exactly", cfg{chain: debian, requires: []string{"group OPS"}, dbm: "/etc/groups.dbm"}, bob, 401, "q1", "authz_dbm AH01631", ""},
		{"dbm: quotes are part of the word", cfg{chain: debian, requires: []string{`group "ops"`}, dbm: "/etc/groups.dbm"}, bob, 401, "q1", "authz_dbm AH01631", ""},
		{"dbm: the user has no group", cfg{chain: debian, requires: []string{"group ops"}, dbm: "/etc/groups.dbm"}, carol, 401, "q1", "authz_dbm AH01631", ""},
		{"dbm: the user is not in the file", cfg{chain: debian, requires: []string{"group ops"}, dbm: "/etc/groups.dbm"}, dave, 401, "q1", "authz_dbm AH01631", ""},
		{"dbm: no file set: declined, then default", cfg{chain: debian, requires: []string{"group ops"}}, bob, 401, "q1", "AH01631", ""},
		{"dbm: a file it cannot open is 500", cfg{chain: debian, requires: []string{"group ops"}, dbm: "/etc/broken.dbm"}, bob, 500, "q1", "AH01799", ""},
		{"dbm: a line of another kind is not its own", cfg{chain: dbmFirst, requires: []string{"user bob", "group admins"}, dbm: "/etc/groups.dbm"}, bob, 401, "q2", "authz_dbm AH01631", ""},
		{"dbm not authoritative: mod_authz_user next", cfg{chain: dbmFirst, requires: []string{"user bob", "group admins"}, dbm: "/etc/groups.dbm", dbmOff: true}, bob, 0, "q1", "", ""},
		{"dbm not authoritative: default at the end", cfg{chain: dbmFirst, requires: []string{"group admins"}, dbm: "/etc/groups.dbm", dbmOff: true}, bob, 401, "q1", "AH01631", ""},
		// Upstream's LoadModule order puts mod_authz_dbm after
		// mod_authz_user: its groups count only if users declined.
		{"upstream: mod_authz_user decides first", cfg{chain: upstream, requires: []string{"user alice", "group ops"}, dbm: "/etc/groups.dbm"}, bob, 401, "q1", "AH01631", ""},
		{"upstream: users not authoritative, dbm grants", cfg{chain: upstream, requires: []string{"user alice", "group ops"}, dbm: "/etc/groups.dbm", userOff: true}, bob, 0, "q2", "", ""},
		{"debian: dbm decides before users", cfg{chain: debian, requires: []string{"user bob", "group admins"}, dbm: "/etc/groups.dbm"}, bob, 401, "q2", "authz_dbm AH01631", ""},
		// Both group files: each module reads Require group against its
		// own file. alice is "Staff" and "ops" in the group file,
		// "everyone" in the DBM file.
		{"both, dbm first: dbm grants", cfg{chain: dbmFirst, requires: []string{"group everyone"}, groups: true, dbm: "/etc/groups.dbm"}, alice, 0, "q1", "", ""},
		{"both, group file first, authoritative: 401", cfg{chain: grpFirst, requires: []string{"group everyone"}, groups: true, dbm: "/etc/groups.dbm"}, alice, 401, "q1", "authz_groupfile AH01631", ""},
		{"both, group file first, not authoritative: dbm grants", cfg{chain: grpFirst, requires: []string{"group everyone"}, groups: true, dbm: "/etc/groups.dbm", grpOff: true}, alice, 0, "q1", "", ""},
		{"both, dbm first, authoritative: 401 though the group file has it", cfg{chain: dbmFirst, requires: []string{"group staff"}, groups: true, dbm: "/etc/groups.dbm"}, alice, 401, "q1", "authz_dbm AH01631", ""},
		{"both, dbm first, not authoritative: the group file grants", cfg{chain: dbmFirst, requires: []string{"group staff"}, groups: true, dbm: "/etc/groups.dbm", dbmOff: true}, alice, 0, "q1", "", ""},
		// mod_authnz_ldap: the fake directory grants "ldap-user <user>".
		{"ldap grants", cfg{chain: debian, requires: []string{"ldap-user alice", "valid-user"}, ldap: "s"}, alice, 0, "q1", "", "authz22 s [alice] ldap-user alice|valid-user ()"},
		{"ldap refuses before valid-user", cfg{chain: debian, requires: []string{"ldap-user alice", "valid-user"}, ldap: "s"}, bob, 401, "q1", "AH01631", "authz22 s [bob] ldap-user alice|valid-user ()"},
		{"ldap not authoritative: valid-user grants", cfg{chain: debian, requires: []string{"ldap-user alice", "valid-user"}, ldap: "lax"}, bob, 0, "q2", "", "authz22 lax [bob] ldap-user alice|valid-user ()"},
		{"ldap: the line that granted", cfg{chain: debian, requires: []string{"ldap-user alice", "ldap-user bob"}, ldap: "s"}, bob, 0, "q2", "", "authz22 s [bob] ldap-user alice|ldap-user bob ()"},
		{"ldap: the first line granted", cfg{chain: debian, requires: []string{"ldap-user alice", "ldap-user bob"}, ldap: "s"}, alice, 0, "q1", "", "authz22 s [alice] ldap-user alice|ldap-user bob ()"},
		{"ldap: an index past the lines names the last ldap-* line", cfg{chain: debian, requires: []string{"ldap-dn out-of-range", "ldap-user bob", "valid-user"}, ldap: "s"}, alice, 401, "q2", "AH01631", "authz22 s [alice] ldap-dn out-of-range|ldap-user bob|valid-user ()"},
		{"ldap: no AuthLDAP* line, declined", cfg{chain: debian, requires: []string{"ldap-user alice"}}, alice, 401, "q1", "AH01631", ""},
		{"ldap: no ldap-* line, declined", cfg{chain: debian, requires: []string{"valid-user"}, ldap: "s"}, bob, 0, "q1", "", ""},
		{"ldap: keywords are case-sensitive", cfg{chain: debian, requires: []string{"LDAP-USER alice"}, ldap: "s"}, alice, 401, "q1", "AH01631", ""},
		{"ldap: 2.2 has no ldap-search, yet it is an ldap-* line", cfg{chain: debian, requires: []string{"ldap-search (uid=alice)", "valid-user"}, ldap: "s"}, alice, 401, "q1", "AH01631", "authz22 s [alice] ldap-search (uid=alice)|valid-user ()"},
		{"ldap: only the method's lines", cfg{chain: debian, requires: []string{"<POST> ldap-user alice", "ldap-user bob"}, ldap: "s"}, alice, 401, "q2", "AH01631", "authz22 s [alice] ldap-user bob ()"},
		{"ldap: the error is logged", cfg{chain: debian, requires: []string{"ldap-user bob", "ldap-dn broken"}, ldap: "s"}, alice, 401, "q2", "authnz_ldap AH01631", "authz22 s [alice] ldap-user bob|ldap-dn broken ()"},
		// mod_authnz_ldap and the group files: Debian loads it first,
		// upstream after mod_authz_groupfile (bob is in "guests").
		{"debian: ldap before the group file", cfg{chain: debian, requires: []string{"group guests", "ldap-user alice"}, groups: true, ldap: "s"}, bob, 401, "q2", "AH01631", "authz22 s [bob] group guests|ldap-user alice ()"},
		{"upstream: the group file before ldap", cfg{chain: upstream, requires: []string{"group guests", "ldap-user alice"}, groups: true, ldap: "s"}, bob, 0, "q1", "", ""},
		{"upstream: the group file refuses first", cfg{chain: upstream, requires: []string{"group admins", "ldap-user bob"}, groups: true, ldap: "s"}, bob, 401, "q1", "authz_groupfile AH01631", ""},
		// No module loaded but mod_authz_default.
		{"no module: default", cfg{chain: []Authz22{}, requires: []string{"valid-user"}}, bob, 401, "q1", "AH01631", ""},
	} {
		var asked []string
		id := chainIdentity{dbmIdentity: testDBMID, ldap: ldapIdentity{fakeIdentity: testID, asked: &asked}}
		c := tc.cfg
		l := &Layers{Compat: allowAll, AuthType: "Basic", AuthTypeRule: &Rule{ID: "authtype"}, AuthName: "R", HasAuthName: true,
			Providers: []AuthnProvider{{Name: "file", Kind: ProviderFile, File: "/etc/users"}, {Name: "dbm", Kind: ProviderDBM, File: "/etc/users.dbm", DBMType: "default"},
				{Name: "staff", Kind: ProviderDBM, File: "/etc/staff.dbm", DBMType: "SDBM"}},
			Legacy: &Legacy22{Requires: requires22(c.requires...), Chain: c.chain,
				UserAuthoritative: !c.userOff, GroupAuthoritative: !c.grpOff, DBMAuthoritative: !c.dbmOff}}
		if c.groups {
			l.GroupFile = "/etc/groups"
		}
		if c.dbm != "" {
			l.DBMGroupFile, l.DBMGroupType = c.dbm, "SDBM"
		}
		if c.ldap != "" {
			l.LDAP = &LDAPScope{Key: c.ldap}
		}
		for _, tr := range []Tracer{nil, &recorder{}} {
			asked = nil
			// Dry: the decision alone, without necessity's asks.
			d := Decide(l, &Request{Addr: netip.MustParseAddr("10.1.2.3"), URI: "/u", Auth: tc.cred, Dry: true}, id, tr)
			rule := "<nil>"
			if d.Rule != nil {
				rule = d.Rule.ID
			}
			logs := logNames22(&d)
			if d.Status != tc.status || rule != tc.rule || logs != tc.logs {
				t.Errorf("%s (tracer %v): %d %s logs %q; want %d %s %q", tc.name, tr != nil, d.Status, rule, logs, tc.status, tc.rule, tc.logs)
			}
			if got := strings.Join(asked, "|"); got != tc.asked {
				t.Errorf("%s: asked %q, want %q", tc.name, got, tc.asked)
			}
		}
	}
}

// TestDecide22HookErrors: a group file a module cannot open is its 500
// (mod_authz_groupfile's and mod_authz_dbm's HTTP_INTERNAL_SERVER_ERROR),
// whatever its authoritative flag and whatever a later module would
// say; an Identity that cannot ask LDAP is a 500 too; the line an LDAP
// check granted counts its match.
func TestDecide22HookErrors(t *testing.T) {
	allowAll := newCompat(t, AllowDeny, SatisfyAll, []string{"all"}, nil)
	var asked []string
	ldapID := chainIdentity{dbmIdentity: testDBMID, ldap: ldapIdentity{fakeIdentity: testID, asked: &asked}}
	brokenGroups := testID
	brokenGroups.groupErr = true
	for _, tc := range []struct {
		name   string
		id     Identity
		l      Layers
		status int
		log    string
	}{
		{"group file", brokenGroups, Layers{GroupFile: "/etc/groups"}, 500, "AH01665"},
		{"DBM group file", ldapID, Layers{DBMGroupFile: "/etc/broken.dbm", DBMGroupType: "SDBM"}, 500, "AH01799"},
		{"an Identity without DBM", testID, Layers{DBMGroupFile: "/etc/groups.dbm", DBMGroupType: "SDBM"}, 500, "AH01799"},
		{"an Identity without LDAP", testID, Layers{LDAP: &LDAPScope{Key: "s"}}, 500, "authnz_ldap"},
		{"LDAP grants", ldapID, Layers{LDAP: &LDAPScope{Key: "s"}}, 0, ""},
	} {
		l := tc.l
		l.Compat, l.AuthType, l.AuthName, l.HasAuthName, l.UserFile = allowAll, "Basic", "R", true, "/etc/users"
		l.Legacy = &Legacy22{Requires: requires22("group staff", "ldap-user alice", "valid-user"), Chain: DefaultChain22}
		d := Decide(&l, &Request{Addr: netip.MustParseAddr("10.1.2.3"), URI: "/u", Auth: alice, Now: 1}, tc.id, nil)
		last := ""
		if logs := d.Logs(); len(logs) > 0 {
			last = logs[len(logs)-1].Code
			if last == "" {
				last = logs[len(logs)-1].Module
			}
		}
		if d.Status != tc.status || last != tc.log {
			t.Errorf("%s: %d %q, want %d %q", tc.name, d.Status, last, tc.status, tc.log)
		}
		if tc.status == 0 {
			if m, _, _ := l.Legacy.Requires[1].Rule.Stats(); d.Rule != l.Legacy.Requires[1].Rule || m != 1 {
				t.Errorf("%s: decided by %v, %d matches of the ldap-user line", tc.name, d.Rule, m)
			}
		}
	}
}

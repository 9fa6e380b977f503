package policy

import (
	"net/netip"
	"strings"
	"testing"
)

// requires22 builds 2.2 Require lines, their rules named q1, q2, ...; a
// line starting with "<POST>" stands in <Limit POST>.
func requires22(lines ...string) []Require22 {
	var out []Require22
	for i, line := range lines {
		q := Require22{Methods: AllMethods, Rule: &Rule{ID: "q" + string(rune('1'+i))}}
		words := strings.Fields(line)
		if words[0] == "<POST>" {
			q.Methods, words = 1<<2, words[1:]
		}
		q.Words = words
		out = append(out, q)
	}
	return out
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
		{"Require group: none", std(allowAll, SatisfyAll, "group admins", "group staff"), 0, bob, 401, LayerAuthz, "q2", "R", "AH01631"},
		{"Require group: second line", std(allowAll, SatisfyAll, "group admins", "group staff"), 0, alice, 0, LayerAuthz, "q2", "", ""},
		{"Require group: no AuthGroupFile", with(std(allowAll, SatisfyAll, "group staff"), func(c *cfg) { c.groups = false }), 0, alice, 401, LayerAuthz, "q1", "R", "AH01631"},
		{"Require group: another method's line", std(allowAll, SatisfyAll, "<POST> group staff", "user bob"), 0, alice, 401, LayerAuthz, "q2", "R", "AH01631"},
		{"group first, authoritative: decides before users", std(allowAll, SatisfyAll, "group admins", "user alice"), 0, alice, 401, LayerAuthz, "q1", "R", "AH01631"},
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
			Legacy: &Legacy22{Requires: requires22(c.requires...), UserAuthoritative: c.userAuth, GroupAuthoritative: c.grpAuth, GroupFirst: c.grpFirst, DefaultNotAuthoritative: c.dfltOff}}
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
			if d.Status != tc.status || d.Layer != tc.layer || rule != tc.rule || d.Realm != tc.realm || logCodes(&d) != tc.logs {
				t.Errorf("%s (tracer %v): %d %s %s realm %q logs %q; want %d %s %s realm %q logs %q", tc.name, tr != nil,
					d.Status, d.Layer, rule, d.Realm, logCodes(&d), tc.status, tc.layer, tc.rule, tc.realm, tc.logs)
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
			Legacy: &Legacy22{Requires: requires22(tc.requires...), UserAuthoritative: true, GroupAuthoritative: true, GroupFirst: true}}
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

package policy

import "strings"

// Require22 is one Require line as Apache 2.2's core stores it: the words
// as written, under the <Limit> mask in force. Its meaning is given by the
// authorization modules that read it (mod_authz_user, mod_authz_groupfile,
// mod_authz_dbm, mod_authnz_ldap, mod_authz_default), each its own way.
type Require22 struct {
	Methods MethodMask
	Words   []string // Words[0] is the keyword: valid-user, user, group, or anything
	Rule    *Rule
	// Raw is the line after the keyword as written, which translate
	// writes out for 2.4's provider of the same name (ldap-group).
	Raw string
	// Line is the requirement as core keeps it (the require function of
	// 2.2's server/core.c: the directive's arguments as written, keyword
	// first), which mod_authz_dbm and mod_authnz_ldap split with
	// ap_getword_white rather than ap_getword_conf (Words).
	Line string
}

// Authz22 names an auth_checker hook of Apache 2.2 that orderly runs, one
// per authorization module.
type Authz22 uint8

// The hooks orderly runs. mod_ssl's (ssl_hook_Auth) is not among them:
// it refuses only what its check_user_id hook refused first (ssl.go).
const (
	AuthzUser22      Authz22 = iota // mod_authz_user: check_user_access
	AuthzGroupFile22                // mod_authz_groupfile: check_user_access
	AuthzDBM22                      // mod_authz_dbm: dbm_check_auth
	AuthzLDAP22                     // mod_authnz_ldap: authz_ldap_check_user_access
	AuthzOwner22                    // mod_authz_owner: check_file_owner (owner22.go)
)

var authz22Names = [...]string{"mod_authz_user", "mod_authz_groupfile", "mod_authz_dbm", "mod_authnz_ldap", "mod_authz_owner"}

func (a Authz22) String() string { return authz22Names[a] }

// DefaultChain22 is the order of the hooks where Legacy22.Chain is nil:
// Debian's Apache 2.2 with all five modules enabled, which loads
// mods-enabled/*.load in the order of their names (authnz_ldap,
// authz_dbm, authz_groupfile, authz_owner, authz_user), sorted as APR
// sorts them (mod_authz_dbm and mod_authz_groupfile after
// mod_authz_owner, mod_authnz_ldap before mod_authz_user).
var DefaultChain22 = []Authz22{AuthzLDAP22, AuthzOwner22, AuthzDBM22, AuthzGroupFile22, AuthzUser22}

// Answer22 is what one of 2.2's auth_checker hooks answers.
type Answer22 uint8

// The answers of an auth_checker hook.
const (
	Declined22     Answer22 = iota // DECLINED: the next hook decides
	OK22                           // OK: access granted
	Unauthorized22                 // HTTP_UNAUTHORIZED: 401
)

// Legacy22 is what Apache 2.2 keeps apart from 2.4's layers: Satisfy in
// core (merged per method), the Require lines (replaced as a whole by a
// section that has any), and the order and authority of the
// authorization modules.
type Legacy22 struct {
	Satisfy     [MaxMethods]Satisfy
	SatisfyRule [MaxMethods]*Rule
	Requires    []Require22

	UserAuthoritative  bool // AuthzUserAuthoritative (default On)
	GroupAuthoritative bool // AuthzGroupFileAuthoritative (default On)
	DBMAuthoritative   bool // AuthzDBMAuthoritative (default On)
	OwnerAuthoritative bool // AuthzOwnerAuthoritative (default On)
	// AuthzLDAPAuthoritative is in the LDAP configuration
	// (Layers.LDAP), which only the LDAPChecker reads.

	// DefaultNotAuthoritative is AuthzDefaultAuthoritative Off, or
	// mod_authz_default not loaded: then a Require line no module
	// answered is declined by every hook, and core answers 500.
	DefaultNotAuthoritative bool
	// Chain lists the hooks of the modules loaded, in the order they run
	// (nil: DefaultChain22). Hooks of the same priority run in the order
	// the modules registered them, the LoadModule order, sorted by APR
	// (apr_hooks.c tsort) so that mod_authz_groupfile and mod_authz_dbm
	// follow mod_authz_owner and mod_authnz_ldap precedes mod_authz_user;
	// translate works it out. mod_authz_default's runs last, always.
	Chain []Authz22
}

// decide22 is Apache 2.2's combination (server/request.c 2.2.34,
// apache-access-semantics.md §3.2): the host-access check, Satisfy from
// core, authentication when a Require line applies, then the
// auth_checker chain, where the first authoritative module decides.
func decide22(l *Layers, r *Request, id Identity, tr Tracer, nc *needCtx, alt *alteration, d *Decision) {
	c := l.Compat
	if c == nil {
		c = DefaultCompat
	}
	lg := l.Legacy
	m := r.Method
	bit := MethodMask(1) << uint(m)
	var without *Rule
	if alt != nil {
		without = alt.without
	}
	authNeeded := false
	for i := range lg.Requires {
		if lg.Requires[i].Methods&bit != 0 && (without == nil || lg.Requires[i].Rule != without) {
			authNeeded = true
			break
		}
	}
	sat := lg.Satisfy[m]
	ok, rule := compatCheck(c, r, tr, nc, alt)
	trace := tr != nil && tr.Enabled()
	if trace {
		tr.Trace(Event{Layer: LayerCompat, Rule: lg.SatisfyRule[m], Text: "Satisfy", Result: sat.String()})
	}
	d.Layer, d.Rule = LayerCompat, rule
	if !ok && (sat != SatisfyAny || !authNeeded) {
		// 2.2 logs the denial only when it is final.
		d.denied("authz_host", "AH01797", r)
	}
	// mod_ssl's access hook, after mod_authz_host's (ssl.go).
	forbidden := false
	if ok && r.SSL.Loaded {
		ok, forbidden = sslAccess(r, d, tr)
		if !ok && r.SSL.Final {
			d.Status = 403 // the connection broke: nothing grants it
			return
		}
		d.User = sslUser(r, d)
	}
	switch {
	case ok && (sat == SatisfyAny || !authNeeded):
		return
	case !ok && (sat != SatisfyAny || !authNeeded):
		d.Status = 403
		return
	}
	// authenticate: mod_ssl, mod_auth_basic, then mod_authn_default.
	st, cr := sslUserCheck(r, d, forbidden, tr)
	if st != 0 {
		d.Status = st
		return
	}
	d.Layer, d.Rule = LayerAuthn, l.AuthTypeRule
	switch {
	case l.AuthType == "":
		d.Layer = LayerConfig
		d.log(LogLine{Module: "core", Code: "AH00027", Subject: r.URI})
		d.Status = 500
		return
	case !strings.EqualFold(l.AuthType, "Basic") && (l.Digest == nil || !strings.EqualFold(l.AuthType, "Digest")):
		// mod_authn_default: AuthType set but no module for it.
		d.Realm, d.Status = l.AuthName, 401
		return
	}
	if st := authenticateAs(l, r, cr, id, d, false, true); st != 0 {
		d.Status = st
		return
	}
	if trace {
		tr.Trace(Event{Layer: LayerAuthn, Rule: l.AuthTypeRule, Text: "AuthType " + l.AuthType, Result: "authenticated " + d.User})
	}
	st, why := authorize22(l, r, id, d.User, tr, without, d)
	d.Layer, d.Rule = LayerAuthz, why
	if st == 500 {
		// decl_die: "configuration error: couldn't check access"; or a
		// group file a module could not open.
		d.Layer, d.Status = LayerConfig, st
		return
	}
	if st != 0 {
		d.Status, d.Realm = st, l.AuthName
		d.log(LogLine{Module: "authz_core", Code: "AH01631", User: d.User, Subject: r.URI})
		if st == 401 {
			digestChallenge(l, &evalCtx{req: r, id: id}, d)
		}
	}
	return
}

// chain22 is one run of 2.2's auth_checker hooks for an authenticated
// user (ap_run_auth_checker, RUN_FIRST: the first answer other than
// DECLINED stands). The Decision the hooks log to is passed to them
// apart: escape analysis does not tell a chain22's fields apart, some of
// which reach interfaces, and Decide must not allocate it.
type chain22 struct {
	l       *Layers
	r       *Request
	id      Identity
	user    string
	tr      Tracer
	without *Rule // the Require line a counterfactual deletes
	bit     MethodMask
	// fileGroup is the AUTHZ_GROUP_NOTE mod_authz_owner leaves for
	// mod_authz_groupfile and mod_authz_dbm: the name of the group of
	// r->filename, where a "file-group" line found it (noted).
	fileGroup string
	noted     bool
}

// applies reports whether q is a Require line of the request's method
// (ap_requires, the method_mask test of every module).
func (c *chain22) applies(q *Require22) bool {
	return q.Methods&c.bit != 0 && (c.without == nil || q.Rule != c.without)
}

func (c *chain22) note(rule *Rule, module Authz22, res string) {
	note22(c.tr, rule, module.String(), res)
}

// tracing reports whether a trace is kept: what a note says is built
// only then, so that a decision allocates nothing.
func (c *chain22) tracing() bool { return c.tr != nil && c.tr.Enabled() }

// authorize22 runs 2.2's auth_checker hooks in Legacy22.Chain's order,
// then mod_authz_default's. Each module reads only its own keywords; the
// first that says OK, or being authoritative 401, decides; a file it
// cannot open is its 500.
func authorize22(l *Layers, r *Request, id Identity, user string, tr Tracer, without *Rule, d *Decision) (int, *Rule) {
	c := chain22{l: l, r: r, id: id, user: user, tr: tr, without: without, bit: MethodMask(1) << uint(r.Method)}
	chain := l.Legacy.Chain
	if chain == nil {
		chain = DefaultChain22
	}
	for _, h := range chain {
		var st int
		var why *Rule
		var decided bool
		switch h {
		case AuthzUser22:
			st, why, decided = c.userCheck()
		case AuthzGroupFile22:
			st, why, decided = c.groupCheck(d)
		case AuthzDBM22:
			st, why, decided = c.dbmCheck(d)
		case AuthzLDAP22:
			st, why, decided = c.ldapCheck(d)
		case AuthzOwner22:
			st, why, decided = c.ownerCheck(d)
		default:
			panic("policy: unknown 2.2 authorization hook")
		}
		if decided {
			return st, why
		}
	}
	// mod_authz_default: any Require line left unanswered is a refusal;
	// not authoritative, it declines, and core's decl_die answers 500.
	for i := range l.Legacy.Requires {
		if q := &l.Legacy.Requires[i]; c.applies(q) {
			if l.Legacy.DefaultNotAuthoritative {
				note22(tr, q.Rule, "mod_authz_default", "declined: 500 (couldn't check access)")
				return 500, q.Rule
			}
			note22(tr, q.Rule, "mod_authz_default", "401: no module granted")
			return 401, q.Rule
		}
	}
	return 0, nil
}

func note22(tr Tracer, rule *Rule, module, res string) {
	if tr != nil && tr.Enabled() {
		tr.Trace(Event{Layer: LayerAuthz, Rule: rule, Text: module, Result: res})
	}
}

// granted counts the line that granted and says so: the user, what made
// it, and the name that matched ("" none), the note built only when
// traced.
func (c *chain22) granted(q *Require22, module Authz22, what, name string) (int, *Rule, bool) {
	q.Rule.hit(c.r)
	if c.tracing() {
		res := "granted: " + c.user + " " + what
		if name != "" {
			res += " " + name
		}
		c.note(q.Rule, module, res)
	}
	return 0, q.Rule, true
}

// refused says why a module refused (401), when traced.
func (c *chain22) refused(rule *Rule, module Authz22, why string) {
	if c.tracing() {
		c.note(rule, module, "401: "+c.user+" "+why)
	}
}

// keyword is the line's keyword as 2.2's authorization modules read it:
// the requirement up to its first white space (ap_getword_white), quotes
// and all, and the rest of the line after the white space; Words[0]
// where the line is not kept.
func (q *Require22) keyword() (string, string) {
	if q.Line == "" && len(q.Words) > 0 {
		return q.Words[0], ""
	}
	return getwordWhite(q.Line)
}

// failed22 logs the refusal of mod_authz_owner, mod_authz_groupfile or
// mod_authz_dbm as 2.2 does ("Authorization of user %s to access %s
// failed, reason: %s"); arg is what the reason names.
func (c *chain22) failed22(d *Decision, module string, why Failed22, arg string) {
	d.log(LogLine{Module: module, User: c.user, Subject: c.r.URI, Reason: arg, Failed22: why})
}

// groupCheck is mod_authz_groupfile's check_user_access (2.2): declined
// without AuthGroupFile; the keyword is the line's first word
// (ap_getword_white, compared without case, so a quoted "group" is no
// group line); the user's groups read once, at the first line it reads
// (a file that cannot be opened is 500; a user in no group ends the
// scan); any group named, compared without regard to case (the group
// table's apr_table_get), grants. A "file-group" line is read only where
// mod_authz_owner left the file's group (AUTHZ_GROUP_NOTE, ownerCheck):
// that group grants; another ends the scan when the module is
// authoritative, and is forgotten when it is not. A line read and none
// granted is 401, logged, when AuthzGroupFileAuthoritative is on.
func (c *chain22) groupCheck(d *Decision) (int, *Rule, bool) {
	l := c.l
	if l.GroupFile == "" {
		return 0, nil, false // not configured: DECLINED
	}
	lg := l.Legacy
	var groups []string
	var loaded bool
	var seen *Rule
	why, arg := notFailed22, ""
scan:
	for i := range lg.Requires {
		q := &lg.Requires[i]
		if !c.applies(q) {
			continue
		}
		w, _ := q.keyword()
		fileGroup := strings.EqualFold(w, "file-group")
		switch {
		case fileGroup && !c.noted:
			continue // mod_authz_owner found no group, or is not loaded
		case !fileGroup && !strings.EqualFold(w, "group"):
			continue
		}
		seen = q.Rule
		if !loaded {
			loaded = true
			if c.id != nil {
				var err error
				if groups, _, err = c.id.Groups(l.GroupFile, c.user); err != nil {
					d.log(LogLine{Module: "authz_groupfile", Code: "AH01665", Subject: l.GroupFile})
					c.note(q.Rule, AuthzGroupFile22, "500: could not open the group file")
					return 500, q.Rule, true
				}
			}
			if len(groups) == 0 {
				why, arg = notInGroupFile22, l.GroupFile
				break scan
			}
		}
		if fileGroup {
			for _, have := range groups {
				if strings.EqualFold(have, c.fileGroup) {
					return c.granted(q, AuthzGroupFile22, "in the file's group", have)
				}
			}
			if lg.GroupAuthoritative {
				why, arg = fileGroupMismatch22, c.fileGroup
				break scan
			}
			continue
		}
		for _, g := range q.Words[1:] {
			for _, have := range groups {
				if strings.EqualFold(have, g) {
					return c.granted(q, AuthzGroupFile22, "in", g)
				}
			}
		}
	}
	if seen == nil || !lg.GroupAuthoritative {
		return 0, nil, false
	}
	if why == notFailed22 {
		why = notInGroups22
	}
	c.failed22(d, "authz_groupfile", why, arg)
	c.refused(seen, AuthzGroupFile22, "in none of the groups")
	return 401, seen, true
}

// userCheck is mod_authz_user's check_user_access (2.2): the keyword is
// the line's first word (ap_getword_white), compared without case;
// "valid-user" grants; a "user" line naming the user (case-sensitive)
// grants; a "user" line seen and none matched is 401 when
// AuthzUserAuthoritative is on.
func (c *chain22) userCheck() (int, *Rule, bool) {
	lg := c.l.Legacy
	var seen *Rule
	for i := range lg.Requires {
		q := &lg.Requires[i]
		if !c.applies(q) {
			continue
		}
		switch w, _ := q.keyword(); {
		case strings.EqualFold(w, "valid-user"):
			return c.granted(q, AuthzUser22, "valid-user", "")
		case strings.EqualFold(w, "user"):
			seen = q.Rule
			for _, u := range q.Words[1:] {
				if u == c.user {
					return c.granted(q, AuthzUser22, "listed", "")
				}
			}
		}
	}
	if seen != nil && lg.UserAuthoritative {
		c.refused(seen, AuthzUser22, "not listed")
		return 401, seen, true
	}
	return 0, nil, false
}

// dbmCheck is mod_authz_dbm's dbm_check_auth (2.2): declined without
// AuthDBMGroupFile; at the first line it reads the user's groups are
// read once from the file (get_dbm_grp: the key "user:AuthName", else
// "user"; a file that cannot be opened is 500; a user the file does not
// have ends the scan); each word of a "group" line (ap_getword_white:
// quotes are not special) is compared exactly with each group. A
// "file-group" line is read only where mod_authz_owner left the file's
// group (ownerCheck): that group, compared exactly, grants; another ends
// the scan when the module is authoritative, and is forgotten when it
// is not. A line read and none matched is 401, logged, when
// AuthzDBMAuthoritative is on.
func (c *chain22) dbmCheck(d *Decision) (int, *Rule, bool) {
	l := c.l
	if l.DBMGroupFile == "" {
		return 0, nil, false // not configured: DECLINED
	}
	lg := l.Legacy
	var groups []string
	var loaded bool
	var seen *Rule
	why, arg := notFailed22, ""
scan:
	for i := range lg.Requires {
		q := &lg.Requires[i]
		if !c.applies(q) {
			continue
		}
		w, t := q.keyword()
		fileGroup := strings.EqualFold(w, "file-group")
		switch {
		case fileGroup && !c.noted:
			continue // mod_authz_owner found no group, or is not loaded
		case !fileGroup && !strings.EqualFold(w, "group"):
			continue
		}
		seen = q.Rule
		if !loaded {
			loaded = true
			dbm, ok := c.id.(DBMIdentity)
			var err error
			var found bool
			if ok {
				groups, found, err = dbm.DBMGroupsRealm(l.DBMGroupFile, l.DBMGroupType, c.user, l.AuthName)
			}
			if !ok || err != nil {
				d.log(LogLine{Module: "authz_dbm", Code: "AH01799", User: l.DBMGroupType, Subject: l.DBMGroupFile})
				c.note(q.Rule, AuthzDBM22, "500: could not open the DBM group file")
				return 500, q.Rule, true
			}
			if !found {
				why, arg = notInDBMGroupFile22, l.DBMGroupFile
				break scan
			}
		}
		if fileGroup {
			for _, g := range groups {
				if g == c.fileGroup {
					return c.granted(q, AuthzDBM22, "in the file's group", g)
				}
			}
			if lg.DBMAuthoritative {
				why, arg = fileGroupMismatch22, c.fileGroup
				break scan
			}
			continue
		}
		for t != "" {
			w, t = getwordWhite(t)
			for _, g := range groups {
				if g == w {
					return c.granted(q, AuthzDBM22, "in", g)
				}
			}
		}
	}
	if seen == nil || !lg.DBMAuthoritative {
		return 0, nil, false
	}
	if why == notFailed22 {
		why = notInGroups22
	}
	c.failed22(d, "authz_dbm", why, arg)
	c.refused(seen, AuthzDBM22, "in none of the groups")
	return 401, seen, true
}

// getwordWhite is ap_getword_white: the text up to the first white space
// (apr_isspace), and the rest after the white space that follows it.
func getwordWhite(s string) (word, rest string) {
	i := 0
	for i < len(s) && !isSpace22(s[i]) {
		i++
	}
	word = s[:i]
	for i < len(s) && isSpace22(s[i]) {
		i++
	}
	return word, s[i:]
}

// isSpace22 is apr_isspace (isspace in the C locale).
func isSpace22(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

// ldapCheck is mod_authnz_ldap's authz_ldap_check_user_access (2.2). It
// declines without AuthLDAPURL, and where no Require line of the method
// has a keyword starting with "ldap-" (strncmp, so 2.2's unknown
// "ldap-search" counts too); otherwise it decides all the lines of the
// method at once through the LDAPChecker: OK, 401, or DECLINED when
// AuthzLDAPAuthoritative is off. With it on, its refusal is final even
// where a "valid-user" line would have let mod_authz_user grant. An
// Identity without LDAP is a 500.
func (c *chain22) ldapCheck(d *Decision) (int, *Rule, bool) {
	l := c.l
	if l.LDAP == nil {
		return 0, nil, false // the module's defaults: no AuthLDAPURL
	}
	var lines []string
	var rules []*Rule
	var last *Rule // the last ldap-* line: what a refusal names
	for i := range l.Legacy.Requires {
		q := &l.Legacy.Requires[i]
		if !c.applies(q) {
			continue
		}
		lines, rules = append(lines, q.Line), append(rules, q.Rule)
		if w, _ := getwordWhite(q.Line); strings.HasPrefix(w, "ldap-") {
			last = q.Rule
		}
	}
	if last == nil {
		return 0, nil, false // no ldap-* line: DECLINED
	}
	lc, ok := c.id.(LDAPChecker)
	if !ok {
		d.log(LogLine{Module: "authnz_ldap", User: c.user, Subject: "LDAP is not available"})
		c.note(last, AuthzLDAP22, "500: LDAP is not available")
		return 500, last, true
	}
	ans, at, err := lc.AuthorizeLDAP22(l.LDAP, c.r.ldapState(), c.user, lines)
	if err != nil {
		d.log(LogLine{Module: "authnz_ldap", User: c.user, Subject: err.Error()})
	}
	why := last
	if at >= 0 && at < len(rules) {
		why = rules[at]
	}
	switch ans {
	case OK22:
		why.hit(c.r)
		c.note(why, AuthzLDAP22, "granted")
		return 0, why, true
	case Unauthorized22:
		c.note(why, AuthzLDAP22, "401: no ldap-* line granted (AuthzLDAPAuthoritative)")
		return 401, why, true
	}
	c.note(last, AuthzLDAP22, "declined (AuthzLDAPAuthoritative Off)")
	return 0, nil, false
}

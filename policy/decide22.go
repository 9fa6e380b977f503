package policy

import "strings"

// Require22 is one Require line as Apache 2.2's core stores it: the words
// as written, under the <Limit> mask in force. Its meaning is given by the
// authorization modules that read it (mod_authz_groupfile,
// mod_authz_user, mod_authz_default).
type Require22 struct {
	Methods MethodMask
	Words   []string // Words[0] is the keyword: valid-user, user, group, or anything
	Rule    *Rule
	// Raw is the line after the keyword as written, for a provider
	// orderly writes out but does not evaluate (ldap-group).
	Raw string
}

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
	// DefaultNotAuthoritative is AuthzDefaultAuthoritative Off: then
	// mod_authz_default declines a Require line no module answered, and
	// with every auth_checker declined, core answers 500.
	DefaultNotAuthoritative bool
	// GroupFirst: mod_authz_groupfile's auth_checker runs before
	// mod_authz_user's (the stock LoadModule order).
	GroupFirst bool
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
	st, why := authorize22(l, r, id, d.User, tr, without)
	d.Layer, d.Rule = LayerAuthz, why
	if st == 500 {
		// decl_die: "configuration error: couldn't check access".
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

// authorize22 runs 2.2's auth_checker hooks for an authenticated user:
// mod_authz_groupfile and mod_authz_user in load order, then
// mod_authz_default. Each module reads only its own keywords; the first
// that says OK or, being authoritative, 401, decides.
func authorize22(l *Layers, r *Request, id Identity, user string, tr Tracer, without *Rule) (int, *Rule) {
	first, second := groupCheck22, userCheck22
	if !l.Legacy.GroupFirst {
		first, second = userCheck22, groupCheck22
	}
	if st, why, decided := first(l, r, id, user, tr, without); decided {
		return st, why
	}
	if st, why, decided := second(l, r, id, user, tr, without); decided {
		return st, why
	}
	// mod_authz_default: any Require line left unanswered is a refusal;
	// not authoritative, it declines, and core's decl_die answers 500.
	bit := MethodMask(1) << uint(r.Method)
	for i := range l.Legacy.Requires {
		if q := &l.Legacy.Requires[i]; q.Methods&bit != 0 && (without == nil || q.Rule != without) {
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

// groupCheck22 is mod_authz_groupfile's check_user_access.
func groupCheck22(l *Layers, r *Request, id Identity, user string, tr Tracer, without *Rule) (int, *Rule, bool) {
	if l.GroupFile == "" {
		return 0, nil, false // not configured: DECLINED
	}
	lg := l.Legacy
	bit := MethodMask(1) << uint(r.Method)
	var groups []string
	var loaded bool
	var seen *Rule
	for i := range lg.Requires {
		q := &lg.Requires[i]
		if q.Methods&bit == 0 || !strings.EqualFold(q.Words[0], "group") || without != nil && q.Rule == without {
			continue
		}
		seen = q.Rule
		if !loaded {
			loaded = true
			if id != nil {
				groups, _, _ = id.Groups(l.GroupFile, user)
			}
		}
		for _, g := range q.Words[1:] {
			for _, have := range groups {
				if strings.EqualFold(have, g) {
					q.Rule.hit(r)
					note22(tr, q.Rule, "mod_authz_groupfile", "granted: "+user+" in "+g)
					return 0, q.Rule, true
				}
			}
		}
	}
	if seen != nil && lg.GroupAuthoritative {
		note22(tr, seen, "mod_authz_groupfile", "401: "+user+" in none of the groups")
		return 401, seen, true
	}
	return 0, nil, false
}

// userCheck22 is mod_authz_user's check_user_access.
func userCheck22(l *Layers, r *Request, _ Identity, user string, tr Tracer, without *Rule) (int, *Rule, bool) {
	lg := l.Legacy
	bit := MethodMask(1) << uint(r.Method)
	var seen *Rule
	for i := range lg.Requires {
		q := &lg.Requires[i]
		if q.Methods&bit == 0 || without != nil && q.Rule == without {
			continue
		}
		switch {
		case strings.EqualFold(q.Words[0], "valid-user"):
			q.Rule.hit(r)
			note22(tr, q.Rule, "mod_authz_user", "granted: valid-user")
			return 0, q.Rule, true
		case strings.EqualFold(q.Words[0], "user"):
			seen = q.Rule
			for _, u := range q.Words[1:] {
				if u == user {
					q.Rule.hit(r)
					note22(tr, q.Rule, "mod_authz_user", "granted: "+user+" listed")
					return 0, q.Rule, true
				}
			}
		}
	}
	if seen != nil && lg.UserAuthoritative {
		note22(tr, seen, "mod_authz_user", "401: "+user+" not listed")
		return 401, seen, true
	}
	return 0, nil, false
}

package policy

import "strings"

// SSL is mod_ssl's part in the access control of one request, as the
// caller worked it out from the connection (TLS, the client
// certificate) and the merged mod_ssl configuration. Deciding reads it
// and never looks at a certificate itself. The zero value is mod_ssl
// not loaded: none of its hooks runs.
//
// mod_ssl has three hooks here (modules/ssl/ssl_engine_kernel.c in
// 2.2.34 and 2.4.x; apache-access-semantics.md §2):
//
//   - ssl_hook_Access, an access_checker like mod_access_compat's (and
//     2.2's mod_authz_host), loaded after it in the stock LoadModule
//     order, so it runs only when host access passed (RUN_ALL stops at
//     the first refusal): SSLRequireSSL, the client certificate
//     SSLVerifyClient asks for, SSLUserName, SSLRequire. Its refusal is
//     the access checkers' refusal: under Satisfy Any it can still be
//     overcome by authorization (2.4: mod_authz_core, which grants
//     outright where no Require applies; 2.2: authentication when a
//     Require line applies).
//   - ssl_hook_UserCheck, first of check_user_id: with SSLOptions
//     +StrictRequire a refusal of SSLRequireSSL or SSLRequire noted by
//     the access hook is 403 here; then, for the initial request, the
//     FakeBasicAuth spoof guard (a Basic user starting with "/" with the
//     password "password" is 403, whatever the options: AH02035); then
//     FakeBasicAuth puts the client certificate's DN in the
//     Authorization header, which mod_auth_basic then checks.
//   - ssl_hook_Auth, an auth_checker: +StrictRequire again, which
//     check_user_id has always answered first.
type SSL struct {
	// Loaded: mod_ssl is loaded, so its check_user_id hook runs (the
	// spoof guard applies wherever authentication runs, TLS or not).
	Loaded bool
	// Deny: ssl_hook_Access refuses the request (403) when it runs.
	Deny bool
	// Forbidden: the refusal notes "ssl-access-forbidden" (SSLRequireSSL
	// and SSLRequire do; a missing or unverified client certificate
	// does not), which +StrictRequire turns into a 403 at
	// authentication.
	Forbidden bool
	// Final: the refusal is one Apache makes by breaking the connection
	// (a renegotiation for a client certificate that failed): no later
	// hook can grant the request, Satisfy Any or not.
	Final bool
	// DenyRule is the directive behind Deny, DenyLog what Apache logs
	// for it, DenyWhy a phrase for explain.
	DenyRule *Rule
	DenyLog  LogLine
	DenyWhy  string
	// Strict is SSLOptions +StrictRequire.
	Strict bool
	// User is what SSLUserName sets r->user to when the access hook runs
	// and gets past the client certificate ("" none); UserLog is the
	// warning of an SSLUserName whose variable is empty (2.4: AH02227;
	// Code "" for none).
	User     string
	UserRule *Rule
	UserLog  LogLine
	// Fake: SSLOptions +FakeBasicAuth applies and the client presented a
	// certificate: authentication reads FakeUser (the subject DN,
	// X509_NAME_oneline) with the password "password" instead of the
	// Authorization header.
	Fake     bool
	FakeUser string
	// Subrequest: a DirectoryIndex subrequest, for which the check_user_id
	// hook does neither the spoof guard nor FakeBasicAuth (it declines
	// when !ap_is_initial_req).
	Subrequest bool
}

// sslAccess runs ssl_hook_Access after host access passed. It reports
// whether the access checkers still pass, and whether the refusal noted
// ssl-access-forbidden.
func sslAccess(r *Request, d *Decision, tr Tracer) (ok, forbidden bool) {
	s := &r.SSL
	if !s.Deny {
		if tr != nil && tr.Enabled() && s.Loaded {
			tr.Trace(Event{Layer: LayerSSL, Text: "mod_ssl access", Result: "passed"})
		}
		return true, false
	}
	d.Layer, d.Rule = LayerSSL, s.DenyRule
	if s.DenyLog.Code != "" {
		d.log(s.DenyLog)
	}
	if tr != nil && tr.Enabled() {
		tr.Trace(Event{Layer: LayerSSL, Rule: s.DenyRule, Text: "mod_ssl access", Result: "403: " + s.DenyWhy})
	}
	return false, s.Forbidden
}

// sslUser is r->user as ssl_hook_Access leaves it (SSLUserName), with
// the warning of an empty variable logged.
func sslUser(r *Request, d *Decision) string {
	if r.SSL.UserLog.Code != "" {
		d.log(r.SSL.UserLog)
	}
	return r.SSL.User
}

// sslUserCheck is ssl_hook_UserCheck, first of check_user_id. It
// returns 403 for a refusal (StrictRequire, the FakeBasicAuth spoof
// guard), and the credentials mod_auth_basic reads after it.
func sslUserCheck(r *Request, d *Decision, forbidden bool, tr Tracer) (int, Credentials) {
	s := &r.SSL
	cr := r.Auth
	if !s.Loaded {
		return 0, cr
	}
	if s.Strict && forbidden {
		d.Layer, d.Rule = LayerSSL, s.DenyRule
		if tr != nil && tr.Enabled() {
			tr.Trace(Event{Layer: LayerSSL, Rule: s.DenyRule, Text: "SSLOptions +StrictRequire", Result: "403: mod_ssl refused access, and StrictRequire keeps it refused"})
		}
		return 403, cr
	}
	if s.Subrequest {
		return 0, cr
	}
	if cr.Present && cr.Basic && strings.HasPrefix(cr.User, "/") && cr.Password == "password" {
		d.Layer, d.Rule = LayerSSL, nil
		d.log(LogLine{Module: "ssl", Code: "AH02035", User: cr.User})
		if tr != nil && tr.Enabled() {
			tr.Trace(Event{Layer: LayerSSL, Text: "FakeBasicAuth spoof guard", Result: "403: a Basic user name starting with \"/\" and the password \"password\""})
		}
		return 403, cr
	}
	if s.Fake {
		// "Authorization: Basic base64(DN:password)", which mod_auth_basic
		// splits at the first colon.
		user, pass, _ := strings.Cut(s.FakeUser+":password", ":")
		cr = Credentials{Present: true, Basic: true, User: user, Password: pass}
		if tr != nil && tr.Enabled() {
			tr.Trace(Event{Layer: LayerSSL, Text: "SSLOptions +FakeBasicAuth", Result: "Basic user " + user + " from the client certificate"})
		}
	}
	return 0, cr
}

// sslMessage is the text of mod_ssl's log lines.
func sslMessage(l LogLine) (string, bool) {
	switch l.Code {
	case "AH02219":
		return "access to " + l.Subject + " failed, reason: SSL connection required", true
	case "AH02229":
		return "access to " + l.Subject + " failed, reason: SSL requirement expression not fulfilled", true
	case "AH02035":
		return "Encountered FakeBasicAuth spoof: " + l.User, true
	case "AH02227":
		return "Failed to set r->user to '" + l.Subject + "'", true
	case "AH02262":
		return "Re-negotiation handshake failed: Client verification failed", true
	case "AH02263":
		return "Re-negotiation handshake failed: Client certificate missing", true
	}
	return "", false
}

// authenticateSSL is 2.4's check_user_id: mod_ssl's hook, then
// mod_auth_basic and mod_authn_core (authenticateAs). user is r->user as
// SSLUserName left it: without an AuthType, mod_authn_core lets it stand
// and authorization reads it.
func authenticateSSL(l *Layers, r *Request, id Identity, d *Decision, anyPath, forbidden bool, user string, tr Tracer) int {
	st, cr := sslUserCheck(r, d, forbidden, tr)
	if st != 0 {
		return st
	}
	if l.AuthType == "" && user != "" {
		d.Layer, d.Rule, d.User = LayerSSL, r.SSL.UserRule, user
		if tr != nil && tr.Enabled() {
			tr.Trace(Event{Layer: LayerSSL, Rule: r.SSL.UserRule, Text: "SSLUserName", Result: "user " + user + " (no AuthType: mod_authn_core keeps it)"})
		}
		return 0
	}
	return authenticateAs(l, r, cr, id, d, anyPath, false)
}

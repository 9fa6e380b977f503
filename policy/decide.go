package policy

import (
	"strings"
)

// Layer names the part of access control that made a decision.
type Layer uint8

// The layers, in the order Apache runs them.
const (
	LayerNone    Layer = iota // nothing denied
	LayerCompat               // Order/Allow/Deny/Satisfy (mod_access_compat)
	LayerAuthz                // Require (mod_authz_core)
	LayerAuthn                // Basic authentication (mod_auth_basic)
	LayerConfig               // a configuration error answered 500
	LayerRequest              // the request itself was refused (400, 404)
	LayerSSL                  // mod_ssl: SSLRequireSSL, SSLVerifyClient, FakeBasicAuth (ssl.go)
)

var layerNames = [...]string{"none", "compat", "authz", "authn", "config", "request", "ssl"}

func (l Layer) String() string { return layerNames[l] }

// Tracer receives the steps of a decision for explain. A nil Tracer, or
// one whose Enabled reports false, costs nothing.
type Tracer interface {
	Enabled() bool
	Trace(Event)
}

// Event is one step of a decision.
type Event struct {
	Layer  Layer
	Rule   *Rule
	Text   string
	Result string
}

// Layers is the merged access configuration of one request: what the
// per-directory merge of every section that applies left in force.
type Layers struct {
	Compat          *Compat // never nil once merged (DefaultCompat)
	Authz           *Node   // nil: no Require applies
	ForbiddenOnFail bool    // AuthzSendForbiddenOnFailure On
	AuthType        string  // "" when unset (or set to None)
	AuthTypeRule    *Rule
	AuthName        string
	HasAuthName     bool
	UserFile        string // AuthUserFile
	// Digest is mod_auth_digest's configuration, where AuthType is
	// Digest (nil otherwise).
	Digest *DigestScope
	// LDAP is mod_authnz_ldap's configuration, for the ldap-* Require
	// lines (nil: the module's defaults).
	LDAP *LDAPScope
	// Providers are AuthBasicProvider's, in order, aliases resolved; nil
	// is mod_auth_basic's default, the file provider with UserFile.
	Providers []AuthnProvider
	// BasicNotAuthoritative is AuthBasicAuthoritative Off: an unknown user
	// is passed on, and with no other module to take it, Apache answers
	// 500 (mod_authn_core: AH01796).
	BasicNotAuthoritative bool
	GroupFile             string // AuthGroupFile
	// DBMGroupFile and DBMGroupType are mod_authz_dbm's AuthDBMGroupFile
	// and AuthzDBMType (2.4's Require dbm-group): "" where no file is set.
	DBMGroupFile, DBMGroupType string
	// Default is the synthetic rule that counts decisions no directive
	// made in this scope.
	Default *Rule
	// Legacy, when set, makes the decision Apache 2.2's: Satisfy and the
	// Require lines as 2.2's core keeps them (Authz is then unused).
	Legacy *Legacy22
}

// LogLine is an error-log line Apache 2.4 would write for a decision. It
// holds the parts; Message assembles the text, so that deciding never
// builds strings.
type LogLine struct {
	Module  string // "access_compat", "authz_core", "auth_basic", ...
	Level   string // "error" when empty; "alert" for a broken .htaccess file
	Code    string // "AH01797"
	User    string // the user; for AH01276, the DirectoryIndex names tried
	Subject string // the file name, URI or file the message is about
	URIForm bool   // Subject is a URI: "uri " precedes it where Apache says so
	// Reason is what the message of an authorization failure of
	// mod_authz_owner or the file-group providers names beside the user
	// and the URI: the file's owner, the file, the group file.
	Reason string
	// Failed22, where set, makes the line 2.2's refusal by
	// mod_authz_owner, mod_authz_groupfile or mod_authz_dbm, which has no
	// code, with this reason (owner22.go).
	Failed22 Failed22
}

// Message is the text Apache writes after the code.
func (l LogLine) Message() string {
	if l.Failed22 != notFailed22 {
		return failed22Message(l)
	}
	switch l.Code {
	case "AH01797", "AH01630":
		if l.URIForm {
			return "client denied by server configuration: uri " + l.Subject
		}
		return "client denied by server configuration: " + l.Subject
	case "AH01617":
		return "user " + l.User + ": authentication failure for \"" + l.Subject + "\": Password Mismatch"
	case "AH01618":
		return "user " + l.User + " not found: " + l.Subject
	case "AH01614":
		return "client used wrong authentication scheme: " + l.Subject
	case "AH01615":
		return "need AuthName: " + l.Subject
	case "AH01619":
		return "AuthUserFile not specified in the configuration"
	case "AH01620":
		return "Could not open password file: " + l.Subject
	case "AH01799":
		return "could not open dbm (type " + l.User + ") group access file: " + l.Subject
	case "AH10285":
		return "could not open dbm (type " + l.User + ") file: " + l.Subject
	case "AH01627":
		return "AuthType configured with no corresponding authorization directives"
	case "AH01629":
		return "authorization failure (no authenticated user): " + l.Subject
	case "AH01631":
		return "user " + l.User + ": authorization failure for \"" + l.Subject + "\": "
	case "AH01665":
		return "Could not open group file: " + l.Subject
	case "AH01796":
		return "AuthType " + l.Subject + " configured without corresponding module"
	case "AH00027", "AH00028":
		return "No authentication done but request not allowed without authentication for " + l.Subject + ". Authentication not configured?"
	case "AH02430":
		return "Response header 'WWW-Authenticate' value of 'Basic realm=\"" + l.Subject + "\"' contains invalid characters, aborting request"
	case "AH00037", "AH00032":
		return "Symbolic link not allowed or link target not accessible: " + l.Subject
	case "AH01276":
		return "Cannot serve directory " + l.Subject + ": No matching DirectoryIndex (" + l.User + ") found, and server-generated directory index forbidden by Options directive"
	}
	if m, ok := sslMessage(l); ok {
		return m
	}
	if m, ok := ownerMessage(l); ok {
		return m
	}
	return l.Subject
}

// MaxLogLines bounds the log lines one decision keeps.
const MaxLogLines = 8

// Decision is the outcome of access control for one request.
type Decision struct {
	Status int   // 0 when access is granted, else 400, 401, 403, 404 or 500
	Layer  Layer // the layer that decided (for a grant, the last that passed)
	Rule   *Rule // the directive that decided; a scope's default rule when none did
	Realm  string
	User   string // the authenticated user, when authentication ran
	// NoChallenge: a 401 sent without WWW-Authenticate (mod_dir keeps the
	// status of a refused index but not its headers).
	NoChallenge bool
	// Challenge, when set, is the WWW-Authenticate value of a 401 in
	// full (Digest); otherwise a 401 challenges for Basic with Realm.
	Challenge string
	// AuthInfo is Digest's Authentication-Info for a granted request.
	AuthInfo string

	logs  [MaxLogLines]LogLine
	nlogs uint8

	necessary [MaxNecessary]Necessity
	nneed     uint8
}

// Allowed reports whether the request may pass.
func (d *Decision) Allowed() bool { return d.Status == 0 }

// Logs returns the error-log lines of the decision, in order.
func (d *Decision) Logs() []LogLine { return d.logs[:d.nlogs] }

// AddLogs appends log lines (of a subrequest) to the decision.
func (d *Decision) AddLogs(ls []LogLine) {
	for _, l := range ls {
		d.log(l)
	}
}

// SetLogs replaces the decision's log lines.
func (d *Decision) SetLogs(ls []LogLine) {
	d.nlogs = 0
	d.AddLogs(ls)
}

func (d *Decision) log(l LogLine) {
	if int(d.nlogs) < len(d.logs) {
		d.logs[d.nlogs] = l
		d.nlogs++
	}
}

func (d *Decision) denied(module, code string, r *Request) {
	if r.Filename != "" {
		d.log(LogLine{Module: module, Code: code, Subject: r.Filename})
	} else {
		d.log(LogLine{Module: module, Code: code, Subject: r.URI, URIForm: true})
	}
}

// Decide runs access control for a request over its merged configuration
// with Apache 2.4's combination of the two layers (server/request.c
// ap_process_request_internal; apache-access-semantics.md §3.3):
// mod_access_compat first, Satisfy Any short-circuiting, then
// mod_authz_core, authentication when a Require result needs a user, and
// authorization again with the user. It does not allocate, and its cost
// does not grow with the number of address rules. The deciding rule
// counts a decisive hit; Layers.Default stands in when no directive
// decided.
//
// A decision that counts (not Dry) also finds the rules necessary to it,
// those whose deletion would have changed its answer (necessity.go), and
// counts each.
func Decide(l *Layers, r *Request, id Identity, tr Tracer) Decision {
	var nc needCtx
	ncp := &nc
	if r.Dry {
		ncp = nil
	}
	var d Decision
	decideOnce(l, r, id, tr, ncp, nil, &d)
	if ncp != nil {
		necessity(l, r, id, &d, ncp)
	}
	if d.Rule == nil {
		d.Rule = l.Default
	}
	d.Rule.decide(r)
	return d
}

// decideOnce decides by the version's combination, as it is or as alt
// alters it; nc, when not nil, collects what necessity needs.
func decideOnce(l *Layers, r *Request, id Identity, tr Tracer, nc *needCtx, alt *alteration, d *Decision) {
	if l.Legacy != nil {
		decide22(l, r, id, tr, nc, alt, d)
	} else {
		decide(l, r, id, tr, nc, alt, d)
	}
	if d.Status == 401 && !validFieldContent(d.Realm) {
		// http_filters.c check_headers: a challenge Apache cannot send
		// aborts the request.
		d.Status, d.Layer = 500, LayerConfig
		d.log(LogLine{Module: "http", Code: "AH02430", Subject: d.Realm})
	}
}

// validFieldContent is ap_scan_http_field_content reaching the end: no
// control character but HTAB.
func validFieldContent(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func decide(l *Layers, r *Request, id Identity, tr Tracer, nc *needCtx, alt *alteration, d *Decision) {
	c := l.Compat
	if c == nil {
		c = DefaultCompat
	}
	sat := c.Satisfy[r.Method]
	ok, rule := compatCheck(c, r, tr, nc, alt)
	if tr != nil && tr.Enabled() {
		tr.Trace(Event{Layer: LayerCompat, Rule: ruleOf(c.SatisfyRule, r.Method), Text: "Satisfy", Result: sat.String()})
	}
	d.Layer, d.Rule = LayerCompat, rule
	if !ok {
		d.denied("access_compat", "AH01797", r)
	}
	// mod_ssl's access hook runs after mod_access_compat's, only when it
	// passed: its refusal is the access checkers' (policy/ssl.go).
	forbidden, user := false, ""
	if ok && r.SSL.Loaded {
		ok, forbidden = sslAccess(r, d, tr)
		if !ok && r.SSL.Final {
			d.Status = 403 // the connection broke: nothing grants it
			return
		}
		user = sslUser(r, d)
		d.User = user
	}
	if sat == SatisfyAny && ok {
		return
	}
	if sat != SatisfyAny && !ok {
		d.Status = 403
		return
	}
	ec := evalCtx{req: r, groupFile: l.GroupFile, layers: l, id: id, tr: tr, trace: tr != nil && tr.Enabled(), collect: nc != nil}
	if alt != nil {
		ec.without = alt.without
	}
	if nc != nil {
		defer func() { nc.answered = ec.answered }()
	}
	if user != "" {
		ec.user, ec.hasUser = user, true
	}
	switch st := authorize(l, &ec, d, false); st {
	case 0:
		return
	case declined:
	default:
		d.Status = st
		return
	}
	// check_user_id: mod_ssl, mod_auth_basic, then mod_authn_core.
	st := authenticateSSL(l, r, id, d, sat == SatisfyAny, forbidden, user, tr)
	if tr != nil && tr.Enabled() && d.Layer != LayerSSL { // mod_ssl traced its own
		res := "authenticated " + d.User
		switch {
		case st == 401 && !r.Auth.Present:
			res = "401: no credentials"
		case st == 401:
			res = "401: credentials refused for " + r.Auth.User
		case st != 0:
			res = "500: authentication not configured"
		}
		tr.Trace(Event{Layer: LayerAuthn, Rule: l.AuthTypeRule, Text: "AuthType " + l.AuthType, Result: res})
	}
	if st != 0 {
		d.Status = st
		return
	}
	ec.user, ec.hasUser = d.User, true
	if st := authorize(l, &ec, d, true); st != 0 {
		d.Status = st
	}
	return
}

const declined = -1

// authorize is authorize_user_core of mod_authz_core.
func authorize(l *Layers, c *evalCtx, d *Decision, afterAuthn bool) int {
	if l.Authz == nil {
		if l.AuthType != "" {
			d.Layer, d.Rule = LayerConfig, l.AuthTypeRule
			d.log(LogLine{Module: "authz_core", Code: "AH01627"})
			return 500
		}
		return 0
	}
	res, why := l.Authz.eval(c, true)
	if c.groupErr {
		c.groupErr = false
		d.log(LogLine{Module: "authz_groupfile", Code: "AH01665", Subject: c.groupFile})
	}
	if c.dbmErr {
		c.dbmErr = false
		d.log(LogLine{Module: "authz_dbm", Code: "AH01799", User: l.DBMGroupType, Subject: l.DBMGroupFile})
	}
	if c.ldapErr != "" {
		d.log(LogLine{Module: "authnz_ldap", User: c.user, Subject: c.ldapErr})
		c.ldapErr = ""
	}
	for _, ol := range c.ownerLogs[:c.nowner] {
		d.log(ol)
	}
	c.nowner = 0
	d.Layer = LayerAuthz
	d.Rule = why
	switch res {
	case Granted:
		return 0
	case DeniedNoUser:
		if !afterAuthn {
			return declined
		}
		d.log(LogLine{Module: "authz_core", Code: "AH01629", Subject: c.req.URI})
		if c.hasUser {
			d.Realm = l.AuthName
			digestChallenge(l, c, d)
		}
		return 401
	case Denied, Neutral:
		if !afterAuthn || l.AuthType == "" {
			d.denied("authz_core", "AH01630", c.req)
			return 403
		}
		d.log(LogLine{Module: "authz_core", Code: "AH01631", User: c.user, Subject: c.req.URI})
		if l.ForbiddenOnFail {
			return 403
		}
		d.Realm = l.AuthName
		digestChallenge(l, c, d)
		return 401
	}
	d.Layer = LayerConfig
	return 500
}

// authenticateAs is check_user_id after mod_ssl's hook (ssl.go), with
// the credentials it leaves: mod_auth_basic when AuthType is Basic,
// otherwise mod_authn_core's fallback; legacy22 makes an unknown user
// under AuthBasicAuthoritative Off fall to 2.2's mod_authn_default (401)
// rather than to 2.4's mod_authn_core (500).
func authenticateAs(l *Layers, r *Request, cr Credentials, id Identity, d *Decision, anyPath, legacy22 bool) int {
	d.Layer, d.Rule = LayerAuthn, l.AuthTypeRule
	if l.AuthType == "" {
		d.Layer = LayerConfig
		code := "AH00027" // the Satisfy All path of ap_process_request_internal
		if anyPath {
			code = "AH00028"
		}
		d.log(LogLine{Module: "core", Code: code, Subject: r.URI})
		return 500
	}
	if strings.EqualFold(l.AuthType, "Digest") && l.Digest != nil {
		return authenticateDigest(l, r, id, d)
	}
	if !strings.EqualFold(l.AuthType, "Basic") {
		d.Layer = LayerConfig
		d.log(LogLine{Module: "authn_core", Code: "AH01796", Subject: l.AuthType})
		return 500
	}
	if !l.HasAuthName {
		d.Layer = LayerConfig
		d.log(LogLine{Module: "auth_basic", Code: "AH01615", Subject: r.URI})
		return 500
	}
	if !cr.Present {
		d.Realm = l.AuthName
		return 401
	}
	if !cr.Basic {
		d.log(LogLine{Module: "auth_basic", Code: "AH01614", Subject: r.URI})
		d.Realm = l.AuthName
		return 401
	}
	res, user, none := checkProviders(l, r, cr, id, d)
	switch res {
	case authnGranted:
		if none {
			// Granted with r->user NULL: the core refuses (AH00027).
			d.Layer = LayerConfig
			d.log(LogLine{Module: "core", Code: "AH00027", Subject: r.URI})
			return 500
		}
		d.User = user
		return 0
	case authnDenied:
		d.log(LogLine{Module: "auth_basic", Code: "AH01617", User: cr.User, Subject: r.URI})
	case authnError:
		if !l.BasicNotAuthoritative {
			d.Layer = LayerConfig
			return 500
		}
		// Not authoritative: mod_auth_basic declines whatever went wrong.
		return declinedBasic(l, r, cr, d, legacy22)
	default:
		if l.BasicNotAuthoritative {
			return declinedBasic(l, r, cr, d, legacy22)
		}
		d.log(LogLine{Module: "auth_basic", Code: "AH01618", User: cr.User, Subject: r.URI})
	}
	d.Realm = l.AuthName
	return 401
}

// declinedBasic is what follows mod_auth_basic declining (AuthBasicAuthoritative
// Off, the user not found or a provider's error): 2.4's mod_authn_core
// answers 500; 2.2's mod_authn_default refuses with 401.
func declinedBasic(l *Layers, r *Request, cr Credentials, d *Decision, legacy22 bool) int {
	if !legacy22 {
		d.Layer = LayerConfig
		d.log(LogLine{Module: "authn_core", Code: "AH01796", Subject: l.AuthType})
		return 500
	}
	d.log(LogLine{Module: "auth_basic", Code: "AH01618", User: cr.User, Subject: r.URI})
	d.Realm = l.AuthName
	return 401
}

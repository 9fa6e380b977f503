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
)

var layerNames = [...]string{"none", "compat", "authz", "authn", "config", "request"}

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
	GroupFile       string // AuthGroupFile
}

// LogLine is an error-log line Apache 2.4 would write for a decision.
type LogLine struct {
	Module string // "access_compat", "authz_core", "auth_basic", "core", ...
	Code   string // "AH01797"
	Msg    string // the text after the code
}

// Decision is the outcome of access control for one request.
type Decision struct {
	Status int   // 0 when access is granted, else 400, 401, 403, 404 or 500
	Layer  Layer // the layer that decided (for a grant, the last that passed)
	Rule   *Rule // the directive that decided, nil for a default
	Realm  string
	User   string // the authenticated user, when authentication ran
	Logs   []LogLine
}

// Allowed reports whether the request may pass.
func (d *Decision) Allowed() bool { return d.Status == 0 }

func (d *Decision) log(module, code, msg string) {
	d.Logs = append(d.Logs, LogLine{Module: module, Code: code, Msg: msg})
}

func (d *Decision) where(r *Request) string {
	if r.Filename != "" {
		return r.Filename
	}
	return "uri " + r.URI
}

// Decide runs access control for a request over its merged configuration
// with Apache 2.4's combination of the two layers (server/request.c
// ap_process_request_internal; apache-access-semantics.md §3.3):
// mod_access_compat first, Satisfy Any short-circuiting, then
// mod_authz_core, authentication when a Require result needs a user, and
// authorization again with the user.
func Decide(l *Layers, r *Request, id Identity, tr Tracer) Decision {
	d := decide(l, r, id, tr)
	if d.Status == 401 && !validFieldContent(d.Realm) {
		// http_filters.c check_headers: a challenge Apache cannot send
		// aborts the request.
		d.Status, d.Layer = 500, LayerConfig
		d.log("http", "AH02430", "Response header 'WWW-Authenticate' value of 'Basic realm=\""+d.Realm+"\"' contains invalid characters, aborting request")
	}
	return d
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

func decide(l *Layers, r *Request, id Identity, tr Tracer) Decision {
	var d Decision
	c := l.Compat
	if c == nil {
		c = DefaultCompat
	}
	sat := c.Satisfy[r.Method]
	ok, rule := c.Check(r, tr)
	d.Layer, d.Rule = LayerCompat, rule
	if !ok {
		d.log("access_compat", "AH01797", "client denied by server configuration: "+d.where(r))
	}
	if sat == SatisfyAny && ok {
		return d
	}
	if sat != SatisfyAny && !ok {
		d.Status = 403
		return d
	}
	ec := evalCtx{req: r, groupFile: l.GroupFile, id: id, tr: tr, trace: tr != nil && tr.Enabled()}
	switch st := authorize(l, &ec, &d, false); st {
	case 0:
		return d
	case declined:
	default:
		d.Status = st
		return d
	}
	// check_user_id: mod_auth_basic, then mod_authn_core.
	if st := authenticate(l, r, id, &d); st != 0 {
		d.Status = st
		return d
	}
	ec.user, ec.hasUser = d.User, true
	if st := authorize(l, &ec, &d, true); st != 0 {
		d.Status = st
	}
	return d
}

const declined = -1

// authorize is authorize_user_core of mod_authz_core.
func authorize(l *Layers, c *evalCtx, d *Decision, afterAuthn bool) int {
	if l.Authz == nil {
		if l.AuthType != "" {
			d.Layer, d.Rule = LayerConfig, l.AuthTypeRule
			d.log("authz_core", "AH01627", "AuthType configured with no corresponding authorization directives")
			return 500
		}
		return 0
	}
	c.d = d
	res := l.Authz.eval(c, true)
	d.Layer = LayerAuthz
	d.Rule = decisiveRule(l.Authz, c, res)
	switch res {
	case Granted:
		return 0
	case DeniedNoUser:
		if !afterAuthn {
			return declined
		}
		d.log("authz_core", "AH01629", "authorization failure (no authenticated user): "+c.req.URI)
		if c.hasUser {
			d.Realm = l.AuthName
		}
		return 401
	case Denied, Neutral:
		if !afterAuthn || l.AuthType == "" {
			d.log("authz_core", "AH01630", "client denied by server configuration: "+d.where(c.req))
			return 403
		}
		d.log("authz_core", "AH01631", "user "+c.user+": authorization failure for \""+c.req.URI+"\": ")
		if l.ForbiddenOnFail {
			return 403
		}
		d.Realm = l.AuthName
		return 401
	}
	d.Layer = LayerConfig
	return 500
}

// decisiveRule picks the leaf that best explains a result: the first leaf
// whose own result equals the tree's, else the first leaf.
func decisiveRule(n *Node, c *evalCtx, want Result) *Rule {
	var found, first *Rule
	var walk func(n *Node)
	walk = func(n *Node) {
		if found != nil {
			return
		}
		if n.Kind == Leaf {
			if first == nil {
				first = n.Rule
			}
			if n.Methods&(MethodMask(1)<<uint(c.req.Method)) == 0 {
				return
			}
			quiet := *c
			quiet.trace, quiet.d = false, nil
			r := n.leaf(&quiet)
			if n.Negate {
				switch r {
				case Granted:
					r = Denied
				case Denied, DeniedNoUser:
					r = Neutral
				}
			}
			if r == want {
				found = n.Rule
			}
			return
		}
		for _, ch := range n.Children {
			walk(ch)
		}
	}
	walk(n)
	if found != nil {
		return found
	}
	return first
}

// authenticate is check_user_id: mod_auth_basic when AuthType is Basic,
// otherwise mod_authn_core's fallback.
func authenticate(l *Layers, r *Request, id Identity, d *Decision) int {
	d.Layer, d.Rule = LayerAuthn, l.AuthTypeRule
	if l.AuthType == "" {
		d.Layer = LayerConfig
		d.log("core", "AH00027", "No authentication done but request not allowed without authentication for "+r.URI+". Authentication not configured?")
		return 500
	}
	if !strings.EqualFold(l.AuthType, "Basic") {
		d.Layer = LayerConfig
		d.log("authn_core", "AH01796", "AuthType "+l.AuthType+" configured without corresponding module")
		return 500
	}
	if !l.HasAuthName {
		d.Layer = LayerConfig
		d.log("auth_basic", "AH01615", "need AuthName: "+r.URI)
		return 500
	}
	cr := r.Auth
	if !cr.Present {
		d.Realm = l.AuthName
		return 401
	}
	if !cr.Basic {
		d.log("auth_basic", "AH01614", "client used wrong authentication scheme: "+r.URI)
		d.Realm = l.AuthName
		return 401
	}
	if l.UserFile == "" || id == nil {
		d.Layer = LayerConfig
		d.log("authn_file", "AH01620", "Could not open password file: (null)")
		return 500
	}
	res, err := id.CheckPassword(l.UserFile, cr.User, cr.Password)
	if err != nil {
		d.Layer = LayerConfig
		d.log("authn_file", "AH01620", "Could not open password file: "+l.UserFile)
		return 500
	}
	switch res {
	case PasswordOK:
		d.User = cr.User
		return 0
	case PasswordMismatch:
		d.log("auth_basic", "AH01617", "user "+cr.User+": authentication failure for \""+r.URI+"\": Password Mismatch")
	default:
		d.log("auth_basic", "AH01618", "user "+cr.User+" not found: "+r.URI)
	}
	d.Realm = l.AuthName
	return 401
}

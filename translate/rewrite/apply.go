package rewrite

import "strings"

// State is what applying a rule list reads and changes of a request:
// r->filename, r->path_info, r->args and r->status, the environment the
// [E=] flag sets, and the request's lookups. The caller fills it; Apply
// leaves the result in it.
type State struct {
	Filename string // r->filename: the URL-path (server rules) or file path (per directory) rules match
	PathInfo string // r->path_info, added back per directory
	// Subject is what the rule being applied matches (ctx->uri): the
	// filename, per directory with the path info added and the prefix
	// taken off. %{LA-U:...} looks it up.
	Subject string
	Args    string // r->args
	HasArgs bool   // r->args is set (an empty query is not)
	Status  int    // r->status a rule forced ([F], [G], [R])
	// End is set once a rule with [END] applied: no rule of any list
	// applies again to the request, internal redirects included.
	End bool
	// Reduced is set where an absolute URL naming this server became a
	// local path (reduce_uri's mod_rewrite_uri_reduced note).
	Reduced bool
	// Subreq says the request is a subrequest (r->main): [NS] and [R]
	// rules are skipped.
	Subreq bool
	// MaxLen is twice LimitRequestLine: a filename growing past it
	// answers 500.
	MaxLen int

	Lookups Lookups
	World   World
	// SetEnv sets (unset false) or unsets an environment variable.
	SetEnv func(name, value string, unset bool)
	// Scheme is ap_http_scheme ("http" or "https"); SameServer is
	// ap_matches_request_vhost for reduce_uri: whether a host and port
	// name the server that took the request.
	Scheme     string
	SameServer func(host string, port int) bool
	// DefaultPort is ap_default_port.
	DefaultPort int
	// Server is the scheme, server name and port fully_qualify_uri makes
	// a redirect's URL with ("http://www.example.test:8080").
	Server func() string

	// Matched is called with each rule that matched (its conditions
	// held), in order, for counting and explaining.
	Matched func(r *Rule)
	// Trace, when set, is told each rule tried whose pattern did not
	// match (cond nil) and each condition tested: its TestString as
	// expanded and whether it held.
	Trace func(r *Rule, c *Cond, input string, ok bool)
}

// Action is what a rule list did (apply_rewrite_list's result).
type Action uint8

// The actions.
const (
	ActionNone      Action = iota // nothing rewrote
	ActionNormal                  // a substitution changed the filename
	ActionNoEscape                // the same, under [NE]
	ActionStatus                  // a rule forced Status ([F], [G], [R=4xx])
	ActionStatusSet               // an error set Status (an unsafe "?", a runaway filename, [N] past its rounds)
)

// Apply is apply_rewrite_list: the rules in order, perdir the directory
// of a per-directory list ("" for a server's), with [C], [S], [N], [L],
// [END] and [PT]. lastsub is the last rule that substituted (prefix_stat
// reads it). An error is a pattern whose evaluation did not finish: the
// caller answers 500.
func Apply(rules []*Rule, perdir string, st *State) (action Action, lastsub *Rule, err error) {
	round := 1
loop:
	for i := 0; i < len(rules); i++ {
		p := rules[i]
		if st.Subreq && p.Flags&(FlagIgnoreOnSubreq|FlagForceRedirect) != 0 {
			continue
		}
		rc, err := applyRule(p, perdir, st)
		if err != nil {
			return ActionStatusSet, lastsub, err
		}
		if rc == ruleNoMatch {
			for i < len(rules) && rules[i].Flags&FlagChain != 0 {
				i++
			}
			continue
		}
		if st.Matched != nil {
			st.Matched(p)
		}
		if p.Flags&FlagNoSub == 0 {
			lastsub = p
		}
		if st.MaxLen > 0 && len(st.Filename) > st.MaxLen {
			st.Status = 500
			return ActionStatus, lastsub, nil
		}
		if rc == ruleStatusSet {
			return ActionStatusSet, lastsub, nil
		}
		if p.Flags&FlagStatus != 0 {
			return ActionStatus, lastsub, nil
		}
		if rc != ruleNoSub {
			action = ActionNormal
			if p.Flags&FlagNoEscape != 0 {
				action = ActionNoEscape
			}
		}
		if p.Flags&FlagPassThrough != 0 {
			st.Filename = "passthrough:" + st.Filename
			action = ActionNormal
			break
		}
		if p.Flags&FlagEnd != 0 {
			st.End = true
			break
		}
		if p.Flags&(FlagProxy|FlagLast) != 0 {
			break
		}
		if p.Flags&FlagNewRound != 0 {
			round++
			if round >= p.MaxRounds {
				st.Status = 500
				return ActionStatus, lastsub, nil
			}
			goto loop
		}
		for s := p.Skip; s > 0 && i < len(rules); s-- {
			i++
		}
	}
	return action, lastsub, nil
}

type ruleResult uint8

const (
	ruleNoMatch ruleResult = iota
	ruleMatch
	ruleNoSub
	ruleStatusSet
)

// applyRule is apply_rewrite_rule.
func applyRule(p *Rule, perdir string, st *State) (ruleResult, error) {
	uri := st.Filename
	if perdir != "" {
		uri += st.PathInfo
		if strings.HasPrefix(uri, perdir) {
			uri = uri[len(perdir):]
		}
	}
	st.Subject = uri
	idx, err := p.Regex.FindStringSubmatchIndex(uri)
	if err != nil {
		return ruleNoMatch, err
	}
	if (idx != nil) == p.Negate {
		if st.Trace != nil {
			st.Trace(p, nil, uri, false)
		}
		return ruleNoMatch, nil
	}
	var rr, rc Backrefs
	if !p.Negate {
		rr = Backrefs{Source: uri, Index: idx}
	}
	conds := p.Conds
	for i := 0; i < len(conds); i++ {
		c := conds[i]
		input, ok, err := c.eval(rr, &rc, st)
		if err != nil {
			return ruleNoMatch, err
		}
		if st.Trace != nil {
			st.Trace(p, c, input, ok)
		}
		if c.OrNext {
			if !ok {
				continue
			}
			for i < len(conds) && conds[i].OrNext {
				i++
			}
		} else if !ok {
			return ruleNoMatch, nil
		}
	}
	var newuri string
	if p.Flags&FlagNoSub == 0 {
		var q Qmark
		newuri, q = Expand(p.Subst, rr, rc, p, st.Lookups)
		if q == QmarkUnsafe && p.Flags&FlagUnsafeAllow3F == 0 {
			// AH10508: Unsafe URL with %3f URL rewritten without UnsafeAllow3F
			st.Status = 403
			return ruleStatusSet, nil
		}
	}
	for _, e := range p.Env {
		name, _ := Expand(e, rr, rc, nil, st.Lookups)
		if st.SetEnv == nil {
			continue
		}
		if strings.HasPrefix(name, "!") {
			st.SetEnv(name[1:], "", true)
			continue
		}
		val := ""
		if i := strings.IndexByte(name, ':'); i >= 0 {
			name, val = name[:i], name[i+1:]
		}
		st.SetEnv(name, val, false)
	}
	if p.Flags&FlagNoSub != 0 {
		if p.Flags&FlagStatus != 0 {
			st.Status = p.Status
		}
		return ruleNoSub, nil
	}
	prefixAdded := false
	if newuri == "" || newuri[0] != '/' && IsAbsoluteURI(newuri) == 0 {
		if perdir != "" {
			newuri = perdir + newuri
			prefixAdded = true
		} else if p.Flags&(FlagProxy|FlagForceRedirect) == 0 {
			newuri = "/" + newuri
			prefixAdded = true
		}
	}
	st.Filename = newuri
	if perdir != "" && p.Flags&FlagDiscardPathInfo != 0 {
		st.PathInfo = ""
	}
	splitQuery(st, p.Flags)
	if p.Flags&FlagProxy != 0 {
		st.Filename = "proxy:" + st.Filename
		return ruleMatch, nil
	}
	if p.Flags&FlagForceRedirect != 0 {
		st.qualify()
		st.Status = p.Status
		return ruleMatch, nil
	}
	st.reduce()
	if IsAbsoluteURI(st.Filename) > 0 {
		st.Status = p.Status
		return ruleMatch, nil
	}
	if p.Flags&FlagUNC == 0 && !prefixAdded && !(len(p.Subst) > 1 && p.Subst[0] == '/' && p.Subst[1] == '/') {
		for len(st.Filename) > 1 && st.Filename[0] == '/' && st.Filename[1] == '/' {
			st.Filename = st.Filename[1:]
		}
	}
	return ruleMatch, nil
}

// eval is apply_rewrite_cond: the TestString expanded with the rule's
// captures and the last condition's, then the test.
func (c *Cond) eval(rr Backrefs, rc *Backrefs, st *State) (string, bool, error) {
	if c.Type == CondExpr {
		return "", false, ErrExpr
	}
	input, _ := Expand(c.Input, rr, *rc, nil, st.Lookups)
	ok, err := c.Eval(input, st.World, rc)
	return input, ok, err
}

// splitQuery is splitout_queryargs.
func splitQuery(st *State, flags RuleFlag) {
	if flags&FlagQSNone != 0 {
		st.Args, st.HasArgs = "", false
		return
	}
	skip, split := absoluteURI(st.Filename)
	if skip > 0 && !split {
		st.Args, st.HasArgs = "", false
		return
	}
	if flags&FlagQSDiscard != 0 {
		st.Args, st.HasArgs = "", false
	}
	rest := st.Filename[skip:]
	var q int
	if flags&FlagQSLast != 0 {
		q = strings.LastIndexByte(rest, '?')
	} else {
		q = strings.IndexByte(rest, '?')
	}
	if q < 0 {
		return
	}
	st.Filename, rest = st.Filename[:skip+q], rest[q+1:]
	if flags&FlagQSAppend != 0 {
		if rest != "" {
			if st.HasArgs {
				rest += "&" + st.Args
			} else {
				rest += "&" // apr_pstrcat stops at the NULL args
			}
			st.Args, st.HasArgs = rest, true
		}
	} else {
		st.Args, st.HasArgs = rest, true
	}
	if st.HasArgs {
		switch {
		case st.Args == "":
			st.HasArgs = false
		case st.Args[len(st.Args)-1] == '&':
			st.Args = st.Args[:len(st.Args)-1]
		}
	}
}

// qualify is fully_qualify_uri: a path becomes a URL of this server
// (Server; without it, of "localhost").
func (st *State) qualify() {
	if IsAbsoluteURI(st.Filename) > 0 {
		return
	}
	sep := "/"
	if strings.HasPrefix(st.Filename, "/") {
		sep = ""
	}
	if st.Server != nil {
		st.Filename = st.Server() + sep + st.Filename
		return
	}
	st.Filename = st.scheme() + "://localhost" + sep + st.Filename
}

func (st *State) scheme() string {
	if st.Scheme == "" {
		return "http"
	}
	return st.Scheme
}

// reduce is reduce_uri: an absolute URL of the request's scheme naming
// this server becomes its path.
func (st *State) reduce() {
	scheme := st.scheme()
	f := st.Filename
	l := len(scheme)
	if len(f) <= l+3 || !strings.EqualFold(f[:l], scheme) || f[l:l+3] != "://" {
		return
	}
	rest := f[l+3:]
	end := strings.IndexAny(rest, "/:")
	host, url := rest, "/"
	port := st.DefaultPort
	if end >= 0 {
		host = rest[:end]
		if rest[end] == ':' {
			after := rest[end+1:]
			slash := strings.IndexByte(after, '/')
			digits := after
			url = ""
			if slash >= 0 {
				digits, url = after[:slash], after[slash:]
			}
			if url == "" {
				url = "/"
			}
			port = atoi(digits) & 0xffff
		} else {
			url = rest[end:]
		}
	}
	if st.SameServer != nil && st.SameServer(host, port) {
		st.Filename = url
		st.Reduced = true
	}
}

// IsAbsoluteURI is is_absolute_uri: the length of the scheme prefix of
// a URL mod_rewrite redirects to ("http://" is 7), 0 for anything else.
func IsAbsoluteURI(s string) int {
	n, _ := absoluteURI(s)
	return n
}

// absoluteURI is is_absolute_uri with whether the scheme takes a query
// string.
func absoluteURI(s string) (int, bool) {
	if len(s) <= 5 || s[0] == '/' {
		return 0, false
	}
	for _, u := range uriSchemes {
		if len(s) >= len(u.prefix) && strings.EqualFold(s[:len(u.prefix)], u.prefix) {
			if u.prefix == "unix:" && len(s) > 6 && s[5] == '/' && s[6] == '/' {
				return 7, true
			}
			return len(u.prefix), u.query
		}
	}
	return 0, false
}

var uriSchemes = []struct {
	prefix string
	query  bool
}{
	{"ajp://", true}, {"balancer://", true}, {"ftp://", false}, {"fcgi://", true},
	{"gopher://", false}, {"http://", true}, {"https://", true}, {"h2://", true},
	{"h2c://", true}, {"ldap://", false}, {"mailto:", true}, {"news:", false},
	{"nntp://", false}, {"scgi://", true}, {"ws://", true}, {"wss://", true},
	{"unix:", true},
}

// SubstPrefixPath is subst_prefix_path: input with its prefix match (a
// directory, its final slash optional) replaced by subst, where input is
// under match; input unchanged otherwise.
func SubstPrefixPath(input, match, subst string) string {
	n := len(match)
	if n > 0 && match[n-1] == '/' {
		n--
	}
	if len(input) <= n || input[:n] != match[:n] || input[n] != '/' {
		return input
	}
	rest := input[n+1:]
	if subst != "" && subst[len(subst)-1] != '/' {
		subst += "/"
	}
	return subst + rest
}

// DirPrefix is config_perdir_create's directory: the section's path
// with a final slash.
func DirPrefix(path string) string {
	if strings.HasSuffix(path, "/") {
		return path
	}
	return path + "/"
}

// RedirectLocation is where hook_uri2file and hook_fixup send a request
// the rules rewrote to a URL, and with which status: per directory under
// a RewriteBase the directory in the URL's path is replaced by the base;
// the URL is escaped (escape_absolute_uri) unless [NE]; the query is
// appended, escaped unless [NE] or unchanged from the request's (oargs);
// the status is the rule's 3xx, else 302.
func RedirectLocation(st *State, action Action, oargs string, ohas bool, perdir, base string) (string, int) {
	f := st.Filename
	skip := IsAbsoluteURI(f)
	if perdir != "" && base != "" {
		if i := strings.IndexByte(f[skip:], '/'); i >= 0 {
			head, rest := f[:skip+i+1], f[skip+i+1:]
			if s := SubstPrefixPath(rest, strings.TrimPrefix(perdir, "/"), base[1:]); s != rest {
				f = head + s
			}
		}
	}
	if action != ActionNoEscape {
		f = escapeAbsoluteURI(f, skip)
	}
	if st.HasArgs {
		if action == ActionNoEscape || ohas && st.Args == oargs {
			f += "?" + st.Args
		} else {
			f += "?" + EscapePath(st.Args)
		}
	}
	status := http302
	if st.Status >= 300 && st.Status < 400 {
		status = st.Status
	}
	return f, status
}

const http302 = 302

// escapeAbsoluteURI is escape_absolute_uri: the part after the scheme
// and host escaped (ap_escape_uri), an LDAP URL's question-mark
// separated parts each on its own.
func escapeAbsoluteURI(uri string, scheme int) string {
	if scheme == 0 {
		return uri
	}
	cp := scheme
	if uri[cp-1] == '/' {
		for cp < len(uri) && uri[cp] != '/' {
			cp++
		}
		if cp == len(uri) {
			return uri // nothing after the host part
		}
		// From the slash after the host, which escaping keeps.
		if strings.EqualFold(uri[:4], "ldap") {
			parts := strings.SplitN(uri[cp:], "?", 5)
			for i, p := range parts {
				parts[i] = EscapePath(p)
			}
			return uri[:cp] + strings.Join(parts, "?")
		}
	}
	return uri[:cp] + EscapePath(uri[cp:])
}

package walk

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/rewrite"
)

// mod_alias's redirects and ErrorDocument URLs at Apache's phases
// (translate/redirect.go reads them):
//
//   - translate_name (mod_alias translate_alias_redir): 2.4's one-argument
//     Redirect of the <Location> sections, then the server's Redirect and
//     RedirectMatch lines, before any <Directory> section and access
//     control: a redirect into a denied directory redirects;
//   - fixups (fixup_redir), after access control and before mod_dir's
//     DirectoryIndex: the per-directory redirects, .htaccess included;
//   - ap_die: an ErrorDocument with a full URL answers a refusal with a
//     302 to it.

// translateRedirect is mod_alias's translate_name: 2.4's one-argument
// Redirect of the <Location> sections the URI is in, then the server's
// Redirect and RedirectMatch lines, in order. ok is false when none
// applies, or the request is one the walk refuses before (a bad URI).
func (e *Engine) translateRedirect(req *Request) (Result, bool) {
	if !e.anyTranslateRedirect() {
		return Result{}, false
	}
	_, uri, st := e.target(req.Target)
	if st != 0 || uri == "" {
		return Result{}, false
	}
	return e.translateRedirectURI(req, uri)
}

// anyTranslateRedirect reports whether translate_name can redirect at
// all.
func (e *Engine) anyTranslateRedirect() bool {
	return len(e.cfg.Redirects) > 0 || e.cfg.Semantics != translate.Legacy22 && e.locationRedirects()
}

// translateRedirectURI is translateRedirect for a URI already decoded:
// the main request's, or a subrequest's (mod_alias's translate_name runs
// for mod_dir's subrequests too).
func (e *Engine) translateRedirectURI(req *Request, uri string) (Result, bool) {
	var res Result
	v24 := e.cfg.Semantics != translate.Legacy22
	if !e.anyTranslateRedirect() {
		return res, false
	}
	res.URI = uri
	var expr *translate.Redirect
	if v24 && e.locationRedirects() {
		locURI := uri
		if !e.cfg.MergeSlashes {
			locURI = no2slash(uri)
		}
		var scratch Result
		for _, s := range e.cfg.Locations {
			if locationMatches(s, uri, locURI, &scratch) {
				res.Sections = append(res.Sections, s)
				if s.Conf.Redirects != nil && s.Conf.Redirects.Expr != nil {
					expr = s.Conf.Redirects.Expr
				}
			}
		}
		if scratch.RegexErr != nil {
			return Result{}, false // the walk answers it (500)
		}
	}
	dl := e.dirRedirects(res.Sections)
	if expr != nil {
		e.answerRedirect(req, &res, expr, expr.URL, dl, !v24)
		return res, true
	}
	for _, r := range e.cfg.Redirects {
		target, ok, err := matchRedirect(r, uri)
		if err != nil {
			regexRedirectFailed(&res, r, err)
			return res, true
		}
		if ok {
			e.answerRedirect(req, &res, r, target, dl, !v24)
			return res, true
		}
	}
	return res, false
}

// regexRedirectFailed answers 500 for a RedirectMatch whose regex did not
// finish (regex.MatchError), with a line that says why.
func regexRedirectFailed(res *Result, r *translate.Redirect, err error) {
	res.Status, res.Layer, res.Rule = http.StatusInternalServerError, policy.LayerConfig, r.Rule
	res.AddLogs([]policy.LogLine{{Module: "orderly", Subject: r.Rule.String() + ": " + err.Error()}})
}

// locationRedirects reports whether a <Location> section has 2.4's
// one-argument Redirect.
func (e *Engine) locationRedirects() bool {
	for _, s := range e.cfg.Locations {
		if s.Conf.Redirects != nil && s.Conf.Redirects.Expr != nil {
			return true
		}
	}
	return false
}

// fixupRedirect is mod_alias's fixups hook (fixup_redir), run once
// access control has granted res: the one-argument Redirect in force,
// then the per-directory Redirect and RedirectMatch lines, the deepest
// section's first. It reports whether one answered.
func (e *Engine) fixupRedirect(req *Request, res *Result) bool {
	dl := e.dirRedirects(res.Sections)
	if dl == nil {
		return false
	}
	if dl.Expr != nil {
		e.answerRedirect(req, res, dl.Expr, dl.Expr.URL, dl, false)
		return true
	}
	for _, r := range dl.Redirects {
		target, ok, err := matchRedirect(r, res.URI)
		if err != nil {
			regexRedirectFailed(res, r, err)
			return true
		}
		if ok {
			e.answerRedirect(req, res, r, target, dl, false)
			return true
		}
	}
	return false
}

// dirRedirects merges what the server and sections set of mod_alias's
// per-directory configuration, ErrorDocument and UseCanonicalName
// (Defaults first, then the sections in merge order).
func (e *Engine) dirRedirects(sections []*translate.Section) *translate.DirRedirects {
	l := e.cfg.Defaults.Redirects
	for _, s := range sections {
		if s.Conf.Redirects != nil {
			l = translate.MergeDirRedirects(l, s.Conf.Redirects)
		}
	}
	return l
}

// matchRedirect tries one Redirect or RedirectMatch on the URI
// (try_alias_list with is_redir): the target, with the rest of the path
// escaped after a Redirect's URL, or RedirectMatch's $N filled in and the
// result escaped; "" for a status that is not a redirect. err is a regex
// that did not finish.
func matchRedirect(r *translate.Redirect, uri string) (string, bool, error) {
	if r.Regex != nil {
		m, err := r.Regex.FindStringSubmatchIndex(uri)
		if err != nil || m == nil {
			return "", false, err
		}
		if r.URL == "" {
			return "", true, nil
		}
		return escapeTarget(expand(r.URL, uri, m)), true, nil
	}
	n := translate.AliasMatches(uri, r.Path)
	if n <= 0 {
		return "", false, nil
	}
	if r.URL == "" {
		return "", true, nil
	}
	return r.URL + osEscapePath(uri[n:]), true, nil
}

// answerRedirect makes res mod_alias's answer: the status, and for a
// redirect the Location (ap_construct_url for a path, the request's
// query where the target has none). 2.4's one-argument form has its
// target escaped as RedirectMatch's is; lenient is 2.2's server-level
// handling of a target that is no URL (sent as it is).
func (e *Engine) answerRedirect(req *Request, res *Result, r *translate.Redirect, target string, dl *translate.DirRedirects, lenient bool) {
	res.Status, res.Layer, res.Rule = r.Status, policy.LayerRequest, r.Rule
	if !req.Dry {
		r.Rule.Hit(req.Now)
	}
	if !translate.IsRedirect(r.Status) {
		return
	}
	if r.Regex == nil && r.Path == "" {
		target = escapeTarget(target)
	}
	relative := dl != nil && dl.Relative == 1
	orig := target
	if !relative || !strings.HasPrefix(target, "/") {
		if strings.HasPrefix(target, "/") {
			target = e.constructURL(req, target, dl)
		}
		if !translate.IsURL(target) {
			if !lenient {
				res.Status = http.StatusInternalServerError
				res.AddLogs([]policy.LogLine{{Module: "alias", Code: redirectErrCode(e, res), Subject: "cannot redirect '" + res.URI + "' to '" + target + "'; target is not a valid absoluteURI or abs_path"}})
				return
			}
			target = orig
		}
	}
	if q, ok := query(req.Target); ok && !strings.Contains(target, "?") {
		target += "?" + q
	}
	res.Location = target
}

// redirectErrCode is the code of mod_alias's "cannot redirect" line: 2.4
// numbers the translate_name and fixups ones apart; 2.2 has none.
func redirectErrCode(e *Engine, res *Result) string {
	if e.cfg.Semantics == translate.Legacy22 {
		return ""
	}
	if res.Filename == "" {
		return "AH00674"
	}
	return "AH00676"
}

// query is the request's query string (r->args) and whether it has one:
// "?" alone is an empty one.
func query(target string) (string, bool) {
	i := strings.IndexByte(target, '?')
	if i < 0 {
		return "", false
	}
	q := target[i+1:]
	if j := strings.IndexByte(q, '#'); j >= 0 {
		q = q[:j]
	}
	return q, true
}

// constructURL is ap_construct_url: the scheme, the host (the Host
// header's under UseCanonicalName Off, the default; ServerName's under
// On) and the port unless it is the scheme's default, then path.
func (e *Engine) constructURL(req *Request, path string, dl *translate.DirRedirects) string {
	lim := &e.cfg.Limits
	scheme := lim.Scheme
	if scheme == "" {
		scheme = "http"
		if req.TLS {
			scheme = "https"
		}
	}
	name, port := lim.Name, 0
	canonical := dl != nil && dl.Canonical == 1
	if !canonical || name == "" {
		// UseCanonicalName On with no ServerName names the legacy
		// server's own host name, which orderly cannot know: the Host the
		// request named stands in for it (random 935).
		if h, p, ok := hostPort(req.Host); ok && h != "" {
			name, port = h, p
		}
	}
	if port == 0 {
		port = lim.Port
	}
	def := 80
	if scheme == "https" {
		def = 443
	}
	if port == 0 {
		port = def
	}
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	if port == def {
		return scheme + "://" + name + path
	}
	return scheme + "://" + name + ":" + strconv.Itoa(port) + path
}

// hostPort is a Host header as fix_hostname leaves it: the name, lower
// case, without a trailing dot, and the port it names (0 for none).
func hostPort(h string) (string, int, bool) {
	name, ok := fixHostname(h, false)
	if !ok {
		return "", 0, false
	}
	port := 0
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		port, _ = strconv.Atoi(h[i+1:])
	}
	return name, port, true
}

// osEscapePath is ap_os_escape_path(path, partial=1)
// (rewrite.EscapePath).
func osEscapePath(s string) string { return rewrite.EscapePath(s) }

// escapeTarget is what mod_alias does with a RedirectMatch (or 2.4
// one-argument) target: apr_uri_parse, apr_uri_unparse without the query
// (a password shown as XXXXXXXX, the scheme's default port dropped),
// ap_escape_uri, then the query and fragment as they were.
func escapeTarget(t string) string {
	rest := t
	var frag, q string
	hasFrag, hasQ := false, false
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		frag, hasFrag, rest = rest[i+1:], true, rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q, hasQ, rest = rest[i+1:], true, rest[:i]
	}
	var out strings.Builder
	scheme := ""
	if i := schemeEnd(rest); i > 0 {
		scheme, rest = rest[:i], rest[i+1:]
		out.WriteString(scheme + ":")
	}
	if strings.HasPrefix(rest, "//") {
		auth := rest[2:]
		path := ""
		if i := strings.IndexByte(auth, '/'); i >= 0 {
			auth, path = auth[:i], auth[i:]
		}
		out.WriteString("//")
		if i := strings.LastIndexByte(auth, '@'); i >= 0 {
			user := auth[:i]
			if j := strings.IndexByte(user, ':'); j >= 0 {
				user = user[:j] + ":XXXXXXXX"
			}
			out.WriteString(user + "@")
			auth = auth[i+1:]
		}
		host, port := auth, ""
		if strings.HasPrefix(auth, "[") {
			if j := strings.IndexByte(auth, ']'); j >= 0 {
				host, port = auth[:j+1], strings.TrimPrefix(auth[j+1:], ":")
			}
		} else if j := strings.LastIndexByte(auth, ':'); j >= 0 {
			host, port = auth[:j], auth[j+1:]
		}
		out.WriteString(host)
		if p, err := strconv.Atoi(port); port != "" && err == nil && p != 0 && p != defaultPort(scheme) {
			out.WriteString(":" + port)
		}
		rest = path
	}
	out.WriteString(rest)
	s := osEscapePath(out.String())
	if hasQ {
		s += "?" + q
	}
	if hasFrag {
		s += "#" + frag
	}
	return s
}

// schemeEnd is the index of the ":" ending a URI's scheme, 0 for none.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i
		case c == '/' || c == '?' || c == '#':
			return 0
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return 0
		}
	}
	return 0
}

// defaultPort is apr_uri_port_of_scheme for the schemes a redirect names.
func defaultPort(scheme string) int {
	switch strings.ToLower(scheme) {
	case "http":
		return 80
	case "https":
		return 443
	case "ftp":
		return 21
	case "ssh":
		return 22
	case "telnet":
		return 23
	case "gopher":
		return 70
	case "nntp":
		return 119
	case "imap":
		return 143
	case "ldap":
		return 389
	case "rtsp":
		return 554
	case "sip":
		return 5060
	case "sips":
		return 5061
	}
	return 0
}

// errorDocument is ap_die's ErrorDocument with a full URL: Apache
// answers a 302 to it instead of the refusal (never for 401, whose URL
// ErrorDocument it ignores at load).
func (e *Engine) errorDocument(req *Request, res *Result) {
	if res.Status == 0 {
		return
	}
	sections := res.Sections
	if res.storageFailed {
		sections = nil
	}
	url := e.dirRedirects(sections).ErrorURL(res.Status)
	if url == "" {
		return
	}
	res.Status, res.Location = http.StatusFound, url
}

// locationMatches reports whether a <Location> or <LocationMatch>
// section applies to uri (locURI is uri with "//" merged where
// MergeSlashes is Off, which the prefix and wildcard forms match).
func locationMatches(s *translate.Section, uri, locURI string, res *Result) bool {
	switch {
	case s.Regex != nil:
		return matchRegex(s, uri, res)
	case s.Fnmatch:
		return fnmatch(s.Path, locURI)
	}
	p := s.Path
	return strings.HasPrefix(locURI, p) &&
		(len(p) == 0 || p[len(p)-1] == '/' || len(locURI) == len(p) || locURI[len(p)] == '/')
}

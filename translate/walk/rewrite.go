package walk

import (
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/rewrite"
)

// mod_rewrite (translate/rewrite applies the rules; this file runs them
// where Apache does):
//
//   - the server's rules in translate_name, before mod_alias (hook_uri2file,
//     APR_HOOK_FIRST): a status answers, an absolute URL redirects (the
//     backend answers it, running the same rules), [PT] hands the new URL
//     to mod_alias, and a local path becomes the file the walk starts from;
//   - the per-directory rules (<Directory>, .htaccess) in fixups, after the
//     access decision (hook_fixup): a status answers, and a new local path
//     is an internal redirect, a new request for the new URL with its own
//     walk and access check, once mod_alias's and mod_dir's fixups had
//     their say.
//
// orderly decides on the rewritten target and forwards the request as the
// client sent it.

// maxInternalRedirects is AP_DEFAULT_MAX_INTERNAL_REDIRECTS, which
// LimitInternalRecursion changes.
const maxInternalRedirects = 10

// rewriteRun is mod_rewrite's state across a request and its internal
// redirects.
type rewriteRun struct {
	end       bool   // a rule with [END] applied (the request pool's note)
	redirects int    // internal redirects so far
	target    string // the first request's target, for THE_REQUEST
	// env, when set, is the environment an internal redirect starts
	// with: the previous request's, renamed REDIRECT_*.
	env    *policy.Env
	hasEnv bool
	// cache is the walk cache of the request redirected from
	// (redirectWalk); hasCache says there is one for the next walk.
	cache    walkCache
	hasCache bool
	// uri is the request's r->uri, for its subrequests' subreq_ok.
	uri string
	// prevM and prevUser are the configuration and user of the request
	// an internal redirect comes from: with the same configuration, the
	// new request skips access control.
	prevM    *merged
	prevUser string
	// lookup is set when the request is a look-ahead subrequest
	// (lookup.go).
	lookup *lookup
}

// walkCache is what ap_directory_walk's cache keeps of a walk: the
// directory it ended in (cache->cached) and the <Directory> sections it
// found there.
type walkCache struct {
	dir      string
	sections []*translate.Section
	opts     translate.OptionBits
}

// Rewritten is what mod_rewrite did to a request, for explain.
type Rewritten struct {
	Rule   *policy.Rule // the last rule that applied
	From   string       // the URL-path or file the rules started from
	To     string       // the new URL-path, file or URL
	Phase  string       // "server" or "directory"
	Action string       // "status", "redirect", "file", "passthrough", "internal redirect", "same"
}

// rewriteCtx is what a rule list reads of the request: lookup_variable,
// the maps, the file tests. The contexts are pooled, with their State and
// its callbacks bound once, so that running the rules allocates nothing
// of its own.
type rewriteCtx struct {
	e        *Engine
	req      *Request
	st       rewrite.State
	uri      string     // r->uri
	env      policy.Env // the request's environment, while the rules run
	pathInfo string
	user     string
	lookups  translate.HostnameLookups
	maps     map[string]*rewrite.Map
	last     *rewrite.Rule
	tr       policy.Tracer
	// kind says whose rules these are: the request's, a subrequest's of
	// mod_dir, or the request's when it is itself a look-ahead
	// subrequest. In a subrequest (subreq) [NS] and [R] rules are skipped
	// and %{IS_SUBREQ} is "true"; a mod_dir subrequest's [END] is its own
	// (a note on its own pool).
	kind     reqKind
	subreq   bool
	envOwned bool
	// cache and m are the request's walk cache and configuration, for
	// the rules of a directory: a look-ahead subrequest starts from the
	// cache, and skips the access check where its configuration is the
	// same. logs are what its look-ahead subrequests logged, for the
	// request's log.
	cache    walkCache
	hasCache bool
	m        *merged
	logs     []policy.LogLine
	// perdir and base are the directory the rules are for and its
	// RewriteBase ("" for none), for %{LA-U:...} and a redirect's
	// Location.
	perdir, base string
	// oargs is the query the rules started from (r->args).
	oargs string
	// bound are the State's callbacks, made once per pooled context.
	bound rewrite.State
}

// rewriteCtxs is set in init: a look-ahead subrequest runs rules too,
// so the pool's contexts refer to it.
var rewriteCtxs sync.Pool

func init() { rewriteCtxs.New = newPooledCtx }

func newPooledCtx() any {
	c := &rewriteCtx{}
	c.bound = rewrite.State{
		Lookups: rewrite.Lookups{Var: c.variable, Map: c.lookupMap},
		World:   rewrite.World{Stat: c.stat, LookupURL: c.lookupURL, LookupFile: c.lookupFile},
		SetEnv:  c.setEnv, Matched: c.matched, SameServer: c.sameServer, Server: c.serverURL,
	}
	return c
}

// serverURL is the server fully_qualify_uri names (ap_construct_url's),
// under the UseCanonicalName in force.
func (c *rewriteCtx) serverURL() string {
	return c.e.constructURL(c.req, "", c.e.dirRedirects(c.config().sections))
}

// newRewriteCtx takes a context from the pool; release gives it back.
func newRewriteCtx(e *Engine, req *Request, uri string, env policy.Env, tr policy.Tracer, kind reqKind) *rewriteCtx {
	c := rewriteCtxs.Get().(*rewriteCtx)
	c.e, c.req, c.uri, c.env, c.tr, c.kind, c.subreq = e, req, uri, env, tr, kind, kind != kindMain
	return c
}

func (c *rewriteCtx) release() {
	bound := c.bound
	*c = rewriteCtx{bound: bound}
	rewriteCtxs.Put(c)
}

// setEnd keeps an [END] that applied.
func (c *rewriteCtx) setEnd() {
	if c.kind != kindDirSub && c.st.End {
		c.req.rw.end = true
	}
}

func (c *rewriteCtx) state(filename, pathInfo string) *rewrite.State {
	q, has := query(c.req.Target)
	c.st = c.bound
	st := &c.st
	st.Filename, st.PathInfo, st.Args, st.HasArgs = filename, pathInfo, q, has && q != ""
	c.oargs = q
	st.Subreq, st.MaxLen = c.subreq, 2*c.e.cfg.Limits.RequestLine
	st.Scheme, st.DefaultPort = c.scheme(), c.defaultPort()
	if c.tr != nil && c.tr.Enabled() {
		st.Trace = c.trace
	}
	return st
}

// setEnv is [E=]: a subrequest's environment starts as its main
// request's (apr_table_copy), which it shares until it sets a variable.
func (c *rewriteCtx) setEnv(name, value string, unset bool) {
	if c.subreq && !c.envOwned {
		c.env, c.envOwned = cloneEnv(&c.env), true
	}
	if unset {
		c.env.Unset(name)
	} else {
		c.env.Set(name, value)
	}
}

// matched counts a rule that applied, and traces it.
func (c *rewriteCtx) matched(r *rewrite.Rule) {
	c.last = r
	if r.Line != nil && !c.req.Dry {
		r.Line.Hit(c.req.Now)
	}
	if c.tr != nil && c.tr.Enabled() {
		c.tr.Trace(policy.Event{Layer: policy.LayerConfig, Rule: r.Line, Text: "RewriteRule " + r.Pattern, Result: "applies: " + c.st.Filename + c.query()})
	}
}

// trace is the trail of a rule whose pattern did not match and of each
// condition tested.
func (c *rewriteCtx) trace(r *rewrite.Rule, cond *rewrite.Cond, input string, ok bool) {
	if cond == nil {
		c.tr.Trace(policy.Event{Layer: policy.LayerConfig, Rule: r.Line, Text: "RewriteRule " + r.Pattern, Result: "no match: " + input})
		return
	}
	res := "false"
	if ok {
		res = "true"
	}
	c.tr.Trace(policy.Event{Layer: policy.LayerConfig, Rule: cond.Line, Text: "RewriteCond " + cond.Input, Result: res + ": " + strconv.Quote(input)})
}

// query is the rewritten query for the trail, "" for none.
func (c *rewriteCtx) query() string {
	if c.st.HasArgs {
		return "?" + c.st.Args
	}
	return ""
}

func (c *rewriteCtx) scheme() string {
	if c.req.TLS {
		return "https"
	}
	return "http"
}

func (c *rewriteCtx) defaultPort() int {
	if c.req.TLS {
		return 443
	}
	return 80
}

// serverNamePort are ap_get_server_name_for_url and ap_get_server_port
// under UseCanonicalName Off: the Host header's, else ServerName's.
func (c *rewriteCtx) serverNamePort() (string, int) {
	lim := &c.e.cfg.Limits
	name, port := lim.Name, 0
	if h, p, ok := hostPort(c.req.Host); ok && h != "" {
		name, port = h, p
	}
	if port == 0 {
		port = lim.Port
	}
	if port == 0 {
		port = c.defaultPort()
	}
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	return name, port
}

// sameServer is ap_matches_request_vhost for reduce_uri: the host names
// this server (the Host the request named, or ServerName) on the port
// the request came to. Where orderly cannot tell, it takes the URL for
// its own: the rewritten path is then decided here, not forwarded as a
// redirect.
func (c *rewriteCtx) sameServer(host string, port int) bool {
	name, p := c.serverNamePort()
	named := strings.EqualFold(host, strings.Trim(name, "[]")) || c.e.cfg.Limits.Name != "" && strings.EqualFold(host, c.e.cfg.Limits.Name)
	return named && port == p
}

func (c *rewriteCtx) stat(path string, link bool) rewrite.FileInfo {
	var fi fs.FileInfo
	var err error
	if link {
		fi, err = c.e.fs.Lstat(path)
	} else {
		fi, err = c.e.fs.Stat(path)
	}
	if err != nil {
		return rewrite.FileInfo{}
	}
	out := rewrite.FileInfo{Size: fi.Size(), Exec: fi.Mode().Perm()&0o111 != 0}
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		out.Kind = rewrite.FileLink
	case m.IsRegular():
		out.Kind = rewrite.FileRegular
	case m.IsDir():
		out.Kind = rewrite.FileDir
	default:
		out.Kind = rewrite.FileOther
	}
	return out
}

func (c *rewriteCtx) lookupMap(name, key string) (string, bool) {
	m := c.maps[name]
	if m == nil {
		return "", false
	}
	return m.Lookup(key)
}

// header is lookup_header: the first field of the name.
func (c *rewriteCtx) header(name string) string {
	if strings.EqualFold(name, "Host") {
		return c.req.Host // Go's server keeps it apart from the other fields
	}
	if vs := c.req.Header.Values(name); len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// variable is lookup_variable for the names orderly evaluates (the
// builder refused the others).
func (c *rewriteCtx) variable(name string) string {
	if len(name) < 4 {
		return ""
	}
	if name[3] == ':' {
		if len(name) > 4 && strings.EqualFold(name[:3], "ENV") {
			v, _ := c.env.Get(name[4:])
			return v
		}
		return ""
	}
	if len(name) > 4 && name[4] == ':' {
		if len(name) > 5 {
			switch {
			case strings.EqualFold(name[:4], "HTTP"):
				return c.header(name[5:])
			case strings.EqualFold(name[:4], "LA-U"):
				return c.lookahead(false, name[5:])
			case strings.EqualFold(name[:4], "LA-F"):
				return c.lookahead(true, name[5:])
			}
		}
		return ""
	}
	req := c.req
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, "TIME") {
		return c.time(up)
	}
	switch up {
	case "IPV6":
		if req.ClientAddr.Is6() && !req.ClientAddr.Is4In6() {
			return "on"
		}
		return "off"
	case "HTTPS":
		if req.TLS {
			return "on"
		}
		return "off"
	case "IS_SUBREQ":
		if c.subreq {
			return "true"
		}
		return "false"
	case "PATH_INFO":
		return c.pathInfo
	case "AUTH_TYPE":
		if c.user != "" {
			return "Basic"
		}
		return ""
	case "REMOTE_USER":
		return c.user
	case "SERVER_NAME":
		n, _ := c.serverNamePort()
		return n
	case "SERVER_PORT":
		_, p := c.serverNamePort()
		return strconv.Itoa(p)
	case "SERVER_ADDR":
		if c.e.localIP.IsValid() {
			return c.e.localIP.String()
		}
		return req.LocalAddr.Unmap().String()
	case "REMOTE_ADDR":
		return req.ClientAddr.Unmap().String()
	case "REMOTE_HOST":
		return req.RemoteName(c.lookups)
	case "THE_REQUEST":
		return req.Method + " " + req.rw.target + " " + req.Proto
	case "REQUEST_URI":
		return c.uri
	case "QUERY_STRING":
		return c.st.Args
	case "DOCUMENT_ROOT":
		return c.e.cfg.DocumentRoot
	case "REQUEST_METHOD":
		if c.subreq {
			return "GET" // mod_dir's subrequests are GETs, whatever the method
		}
		return req.Method
	case "REQUEST_SCHEME":
		return c.scheme()
	case "SERVER_PROTOCOL":
		return req.Proto
	case "SCRIPT_FILENAME", "REQUEST_FILENAME":
		return c.st.Filename
	}
	return c.header(headerVars[up]) // "" for a name lookup_variable does not know
}

// headerVars are the %{HTTP_...} variables lookup_variable reads from a
// header, by the header's name.
var headerVars = map[string]string{
	"HTTP_HOST": "Host", "HTTP_ACCEPT": "Accept", "HTTP_COOKIE": "Cookie", "HTTP_REFERER": "Referer",
	"HTTP_USER_AGENT": "User-Agent", "HTTP_FORWARDED": "Forwarded", "HTTP_PROXY_CONNECTION": "Proxy-Connection",
}

// time is lookup_variable's TIME variables, in local time
// (apr_time_exp_lt) at the request's time.
func (c *rewriteCtx) time(name string) string {
	now := time.Now()
	if c.req.Now != 0 {
		now = time.Unix(0, c.req.Now)
	}
	switch name {
	case "TIME":
		return now.Format("20060102150405")
	case "TIME_YEAR":
		return fmt.Sprintf("%04d", now.Year())
	case "TIME_MON":
		return fmt.Sprintf("%02d", int(now.Month()))
	case "TIME_DAY":
		return fmt.Sprintf("%02d", now.Day())
	case "TIME_HOUR":
		return fmt.Sprintf("%02d", now.Hour())
	case "TIME_MIN":
		return fmt.Sprintf("%02d", now.Minute())
	case "TIME_SEC":
		return fmt.Sprintf("%02d", now.Second())
	case "TIME_WDAY":
		return strconv.Itoa(int(now.Weekday()))
	}
	return ""
}

// serverRewriteOn reports whether the server's rules run at all.
func (e *Engine) serverRewriteOn() bool {
	rw := e.cfg.Rewrite
	return rw != nil && len(rw.Rules) > 0 && e.cfg.Defaults.Rewrite.On()
}

// rewriteOutcome is what a rule list left for the walk.
type rewriteOutcome uint8

const (
	rewriteNone     rewriteOutcome = iota // nothing rewrote: go on
	rewriteAnswered                       // the result is final
	rewriteFile                           // server: the walk starts from filename
	rewriteURI                            // server [PT]: mod_alias goes on with uri
	rewriteRedirect                       // per directory: an internal redirect to uri
)

// serverRewrite is hook_uri2file. res carries the environment so far.
func (e *Engine) serverRewrite(req *Request, res *Result, uri string, kind reqKind, tr policy.Tracer) (out rewriteOutcome, filename, newURI string) {
	if kind != kindDirSub && req.rw.end || !e.serverRewriteOn() {
		return rewriteNone, "", ""
	}
	rw := e.cfg.Rewrite
	c := newRewriteCtx(e, req, uri, res.Env, tr, kind)
	c.lookups, c.maps = e.cfg.Defaults.HostnameLookups, rw.Maps
	defer func() { res.Env = c.env; res.AddLogs(c.logs); c.release() }()
	st := c.state(uri, "")
	action, lastsub, err := rewrite.Apply(rw.Rules, "", st)
	c.setEnd()
	if fail := c.fail(res, err); fail {
		return rewriteAnswered, "", ""
	}
	if action == rewrite.ActionNone {
		return rewriteNone, "", ""
	}
	res.Rewritten = &Rewritten{From: uri, To: st.Filename, Phase: "server"}
	if c.last != nil {
		res.Rewritten.Rule = c.last.Line
	}
	if kind == kindLookup {
		res.Filename = st.Filename // r->filename, which %{LA-U:REQUEST_FILENAME} reads
	}
	if c.answer(res, action) {
		return rewriteAnswered, "", ""
	}
	f := st.Filename
	switch {
	case strings.HasPrefix(f, "passthrough:"):
		res.Rewritten.Action, res.Rewritten.To = "passthrough", f[12:]
		return rewriteURI, "", f[12:]
	case !strings.HasPrefix(f, "/"):
		c.status(res, http.StatusBadRequest)
		return rewriteAnswered, "", ""
	}
	if rw.Options&translate.RewriteUnsafePrefixStat != 0 {
		lastsub = nil
	}
	if !e.prefixStat(f, lastsub) || st.Reduced && rw.Options&translate.RewriteLegacyPrefixDocroot == 0 {
		var ok bool
		if f, ok = e.coreTranslate(f); !ok {
			c.status(res, http.StatusForbidden)
			return rewriteAnswered, "", ""
		}
	}
	res.Rewritten.Action, res.Rewritten.To = "file", f
	return rewriteFile, f, ""
}

// fail answers 500 where a rule could not be evaluated: a regex that did
// not finish (regex.MatchError), whose answer Apache may have had.
func (c *rewriteCtx) fail(res *Result, err error) bool {
	if err == nil {
		return false
	}
	res.RegexErr = err
	why := err.Error()
	res.Status, res.Layer = http.StatusInternalServerError, policy.LayerConfig
	res.AddLogs([]policy.LogLine{{Module: "orderly", Subject: "mod_rewrite: " + why}})
	return true
}

func (c *rewriteCtx) status(res *Result, status int) {
	res.Status, res.Layer = status, policy.LayerConfig
	if c.last != nil {
		res.Rule = c.last.Line
		if !c.req.Dry {
			c.last.Line.Decided(c.req.Now)
		}
	}
	if res.Rewritten != nil {
		res.Rewritten.Action, res.Rewritten.To = "status", strconv.Itoa(status)
	}
}

// answer handles what hook_uri2file and hook_fixup answer alike: a
// query string a substitution left with spaces or control characters
// (403, AH10410/AH10411), a status, a redirect to a URL.
func (c *rewriteCtx) answer(res *Result, action rewrite.Action) bool {
	st := c.st
	abs := rewrite.IsAbsoluteURI(st.Filename) > 0
	willEscape := abs && action != rewrite.ActionNoEscape
	if st.HasArgs && !willEscape && !vcharObsText(st.Args) {
		c.status(res, http.StatusForbidden)
		return true
	}
	switch action {
	case rewrite.ActionStatus, rewrite.ActionStatusSet:
		c.status(res, st.Status)
		return true
	}
	if abs {
		// The client is sent elsewhere: orderly answers the redirect
		// itself, as mod_rewrite would, whatever the backend's rules (a
		// -U condition may have read the access rules).
		res.Rewritten.Action = "redirect"
		res.Location, res.Status = rewrite.RedirectLocation(&c.st, action, c.oargs, c.oargs != "", c.perdir, c.base)
		res.Layer = policy.LayerConfig
		if c.last != nil {
			res.Rule = c.last.Line
			if !c.req.Dry {
				c.last.Line.Decided(c.req.Now)
			}
		}
		return true
	}
	return false
}

// vcharObsText reports whether s is all ap_scan_vchar_obstext: no space
// and no control character.
func vcharObsText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 127 {
			return false
		}
	}
	return true
}

// prefixStat is prefix_stat: whether the first segment of path exists,
// and (unless the rule said UnsafePrefixStat) the rule's substitution
// starts with it or the path is under DocumentRoot.
func (e *Engine) prefixStat(path string, lastsub *rewrite.Rule) bool {
	seg, _, _ := strings.Cut(strings.TrimLeft(path, "/"), "/")
	if seg == ".." {
		return false // APR_FILEPATH_NOTABOVEROOT
	}
	statpath := "/" + seg
	if _, err := e.fs.Stat(statpath); err != nil {
		return false
	}
	if lastsub == nil || lastsub.Flags&rewrite.FlagUnsafePrefixStat != 0 {
		return true
	}
	root := e.cfg.DocumentRoot
	return strings.HasPrefix(lastsub.Subst, statpath) || root != "" && strings.HasPrefix(path, root)
}

// coreTranslate is ap_core_translate of a URL-path: DocumentRoot and the
// path merged (APR_FILEPATH_SECUREROOT: nothing above the root).
func (e *Engine) coreTranslate(uri string) (string, bool) {
	root := e.cfg.DocumentRoot
	p := strings.TrimLeft(uri, "/")
	f := cleanFilename(root + "/" + p)
	if f != root && !strings.HasPrefix(f, strings.TrimSuffix(root, "/")+"/") {
		return "", false
	}
	return f, true
}

// dirRewrite is hook_fixup, for a request the access check granted: what
// the per-directory rules in force do. It returns the URL of an internal
// redirect with rewriteRedirect.
func (e *Engine) dirRewrite(req *Request, m *merged, res *Result, uri string, kind reqKind, tr policy.Tracer) (rewriteOutcome, string) {
	rw := m.rewrite
	if rw == nil || !rw.On() || rw.Dir == "" {
		return rewriteNone, ""
	}
	if rw.Options&translate.RewriteNoSlash == 0 {
		if l := len(rw.Dir) - 1; len(res.Filename) == l && rw.Dir[:l] == res.Filename {
			return rewriteNone, ""
		}
	}
	if kind != kindDirSub && req.rw.end {
		return rewriteNone, ""
	}
	c := newRewriteCtx(e, req, uri, res.Env, tr, kind)
	c.pathInfo, c.user, c.lookups, c.maps = res.PathInfo, res.User, m.lookups, e.serverMaps()
	c.m, c.perdir = m, rw.Dir
	if res.cachedDir != "" && !res.storageFailed {
		c.cache, c.hasCache = walkCache{dir: res.cachedDir, opts: res.dirOpts, sections: res.Sections[:res.dirN]}, true
	}
	if rw.BaseSet {
		c.base = rw.Base
	}
	defer func() { res.Env = c.env; res.AddLogs(c.logs); c.release() }()
	if m.options&(translate.OptSymLinks|translate.OptSymOwner) == 0 {
		// AH00670: Options FollowSymLinks and SymLinksIfOwnerMatch are
		// both off, so the RewriteRule directive is also forbidden.
		res.Status, res.Layer, res.Rule = http.StatusForbidden, policy.LayerConfig, rw.EngineRule
		res.AddLogs([]policy.LogLine{{Module: "rewrite", Subject: "AH00670: Options FollowSymLinks and SymLinksIfOwnerMatch are both off, so the RewriteRule directive is also forbidden"}})
		return rewriteAnswered, ""
	}
	ofilename := res.Filename
	st := c.state(res.Filename, res.PathInfo)
	action, _, err := rewrite.Apply(rw.Rules, rw.Dir, st)
	c.setEnd()
	if c.fail(res, err) {
		return rewriteAnswered, ""
	}
	if action == rewrite.ActionNone {
		return rewriteNone, ""
	}
	res.Rewritten = &Rewritten{From: ofilename, To: st.Filename, Phase: "directory"}
	if c.last != nil {
		res.Rewritten.Rule = c.last.Line
	}
	if c.answer(res, action) {
		return rewriteAnswered, ""
	}
	f := strings.TrimPrefix(st.Filename, "passthrough:")
	if !strings.HasPrefix(f, "/") {
		c.status(res, http.StatusBadRequest)
		return rewriteAnswered, ""
	}
	if f == ofilename {
		res.Rewritten.Action = "same"
		return rewriteNone, ""
	}
	tmp := f
	if rw.BaseSet {
		f = rewrite.SubstPrefixPath(f, rw.Dir, rw.Base)
	} else if root := strings.TrimSuffix(e.cfg.DocumentRoot, "/"); e.cfg.DocumentRoot != "" && strings.HasPrefix(f, root+"/") {
		f = f[len(root):]
	}
	if f == tmp && rw.Options&translate.RewriteIgnoreContextInfo == 0 {
		if res.aliased {
			// ap_context_prefix: mod_alias's context, which orderly does
			// not keep.
			res.Status, res.Layer = http.StatusInternalServerError, policy.LayerConfig
			res.AddLogs([]policy.LogLine{{Module: "orderly", Subject: "mod_rewrite: a relative substitution without RewriteBase under an Alias, whose context prefix orderly does not model"}})
			return rewriteAnswered, ""
		}
		f = rewrite.SubstPrefixPath(f, e.cfg.DocumentRoot, "")
	}
	target := f
	if st.HasArgs {
		target += "?" + st.Args
	}
	res.Rewritten.Action, res.Rewritten.To = "internal redirect", target
	return rewriteRedirect, target
}

// serverMaps are the maps a per-directory rule looks up: the server's.
func (e *Engine) serverMaps() map[string]*rewrite.Map {
	if e.cfg.Rewrite == nil {
		return nil
	}
	return e.cfg.Rewrite.Maps
}

// internalRedirect is ap_internal_redirect: the request again, for the
// new URL, with the environment renamed REDIRECT_*, at most
// LimitInternalRecursion times.
func (e *Engine) internalRedirect(req *Request, target string, prev *Result, tr policy.Tracer) Result {
	if req.rw.redirects+1 > maxInternalRedirects {
		// AH00124: Request exceeded the limit of 10 internal redirects.
		var res Result
		res.Status, res.Layer = http.StatusInternalServerError, policy.LayerConfig
		res.Rewritten = prev.Rewritten
		res.AddLogs([]policy.LogLine{{Module: "core", Subject: "AH00124: Request exceeded the limit of 10 internal redirects due to probable configuration error"}})
		return res
	}
	var env policy.Env
	for i := 0; i < prev.Env.Len(); i++ {
		k, v := prev.Env.At(i)
		env.Set("REDIRECT_"+k, v)
	}
	env.Set("REDIRECT_STATUS", "200")
	saved := req.Target
	req.Target = target
	req.rw.prevUser = prev.User
	req.rw.redirects++
	req.rw.env, req.rw.hasEnv = &env, true
	req.rw.cache = walkCache{dir: prev.cachedDir, opts: prev.dirOpts}
	req.rw.hasCache = prev.cachedDir != "" && !prev.storageFailed
	if req.rw.hasCache {
		req.rw.cache.sections = prev.Sections[:prev.dirN]
	}
	sub := e.decide(req, tr)
	req.Target = saved
	req.subNecessary(&sub.Decision)
	// Apache has logged what the first request logged (a compat denial
	// that Satisfy Any overrode) before the internal redirect.
	if logs := prev.Logs(); len(logs) > 0 {
		sub.SetLogs(append(append([]policy.LogLine(nil), logs...), sub.Logs()...))
	}
	if sub.Rewritten == nil {
		sub.Rewritten = prev.Rewritten
	}
	return sub
}

// translate is translate_name where mod_rewrite runs: the server's rules
// first; mod_alias's redirects unless a rule mapped the URI to a file.
// uri becomes the URI a [PT] rule left. done says r is the answer.
func (e *Engine) translate(req *Request, res *Result, uri *string, kind reqKind, tr policy.Tracer) (r Result, done bool) {
	out, filename, newURI := e.serverRewrite(req, res, *uri, kind, tr)
	switch out {
	case rewriteAnswered:
		return *res, true
	case rewriteFile:
		res.preFilename = filename
		return Result{}, false
	case rewriteURI:
		*uri = newURI
	}
	if rr, ok := e.translateRedirectURI(req, *uri); ok {
		rr.Env, rr.Rewritten = res.Env, res.Rewritten
		return rr, true
	}
	return Result{}, false
}

// subTranslate is translate_name for a subrequest (mod_dir's): the
// server's rewrite rules, then mod_alias's redirects. ok says r answers
// the subrequest; uri becomes the URI a [PT] rule left.
func (e *Engine) subTranslate(req *Request, sub *Result, uri *string, tr policy.Tracer) (r Result, ok bool) {
	if !e.serverRewriteOn() {
		return e.translateRedirectURI(req, *uri)
	}
	return e.translate(req, sub, uri, kindDirSub, tr)
}

// cloneEnv is a copy of an environment (a subrequest's starts as its
// main request's, apr_table_copy).
func cloneEnv(env *policy.Env) policy.Env {
	var c policy.Env
	for i := 0; i < env.Len(); i++ {
		k, v := env.At(i)
		c.Set(k, v)
	}
	return c
}

// redirectWalk is ap_directory_walk's walk cache across an internal
// redirect (prep_walk_cache hands the new request the previous one's):
// where the new file is a regular file, or a directory, in the directory
// the previous walk ended in (cache->cached), Apache takes the previous
// walk's <Directory> sections as they are, without walking again: a
// <Directory> that would match the new file alone does not apply. Both
// walks merge onto the server's defaults (2.4 throws the first location
// walk's merge away before translate_name), so <Location> sections do not
// matter; <Files> and <Location> are walked anew.
func (e *Engine) redirectWalk(wc *walkCache, uri, filename string, res *Result) (*merged, walked, int, bool) {
	fi, err := e.fs.Stat(filename)
	if err != nil {
		return nil, walked{}, 0, false
	}
	var entry string
	switch {
	case fi.Mode().IsRegular():
		entry = filename[:strings.LastIndexByte(filename, '/')+1]
	case fi.IsDir():
		entry = filename
		if !strings.HasSuffix(entry, "/") {
			entry += "/"
		}
	default:
		return nil, walked{}, 0, false
	}
	if entry != wc.dir {
		return nil, walked{}, 0, false
	}
	res.Filename = filename
	res.Sections = append(make([]*translate.Section, 0, 8), wc.sections...)
	res.dirN, res.dirOpts, res.cachedDir = len(wc.sections), wc.opts, wc.dir
	prev := Result{Sections: wc.sections, dirN: len(wc.sections), dirOpts: wc.opts}
	if st := e.indexSymlink(&prev, filename, res); st != 0 {
		return nil, walked{}, st, true
	}
	w := walked{isReg: fi.Mode().IsRegular(), isDir: fi.IsDir()}
	m := e.fileAndLocation(uri, filename, res)
	if res.RegexErr != nil {
		return nil, w, 500, true
	}
	return m, w, 0, true
}

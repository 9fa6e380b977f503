package walk

import (
	"net/http"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// mod_rewrite's look-ahead subrequests: the condition tests -U
// (ap_sub_req_lookup_uri) and -F (ap_sub_req_lookup_file), and the
// variables %{LA-U:name} and %{LA-F:name}, which read a variable of the
// subrequest. A look-ahead subrequest is the request again, as a GET, up
// to its fixups (ap_process_request_internal): translate_name (a URI's
// only), the walk, the access check, mod_rewrite's, mod_alias's and
// mod_dir's fixups. No handler runs, so an internal redirect is not
// followed and no directory listing is refused; a subrequest does not run
// SetEnvIf (post_read_request and header_parser are the main request's);
// its environment starts as a copy of its main request's.
//
// A subrequest may be made from the main request, and from a subrequest
// whose URI is not its main request's (subreq_ok), at most
// LimitInternalRecursion levels deep (AH00125: 500).

// reqKind says whose rules a rewrite context runs.
type reqKind uint8

const (
	kindMain   reqKind = iota // the request, or an internal redirect of it
	kindDirSub                // a subrequest of mod_dir's (an index, a fallback)
	kindLookup                // the request, itself a look-ahead subrequest
)

// lookup is what a look-ahead subrequest knows of the request that made
// it.
type lookup struct {
	parentURI string  // r->main->uri, for subreq_ok
	depth     int     // its nesting: 1 for a subrequest of the main request
	parentM   *merged // r->main->per_dir_config, nil in translate_name
	// parentUser is r->main->user, which a subrequest with the same
	// configuration takes.
	parentUser string
	// file is a file subrequest's filename, "" for a URI's; uri is then
	// its r->uri ("" unless the file sits in the directory of the
	// request's filename).
	file string
	uri  string
}

// kind is the kind of the request rw belongs to.
func (rw *rewriteRun) kind() reqKind {
	if rw.lookup != nil {
		return kindLookup
	}
	return kindMain
}

// depth is the subrequest nesting of the request rw belongs to.
func (rw *rewriteRun) depth() int {
	if rw.lookup == nil {
		return 0
	}
	return rw.lookup.depth
}

// subreqOK is subreq_ok: the rules of the main request may make a
// subrequest, a subrequest's only where its URI is not its main
// request's (a lookup of a request's own URI stops there).
func (c *rewriteCtx) subreqOK() bool {
	switch c.kind {
	case kindDirSub:
		return c.req.rw.uri != c.uri
	case kindLookup:
		// (A context reading a look-ahead's variable has no lookup of its
		// own: a look-ahead inside one, refused at load, makes none.)
		lk := c.req.rw.lookup
		return lk != nil && lk.parentURI != c.uri
	}
	return true
}

// lookupURL is -U: the status of a subrequest for uri; made is false
// where none may be made.
func (c *rewriteCtx) lookupURL(uri string) (status int, made bool) {
	res, made := c.lookupURI(uri)
	return res.status(), made
}

// lookupFile is -F: the status of a file subrequest for path, and the
// file it ends on.
func (c *rewriteCtx) lookupFile(path string) (status int, filename string, made bool) {
	res, made := c.fileLookup(path)
	return res.status(), res.lookupFilename(), made
}

// status is the subrequest's r->status: 200 where nothing refused.
func (r *Result) status() int {
	if r.Status == 0 {
		return http.StatusOK
	}
	return r.Status
}

// lookupFilename is a subrequest's r->filename after its fixups: an
// index or fallback mod_dir served in its place, a rewrite's
// "redirect:" target, else the file its walk found.
func (r *Result) lookupFilename() string {
	if r.served != "" {
		return r.served
	}
	return r.Filename
}

// lookupURI is ap_sub_req_lookup_uri: a path not starting with "/" is
// relative to the directory of the request's URI, escaped again.
func (c *rewriteCtx) lookupURI(uri string) (Result, bool) {
	if !c.subreqOK() {
		return Result{}, false
	}
	if !strings.HasPrefix(uri, "/") {
		uri = osEscapePath(c.uri[:strings.LastIndexByte(c.uri, '/')+1]) + uri
	}
	return c.subrequest(uri, lookup{}), true
}

// fileLookup is ap_sub_req_lookup_file: the path merged onto the
// directory of the request's filename (apr_filepath_merge); where the
// file sits in that directory its URI is the request's directory's, else
// it has none.
func (c *rewriteCtx) fileLookup(path string) (Result, bool) {
	if !c.subreqOK() {
		return Result{}, false
	}
	fdir := c.st.Filename[:strings.LastIndexByte(c.st.Filename, '/')+1]
	lk := lookup{file: mergeFilePath(fdir, path)}
	parsed := path
	rest, sameDir := strings.CutPrefix(lk.file, fdir)
	sameDir = sameDir && fdir != "" && rest != "" && !strings.Contains(rest, "/")
	if sameDir {
		parsed = c.uri[:strings.LastIndexByte(c.uri, '/')+1] + rest
	}
	var res Result
	if !strings.HasPrefix(lk.file, "/") {
		// AH00029: "Request filename path ... is invalid or not absolute".
		res.Status, res.Layer = http.StatusForbidden, policy.LayerConfig
		return res, true
	}
	// ap_process_request_internal normalises and unescapes the parsed
	// path first (a file subrequest's may be relative).
	if !strings.HasPrefix(parsed, "/") {
		parsed = "/" + parsed
	}
	_, uri, st := c.e.target(parsed)
	if st != 0 {
		res.Status, res.Layer = st, policy.LayerRequest
		return res, true
	}
	if sameDir {
		lk.uri = uri // r->uri, after the normalisation
	}
	return c.subrequest(lk.uri, lk), true
}

// subrequest decides the look-ahead subrequest for target (or, for a
// file subrequest, lk.file) as the rules of c make it.
func (c *rewriteCtx) subrequest(target string, lk lookup) Result {
	req := c.req
	d := req.rw.depth()
	if c.kind == kindDirSub {
		d++
	}
	if d >= maxSubrequestDepth {
		var res Result
		res.Status, res.Layer = http.StatusInternalServerError, policy.LayerConfig
		res.AddLogs([]policy.LogLine{ah00125})
		return res
	}
	lk.parentURI, lk.depth, lk.parentM, lk.parentUser = c.uri, d+1, c.config(), c.user
	sub := *req
	sub.Method, sub.Target = http.MethodGet, target
	env := cloneEnv(&c.env)
	sub.rw = rewriteRun{target: req.rw.target, lookup: &lk, env: &env, hasEnv: true}
	// The subrequest starts from its main request's walk cache.
	sub.rw.cache, sub.rw.hasCache = c.cache, c.hasCache
	res := c.e.decide(&sub, nil)
	c.logs = append(c.logs, res.Logs()...) // Apache logs what the subrequest logged
	// What the subrequest found necessary counts with the request's; the
	// host names it looked up are the connection's.
	req.subNeed, req.nSubNeed = sub.subNeed, sub.nSubNeed
	req.secNeed, req.nSecNeed = sub.secNeed, sub.nSecNeed
	req.subNecessary(&res.Decision)
	req.hostDone, req.host, req.hostOK = sub.hostDone, sub.host, sub.hostOK
	req.nameDone, req.name = sub.nameDone, sub.name
	return res
}

// lookahead is %{LA-U:name} and %{LA-F:name}: the variable name as the
// subrequest for what the rule at hand matches sees it ("" where no
// subrequest may be made).
func (c *rewriteCtx) lookahead(file bool, name string) string {
	path := c.st.Subject
	var res Result
	var made bool
	switch {
	case !file && c.perdir != "" && !strings.HasPrefix(path, "/"):
		// la_u: the per-directory match is relative to RewriteBase, else
		// to the directory's path.
		base := c.perdir
		if c.base != "" {
			base = c.base
		}
		res, made = c.lookupURI(base + path)
	case !file || c.perdir != "" && strings.HasPrefix(path, "/"):
		// A file lookup from a directory's rules of a path that is not
		// relative to it is a URI lookup (mod_rewrite cannot tell which
		// file it would be).
		res, made = c.lookupURI(path)
	default:
		if c.perdir != "" {
			path = c.perdir + path
		}
		res, made = c.fileLookup(path)
	}
	if !made {
		return ""
	}
	sc := newRewriteCtx(c.e, c.req, res.URI, res.Env, nil, kindLookup)
	defer sc.release()
	sc.pathInfo, sc.user, sc.lookups = res.PathInfo, res.User, c.lookups
	sc.st.Filename = res.lookupFilename() // no query: what a rule matches has none
	return sc.variable(name)
}

// mergeFilePath is apr_filepath_merge(rootpath, addpath) on Unix: an
// absolute addpath replaces the root; "." segments and empty ones go, ".."
// takes the segment before it off (above the root is the root); a
// trailing slash is kept.
func mergeFilePath(root, add string) string {
	p := add
	if !strings.HasPrefix(add, "/") {
		p = root + add
	}
	abs := strings.HasPrefix(p, "/")
	var out []string
	segs := strings.Split(p, "/")
	for _, s := range segs {
		switch s {
		case "", ".":
		case "..":
			if len(out) > 0 && out[len(out)-1] != ".." {
				out = out[:len(out)-1]
			} else if !abs {
				out = append(out, s)
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if abs {
		r = "/" + r
	}
	if last := segs[len(segs)-1]; (last == "" || last == "." || last == "..") && len(out) > 0 {
		r += "/"
	}
	return r
}

// config is the request's per-directory configuration where the rules
// run: the walk's, per directory; in translate_name, the merge of the
// <Location> sections its URI matched (2.4 and 2.2 walk them before
// translate_name), which a subrequest that finds no <Directory> or
// <Files> section ends on too, and so skips access control.
func (c *rewriteCtx) config() *merged {
	if c.m == nil {
		c.m = c.e.locationMerged(c.uri)
	}
	return c.m
}

// locationMerged is the merged configuration of the <Location> sections
// uri matches alone.
func (e *Engine) locationMerged(uri string) *merged {
	var res Result
	locURI := uri
	if !e.cfg.MergeSlashes {
		locURI = no2slash(uri)
	}
	var secs []*translate.Section
	for _, s := range e.cfg.Locations {
		if locationMatches(s, uri, locURI, &res) {
			secs = append(secs, s)
		}
	}
	return e.merge(secs)
}

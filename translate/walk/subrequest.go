package walk

import (
	"net/http"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// dirSettings are mod_dir's switches in force, unset ones at their
// defaults (DirectorySlash On, DirectoryCheckHandler Off, no index
// redirect).
func dirSettings(d *translate.DirSettings) translate.DirSettings {
	s := translate.DirSettings{Slash: 1, CheckHandler: 0, IndexRedirect: 0}
	if d == nil {
		return s
	}
	if d.Slash >= 0 {
		s.Slash = d.Slash
	}
	if d.CheckHandler >= 0 {
		s.CheckHandler = d.CheckHandler
	}
	if d.IndexRedirect >= 0 {
		s.IndexRedirect, s.IndexRedirectRule = d.IndexRedirect, d.IndexRedirectRule
	}
	return s
}

// fallbackResource is mod_dir's fixup_dflt (2.2.16 and later, 2.4): a
// request that maps to nothing on the file system, and that no SetHandler
// gives a handler, is served by a subrequest for FallbackResource (a GET,
// decided by its own sections), whose refusal or redirect is the answer.
// The subrequest runs mod_dir's fixups too: a directory gets its index
// subrequests, and a fallback that maps to nothing falls back again,
// until the subrequest nesting limit answers 500 (AH00125). Where mod_mime
// gives the request a handler by its extension (AddHandler) Apache does
// not fall back; orderly, which does not know those handlers, still
// decides the subrequest, which can only refuse more.
func (e *Engine) fallbackResource(req *Request, m *merged, res Result, tr policy.Tracer) Result {
	sub, served := e.fallbackSub(req, m, res, req.rw.depth()+1, tr)
	if served {
		res.served = sub.lookupFilename()
	}
	logs := append(res.Logs(), sub.Logs()...)
	if sub.Status != 0 && sub.Status != 404 {
		// The status only: fixup_dflt copies the subrequest's headers
		// for a redirect, not a 401's WWW-Authenticate.
		sub.NoChallenge = sub.Status == 401
		sub.URI, sub.Filename, sub.Env = res.URI, res.Filename, res.Env
		sub.SetLogs(logs)
		return sub
	}
	res.SetLogs(logs)
	return res
}

// maxSubrequestDepth is LimitInternalRecursion's default for subrequests.
const maxSubrequestDepth = 10

// ah00125 is what Apache logs for a subrequest past the nesting limit.
var ah00125 = policy.LogLine{Module: "core", Level: "error", Code: "AH00125", Subject: "Request exceeded the limit of 10 subrequest nesting levels due to probable configuration error. Use 'LimitInternalRecursion' to increase the limit if necessary. Use 'LogLevel debug' to get a backtrace."}

// fallbackSub is the subrequest for the fallback of the request res (at
// nesting depth depth): its decision, and whether it serves a file (the
// request is then served as the subrequest, ap_internal_fast_redirect).
func (e *Engine) fallbackSub(req *Request, m *merged, res Result, depth int, tr policy.Tracer) (Result, bool) {
	var sub Result
	shareWalk(&sub, &res)
	if depth > maxSubrequestDepth {
		sub.Status, sub.Layer = 500, policy.LayerConfig
		sub.AddLogs([]policy.LogLine{ah00125})
		return sub, false
	}
	target := m.fallback
	if !strings.HasPrefix(target, "/") {
		// ap_sub_req_lookup_uri: relative to the directory of r->uri,
		// escaped again.
		target = osEscapePath(res.URI[:strings.LastIndexByte(res.URI, '/')+1]) + target
	}
	_, suburi, st := e.target(target)
	if st != 0 {
		sub.Status, sub.Layer = st, policy.LayerConfig
		return sub, false
	}
	sub.Env = res.Env // mod_rewrite copies it before it sets a variable
	if rr, ok := e.subTranslate(req, &sub, &suburi, tr); ok {
		return rr, false // mod_rewrite's and mod_alias's translate_name, for the subrequest too
	}
	env := sub.Env
	sm, sw, st := e.walk(suburi, &sub)
	sub.URI, sub.Env = suburi, env
	if st != 0 {
		sub.Status, sub.Layer = st, policy.LayerConfig
		return sub, false
	}
	e.subAccess(req, m, sm, &res, &sub, suburi, tr)
	if sub.Status == 0 && sm.rewrite != nil {
		if out, _ := e.dirRewrite(req, sm, &sub, suburi, kindDirSub, tr); out != rewriteNone {
			// orderly does not follow a fallback subrequest that
			// mod_rewrite rewrites: fail closed.
			sub.Status, sub.Layer = http.StatusInternalServerError, policy.LayerConfig
			sub.AddLogs([]policy.LogLine{{Module: "orderly", Subject: "mod_rewrite rewrote the FallbackResource subrequest, which orderly does not follow"}})
			return sub, false
		}
	}
	if sub.Status == 0 && e.fixupRedirect(req, &sub) {
		// mod_alias's fixups, before mod_dir's: fixup_dflt answers the
		// subrequest's redirect, or its error.
		return sub, false
	}
	switch {
	case sub.Status != 0:
		return sub, false
	case sw.isDir && strings.HasSuffix(suburi, "/"):
		sub = e.dirIndex(req, sm, sub, policy.MethodGet, tr)
		return sub, sub.Status == 0 && sub.Index != ""
	case !sw.isDir && !sw.isReg && sm.fallback != "" && sm.handler == "":
		next, served := e.fallbackSub(req, sm, sub, depth+1, tr)
		next.SetLogs(append(sub.Logs(), next.Logs()...))
		return next, served
	}
	return sub, sw.isReg
}

// subAccess is the access check of a subrequest of mod_dir's, which
// looks its index or fallback up with ap_sub_req_lookup_uri: a GET,
// whatever the main request's method; skipped, with the user copied,
// where its merged configuration is its main request's (m), as
// ap_process_request_internal does (r->main->per_dir_config).
func (e *Engine) subAccess(req *Request, m, sm *merged, main, sub *Result, suburi string, tr policy.Tracer) {
	if sm == m {
		sub.Decision = policy.Decision{User: main.User, Layer: main.Layer, Rule: main.Rule}
		return
	}
	pr := policy.Request{
		Method: policy.MethodGet, Addr: req.ClientAddr, LocalAddr: req.LocalAddr,
		Env: sub.Env, URI: suburi, Filename: sub.Filename, Auth: req.Auth, Host: req,
		Now: req.Now, Dry: req.Dry, DeferNecessity: true, Digest: req.digestRequest(suburi), Owners: e.owners,
	}
	pr.SSL = e.sslRequest(req, sm, sub.Filename, true)
	e.decideInto(sub, sm, &pr, tr)
	sm.covered(&pr)
	req.subNecessary(&sub.Decision)
	e.sectionsNecessary(sm, &pr, &sub.Decision, req, nil)
}

// fallbackOf is the FallbackResource a value gives ("disabled", in any
// case, gives none).
func fallbackOf(f *string) string {
	if f == nil || strings.EqualFold(*f, "disabled") {
		return ""
	}
	return *f
}

// dirIndex repeats the check for each DirectoryIndex file as mod_dir's
// subrequests do (mod_dir.c fixup_dir): the first allowed regular file is
// served; a refusal of the only candidate, or any error when no candidate
// exists, is the answer. Apache logs what each subrequest logged.
func (e *Engine) dirIndex(req *Request, m *merged, res Result, methodNum int, tr policy.Tracer) Result {
	names := m.dirIndex
	if names == nil {
		names = defaultIndex
	}
	errStatus := 0
	var errRes Result
	var logs policy.Decision
	logs.SetLogs(res.Logs())
	for _, name := range names {
		var sub Result
		shareWalk(&sub, &res)
		if req.rw.depth() >= maxSubrequestDepth {
			// A look-ahead subrequest at the nesting limit makes no more
			// (AH00125): each index subrequest is a 500.
			sub.Status, sub.Layer = http.StatusInternalServerError, policy.LayerConfig
			logs.AddLogs([]policy.LogLine{ah00125})
			errStatus, errRes = sub.Status, sub
			continue
		}
		suburi := res.URI + name
		if strings.HasPrefix(name, "/") {
			suburi = name
		}
		sub.Env = res.Env // mod_rewrite copies it before it sets a variable
		asked := suburi
		if rr, ok := e.subTranslate(req, &sub, &suburi, tr); ok {
			// mod_rewrite's or mod_alias's translate_name answers the
			// subrequest: fixup_dir answers a redirect at once (a
			// rewrite's, which the backend makes), keeps an error.
			logs.AddLogs(rr.Logs())
			if translate.IsRedirect(rr.Status) || rr.Status == 0 {
				rr.Index, rr.URI, rr.Filename = name, res.URI, res.Filename
				rr.SetLogs(logs.Logs())
				return rr
			}
			errStatus, errRes = rr.Status, rr
			continue
		}
		pre, env := sub.preFilename, sub.Env
		var sm *merged
		var sw walked
		var st int
		ok := false
		if pre == "" && suburi == asked {
			// The index file is the directory's own (no rewrite rule
			// mapped it elsewhere): the main request's walk serves.
			sm, sw, st, ok = e.indexWalk(&res, name, suburi, &sub)
		}
		if !ok {
			logged := append([]policy.LogLine(nil), sub.Logs()...)
			sub = Result{preFilename: pre}
			sub.SetLogs(logged)
			shareWalk(&sub, &res)
			if res.cachedDir != "" && !res.storageFailed {
				// The subrequest starts from the main request's walk
				// cache (prep_walk_cache): a file in the directory that
				// walk ended in takes its <Directory> sections as they are.
				sub.prevWalk = &walkCache{dir: res.cachedDir, opts: res.dirOpts, sections: res.Sections[:res.dirN]}
			}
			sm, sw, st = e.walk(suburi, &sub)
		}
		sub.URI = suburi
		sub.Env = env
		if st != 0 {
			sub.Status, sub.Layer = st, policy.LayerConfig // with what the walk logged
		} else {
			e.subAccess(req, m, sm, &res, &sub, suburi, tr)
		}
		if sub.Status == 0 && st == 0 && sm.rewrite != nil {
			// mod_rewrite's fixup, for the subrequest too.
			switch out, target := e.dirRewrite(req, sm, &sub, suburi, kindDirSub, tr); {
			case out == rewriteAnswered && translate.IsRedirect(sub.Status):
				// A redirect to a URL: fixup_dir sends it.
				logs.AddLogs(sub.Logs())
				sub.Index, sub.URI, sub.Filename = name, res.URI, res.Filename
				sub.SetLogs(logs.Logs())
				return sub
			case out == rewriteRedirect && sw.isReg && req.rw.lookup != nil:
				// The index is served by mod_rewrite's handler, which a
				// lookup does not reach.
				res.Index, res.served = name, "redirect:"+target
				res.SetLogs(logs.Logs())
				return res
			case out == rewriteRedirect && sw.isReg:
				// The index is served (ap_internal_fast_redirect), by
				// mod_rewrite's handler: an internal redirect.
				req.rw.prevM = sm
				return e.internalRedirect(req, target, &sub, tr)
			case out == rewriteRedirect:
				sub.Index = name
				logs.AddLogs(sub.Logs())
				continue // not a file: the next name
			}
		}
		if sub.Status == 0 && e.fixupRedirect(req, &sub) && translate.IsRedirect(sub.Status) {
			// mod_alias's fixups run for the subrequest too, before
			// mod_dir's: fixup_dir answers its redirect at once (an
			// error, such as a redirect to a non-URL, is kept as one).
			logs.AddLogs(sub.Logs())
			sub.Index = name
			sub.URI, sub.Filename = res.URI, res.Filename
			sub.SetLogs(logs.Logs())
			return sub
		}
		served := sw.isReg
		if sub.Status == 0 && !sw.isReg && !sw.isDir && sm.fallback != "" && sm.handler == "" {
			// The index subrequest maps to nothing: its own fixups fall
			// back (fixup_dflt), and a served fallback serves the
			// directory.
			fb, ok := e.fallbackSub(req, sm, sub, req.rw.depth()+2, tr)
			fb.SetLogs(append(sub.Logs(), fb.Logs()...))
			sub, served = fb, ok
		}
		sub.Index = name
		logs.AddLogs(sub.Logs())
		if sub.Status == 0 && served {
			if m.dir.IndexRedirect != 0 {
				// DirectoryIndexRedirect: an external redirect to the
				// index (ap_construct_url of the subrequest's path, no
				// query).
				res.Status, res.Layer, res.Rule = m.dir.IndexRedirect, policy.LayerConfig, m.dir.IndexRedirectRule
				res.Location = e.constructURL(req, suburi, e.dirRedirects(m.sections))
			}
			res.Index, res.served = name, sub.lookupFilename()
			res.SetLogs(logs.Logs())
			return res
		}
		if sub.Status == 401 && len(names) == 1 {
			sub.URI, sub.Filename = res.URI, res.Filename
			sub.SetLogs(logs.Logs())
			return sub
		}
		if sub.Status != 0 && sub.Status != 404 {
			errStatus, errRes = sub.Status, sub
		}
	}
	if errStatus != 0 {
		// fixup_dir returns the last error of several candidates as a
		// status only: the subrequest's headers (WWW-Authenticate) stay
		// behind.
		errRes.NoChallenge = len(names) > 1
		errRes.URI, errRes.Filename = res.URI, res.Filename
		errRes.SetLogs(logs.Logs())
		return errRes
	}
	res.SetLogs(logs.Logs())
	if req.rw.lookup == nil && e.autoindexForbids(m, methodNum) {
		e.autoindexRefuse(&res, m) // the handler's
	}
	return res
}

var defaultIndex = []string{"index.html"}

// indexWalk is the walk of a DirectoryIndex subrequest for a file that
// exists: Apache reuses the directory walk of the main request, whose
// directory is the file's (the walk cache of server/request.c), so only
// <Files> and <Location> are walked again.
func (e *Engine) indexWalk(main *Result, name, uri string, sub *Result) (*merged, walked, int, bool) {
	fname := main.Filename + name
	if strings.Contains(name, "/") || !strings.HasSuffix(main.Filename, "/") {
		return nil, walked{}, 0, false
	}
	fi, err := e.fs.Stat(fname)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, walked{}, 0, false
	}
	sub.Filename = fname
	if st := e.indexSymlink(main, fname, sub); st != 0 {
		return nil, walked{}, st, true
	}
	sub.Sections = append(make([]*translate.Section, 0, 8), main.Sections[:main.dirN]...)
	sub.dirN, sub.dirOpts = main.dirN, main.dirOpts
	return e.fileAndLocation(uri, fname, sub), walked{isReg: true}, 0, true
}

// shareWalk gives a subrequest its main request's .htaccess memo.
func shareWalk(sub, main *Result) {
	if main.ht == nil {
		main.ht = &htMemo{files: map[string]htRead{}}
	}
	sub.ht = main.ht
}

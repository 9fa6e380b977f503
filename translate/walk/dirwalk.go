package walk

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// walk maps uri to a file and finds every section that applies, in
// Apache's order: <Directory> by depth over the real file system,
// <DirectoryMatch>, <Files> (top-level ones, then those nested in the
// sections that applied), <Location>. It returns their merged
// configuration.
func (e *Engine) walk(uri string, res *Result) (*merged, walked, int) {
	cfg := e.cfg
	var w walked
	filename, st := res.preFilename, 0
	if filename == "" {
		filename, res.aliased, st = e.translateName(uri)
	}
	if st != 0 {
		return nil, w, st
	}
	if res.prevWalk != nil {
		if m, w, st, ok := e.redirectWalk(res.prevWalk, uri, filename, res); ok {
			return m, w, st
		}
	}
	if res.Sections == nil {
		res.Sections = make([]*translate.Section, 0, 8)
	}
	fname, pathInfo, isDir, isReg, opts, st := e.dirWalk(filename, res)
	if st != 0 {
		res.storageFailed = true
		return nil, w, st
	}
	res.Filename, res.PathInfo = fname, pathInfo
	w.isDir, w.isReg = isDir, isReg
	for _, s := range cfg.DirMatches {
		if matchRegex(s, fname, res) {
			res.Sections = append(res.Sections, s)
			opts = mergeOptions(opts, s)
		}
	}
	res.dirOpts = opts.Opts
	res.dirN = len(res.Sections)
	res.cachedDir = fname
	if !isDir {
		res.cachedDir = fname[:strings.LastIndexByte(fname, '/')+1] // ap_make_dirstr_parent
	}
	m := e.fileAndLocation(uri, fname, res)
	if res.RegexErr != nil {
		return nil, w, 500
	}
	return m, w, 0
}

// fileAndLocation adds the <Files> sections (top-level ones, then those
// nested in the sections that applied) and the <Location> sections, and
// returns the merged configuration.
func (e *Engine) fileAndLocation(uri, fname string, res *Result) *merged {
	cfg := e.cfg
	base := fname
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	matchFile := func(s *translate.Section) {
		var ok bool
		switch {
		case s.Regex != nil:
			ok = matchRegex(s, base, res)
		case s.Fnmatch:
			ok = fnmatch(s.Path, base)
		default:
			ok = s.Path == base
		}
		if ok {
			res.Sections = append(res.Sections, s)
		}
	}
	for _, s := range cfg.Files {
		matchFile(s)
	}
	for _, d := range res.Sections {
		if d.Kind == translate.KindFiles || d.Kind == translate.KindFilesMatch {
			break
		}
		for _, s := range d.Conf.Files {
			matchFile(s)
		}
	}
	locURI := uri
	if !cfg.MergeSlashes {
		locURI = no2slash(uri)
	}
	for _, s := range cfg.Locations {
		if locationMatches(s, uri, locURI, res) {
			res.Sections = append(res.Sections, s)
		}
	}
	return e.merge(res.Sections)
}

// translateName is mod_alias's translate_name, then core's: the first
// matching Alias wins; otherwise DocumentRoot plus the URI.
func (e *Engine) translateName(uri string) (filename string, aliased bool, status int) {
	for _, a := range e.cfg.Aliases {
		if a.Regex != nil {
			mm, err := a.Regex.FindStringSubmatchIndex(uri)
			if err != nil {
				return "", false, 500 // a regex that did not finish (regex.MatchError)
			}
			if mm != nil {
				return cleanFilename(expand(a.Real, uri, mm)), true, 0
			}
			continue
		}
		if n := translate.AliasMatches(uri, a.Fake); n > 0 {
			if e.blind[a.Real] {
				// orderly cannot see this tree: Apache might apply
				// <Directory> sections it cannot find. Fail closed.
				return "", false, 403
			}
			return cleanFilename(a.Real + uri[n:]), true, 0
		}
	}
	p := strings.TrimLeft(uri, "/")
	root := e.cfg.DocumentRoot
	if p == "" {
		return cleanFilename(root + "/"), false, 0
	}
	return cleanFilename(root + "/" + p), false, 0
}

func expand(tmpl, src string, m []int) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if (c == '$' && i+1 < len(tmpl) && tmpl[i+1] >= '0' && tmpl[i+1] <= '9') || c == '&' {
			n := 0
			if c == '$' {
				n = int(tmpl[i+1] - '0')
				i++
			}
			if 2*n+1 < len(m) && m[2*n] >= 0 {
				b.WriteString(src[m[2*n]:m[2*n+1]])
			}
			continue
		}
		if c == '\\' && i+1 < len(tmpl) {
			i++
			c = tmpl[i]
		}
		b.WriteByte(c)
	}
	return b.String()
}

// cleanFilename canonicalises a file name as apr_filepath_merge does on
// Unix: "//" and "." segments go, ".." removes the previous segment, a
// trailing "/" stays.
func cleanFilename(p string) string {
	trailing := strings.HasSuffix(p, "/")
	c := path.Clean(p)
	if trailing && c != "/" {
		c += "/"
	}
	return c
}

// dirWalk is ap_directory_walk over the real file system. It merges the
// <Directory> sections of each directory from "/" down, stops at the
// first component that is a regular file or does not exist, and returns
// r->filename, path_info and the type of what was found.
func (e *Engine) dirWalk(filename string, res *Result) (fname, pathInfo string, isDir, isReg bool, opts translate.CoreOptions, status int) {
	dirs := e.cfg.Dirs
	idx := 0
	allow := translate.HtaccessAllow{Override: e.cfg.DefaultOverride, Opts: translate.OptOverrideDefault}
	// The options merged so far (core_opts_merge): each component is
	// tested with those of the directory that holds it (options.go).
	opts = e.serverOptions()
	apply := func(prefix string, depth int) int {
		for ; idx < len(dirs); idx++ {
			s := dirs[idx]
			if s.Depth > depth {
				break
			}
			if s.Depth != 0 && (s.Depth < depth || !(s.Fnmatch && fnmatch(s.Path, prefix) || !s.Fnmatch && s.Path == prefix)) {
				continue
			}
			res.Sections = append(res.Sections, s)
			opts = mergeOptions(opts, s)
			if s.Conf.Override != nil {
				allow.Override, allow.NonFatal, allow.Opts = *s.Conf.Override, s.Conf.NonFatal, s.Conf.OverrideOpts
			}
			if s.Conf.OverrideList != nil {
				allow.List = s.Conf.OverrideList
			}
		}
		// The directory's .htaccess, after its <Directory> sections.
		if !allow.Reads() {
			return 0
		}
		sec, st, broken := e.htaccessMemo(res, prefix, allow)
		if st != 0 {
			// r->filename is the directory being walked, with its slash
			// (what %{LA-U:REQUEST_FILENAME} reads of a subrequest the
			// file refused).
			res.Filename = prefix
		}
		if broken != nil {
			// Apache's line ([core:alert] FILE: MESSAGE, no code), and
			// the rule that names the directive behind the 500.
			res.Rule = broken.rule
			if broken.alert != "" {
				res.AddLogs([]policy.LogLine{{Module: "core", Level: "alert", Subject: broken.alert}})
			}
		}
		if sec != nil {
			res.Sections = append(res.Sections, sec)
			opts = mergeOptions(opts, sec)
		}
		return st
	}
	// The whole path exists: where FollowSymLinks (without
	// SymLinksIfOwnerMatch) is in force, Apache skips the component's
	// lstat and treats it as a directory.
	whole, err := e.stat(filename, "")
	wholeOK := err == nil && (whole.dir || !strings.HasSuffix(filename, "/"))

	// Walk the components by index: "next" is the path up to and including
	// the current component, "rest" what follows it (path_info if the
	// walk stops here).
	depth := 1
	if st := apply("/", 0); st != 0 {
		return "/", filename, false, false, opts, st
	}
	for start := 1; start < len(filename); {
		segEnd := len(filename)
		if j := strings.IndexByte(filename[start:], '/'); j >= 0 {
			segEnd = start + j
		}
		next, rest := filename[:segEnd], filename[segEnd:]
		dirPrefix := func() string {
			if segEnd < len(filename) {
				return filename[:segEnd+1]
			}
			return next + "/"
		}
		start = segEnd + 1
		if wholeOK && opts.Opts&(translate.OptSymOwner|translate.OptSymLinks) == translate.OptSymLinks {
			depth++
			if st := apply(dirPrefix(), depth); st != 0 {
				return next, rest, false, false, opts, st
			}
			continue
		}
		fi, err := e.fs.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return next, rest, false, false, opts, 0
			}
			// EACCES (AH00035), ENOTDIR and the rest (AH00036): 403.
			return next, rest, false, false, opts, 403
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			var ok bool
			if fi, ok = e.symlinkOK(next, fi, opts.Opts); !ok {
				symlinkRefused(res, "AH00037", next)
				res.Rule = e.optionsRule(res.Sections, translate.OptSymLinks|translate.OptSymOwner)
				return next, rest, false, false, opts, 403
			}
		}
		switch {
		case fi.Mode().IsRegular():
			return next, rest, false, true, opts, 0
		case fi.IsDir():
			depth++
			if st := apply(dirPrefix(), depth); st != 0 {
				return next, rest, false, false, opts, st
			}
		default:
			return next, rest, false, false, opts, 403
		}
	}
	// Every component was consumed.
	if wholeOK {
		return filename, "", whole.dir, whole.regular, opts, 0
	}
	return filename, "", true, false, opts, 0
}

// fnmatch is apr_fnmatch with APR_FNM_PATHNAME: "*", "?" and "[...]" never
// match "/".
func fnmatch(pattern, name string) bool {
	return regex.Fnmatch(pattern, name, regex.FnmPathname)
}

// regexFailed records a section's regex that did not finish: the walk
// answers 500, with the section's rule and a line that says why.
func regexFailed(s *translate.Section, err error, res *Result) {
	if res.RegexErr != nil {
		return
	}
	res.RegexErr = err
	res.Rule = s.Default
	res.AddLogs([]policy.LogLine{{Module: "orderly", Subject: s.String() + " at " + s.Pos.String() + ": " + err.Error()}})
}

// matchRegex matches a regex section; its named groups set MATCH_<NAME>
// variables, as the walks of server/request.c do (ap_regname with
// AP_REG_MATCH, upper case).
func matchRegex(s *translate.Section, subject string, res *Result) bool {
	names := s.Regex.SubexpNames()
	named := false
	for _, n := range names {
		if n != "" {
			named = true
			break
		}
	}
	if !named {
		ok, err := s.Regex.MatchString(subject)
		if err != nil {
			regexFailed(s, err, res)
		}
		return ok
	}
	m, err := s.Regex.FindStringSubmatchIndex(subject)
	if err != nil {
		regexFailed(s, err, res)
	}
	if m == nil {
		return false
	}
	for i, n := range names {
		if n != "" && m[2*i] >= 0 {
			res.matchEnv = append(res.matchEnv, "MATCH_"+strings.ToUpper(n), subject[m[2*i]:m[2*i+1]])
		}
	}
	return true
}

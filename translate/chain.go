package translate

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/regex"
	"github.com/orderly-proxy/orderly/translate/rewrite"
)

// WalkEnd is the index in chain (sections in merge order) of the first
// one a walk after phase merges.
func WalkEnd(chain []*Section, phase int) int {
	n := 0
	for n < len(chain) && WalkPhase(chain[n]) <= phase {
		n++
	}
	return n
}

// WalkPhase tells which walk of ap_process_request_internal merges a
// section: each walk merges its own sections together, then merges the
// result over what the walks before it left (merging is not associative
// under AuthMerging). 0 is the directory walk
// (<Directory>, .htaccess files, <DirectoryMatch>), 1 the file walk, 2 the
// location walk.
func WalkPhase(s *Section) int {
	switch s.Kind {
	case KindFiles, KindFilesMatch:
		return 1
	case KindLocation, KindLocationMatch:
		return 2
	}
	return 0
}

// ancestors lists the sections that merge before s for every request s
// applies to, or says why they differ from request to request.
func ancestors(cfg *Config, s *Section) ([]*Section, string) {
	// Only the Layers the section does not set itself are inherited.
	own := s.Conf
	needCompat := own.Compat == nil
	needSat22 := cfg.Semantics == Legacy22 && own.Satisfy22Set != policy.AllMethods
	needAuthz := own.Requires22 == nil && (own.Authz == nil || own.Authz.Root == nil || own.Authz.Merge == MergeAnd || own.Authz.Merge == MergeOr)
	return ancestorsWith(cfg, s, func(c *DirConf) bool {
		// 2.4: an AuthType with no Require in force answers 500 (AH01627).
		// 2.2: the group files, LDAP configuration and authoritative
		// flags in force say what the Require lines mean.
		return needCompat && c.Compat != nil || needSat22 && SatisfiesAny22(c) || needAuthz && (c.Authz != nil || c.Requires22 != nil || cfg.Semantics == Compat24 && c.AuthType != nil) ||
			cfg.Semantics == Legacy22 && c.SetsChain22()
	})
}

// ancestorsWith is ancestors, hasAccess saying which sections' Layers
// count: those that must merge the same way for every request.
func ancestorsWith(cfg *Config, s *Section, hasAccess func(*DirConf) bool) ([]*Section, string) {
	switch s.Kind {
	case KindDirectory:
		if s.Fnmatch {
			if chain, ok := wildcardChain(cfg, s, hasAccess); ok {
				// Above its literal part, the same .htaccess files for
				// every directory it matches; below, some.
				return withHtaccess(cfg, chain, literalDir(s.Path), true, strings.Count(s.Path, "/"), false, hasAccess)
			}
			return nil, "a wildcard <Directory> inherits from whichever directories it matches"
		}
		return withHtaccess(cfg, dirChain(cfg, s.Path, s), s.Path, false, noneBelow, false, hasAccess)
	case KindLocation:
		if s.Fnmatch {
			return nil, "a wildcard <Location> inherits from whichever directories its URLs map to"
		}
		file, others, why := locationFile(cfg, s.Path)
		if why != "" {
			return nil, why
		}
		// The <Files> sections with access rules merge before it for some
		// files: locationCombos.
		chain := dirChain(cfg, file, nil)
		if ownLevelVaries(chain, file, hasAccess) {
			return nil, "a <Directory> section with access rules matches this <Location>'s own path, which is not a directory: Apache's walk merges it for the file itself (with FollowSymLinks) but not for URLs with path info below it"
		}
		// The <Directory> sections of the other trees its URLs map to
		// (Alias targets below it, home directories) must be its own.
		for _, d := range cfg.Dirs {
			if slices.Contains(chain, d) || !hasAccess(d.Conf) && !nestedFilesAccess(d, hasAccess) {
				continue
			}
			for _, r := range others {
				if d.Fnmatch || r == "" || strings.HasPrefix(r, d.Path) || strings.HasPrefix(d.Path, r) {
					return nil, "an Alias, UserDir or RewriteRule maps some of this <Location>'s URLs to directories whose <Directory> sections with access rules differ"
				}
			}
		}
		for _, o := range cfg.DirMatches {
			if hasAccess(o.Conf) {
				return nil, "<DirectoryMatch> sections with access rules merge before this <Location>"
			}
			if nestedFilesAccess(o, hasAccess) {
				return nil, "<Files> sections with access rules inside a <DirectoryMatch> merge before this <Location> for some files"
			}
		}
		for _, o := range cfg.Locations {
			if o == s {
				break
			}
			if !hasAccess(o.Conf) {
				continue
			}
			switch {
			case o.Regex != nil || o.Fnmatch:
				return nil, "an earlier <Location> with access rules covers only part of this one's URLs"
			case LocationsDisjoint(cfg, o.Path, s.Path):
				continue // no URL matches both
			case !locationCovers(cfg, o.Path, s.Path):
				return nil, "an earlier <Location> with access rules covers only part of this one's URLs"
			}
			chain = append(chain, o)
		}
		for _, d := range cfg.Dirs {
			if (hasAccess(d.Conf) || nestedFilesAccess(d, hasAccess)) && strings.HasPrefix(d.Path, file) && d.Path != file {
				return nil, "<Directory> sections with access rules below this <Location> change what it inherits"
			}
		}
		return withHtaccess(cfg, chain, file, true, allBelow, true, hasAccess)
	}
	if IsFiles(s) {
		if d := parentDir(cfg, s); d != nil {
			return nestedFilesChain(cfg, s, d, hasAccess)
		}
	}
	// Files, FilesMatch, DirectoryMatch, LocationMatch: fine when nothing
	// else with access rules could merge before them.
	// The <Files> sections nested in directory sections merge in the file
	// walk, after the server's: before a <LocationMatch> only.
	nested := func(d *Section) bool { return s.Kind == KindLocationMatch && nestedFilesAccess(d, hasAccess) }
	var chain []*Section
	rootDir := strings.TrimSuffix(cfg.DocumentRoot, "/") + "/"
	for _, d := range cfg.Dirs {
		if !hasAccess(d.Conf) && !nested(d) {
			continue
		}
		if d.Depth == 0 || d.Path == rootDir || prefixOfSlashed(cfg.DocumentRoot, d.Path) {
			chain = append(chain, d)
			continue
		}
		return nil, "<Directory> sections with access rules below the document root merge before this section, which applies under all of them"
	}
	// The files of the other trees requests reach (Alias targets, home
	// directories) must have the same <Directory> sections above them.
	for _, r := range servedTrees(cfg) {
		for _, d := range chain {
			if d.Depth != 0 && (r == "" || !strings.HasPrefix(r, d.Path)) {
				return nil, "an Alias, UserDir or RewriteRule leads requests to files outside the document root, which " + d.String() + " does not cover"
			}
		}
	}
others:
	for _, list := range [...][]*Section{cfg.DirMatches, cfg.Files} {
		for _, o := range list {
			if o == s {
				break others
			}
			if IsFiles(o) && (IsFiles(s) || s.Kind == KindLocationMatch) {
				continue // a <Files> section before: filesCombos, locationCombos
			}
			if hasAccess(o.Conf) || !IsFiles(o) && nested(o) {
				return nil, "another <DirectoryMatch>/<Files> section with access rules may merge before this one"
			}
		}
	}
	if s.Kind == KindLocationMatch {
		for _, o := range cfg.Locations {
			if o == s {
				break
			}
			if hasAccess(o.Conf) {
				return nil, "an earlier <Location> with access rules merges before this one for some of its URLs"
			}
		}
	}
	// The <Files> sections nested in <Directory> sections merge after the
	// server's.
	return withHtaccess(cfg, chain, rootDir, true, allBelow, s.Kind == KindLocationMatch, hasAccess)
}

// prefixOfSlashed reports whether p is a prefix of r + "/", without
// making r + "/".
func prefixOfSlashed(r, p string) bool {
	return strings.HasPrefix(r, p) || len(p) == len(r)+1 && p[len(r)] == '/' && strings.HasPrefix(p, r)
}

// nestedFilesAccess reports whether a <Files> section nested in d has
// access rules (as hasAccess counts them).
func nestedFilesAccess(d *Section, hasAccess func(*DirConf) bool) bool {
	return slices.ContainsFunc(d.Conf.Files, func(f *Section) bool { return hasAccess(f.Conf) })
}

// literalDir is the directory above the first wildcard of a <Directory>
// pattern ("/home/" of "/home/*/public_html").
func literalDir(p string) string {
	if i := strings.IndexAny(p, "*?["); i >= 0 {
		return p[:strings.LastIndexByte(p[:i], '/')+1]
	}
	return p
}

// LocationsDisjoint reports whether no URL matches both of two plain
// <Location> paths: one must begin with the other; and in 2.4 the shorter
// one matches only where a "/" or the end follows it in the URL (unless
// it ends in "/" itself).
func LocationsDisjoint(cfg *Config, a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if !strings.HasPrefix(b, a) {
		return true
	}
	return cfg.Semantics != Legacy22 && len(b) > len(a) && !strings.HasSuffix(a, "/") && b[len(a)] != '/'
}

// locationFile returns the directory (with a trailing "/") the URL path
// of a plain <Location> maps to, as mod_alias's translate_name and the
// document root map it: through the first Alias that matches it, or the
// document root. others are the other directory trees URLs below it may
// map to: the targets of the aliases below it, the UserDir directories
// where it covers "/~" ("" for any directory: an AliasMatch). why says
// why the mapping cannot be known (an AliasMatch before the alias that
// maps it, or over its URLs).
func locationFile(cfg *Config, loc string) (file string, others []string, why string) {
	file = dirPath(cfg.DocumentRoot, loc)
	mapped := false
	for _, a := range cfg.Aliases {
		switch {
		case a.Regex != nil:
			if p, ok := anchoredPrefix(a.Regex.String()); ok && !strings.HasPrefix(p, loc) && !strings.HasPrefix(loc, p) {
				continue // it matches only URLs that begin otherwise
			}
			others = append(others, aliasTree(a)) // it may match some of its URLs
		case !mapped && AliasMatches(loc, a.Fake) > 0:
			if len(others) > 0 {
				return "", nil, "an AliasMatch before the Alias of this <Location> may map some of its URLs elsewhere"
			}
			file, mapped = filepath.Join(a.Real, loc[AliasMatches(loc, a.Fake):])+"/", true
		case strings.HasPrefix(a.Fake, strings.TrimSuffix(loc, "/")):
			// An alias for URLs below it (or at it, as "/api" for
			// <Location /api/>): those map to its target.
			others = append(others, filepath.Clean(a.Real)+"/")
		}
	}
	// A server's RewriteRule may map some of its URLs to files elsewhere.
	others = append(others, RewriteTrees(cfg)...)
	userDirs := len(cfg.UserDirs) > 0 || cfg.UserDirHomes
	if !mapped && userDirs && strings.HasPrefix(loc, "/~") {
		return "", nil, "a UserDir maps this <Location>'s URLs to home directories"
	}
	if !mapped && userDirs && strings.HasPrefix("/~", strings.TrimSuffix(loc, "/")) {
		for _, u := range cfg.UserDirs {
			others = append(others, literalDir(filepath.Clean(u)+"/"))
		}
		if cfg.UserDirHomes {
			others = append(others, "")
		}
	}
	return file, others, ""
}

// dirPath is filepath.Join(root, p) + "/", for a URL path p: made in
// one piece where the path is clean, as it mostly is (a <Location> of
// every virtual host is mapped this way for each question about it).
func dirPath(root, p string) string {
	if root == "" || !strings.HasPrefix(p, "/") {
		return filepath.Join(root, p) + "/"
	}
	// root + "/" + p, as Join has it, cleans to what root + p does.
	j := root + p + "/"
	if cleanAbs(j[:len(j)-1]) {
		return j
	}
	if c := filepath.Clean(j); c != j[:len(j)-1] {
		return c + "/"
	}
	return j
}

// cleanAbs reports whether s is an absolute path that filepath.Clean
// (and path.Clean) returns as it is: no empty, "." or ".." element, and
// no "/" at its end unless it is "/". It reads s once, without Clean's
// copy; false where the separator is not "/".
func cleanAbs(s string) bool {
	if filepath.Separator != '/' || s == "" || s[0] != '/' || s[len(s)-1] == '/' && s != "/" {
		return false
	}
	if s == "/" {
		return true
	}
	for e := s[1:]; ; {
		// e is what follows a "/", not empty: the element it starts
		// with must be neither empty, ".", nor "..".
		if e[0] == '/' || e[0] == '.' && (len(e) == 1 || e[1] == '/' || e[1] == '.' && (len(e) == 2 || e[2] == '/')) {
			return false
		}
		i := strings.IndexByte(e, '/')
		if i < 0 {
			return true
		}
		e = e[i+1:]
	}
}

// aliasTree returns the directory every file an Alias maps to is in: its
// target, or for an AliasMatch the directory of the target's text before
// its first reference ("/var/www/manual$1": "/var/www/"); "" where that
// is any directory.
func aliasTree(a Alias) string {
	if a.Regex == nil {
		return filepath.Clean(a.Real) + "/"
	}
	lit := a.Real
	if i := strings.IndexAny(lit, "$&\\"); i >= 0 {
		lit = lit[:i]
	}
	if !strings.HasPrefix(lit, "/") {
		return ""
	}
	if !strings.HasSuffix(lit, "/") {
		lit = filepath.Dir(lit)
	}
	return filepath.Clean(lit) + "/"
}

// servedTrees returns the directories outside the document root whose
// files requests may reach (Alias targets, UserDir directories); "" in
// it stands for any directory (home directories the configuration does
// not name, an AliasMatch with a reference at the start).
func servedTrees(cfg *Config) []string {
	var out []string
	for _, a := range cfg.Aliases {
		out = append(out, aliasTree(a))
	}
	for _, u := range cfg.UserDirs {
		out = append(out, literalDir(filepath.Clean(u)+"/"))
	}
	if cfg.UserDirHomes {
		out = append(out, "")
	}
	return append(out, RewriteTrees(cfg)...)
}

// RewriteTrees returns the directories the server's RewriteRule lines may
// map a URL to, as a file path, before the directory walk (hook_uri2file:
// a substitution whose first path segment exists on the file system is a
// file path, prefix_stat): each the directory of the substitution's text
// before its first reference, "" where that is any directory. A rule with
// [PT], or whose substitution is a URL path, maps through the document
// root and the aliases as any URL does.
func RewriteTrees(cfg *Config) []string {
	rw := cfg.Rewrite
	if rw == nil || rw.Engine < 0 {
		return nil
	}
	var out []string
	for _, r := range rw.Rules {
		sub := r.Subst
		if sub == "-" || r.Flags&rewrite.FlagPassThrough != 0 || !strings.HasPrefix(sub, "/") {
			continue // none, a URL path, or a redirect or proxy
		}
		lit := sub
		if i := strings.IndexAny(lit, "$%\\"); i >= 0 {
			lit = lit[:i]
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(lit, "/"), "/")
		if lit == "/" || first == "" {
			out = append(out, "") // a reference right after "/": any path
			continue
		}
		if _, err := os.Stat("/" + first); err != nil {
			continue // a URL path (prefix_stat finds no such file)
		}
		if !strings.HasSuffix(lit, "/") {
			lit = filepath.Dir(lit)
		}
		out = append(out, filepath.Clean(lit)+"/")
	}
	return out
}

// anchoredPrefix returns the literal text every match of the regular
// expression expr starts with, where expr is anchored at the start ("^")
// and has no alternation at its top level: "^/manual(?:/.*)?$" gives
// "/manual". ok is false where there is no such text.
func anchoredPrefix(expr string) (string, bool) {
	rest, ok := strings.CutPrefix(expr, "^")
	if !ok || strings.Contains(rest, "|") && (strings.Contains(rest, "[") || topLevelAlternation(rest)) {
		return "", false
	}
	i := 0
	for i < len(rest) && !strings.ContainsRune(`\.[](){}*+?|^$`, rune(rest[i])) {
		i++
	}
	p := rest[:i]
	if i < len(rest) && strings.ContainsRune("*?{", rune(rest[i])) && p != "" {
		p = p[:len(p)-1] // the last byte is optional, or repeated
	}
	return p, p != ""
}

// topLevelAlternation reports whether expr has a "|" outside every group
// and class.
func topLevelAlternation(expr string) bool {
	depth, class := 0, false
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			return true
		}
	}
	return false
}

// AliasMatches is mod_alias's alias_matches: a run of slashes in the
// alias matches any run in the URL path, and the match ends on a segment
// boundary. It returns the number of bytes of uri matched, or 0. The
// request walk (package walk) and translate's mapping of a <Location>
// both use it.
func AliasMatches(uri, alias string) int {
	a, u := 0, 0
	for a < len(alias) {
		if alias[a] == '/' {
			if u >= len(uri) || uri[u] != '/' {
				return 0
			}
			for a < len(alias) && alias[a] == '/' {
				a++
			}
			for u < len(uri) && uri[u] == '/' {
				u++
			}
			continue
		}
		if u >= len(uri) || uri[u] != alias[a] {
			return 0
		}
		a++
		u++
	}
	if a > 0 && alias[a-1] != '/' && u < len(uri) && uri[u] != '/' {
		return 0
	}
	return u
}

// locationCovers reports whether the plain <Location> a matches every URL
// the plain <Location> b matches: b's own path does (location_walk: a
// prefix of the URL, ending at a "/" or at the URL's end, under 2.4; any
// prefix under 2.2), and then every URL below it does too. "/api/" does
// not cover "/api".
func locationCovers(cfg *Config, a, b string) bool {
	if !strings.HasPrefix(b, a) {
		return false
	}
	return cfg.Semantics == Legacy22 || len(b) == len(a) || strings.HasSuffix(a, "/") || b[len(a)] == '/'
}

// wildcardChain returns what a wildcard <Directory> inherits when that is
// the same for every directory it matches: the sections of the directories
// above the literal part of its pattern (<Directory "/home/*/public_html">
// sits below "/home/" whatever "*" is). ok is false when a section with
// access rules could merge before it for some directories and not others
// (<Directory /home/alice>, another wildcard at its depth or above).
func wildcardChain(cfg *Config, s *Section, hasAccess func(*DirConf) bool) ([]*Section, bool) {
	lit := literalDir(s.Path)
	pattern := strings.Split(strings.Trim(s.Path, "/"), "/")
	var chain []*Section
	for _, d := range cfg.Dirs {
		if d == s {
			continue
		}
		if d.Depth == 0 || !d.Fnmatch && strings.HasPrefix(lit, d.Path) {
			chain = append(chain, d)
			continue
		}
		if !hasAccess(d.Conf) {
			continue
		}
		comps := strings.Split(strings.Trim(d.Path, "/"), "/")
		if len(comps) > len(pattern) {
			continue // deeper: merged after this one
		}
		if d.Fnmatch {
			return nil, false // two patterns: whether they overlap is not worked out
		}
		maybe := true
		for i, c := range comps {
			if ok, _ := path.Match(pattern[i], c); !ok {
				maybe = false
				break
			}
		}
		if maybe {
			return nil, false
		}
	}
	return chain, true
}

// dirChain lists the plain <Directory> sections that apply to a directory
// path, shallowest first (excluding self).
func dirChain(cfg *Config, path string, self *Section) []*Section {
	// Gathered on the stack, and copied once to a list of their number.
	var buf [8]*Section
	out := buf[:0]
	for _, d := range cfg.Dirs {
		if d == self || self != nil && d.Depth > self.Depth {
			continue
		}
		switch {
		case d.Depth == 0, !d.Fnmatch && strings.HasPrefix(path, d.Path):
			out = append(out, d)
		case d.Fnmatch:
			// A wildcard <Directory> applies where it matches the path's
			// directory of its own depth (cfg.Dirs is in the walk's order).
			if pre, ok := dirAtDepth(path, d.Depth); ok && regex.Fnmatch(d.Path, pre, regex.FnmPathname) {
				out = append(out, d)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(make([]*Section, 0, len(out)), out...)
}

// ownLevelVaries reports whether chain, the <Directory> sections of dir
// (ending in "/"), has one with access rules that matches dir itself, and
// dir is not a directory. Apache's walk (ap_directory_walk; walk.dirWalk)
// merges the sections of a path's last component as those of a directory
// only where it skips the lstat (FollowSymLinks, the whole path there):
// for a file, its own URL but not the URLs with path info below it; for
// a path that does not exist, none. Only an existing directory gives its
// sections to every URL below it.
func ownLevelVaries(chain []*Section, dir string, hasAccess func(*DirConf) bool) bool {
	for _, d := range chain {
		if d.Depth == 0 || !hasAccess(d.Conf) && !nestedFilesAccess(d, hasAccess) {
			continue
		}
		if at, ok := dirAtDepth(dir, d.Depth); !ok || at != dir {
			continue // a directory above it
		}
		fi, err := os.Stat(strings.TrimSuffix(dir, "/"))
		return err != nil || !fi.IsDir()
	}
	return false
}

// dirAtDepth is the directory of path (ending in "/") with depth slashes.
func dirAtDepth(path string, depth int) (string, bool) {
	for n, i := 0, 0; ; {
		j := strings.IndexByte(path[i:], '/')
		if j < 0 {
			return "", false
		}
		i += j + 1
		if n++; n == depth {
			return path[:i], true
		}
	}
}

// IsFiles reports whether s is a <Files> or <FilesMatch> section.
func IsFiles(s *Section) bool { return s.Kind == KindFiles || s.Kind == KindFilesMatch }

// parentDir is the <Directory> or <DirectoryMatch> section s is nested
// in, if any.
func parentDir(cfg *Config, s *Section) *Section {
	for _, list := range [...][]*Section{cfg.Dirs, cfg.DirMatches} {
		for _, d := range list {
			if slices.Contains(d.Conf.Files, s) {
				return d
			}
		}
	}
	return nil
}

// nestedFilesChain is what a <Files> section nested in the <Directory>
// section d inherits: the directories down to d's, d itself and the
// .htaccess files above and in d's directory, when no section with access
// rules (needs) merges before it for some of its files only.
func nestedFilesChain(cfg *Config, s, d *Section, needs func(*DirConf) bool) ([]*Section, string) {
	if d.Fnmatch || d.Regex != nil {
		return nil, "a <Files> section in a wildcard or regex <Directory> inherits from whichever directories it matches"
	}
	for _, o := range cfg.Dirs {
		if o != d && o.Path != d.Path && needs(o.Conf) && (o.Fnmatch || strings.HasPrefix(o.Path, d.Path)) {
			return nil, "<Directory> sections with access rules below this section's <Directory> merge before it for some files"
		}
	}
	for _, o := range cfg.DirMatches {
		if needs(o.Conf) {
			return nil, "<DirectoryMatch> sections with access rules merge before this section for some files"
		}
	}
	// Every <Directory> section of d's directory merges before it, those
	// written after d too, in the walk's order (d among them).
	chain := dirChain(cfg, d.Path, nil)
	return withHtaccess(cfg, chain, d.Path, true, allBelow, false, needs)
}

package convert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/orderly-proxy/orderly/internal/dirscan"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// maxHtaccessDirs bounds the directories searched for .htaccess files, as
// lint's Options.MaxDirs does by default.
const maxHtaccessDirs = 100000

// authConfigOverrides returns the edits that let AuthConfig into the
// .htaccess files translate rewrites (hts): the AllowOverride (Limit
// without AuthConfig) that governs one (the last <Directory> above it
// that sets AllowOverride, in any server) gets AuthConfig where no other
// file it governs (of paths, those found) has lines AuthConfig would let
// in, refused (or skipped, with Nonfatal) until now; where one has, a
// <Directory> for the rewritten file's own directory follows the
// governing section, with its AllowOverride and AuthConfig, unless such a
// file is in that directory or below. Then the rewritten file cannot be
// read as translated: it is returned, by path, with why. written are the
// files found (paths, in that order), as written (htSearch.written).
func authConfigOverrides(cfg *translate.Config, hts []htFile, paths []string, written map[string]htWritten) (map[string][]edit, map[string]string) {
	governs := map[string][]*translate.Section{} // by file: each server's governing section
	governing := func(p string) []*translate.Section {
		if out, ok := governs[p]; ok {
			return out
		}
		var out []*translate.Section
		for _, c := range cfg.Servers() {
			var gov *translate.Section
			for _, s := range translate.FileChain(c, filepath.Dir(p)+"/") {
				if s.Conf.Override != nil {
					gov = s
				}
			}
			if gov != nil && !slices.Contains(out, gov) {
				out = append(out, gov)
			}
		}
		governs[p] = out
		return out
	}
	limitOnly := func(s *translate.Section) bool {
		return *s.Conf.Override&translate.OrLimit != 0 && *s.Conf.Override&translate.OrAuthCfg == 0
	}
	// The files that need AuthConfig, by the sections governing them.
	others := map[*translate.Section][]string{}
	for _, p := range paths {
		f, read := written[p]
		for _, g := range governing(p) {
			if read && limitOnly(g) && needsAuthConfig(f, *g.Conf.Override) {
				others[g] = append(others[g], p)
			}
		}
	}
	edits := map[string][]edit{}
	done := map[*apacheconf.Directive]bool{}
	blocked := map[string]string{}
	for _, h := range hts {
		p := h.path
		if h.sec != nil {
			p = h.sec.Path
		}
		dir := filepath.Dir(p) + "/"
		for _, g := range governing(p) {
			if !limitOnly(g) || g.Directive() == nil {
				continue
			}
			var line *apacheconf.Directive // g's AllowOverride
			for _, x := range g.Directive().Block {
				if x.Is("AllowOverride") {
					line = x
				}
			}
			if line == nil {
				continue
			}
			indent := indentAt(line.Pos.Col)
			comment := indent + "# orderly DIR-10: .htaccess access rules are Require rules in 2.4, which need AuthConfig"
			// The file's own lines are the ones translate rewrote.
			rest := slices.DeleteFunc(slices.Clone(others[g]), func(o string) bool { return o == p })
			if len(rest) == 0 {
				if !done[line] {
					done[line] = true
					edits[line.Pos.File] = append(edits[line.Pos.File], edit{from: line.Pos.Line, to: line.Pos.Line, text: []string{comment, indent + "AllowOverride " + line.Raw + " AuthConfig"}})
				}
				continue
			}
			// A section of its own, after the governing one.
			at := indentAt(g.Directive().Pos.Col)
			end := max(g.Directive().EndLine, g.Directive().Pos.Line)
			// Two insertions at one place, so that what is written where
			// mod_access_compat stays loaded goes inside.
			section := func(reset bool, lines ...string) []edit {
				text := []string{at + "<Directory " + quoteArg(strings.TrimSuffix(dir, "/")) + ">"}
				for _, l := range lines {
					text = append(text, at+"    "+l)
				}
				open := edit{from: end + 1, to: end, text: text}
				if reset {
					open.withCompat = compatReset(at + "    ")
				}
				return []edit{open, {from: end + 1, to: end, text: []string{at + "</Directory>"}}}
			}
			if i := slices.IndexFunc(rest, func(o string) bool { return strings.HasPrefix(o, dir) }); i >= 0 || g.Path == dir {
				why := fmt.Sprintf("its Require lines need AllowOverride AuthConfig (%s:%d), which would let Apache read lines it refuses now in %s", line.Pos.File, line.Pos.Line, rest[max(i, 0)])
				if h.sec != nil {
					blocked[p] = why
					continue
				}
				// A closed file: its Require all denied would be refused,
				// or skipped (Nonfatal=Override); the configuration
				// refuses its directory instead.
				edits[g.Pos.File] = append(edits[g.Pos.File], section(true,
					"# orderly DIR-10: NEEDS REVIEW, refused until "+p+" is translated by hand: "+why, "Require all denied")...)
				continue
			}
			edits[g.Pos.File] = append(edits[g.Pos.File], section(false,
				"# orderly DIR-10: .htaccess access rules are Require rules in 2.4, which need AuthConfig; not in "+strings.TrimSuffix(g.Path, "/")+" as a whole, where other .htaccess files hold lines it would let Apache read",
				"AllowOverride "+line.Raw+" AuthConfig")...)
		}
	}
	return edits, blocked
}

// needsAuthConfig reports whether the .htaccess file f has a line that
// AllowOverride AuthConfig allows and override does not.
func needsAuthConfig(f htWritten, override uint16) bool {
	if !f.ok {
		return true // not read as written: assume the worst
	}
	needs := false
	apacheconf.Walk(f.ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
		name := d.Name
		if d.IsSection() {
			name = "<" + name
		}
		for _, info := range directive.Lookup(name, directive.V24) {
			if uint16(info.Where)&translate.OrAuthCfg != 0 && uint16(info.Where)&override == 0 {
				needs = true
			}
		}
		return nil
	})
	return needs
}

// htFile is an .htaccess file to translate, with the configuration (the
// main server's or a virtual host's) whose sections it merges below.
type htFile struct {
	sec *translate.Section
	cfg *translate.Config
	// block are the file's directives as read, its conditionals
	// evaluated; ifVersions its <IfVersion> sections with access rules,
	// translated under 2.2 (ifVersionEdits).
	block, ifVersions []*apacheconf.Directive
	// closed: an .htaccess file translate cannot read as Apache does,
	// refused until translated by hand (closeHtaccess); sec is nil.
	path   string
	closed []edit
}

// An htSearch is the search for a configuration's .htaccess files, under
// way (startHtaccess) while the rest is translated, until the files found
// are read (findHtaccess).
type htSearch struct {
	cfg    *translate.Config
	roots  []htRoot
	search []dirscan.Root
	found  chan dirscan.Result
	// truncated: the search stopped at maxHtaccessDirs; written, each
	// file found and read, as written (findHtaccess).
	truncated bool
	written   map[string]htWritten
}

// htWritten is an .htaccess file as written, parsed (ok) or not.
type htWritten struct {
	ds []*apacheconf.Directive
	ok bool
}

// An htRoot is a directory searched for .htaccess files, and the
// configuration it is served by.
type htRoot struct {
	dir string
	cfg *translate.Config
}

// prefetchHtaccess starts listing, through cache, the document roots the
// directives ds name, for the names of their AccessFileName (the main
// server's last, or .htaccess): the directories startHtaccess will search
// once the model is built, listed meanwhile. It is a guess made before
// the model says what is served (a document root in a branch the model
// drops is listed for nothing; one it adds is listed then); the search
// itself is startHtaccess's. The function returned waits for the end of
// the listing.
func prefetchHtaccess(ds []*apacheconf.Directive, serverRoot string, cache *dirscan.Cache) (wait func()) {
	names := []string{".htaccess"}
	var roots []dirscan.Root
	root := func(p string) string {
		if p == "" || filepath.IsAbs(p) || serverRoot == "" {
			return filepath.Clean(p)
		}
		return filepath.Join(serverRoot, p)
	}
	var add func(ds []*apacheconf.Directive, top bool)
	add = func(ds []*apacheconf.Directive, top bool) {
		for _, d := range ds {
			switch d.LowerName() {
			case "serverroot":
				if top && len(d.Args) == 1 {
					serverRoot = d.Args[0]
				}
			case "accessfilename":
				if top && len(d.Args) > 0 {
					names = d.Args
				}
			case "documentroot":
				if len(d.Args) == 1 {
					roots = append(roots, dirscan.Root{Dir: root(d.Args[0])})
				}
			case "virtualhost":
				add(d.Block, false)
			}
		}
	}
	add(ds, true)
	for i := range roots {
		roots[i].Names = names
	}
	done := make(chan struct{})
	go func() {
		cache.Find(roots, maxHtaccessDirs)
		close(done)
	}()
	return func() { <-done }
}

// startHtaccess starts the search for the .htaccess files under the
// document roots, Alias targets and UserDir directories of cfg, through
// cache (nil: none).
func startHtaccess(cfg *translate.Config, cache *dirscan.Cache) *htSearch {
	type root = htRoot
	roots := []root{{cfg.DocumentRoot, cfg}}
	// A regex alias's target only where it has no back-reference (walk's
	// Roots).
	addAliases := func(c *translate.Config) {
		for _, a := range c.Aliases {
			if a.Regex == nil || !strings.Contains(a.Real, "$") {
				roots = append(roots, root{a.Real, c})
			}
		}
	}
	// UserDir: "/home/*/public_html" is each user's directory; a path with
	// no "*" holds one directory per user.
	addUserDirs := func(c *translate.Config) {
		for _, u := range c.UserDirs {
			if !strings.Contains(u, "*") {
				roots = append(roots, root{u, c})
				continue
			}
			dirs, _ := filepath.Glob(u)
			for _, d := range dirs {
				roots = append(roots, root{d, c})
			}
		}
	}
	addAliases(cfg)
	addUserDirs(cfg)
	for _, v := range cfg.VHosts {
		roots = append(roots, root{v.Config.DocumentRoot, v.Config})
		addAliases(v.Config)
		addUserDirs(v.Config)
	}
	hs := &htSearch{cfg: cfg, roots: roots, found: make(chan dirscan.Result, 1)}
	for _, r := range roots {
		if r.dir != "" {
			hs.search = append(hs.search, dirscan.Root{Dir: r.dir, Names: cfg.AccessFileNames})
		}
	}
	go func() { hs.found <- cache.Find(hs.search, maxHtaccessDirs) }()
	return hs
}

// findHtaccess parses the .htaccess files under the document roots and
// Alias targets that hold access rules, each with its chain: the
// <Directory> sections and .htaccess files above it, in Apache's merge
// order. Files whose translation would not mean what they meant are left
// as they are and reported: one that is refused (Apache answers 500 for
// its directory) or has lines AllowOverride Nonfatal skips, since the
// AuthConfig that Require needs could change that; one with access rules
// in a nested section; one below a wildcard or regex <Directory>
// section; one that servers with different sections reach. It reads
// the files the search found, each with the configurations that reach it.
func findHtaccess(hs *htSearch) ([]htFile, []translate.Difference, []string) {
	cfg, roots, search, res := hs.cfg, hs.roots, hs.search, <-hs.found
	hs.truncated = res.Truncated
	var reviews []translate.Difference
	if res.Truncated {
		reviews = append(reviews, translate.Difference{Pos: apacheconf.Pos{File: search[0].Dir},
			Text: fmt.Sprintf("the search for .htaccess files stopped after %d directories; those further down were not translated", maxHtaccessDirs)})
	}
	found := map[string][]*translate.Config{}
	i := 0
	for _, r := range roots {
		if r.dir == "" {
			continue
		}
		for _, p := range res.Files[i] {
			if !slices.Contains(found[p], r.cfg) {
				found[p] = append(found[p], r.cfg)
			}
		}
		i++
	}
	paths := make([]string, 0, len(found))
	for p := range found {
		paths = append(paths, p)
	}
	// Parents before children.
	sort.Slice(paths, func(i, j int) bool {
		di, dj := strings.Count(paths[i], "/"), strings.Count(paths[j], "/")
		return di < dj || di == dj && paths[i] < paths[j]
	})
	var out []htFile
	seen := map[string]*translate.Section{}
	left := map[string]bool{} // the files left as they are, their rules unknown
	hs.written = make(map[string]htWritten, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		ds, err := apacheconf.Parse(p, data)
		hs.written[p] = htWritten{ds, err == nil}
		raw := ds
		if err == nil {
			// An <IfVersion> may hold on 2.2 and not on the 2.4 the file is
			// translated for: left unevaluated, so that the access rules in
			// one are reviewed (nestedAccess). Under 2.4-compat the legacy
			// rules ran on 2.4 too: the branches 2.4 reads are translated
			// in place, the others left as they are (2.4 never reads them).
			c := c0(found[p])
			opt := apacheconf.Options{Modules: map[string]bool{"version_module": false}}
			for m, ok := range c.Modules {
				opt.Modules[m] = ok && m != "version_module"
			}
			if c.Semantics == translate.Compat24 {
				opt = apacheconf.Options{Modules: c.Modules, Version: c.Version}
			}
			ds, err = apacheconf.Conditionals(ds, opt)
		}
		if err != nil || !anyAccess(ds) {
			continue
		}
		// Under 2.2 the <IfVersion> branches 2.2 read are translated, and
		// the translation is written outside them (ifVersionEdits).
		var ifv []*apacheconf.Directive
		if c := c0(found[p]); c.Semantics == translate.Legacy22 && nestedAccess(ds) {
			if blocks := accessIfVersions(raw); len(blocks) > 0 {
				if ds22, err := apacheconf.Conditionals(raw, apacheconf.Options{Modules: c.Modules, Version: c.Version}); err == nil && !nestedAccess(ds22) {
					ds, ifv = ds22, blocks
				}
			}
		}
		pos := apacheconf.Pos{File: p, Line: 1}
		review := func(why string) {
			reviews = append(reviews, translate.Difference{Pos: pos, Text: why + "; left as it is"})
		}
		// unknown: left as it is, its rules in force on 2.4 unread.
		markUnknown := func() {
			left[p] = true
			for _, c := range found[p] {
				c.AddUnknownHtaccess(filepath.Dir(p) + "/")
			}
		}
		unknown := func(why string) {
			review(why)
			markUnknown()
			// Its Require lines would replace the Require its parents'
			// Allow lines became: refused until translated by hand.
			if ancestorCompat(found[p][0], filepath.Dir(p)+"/", seen) {
				if es := closeHtaccess(raw, data, why, found[p][0].Semantics); es != nil {
					out = append(out, htFile{path: p, closed: es})
					reviews[len(reviews)-1].Text = why + "; refused (Require all denied) until translated by hand"
					reviews[len(reviews)-1].Closed = true
					reviews[len(reviews)-1].Moot = true // no legacy line is left in force
				}
			}
		}
		dir := filepath.Dir(p) + "/"
		c := found[p][0]
		chain := translate.FileChain(c, dir)
		differ := false
		for _, o := range found[p][1:] {
			differ = differ || !slices.Equal(translate.FileChain(o, dir), chain)
		}
		override, nonfatal := c.DefaultOverride, uint16(0)
		var list []string // AllowOverrideList
		for _, s := range chain {
			if s.Conf.Override != nil {
				override, nonfatal = *s.Conf.Override, s.Conf.NonFatal
			}
			if s.Conf.OverrideList != nil {
				list = s.Conf.OverrideList
			}
		}
		wild := translate.WildApplies(c, dir)
		switch {
		case differ:
			unknown("servers with different <Directory> sections reach this .htaccess file")
			continue
		case override == 0 && nonfatal == 0 && len(list) == 0:
			continue // never read (a Nonfatal= bit or a list alone has it read)
		case wild:
			unknown("a regex <Directory> section may apply to this .htaccess file's directory")
			continue
		case compatConditional(raw) != nil:
			unknown("it tests whether mod_access_compat is loaded (<IfModule mod_access_compat.c>, <IfDirective Order>): without the module the other branch is read")
			continue
		case nestedAccess(ds):
			unknown("access rules in a section other than <Files>, <FilesMatch> or <Limit> inside an .htaccess file are not translated")
			continue
		}
		sec, err := c.ParseHtaccess(p, data, override, 0, c.BaseDir)
		if err != nil && len(list) > 0 && !ownRefusal(err) {
			if _, lerr := c.ParseHtaccessWith(p, data, translate.HtaccessAllow{Override: override, List: list}, c.BaseDir); lerr == nil {
				unknown("AllowOverrideList lets Apache read its access lines, and would have to list the Require lines of their translation too")
				continue
			}
		}
		if err != nil {
			if ownRefusal(err) {
				// orderly's limit, not Apache's: the file works on 2.4
				// and still needs mod_access_compat.
				unknown(fmt.Sprintf("%v: orderly cannot read this file as Apache does", err))
				continue
			}
			why := fmt.Sprintf("%v: under the AllowOverride in force Apache refuses this file (or skips the line), and the AuthConfig 2.4's Require needs could change that", err)
			if nonfatal == 0 {
				// Refused whole (no Nonfatal to skip the line): 500 under
				// 2.2 and 2.4 alike while it reads as written, and
				// without mod_access_compat too, its Order/Allow/Deny/
				// Satisfy lines then unknown directives; unless an
				// AllowOverrideList applies, with which Apache 2.4 reads
				// such a file and serves its directory (random
				// translate, seed 50, configuration 268): the module
				// stays loaded for it.
				review(why)
				reviews[len(reviews)-1].Moot = len(list) == 0 || !hasCompatLine(raw)
				continue
			}
			// Partly read (Nonfatal skips the lines refused): its other
			// lines are in force, as in a file translate cannot read.
			unknown(why)
			continue
		}
		// Apache's merge order: each directory's <Directory> sections,
		// then its .htaccess file, from "/" down. One above it left as it
		// is has rules in force this file would inherit, unread: a
		// translation that replaced them (its Require lines) could grant
		// what they refuse (random translate, seed 1795799516392870549,
		// configuration 287).
		htChain := append([]*translate.Section(nil), chain...)
		above := ""
		for up := filepath.Dir(filepath.Dir(p)); ; up = filepath.Dir(up) {
			for _, name := range cfg.AccessFileNames {
				if h := seen[filepath.Join(up, name)]; h != nil {
					htChain = append(htChain, h)
				}
				if left[filepath.Join(up, name)] && above == "" {
					above = filepath.Join(up, name)
				}
			}
			if up == "/" || up == "." {
				break
			}
		}
		if above != "" {
			unknown(above + " is left as it is, and this file inherits its rules")
			continue
		}
		translate.AddHtaccess(sec, htChain, found[p])
		seen[p] = sec
		// The file's <Files> sections merge after everything above, the
		// file itself included, and after the <Files> sections before
		// them that match the same names (filesCombos).
		files := 0
		for _, f := range sec.Conf.Files {
			if f.Conf.HasAccessRules() {
				files++
			}
		}
		if sec.Conf.HasAccessRules() || files > 0 {
			out = append(out, htFile{sec: sec, cfg: c, block: ds, ifVersions: ifv})
		}
	}
	return out, reviews, paths
}

func c0(cs []*translate.Config) *translate.Config { return cs[0] }

// ownRefusal reports whether a load error holds a refusal of orderly's
// own (apacheconf.Error.Own), where Apache would have read the file.
func ownRefusal(err error) bool {
	var el apacheconf.ErrorList
	if !errors.As(err, &el) {
		return true
	}
	for _, e := range el {
		if e.Own {
			return true
		}
	}
	return false
}

// anyAccess reports whether any access directive appears, at any depth.
func anyAccess(ds []*apacheconf.Directive) bool {
	for _, d := range ds {
		if translate.MentionsAccess(d) {
			return true
		}
	}
	return false
}

// hasCompatLine reports whether any of mod_access_compat's directives
// (Order, Allow, Deny, Satisfy) appears, at any depth.
func hasCompatLine(ds []*apacheconf.Directive) bool {
	for _, d := range ds {
		if d.Block != nil && hasCompatLine(d.Block) {
			return true
		}
		switch d.LowerName() {
		case "order", "allow", "deny", "satisfy":
			return true
		}
	}
	return false
}

// nestedAccess reports access directives inside a section other than
// <Limit>/<LimitExcept>, and <Files>/<FilesMatch> holding only those.
func nestedAccess(ds []*apacheconf.Directive) bool {
	for _, d := range ds {
		n := d.LowerName()
		switch {
		case d.Block == nil || n == "limit" || n == "limitexcept" || n == "requireall" || n == "requireany" || n == "requirenone":
			// Access containers: the section's own, translated with it.
		case n == "files" || n == "filesmatch":
			if nestedAccess(d.Block) {
				return true
			}
		case translate.MentionsAccess(d):
			return true
		}
	}
	return false
}

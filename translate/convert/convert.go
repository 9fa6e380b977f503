package convert

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/orderly-proxy/orderly/internal/dirscan"
	"github.com/orderly-proxy/orderly/internal/par"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// Conversion is a 2.4 configuration written from a 2.2 one: each file's
// new text, and what could not be translated mechanically.
type Conversion struct {
	// Files are the translated configuration: every file the reader read
	// (changed or not, empty ones included), every .htaccess file found,
	// by path as loaded.
	Files map[string][]byte
	// Data are the files the configuration names that translate copies
	// as they are (AuthUserFile, AuthGroupFile, the DBM files), by path.
	Data map[string][]byte
	// CompatKept lists the files left with Order/Allow/Deny (an .htaccess
	// file or a <Proxy> section left as it is), for which the output keeps
	// mod_access_compat loaded; empty when it is dropped.
	CompatKept []string
	Reviews    []translate.Difference // refused (Require all denied) or left as they are: translate by hand
	Changes    int                    // sections whose access rules were translated
	Renamed    int                    // directives renamed or removed (DIR-01..09, BEH-09, BLD-02)

	// Sections are what was written for each section translated, or
	// refused for review, in place (sections.go).
	Sections []SectionText

	// Model is the access model the translation was written from, read
	// for writing out (Options.RenderOnly): what orderly serve would
	// refuse in it is [Config.ServeRefusals].
	Model *translate.Config
	// Htaccess are the access files (AccessFileName) found below the
	// directories the configuration serves (document roots, Alias
	// targets, UserDir directories), translated or not; HtaccessAll
	// says the search saw every directory (it stops after 100,000).
	Htaccess    []string
	HtaccessAll bool
	// Scopes are the model's sections, of the configuration and of the
	// .htaccess files it reads, by where each opens (lint's access
	// findings).
	Scopes map[translate.ScopeKey]translate.Scope
}

// Options tune Convert.
type Options struct {
	translate.LoadOptions
	KeepCompat bool // keep mod_access_compat loaded
	// SectionsOnly leaves out the configuration files' texts and the data
	// files (Conversion.Files has the .htaccess files only, Data is
	// empty): what lint needs, the sections' texts, sooner.
	SectionsOnly bool
	// DirCache, when set, is shared with other searches of the same tree
	// for .htaccess files running at the same time (orderly lint's own):
	// each directory is listed once for all of them.
	DirCache *dirscan.Cache
}

// converts reports whether the access translation writes s: a section
// with access rules, or, under 2.2 semantics, one that sets what 2.2's
// authorization modules read (translate.DirConf.SetsChain22): the Require
// lines in force there mean what they do not mean above it, and 2.4
// would inherit the Require written above (convertBlock writes it after
// the section's settings where a Require line is in force).
func converts(cfg *translate.Config, s *translate.Section) bool {
	return s.Conf.HasAccessRules() || cfg.Semantics == translate.Legacy22 && s.Conf.SetsChain22()
}

// accessName reports whether n (in lower case) is a directive the access
// translation replaces. A switch, not a map: it is asked of every line
// of every section.
func accessName(n string) bool {
	switch n {
	case "order", "allow", "deny", "satisfy", "require",
		"requireall", "requireany", "requirenone", "authmerging",
		"authzuserauthoritative", "authzgroupfileauthoritative":
		return true
	}
	return false
}

// Convert translates the legacy files to Apache 2.4 (catalogue DIR-10 and
// AUTH-*): in every section with access directives, Order/Allow/Deny/
// Satisfy and Require become one Require tree that decides as the legacy
// rules did under the chosen semantics, with the layer the section
// inherits (from the <Directory> sections above it, or from earlier
// <Location> sections that cover it) folded in, since 2.4's Require
// replaces what it inherits. A section whose inheritance depends on the
// request (a <Files> or regex section below scopes with their own rules)
// is left as it was, commented, and reported. Everything else in the
// files is kept as written.
func Convert(files []string, opt Options) (*Conversion, error) {
	lo := opt.LoadOptions
	lo.RenderOnly = true // written out, never decided on
	read := map[string]bool{}
	lo.OnRead = func(name string) { read[name] = true }
	cfg, plain, srcs, err := translate.LoadSource(files, lo)
	if err != nil && (cfg == nil || !opt.Partial) {
		return nil, err
	}
	partial := err // Partial: the model of what could be read, with its errors
	// The search for .htaccess files is system calls: the configuration
	// is read meanwhile.
	search := startHtaccess(cfg, opt.DirCache)
	conv := &Conversion{Files: map[string][]byte{}, Model: cfg}
	byFile := map[string][]edit{}
	// Every section once, with the configuration it is seen in: a virtual
	// host's own sections in the host's (merged) view.
	type scoped struct {
		s   *translate.Section
		cfg *translate.Config
	}
	var all []scoped
	seen := map[*translate.Section]bool{}
	add := func(c *translate.Config) {
		var list []*translate.Section
		list = append(list, c.Dirs...)
		list = append(list, c.DirMatches...)
		list = append(list, c.Files...)
		for _, s := range c.Dirs {
			list = append(list, s.Conf.Files...)
		}
		for _, s := range c.DirMatches {
			list = append(list, s.Conf.Files...)
		}
		list = append(list, c.Locations...)
		for _, s := range list {
			if !seen[s] {
				seen[s] = true
				all = append(all, scoped{s, c})
			}
		}
	}
	add(cfg)
	for _, v := range cfg.VHosts {
		add(v.Config)
	}
	// The .htaccess files merge before <Location> and <Files> sections and
	// before the <Directory> sections below them: found first.
	hts, htReviews, htPaths := findHtaccess(search)
	conv.Htaccess, conv.HtaccessAll = htPaths, !search.truncated
	conv.Scopes = make(map[translate.ScopeKey]translate.Scope, len(all)+len(hts))
	for _, sc := range all {
		conv.Scopes[sc.s.Key()] = translate.Scope{Section: sc.s, Config: sc.cfg}
	}
	for _, h := range hts {
		if h.sec == nil {
			continue
		}
		for _, s := range append([]*translate.Section{h.sec}, h.sec.Conf.Files...) {
			conv.Scopes[s.Key()] = translate.Scope{Section: s, Config: h.cfg}
		}
	}
	// Sections translate independently of each other: on every core,
	// gathered in order.
	type converted struct {
		es     []edit
		review string
	}
	results := make([]converted, len(all))
	par.Do(len(all), func(i int) {
		switch s := all[i].s; {
		case s.Directive() == nil:
		case converts(all[i].cfg, s):
			results[i].es, results[i].review = convertSection(all[i].cfg, s)
		case s.Conf.AuthType != nil:
			results[i].es, results[i].review = authTypeOnly(all[i].cfg, s)
		}
	})
	// A section of the main server applies in every virtual host too,
	// where what it inherits may differ (the host's DocumentRoot, aliases
	// and sections of its own): written once, its text must be the one
	// each host's view gives, or it is left for review.
	hosts := hostViews(cfg)
	par.Do(len(all), func(i int) {
		sc, r := all[i], &results[i]
		if sc.cfg != cfg || r.es == nil || r.review != "" || inheritsNothing(cfg, sc.s) {
			return
		}
		for _, h := range hosts {
			if !h.affects(cfg, sc.s) {
				continue
			}
			var es []edit
			var review string
			if converts(h.cfg, sc.s) {
				es, review = convertSection(h.cfg, sc.s)
			} else {
				es, review = authTypeOnly(h.cfg, sc.s)
			}
			if review != "" || !sameEdits(es, r.es) {
				why := "a virtual host (" + h.name + ") inherits otherwise above this section of the main server"
				if review != "" {
					why = "in the virtual host " + h.name + ": " + review
				}
				if converts(cfg, sc.s) {
					r.es, r.review = convertSectionAs(cfg, sc.s, why)
				} else {
					r.es, r.review = authTypeOnlyAs(cfg, sc.s, why)
				}
				return
			}
		}
	})
	// 2.2's mod_auth_basic has no merger, 2.4's has (authbasic.go): its
	// lines are written before the section's other edits, which may
	// begin on the line after them.
	secs := make([]*translate.Section, 0, len(all)+len(hts))
	for _, sc := range all {
		secs = append(secs, sc.s)
	}
	for _, h := range hts {
		if h.sec != nil {
			secs = append(append(secs, h.sec), h.sec.Conf.Files...)
		}
	}
	basic := basic22Of(secs)
	basicEs := make([][]edit, len(all))
	for i, sc := range all {
		if sc.s.Directive() == nil {
			continue
		}
		var review string
		basicEs[i], review = basic.edits(sc.cfg, sc.s, sc.s.Directive().Block)
		if review != "" {
			conv.Reviews = append(conv.Reviews, translate.Difference{Pos: sc.s.Pos, Text: review})
		}
	}
	edits := map[string]int{} // each file's, to make its list once
	sections := 0
	for i, sc := range all {
		edits[sc.s.Pos.File] += len(basicEs[i]) + len(results[i].es)
		if results[i].es != nil || sc.s.Conf.HasAccessRules() {
			sections++
		}
	}
	for f, n := range edits {
		byFile[f] = make([]edit, 0, n+1) // and the main file's defaultsEdit
	}
	conv.Sections = make([]SectionText, 0, sections)
	for i, sc := range all {
		s := sc.s
		byFile[s.Pos.File] = append(byFile[s.Pos.File], basicEs[i]...)
		if !s.Conf.HasAccessRules() && results[i].es == nil || s.Directive() == nil {
			continue
		}
		if review := results[i].review; review != "" {
			conv.Reviews = append(conv.Reviews, translate.Difference{Pos: s.Pos, Text: review})
		}
		byFile[s.Pos.File] = append(byFile[s.Pos.File], results[i].es...)
		conv.Sections = append(conv.Sections, sectionText(s, results[i].es, results[i].review))
		conv.Changes++
	}
	// Neither needs the .htaccess files: worked out while they are sought.
	loaded, raw := loadedFiles(files, opt.LoadOptions, plain)
	loaded = withRead(loaded, read)
	pe, pr, ps := convertProxies(cfg, raw)
	conv.Sections = append(conv.Sections, ps...)
	// .htaccess files: each is a section merged after its directory's
	// <Directory> sections, below those of the directories above it.
	conv.Reviews = append(conv.Reviews, htReviews...)
	conv.Changes += len(htReviews)
	// A Require in an .htaccess file needs AuthConfig where only Limit
	// allowed Order/Allow/Deny: the AllowOverride that governs each file
	// translate rewrites gets it, unless another file it governs has
	// lines AuthConfig would let in (refused or skipped until now); those
	// it rewrites are then left as they are, mod_access_compat kept.
	authCfg, blocked := authConfigOverrides(cfg, hts, htPaths, search.written)
	// The files' texts are made once it is known whether the output keeps
	// mod_access_compat loaded (compatReset).
	type htEdits struct {
		path string
		es   []edit
	}
	var htTexts []htEdits
	for _, h := range hts {
		if h.sec != nil && blocked[h.sec.Path] != "" {
			conv.Reviews = append(conv.Reviews, translate.Difference{Pos: apacheconf.Pos{File: h.sec.Path, Line: 1}, Text: blocked[h.sec.Path] + "; left as it is"})
			conv.CompatKept = append(conv.CompatKept, h.sec.Path)
			continue
		}
		if h.sec == nil {
			htTexts = append(htTexts, htEdits{h.path, h.closed})
			continue
		}
		var es []edit
		for _, s := range append([]*translate.Section{h.sec}, h.sec.Conf.Files...) {
			block := h.block
			if s != h.sec && s.Directive() != nil {
				block = s.Directive().Block
			}
			// mod_auth_basic's lines stay where they are, first
			// (authbasic.go), even in an <IfVersion> section.
			be, review := basic.edits(h.cfg, s, block)
			if review != "" {
				conv.Reviews = append(conv.Reviews, translate.Difference{Pos: s.Pos, Text: review})
			}
			if !converts(h.cfg, s) {
				es = append(es, be...)
				continue
			}
			var e []edit
			if s == h.sec {
				e, review = convertBlock(h.cfg, s, h.block, "")
			} else {
				e, review = convertSection(h.cfg, s)
			}
			if review != "" {
				conv.Reviews = append(conv.Reviews, translate.Difference{Pos: s.Pos, Text: review})
			}
			if s == h.sec && len(h.ifVersions) > 0 {
				e = ifVersionEdits(e, h.ifVersions)
			}
			conv.Sections = append(conv.Sections, sectionText(s, e, review))
			es = append(append(es, be...), e...)
		}
		htTexts = append(htTexts, htEdits{h.sec.Path, es})
		conv.Changes++
	}
	for f, es := range authCfg {
		byFile[f] = append(byFile[f], es...)
	}
	top := srcs[0] // as read by load
	if cfg.Semantics == translate.Legacy22 && len(cfg.Modules) > 0 && containsFold(top, "loadmodule") {
		byFile[files[0]] = append(byFile[files[0]], defaultsEdit(top, len(hts) > 0))
	}
	for f, es := range pe {
		byFile[f] = append(byFile[f], es...)
		conv.Changes += len(es)
	}
	conv.Reviews = append(conv.Reviews, pr...)
	conv.Changes += len(pr)
	// What is left as it is still needs mod_access_compat: the output
	// keeps it loaded rather than answer 500 for it.
	for _, r := range append(append([]translate.Difference(nil), htReviews...), pr...) {
		if !r.Moot && !slices.Contains(conv.CompatKept, r.Pos.File) {
			conv.CompatKept = append(conv.CompatKept, r.Pos.File)
		}
	}
	sources := make([][]byte, len(loaded))
	for i, f := range loaded {
		src := top
		if f != files[0] || src == nil {
			if src, err = os.ReadFile(f); err != nil {
				return nil, err
			}
		}
		sources[i] = src
		// A section that tests for mod_access_compat, found in the text as
		// written: the plain reading (raw) evaluated it without the modules
		// a fragment is read with, and dropped it where its test failed
		// there; and what translate writes inside it is read only while
		// the module is loaded.
		if !containsFold(src, "access_compat") && !containsFold(src, "ifdirective") {
			continue
		}
		if ds, err := apacheconf.Parse(f, src); err == nil {
			if d := compatConditional(ds); d != nil && !slices.Contains(conv.CompatKept, f) {
				conv.CompatKept = append(conv.CompatKept, f)
			}
		}
	}
	keepCompat := opt.KeepCompat || len(conv.CompatKept) > 0
	for _, h := range htTexts {
		src, err := os.ReadFile(h.path)
		if err != nil {
			return nil, err
		}
		conv.Files[h.path], _ = applyEdits(src, h.es, keepCompat, false)
	}
	if opt.SectionsOnly {
		return conv, partial
	}
	texts := make([][]byte, len(loaded))
	have := map[string]bool{}
	lastLoader := -1
	var lastLoads moduleLines
	for i, f := range loaded {
		text, n := applyEdits(sources[i], byFile[f], keepCompat, true)
		conv.Renamed += n
		texts[i] = text
		if ml := loadsModules(text, have); ml.end > 0 {
			lastLoader, lastLoads = i, ml
		}
	}
	for i, f := range loaded {
		if i == lastLoader {
			conv.Files[f] = addModules(texts[i], lastLoads, have, texts, len(conv.CompatKept) > 0)
		} else {
			conv.Files[f] = texts[i]
		}
	}
	conv.Data = dataFiles(raw, cfg.ServerRoot, conv.Files)
	for _, p := range htPaths {
		// The .htaccess files translate leaves as they are go with the
		// tree too.
		if _, ok := conv.Files[p]; !ok {
			if b, err := os.ReadFile(p); err == nil {
				conv.Data[p] = b
			}
		}
	}
	return conv, partial
}

// withRead adds to loaded (sorted) the files the reader read that hold
// no directive of their own (an empty httpd.conf, a file whose every line
// sits in a branch not taken): Apache 2.4 reads them too.
func withRead(loaded []string, read map[string]bool) []string {
	for f := range read {
		if !slices.Contains(loaded, f) {
			loaded = append(loaded, f)
		}
	}
	sort.Strings(loaded)
	return loaded
}

// dataDirectives name the files a configuration reads at request time,
// which a translated tree carries along: the first argument, relative to
// ServerRoot.
var dataDirectives = map[string]bool{
	"authuserfile": true, "authgroupfile": true, "authdbmuserfile": true, "authdbmgroupfile": true,
	"authdigestfile": true, "authdigestgroupfile": true,
}

// dataFiles reads the files the directives of raw name (and a DBM file's
// .pag/.dir/.db companions), those that exist and are not configuration
// files already.
func dataFiles(raw [][]*apacheconf.Directive, serverRoot string, conf map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	add := func(p string) {
		if _, ok := conf[p]; ok {
			return
		}
		if _, ok := out[p]; ok {
			return
		}
		if b, err := os.ReadFile(p); err == nil {
			out[p] = b
		}
	}
	for _, ds := range raw {
		apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
			if !dataDirectives[d.LowerName()] || len(d.Args) == 0 {
				return nil
			}
			p := d.Args[0]
			if !filepath.IsAbs(p) && serverRoot != "" {
				p = filepath.Join(serverRoot, p)
			}
			if !filepath.IsAbs(p) {
				return nil
			}
			add(p)
			if strings.Contains(d.LowerName(), "dbm") {
				for _, ext := range []string{".pag", ".dir", ".db"} {
					add(p + ext)
				}
			}
			return nil
		})
	}
	return out
}

// loadedFiles lists every file the configuration reads (Includes too),
// and returns each top file's directives as read with no modules assumed
// loaded: plain[i] when load read them so already, or read again.
func loadedFiles(files []string, opt translate.LoadOptions, plain [][]*apacheconf.Directive) ([]string, [][]*apacheconf.Directive) {
	seen := map[string]bool{}
	var out []string
	var raw [][]*apacheconf.Directive
	for i, f := range files {
		ds := plain[i]
		if ds == nil {
			ds, _ = apacheconf.Load(f, apacheconf.Options{ServerRoot: opt.ServerRoot, Defines: opt.Defines})
		}
		raw = append(raw, ds)
		last := ""
		apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
			if f := d.Pos.File; f != last { // a file's directives come in runs
				last = f
				if !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
			return nil
		})
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, raw
}

// defaultsEdit writes explicitly, at the end of the main file, the 2.2
// defaults that 2.4 changed and the configuration relied on (DIR-04,
// DIR-05, DIR-06), so that behaviour does not change silently.
func defaultsEdit(conf []byte, htaccess bool) edit {
	var text []string
	if !containsFold(conf, "enablesendfile") {
		text = append(text, "# orderly DIR-05: 2.2 sent files with sendfile by default; 2.4 does not", "EnableSendfile On")
	}
	if !containsFold(conf, "fileetag") {
		text = append(text, "# orderly DIR-06: 2.2's ETags included the inode; 2.4's default is MTime Size", "FileETag INode MTime Size")
	}
	if htaccess && !containsFold(conf, "allowoverride") {
		text = append(text, "# orderly DIR-04: 2.2 read .htaccess files with every category by default; 2.4's default is None",
			"<Directory />", "    AllowOverride All", "</Directory>")
	}
	return edit{from: atEnd, to: atEnd, text: text}
}

// quoteArg writes s as one argument of a directive: in double quotes,
// its backslashes and quotes escaped, where it holds a space, a quote or
// a backslash.
func quoteArg(s string) string {
	if !strings.ContainsAny(s, " \t\"\\") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

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
	// The document roots are listed while the model is built, for the
	// search of their .htaccess files (startHtaccess) to find listed.
	dirs := opt.DirCache
	if dirs == nil {
		dirs = new(dirscan.Cache)
	}
	prefetched := func() {}
	lo.OnParsed = func(ds []*apacheconf.Directive) {
		prefetched = prefetchHtaccess(ds, lo.ServerRoot, dirs)
	}
	cfg, plain, srcs, err := translate.LoadSource(files, lo)
	defer prefetched() // nothing reads the tree once Convert returns
	if err != nil && (cfg == nil || !opt.Partial) {
		return nil, err
	}
	partial := err // Partial: the model of what could be read, with its errors
	// The search for .htaccess files is system calls: the configuration
	// is read meanwhile. What the files hold besides their sections
	// depends on neither: worked out meanwhile too, on another core.
	search := startHtaccess(cfg, dirs)
	filesDone := make(chan *filesRead, 1)
	go func() { filesDone <- readFiles(cfg, files, plain, srcs[0], read, opt) }()
	hostsDone := make(chan []hostView, 1)
	go func() { hostsDone <- hostViews(cfg) }()
	conv := &Conversion{Files: map[string][]byte{}, Model: cfg}
	all := scopedSections(cfg)
	conv.Scopes = make(map[translate.ScopeKey]translate.Scope, len(all))
	for _, sc := range all {
		conv.Scopes[sc.s.Key()] = translate.Scope{Section: sc.s, Config: sc.cfg}
	}
	// The .htaccess files merge before <Location> and <Files> sections and
	// before the <Directory> sections below them: found first.
	hts, htReviews, htPaths := findHtaccess(search)
	conv.Htaccess, conv.HtaccessAll = htPaths, !search.truncated
	for _, h := range hts {
		if h.sec == nil {
			continue
		}
		for _, s := range append([]*translate.Section{h.sec}, h.sec.Conf.Files...) {
			conv.Scopes[s.Key()] = translate.Scope{Section: s, Config: h.cfg}
		}
	}
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
	// Sections translate independently of each other: on every core,
	// gathered in order.
	type converted struct {
		es, basic           []edit
		review, basicReview string
	}
	results := make([]converted, len(all))
	// The sections' texts, each at its section's place, those recorded
	// (Conversion.Sections) moved up to the front afterwards.
	texts := make([]SectionText, len(all))
	hosts := <-hostsDone
	par.Do(len(all), func(i int) {
		sc, r := all[i], &results[i]
		s := sc.s
		if s.Directive() == nil {
			return
		}
		switch {
		case converts(sc.cfg, s):
			r.es, r.review = convertSection(sc.cfg, s)
		case s.Conf.AuthType != nil:
			r.es, r.review = authTypeOnly(sc.cfg, s)
		}
		if sc.cfg == cfg && r.es != nil && r.review == "" && !inheritsNothing(cfg, s) {
			r.es, r.review = inHosts(cfg, s, hosts, r.es)
		}
		r.basic, r.basicReview = basic.edits(sc.cfg, s, s.Directive().Block)
		if s.Conf.HasAccessRules() || r.es != nil {
			texts[i] = sectionText(s, r.es, r.review)
		}
	})
	for i, sc := range all {
		if r := &results[i]; r.basicReview != "" {
			conv.Reviews = append(conv.Reviews, translate.Difference{Pos: sc.s.Pos, Text: r.basicReview})
		}
	}
	// Each file's edits, in one list made once (SectionsOnly: none).
	var byFile map[string][]edit
	if !opt.SectionsOnly {
		edits := map[string]int{}
		for i, sc := range all {
			edits[sc.s.Pos.File] += len(results[i].basic) + len(results[i].es)
		}
		byFile = make(map[string][]edit, len(edits))
		for f, n := range edits {
			byFile[f] = make([]edit, 0, n+1) // and the main file's defaultsEdit
		}
	}
	conv.Sections = texts[:0]
	for i, sc := range all {
		s, r := sc.s, &results[i]
		if byFile != nil {
			byFile[s.Pos.File] = append(byFile[s.Pos.File], r.basic...)
		}
		if !s.Conf.HasAccessRules() && r.es == nil || s.Directive() == nil {
			continue
		}
		if r.review != "" {
			conv.Reviews = append(conv.Reviews, translate.Difference{Pos: s.Pos, Text: r.review})
		}
		if byFile != nil {
			byFile[s.Pos.File] = append(byFile[s.Pos.File], r.es...)
		}
		conv.Sections = append(conv.Sections, texts[i]) // to a place already read: not past i
		conv.Changes++
	}
	fr := <-filesDone
	conv.Sections = append(conv.Sections, fr.proxyTexts...)
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
	if byFile != nil {
		for f, es := range authCfg {
			byFile[f] = append(byFile[f], es...)
		}
		if fr.defaults != nil {
			byFile[files[0]] = append(byFile[files[0]], defaultsEdit(*fr.defaults, len(hts) > 0))
		}
	}
	for f, es := range fr.proxyEdits {
		if byFile != nil {
			byFile[f] = append(byFile[f], es...)
		}
		conv.Changes += len(es)
	}
	conv.Reviews = append(conv.Reviews, fr.proxyReviews...)
	conv.Changes += len(fr.proxyReviews)
	// What is left as it is still needs mod_access_compat: the output
	// keeps it loaded rather than answer 500 for it.
	for _, r := range append(append([]translate.Difference(nil), htReviews...), fr.proxyReviews...) {
		if !r.Moot && !slices.Contains(conv.CompatKept, r.Pos.File) {
			conv.CompatKept = append(conv.CompatKept, r.Pos.File)
		}
	}
	if fr.err != nil {
		return nil, fr.err
	}
	for i, f := range fr.loaded {
		if fr.compat[i] && !slices.Contains(conv.CompatKept, f) {
			conv.CompatKept = append(conv.CompatKept, f)
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
	// Each file's text is written apart from the others': on every core.
	fileTexts := make([][]byte, len(fr.loaded))
	renamed := make([]int, len(fr.loaded))
	par.Do(len(fr.loaded), func(i int) {
		fileTexts[i], renamed[i] = applyEdits(fr.sources[i], byFile[fr.loaded[i]], keepCompat, true)
	})
	have := map[string]bool{}
	lastLoader := -1
	var lastLoads moduleLines
	for i, text := range fileTexts {
		conv.Renamed += renamed[i]
		if ml := loadsModules(text, have); ml.end > 0 {
			lastLoader, lastLoads = i, ml
		}
	}
	for i, f := range fr.loaded {
		if i == lastLoader {
			conv.Files[f] = addModules(fileTexts[i], lastLoads, have, fileTexts, len(conv.CompatKept) > 0)
		} else {
			conv.Files[f] = fileTexts[i]
		}
	}
	// The data files readFiles read, but for the .htaccess files (among
	// the configuration files now).
	conv.Data = fr.data
	for p := range conv.Data {
		if _, ok := conv.Files[p]; ok {
			delete(conv.Data, p)
		}
	}
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

// scoped is a section with the configuration it is seen in: a virtual
// host's own sections in the host's (merged) view.
type scoped struct {
	s   *translate.Section
	cfg *translate.Config
}

// scopedSections lists every section of cfg once, the main server's
// first, then each virtual host's own; in each, the <Directory>,
// <DirectoryMatch> and <Files> sections, the <Files> sections inside
// those, then the <Location> sections.
func scopedSections(cfg *translate.Config) []scoped {
	n := 0
	for _, c := range cfg.Servers() {
		n += len(c.Dirs) + len(c.DirMatches) + len(c.Files) + len(c.Locations)
	}
	all := make([]scoped, 0, n)
	seen := make(map[*translate.Section]bool, n)
	add := func(ss []*translate.Section, c *translate.Config) {
		for _, s := range ss {
			if !seen[s] {
				seen[s] = true
				all = append(all, scoped{s, c})
			}
		}
	}
	for _, c := range cfg.Servers() {
		add(c.Dirs, c)
		add(c.DirMatches, c)
		add(c.Files, c)
		for _, s := range c.Dirs {
			add(s.Conf.Files, c)
		}
		for _, s := range c.DirMatches {
			add(s.Conf.Files, c)
		}
		add(c.Locations, c)
	}
	return all
}

// inHosts is what the main server's section s, translated to es, is
// written as: a section of the main server applies in every virtual host
// too, where what it inherits may differ (the host's DocumentRoot,
// aliases and sections of its own); written once, its text must be the
// one each host's view gives, or it is left for review.
func inHosts(cfg *translate.Config, s *translate.Section, hosts []hostView, es []edit) ([]edit, string) {
	for _, h := range hosts {
		if !h.affects(cfg, s) {
			continue
		}
		var hes []edit
		var review string
		if converts(h.cfg, s) {
			hes, review = convertSection(h.cfg, s)
		} else {
			hes, review = authTypeOnly(h.cfg, s)
		}
		if review != "" || !sameEdits(hes, es) {
			why := "a virtual host (" + h.name + ") inherits otherwise above this section of the main server"
			if review != "" {
				why = "in the virtual host " + h.name + ": " + review
			}
			if converts(cfg, s) {
				return convertSectionAs(cfg, s, why)
			}
			return authTypeOnlyAs(cfg, s, why)
		}
	}
	return es, ""
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

// dataDirective reports whether n (in lower case) names a file the
// configuration reads at request time, which a translated tree carries
// along: the first argument, relative to ServerRoot.
func dataDirective(n string) bool {
	switch n {
	case "authuserfile", "authgroupfile", "authdbmuserfile", "authdbmgroupfile",
		"authdigestfile", "authdigestgroupfile":
		return true
	}
	return false
}

// filesRead is what Convert needs of the configuration's files besides
// their sections: nothing in it depends on how those translate or on the
// .htaccess files, and readFiles works it out meanwhile.
type filesRead struct {
	// loaded are the files the configuration reads (loadedFiles,
	// withRead), sources their texts, and compat whether each tests for
	// mod_access_compat (compatConditional); err is why one of them could
	// not be read.
	loaded  []string
	sources [][]byte
	compat  []bool
	err     error
	// The translation of the <Proxy> sections (convertProxies).
	proxyEdits   map[string][]edit
	proxyReviews []translate.Difference
	proxyTexts   []SectionText
	// defaults is what the main file sets of the defaults defaultsEdit
	// writes, where it writes them (nil: not); data are the data files
	// (dataFiles) that are not configuration files. Neither is made for
	// Options.SectionsOnly.
	defaults *mainDefaults
	data     map[string][]byte
}

// readFiles reads what Convert needs of the files (filesRead): top is the
// main file's text as load read it, read the files the reader read.
func readFiles(cfg *translate.Config, files []string, plain [][]*apacheconf.Directive, top []byte, read map[string]bool, opt Options) *filesRead {
	fr := &filesRead{}
	raw := loadedFiles(files, opt.LoadOptions, plain)
	fr.loaded = withRead(raw.files, read)
	fr.proxyEdits, fr.proxyReviews, fr.proxyTexts = convertProxies(cfg, raw.proxies)
	fr.sources = make([][]byte, len(fr.loaded))
	fr.compat = make([]bool, len(fr.loaded))
	for i, f := range fr.loaded {
		src := top
		if f != files[0] || src == nil {
			var err error
			if src, err = os.ReadFile(f); err != nil {
				fr.err = err
				return fr
			}
		}
		fr.sources[i] = src
		// A section that tests for mod_access_compat, found in the text as
		// written: the plain reading (raw) evaluated it without the modules
		// a fragment is read with, and dropped it where its test failed
		// there; and what translate writes inside it is read only while
		// the module is loaded.
		if !containsFold(src, "access_compat") && !containsFold(src, "ifdirective") {
			continue
		}
		if ds, err := apacheconf.Parse(f, src); err == nil {
			fr.compat[i] = compatConditional(ds) != nil
		}
	}
	if opt.SectionsOnly {
		return fr
	}
	if cfg.Semantics == translate.Legacy22 && len(cfg.Modules) > 0 && containsFold(top, "loadmodule") {
		d := mainDefaultsOf(top)
		fr.defaults = &d
	}
	fr.data = dataFiles(raw.data, cfg.ServerRoot, fr.loaded)
	return fr
}

// dataFiles reads the files the directives ds name (and a DBM file's
// .pag/.dir/.db companions), those that exist and are not among the
// configuration files conf.
func dataFiles(ds []*apacheconf.Directive, serverRoot string, conf []string) map[string][]byte {
	out := map[string][]byte{}
	add := func(p string) {
		if slices.Contains(conf, p) {
			return
		}
		if _, ok := out[p]; ok {
			return
		}
		if b, err := os.ReadFile(p); err == nil {
			out[p] = b
		}
	}
	for _, d := range ds {
		p := d.Args[0]
		if !filepath.IsAbs(p) && serverRoot != "" {
			p = filepath.Join(serverRoot, p)
		}
		if !filepath.IsAbs(p) {
			continue
		}
		add(p)
		if strings.Contains(d.LowerName(), "dbm") {
			for _, ext := range []string{".pag", ".dir", ".db"} {
				add(p + ext)
			}
		}
	}
	return out
}

// rawFiles is what loadedFiles finds in the files as read with no modules
// assumed loaded.
type rawFiles struct {
	files   []string                // every file that holds a directive, and the top files, sorted
	proxies []proxySection          // the <Proxy> and <ProxyMatch> sections with access rules
	data    []*apacheconf.Directive // the lines that name a data file (dataDirective), with an argument
}

// loadedFiles lists every file the configuration reads (Includes too),
// in its directives as read with no modules assumed loaded: plain[i] when
// load read the top file i so already, or read again. The same pass
// finds the <Proxy> sections and the data files' lines.
func loadedFiles(files []string, opt translate.LoadOptions, plain [][]*apacheconf.Directive) rawFiles {
	seen := map[string]bool{}
	var out rawFiles
	last := ""
	// vhost is the innermost <VirtualHost> around ds (nil: the main
	// server's).
	var walk func(ds []*apacheconf.Directive, vhost *apacheconf.Directive)
	walk = func(ds []*apacheconf.Directive, vhost *apacheconf.Directive) {
		for _, d := range ds {
			if f := d.Pos.File; f != last { // a file's directives come in runs
				last = f
				if !seen[f] {
					seen[f] = true
					out.files = append(out.files, f)
				}
			}
			switch n := d.LowerName(); {
			case (n == "proxy" || n == "proxymatch") && d.IsSection() && anyAccess(d.Block):
				out.proxies = append(out.proxies, proxySection{d: d, vhost: vhost})
			case dataDirective(n) && len(d.Args) > 0:
				out.data = append(out.data, d)
			}
			if len(d.Block) > 0 {
				in := vhost
				if d.Is("VirtualHost") {
					in = d
				}
				walk(d.Block, in)
			}
		}
	}
	for i, f := range files {
		ds := plain[i]
		if ds == nil {
			ds, _ = apacheconf.Load(f, apacheconf.Options{ServerRoot: opt.ServerRoot, Defines: opt.Defines})
		}
		last = ""
		walk(ds, nil)
		if !seen[f] {
			seen[f] = true
			out.files = append(out.files, f)
		}
	}
	sort.Strings(out.files)
	return out
}

// mainDefaults is what the main file sets of the 2.2 defaults that 2.4
// changed (defaultsEdit): its text names EnableSendfile, FileETag,
// AllowOverride.
type mainDefaults struct {
	sendfile, etag, override bool
}

// mainDefaultsOf reads what the main file's text conf sets of them.
func mainDefaultsOf(conf []byte) mainDefaults {
	return mainDefaults{containsFold(conf, "enablesendfile"), containsFold(conf, "fileetag"), containsFold(conf, "allowoverride")}
}

// defaultsEdit writes explicitly, at the end of the main file, the 2.2
// defaults that 2.4 changed and the configuration relied on (DIR-04,
// DIR-05, DIR-06; set: those it sets itself), so that behaviour does not
// change silently.
func defaultsEdit(set mainDefaults, htaccess bool) edit {
	var text []string
	if !set.sendfile {
		text = append(text, "# orderly DIR-05: 2.2 sent files with sendfile by default; 2.4 does not", "EnableSendfile On")
	}
	if !set.etag {
		text = append(text, "# orderly DIR-06: 2.2's ETags included the inode; 2.4's default is MTime Size", "FileETag INode MTime Size")
	}
	if htaccess && !set.override {
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

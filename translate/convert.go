package translate

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/orderly-proxy/orderly/internal/dirscan"
	"github.com/orderly-proxy/orderly/internal/par"
	"github.com/orderly-proxy/orderly/internal/swar"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// maxHtaccessDirs bounds the directories searched for .htaccess files, as
// lint's Options.MaxDirs does by default.
const maxHtaccessDirs = 100000

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
	Reviews    []Difference // refused (Require all denied) or left as they are: translate by hand
	Changes    int          // sections whose access rules were translated
	Renamed    int          // directives renamed or removed (DIR-01..09, BEH-09, BLD-02)

	// Sections are what was written for each section translated, or
	// refused for review, in place (sections.go).
	Sections []SectionText

	// Model is the access model the translation was written from, read
	// for writing out (Options.RenderOnly): what orderly serve would
	// refuse in it is [Config.ServeRefusals].
	Model *Config
	// Htaccess are the access files (AccessFileName) found below the
	// directories the configuration serves (document roots, Alias
	// targets, UserDir directories), translated or not; HtaccessAll
	// says the search saw every directory (it stops after 100,000).
	Htaccess    []string
	HtaccessAll bool
	// Scopes are the model's sections, of the configuration and of the
	// .htaccess files it reads, by where each opens (lint's access
	// findings).
	Scopes map[ScopeKey]Scope
}

// ConvertOptions tune Convert.
type ConvertOptions struct {
	LoadOptions
	KeepCompat bool // keep mod_access_compat loaded
	// SectionsOnly leaves out the configuration files' texts and the data
	// files (Conversion.Files has the .htaccess files only, Data is
	// empty): what lint needs, the sections' texts, sooner.
	SectionsOnly bool
}

// accessNames are the directives the access translation replaces.
var accessNames = map[string]bool{
	"order": true, "allow": true, "deny": true, "satisfy": true, "require": true,
	"requireall": true, "requireany": true, "requirenone": true, "authmerging": true,
	"authzuserauthoritative": true, "authzgroupfileauthoritative": true,
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
func Convert(files []string, opt ConvertOptions) (*Conversion, error) {
	lo := opt.LoadOptions
	lo.RenderOnly = true // written out, never decided on
	read := map[string]bool{}
	lo.onRead = func(name string) { read[name] = true }
	cfg, plain, srcs, err := load(files, lo)
	if err != nil && (cfg == nil || !opt.Partial) {
		return nil, err
	}
	partial := err // Partial: the model of what could be read, with its errors
	// The search for .htaccess files is system calls: the configuration
	// is read meanwhile.
	search := startHtaccess(cfg)
	conv := &Conversion{Files: map[string][]byte{}, Model: cfg}
	byFile := map[string][]edit{}
	// Every section once, with the configuration it is seen in: a virtual
	// host's own sections in the host's (merged) view.
	type scoped struct {
		s   *Section
		cfg *Config
	}
	var all []scoped
	seen := map[*Section]bool{}
	add := func(c *Config) {
		var list []*Section
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
	conv.Scopes = make(map[ScopeKey]Scope, len(all)+len(hts))
	for _, sc := range all {
		conv.Scopes[sc.s.Key()] = Scope{sc.s, sc.cfg}
	}
	for _, h := range hts {
		if h.sec == nil {
			continue
		}
		for _, s := range append([]*Section{h.sec}, h.sec.Conf.Files...) {
			conv.Scopes[s.Key()] = Scope{s, h.cfg}
		}
	}
	// The methods every translation names, worked out once per server.
	names := map[*policy.Methods][]string{} // servers often share theirs
	for _, c := range serverConfigs(cfg) {
		if names[c.Methods] == nil {
			names[c.Methods] = methodNames(c.Methods)
		}
		c.methodNames = names[c.Methods]
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
		case s.directive == nil:
		case hasAccess(s.Conf):
			results[i].es, results[i].review = convertSection(all[i].cfg, s)
		case s.Conf.AuthType != nil:
			results[i].es, results[i].review = authTypeOnly(all[i].cfg, s)
		}
	})
	edits := map[string]int{} // each file's, to make its list once
	sections := 0
	for i, sc := range all {
		edits[sc.s.Pos.File] += len(results[i].es)
		if results[i].es != nil || hasAccess(sc.s.Conf) {
			sections++
		}
	}
	for f, n := range edits {
		byFile[f] = make([]edit, 0, n+1) // and the main file's defaultsEdit
	}
	conv.Sections = make([]SectionText, 0, sections)
	for i, sc := range all {
		s := sc.s
		if !hasAccess(s.Conf) && results[i].es == nil || s.directive == nil {
			continue
		}
		if review := results[i].review; review != "" {
			conv.Reviews = append(conv.Reviews, Difference{Pos: s.Pos, Text: review})
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
			conv.Reviews = append(conv.Reviews, Difference{Pos: apacheconf.Pos{File: h.sec.Path, Line: 1}, Text: blocked[h.sec.Path] + "; left as it is"})
			conv.CompatKept = append(conv.CompatKept, h.sec.Path)
			continue
		}
		if h.sec == nil {
			htTexts = append(htTexts, htEdits{h.path, h.closed})
			continue
		}
		var es []edit
		for _, s := range append([]*Section{h.sec}, h.sec.Conf.Files...) {
			if !hasAccess(s.Conf) {
				continue
			}
			e, review := convertSection(h.cfg, s)
			if review != "" {
				conv.Reviews = append(conv.Reviews, Difference{Pos: s.Pos, Text: review})
			}
			if s == h.sec && len(s.ifVersions) > 0 {
				e = ifVersionEdits(e, s.ifVersions)
			}
			conv.Sections = append(conv.Sections, sectionText(s, e, review))
			es = append(es, e...)
		}
		htTexts = append(htTexts, htEdits{h.sec.Path, es})
		conv.Changes++
	}
	for f, es := range authCfg {
		byFile[f] = append(byFile[f], es...)
	}
	top := srcs[0] // as read by load
	if cfg.Semantics == Legacy22 && len(cfg.Modules) > 0 && containsFold(top, "loadmodule") {
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
	for _, r := range append(append([]Difference(nil), htReviews...), pr...) {
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
		text, _ := applyEdits(src, h.es, keepCompat, false)
		conv.Files[h.path] = []byte(text)
	}
	if opt.SectionsOnly {
		return conv, partial
	}
	texts := make([]string, len(loaded))
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
			conv.Files[f] = []byte(texts[i])
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

// serverConfigs returns the main server's configuration and each virtual
// host's.
func serverConfigs(cfg *Config) []*Config {
	out := []*Config{cfg}
	for _, v := range cfg.VHosts {
		out = append(out, v.Config)
	}
	return out
}

func hasAccess(c *DirConf) bool {
	return c.Compat != nil || c.Authz != nil || c.Requires22 != nil || c.Satisfy22Set != 0
}

// convertProxies translates the access rules of <Proxy> and <ProxyMatch>
// sections. For a proxied request Apache merges, over the server's
// defaults, the <Proxy> sections that match it (mod_proxy's proxy_walk:
// the main server's, then the virtual host's), not the file-system walk.
// Where one such section with access rules is all a server has, it
// inherits nothing else and is translated on its own; where a server has
// several, which merge depends on the request, and they are left as
// written, for review.
func convertProxies(cfg *Config, raw [][]*apacheconf.Directive) (map[string][]edit, []Difference, []SectionText) {
	type proxy struct {
		d     *apacheconf.Directive
		vhost *apacheconf.Directive // nil: the main server's
	}
	var all []proxy
	for _, ds := range raw {
		apacheconf.Walk(ds, func(d *apacheconf.Directive, parents []*apacheconf.Directive) error {
			if n := d.LowerName(); (n == "proxy" || n == "proxymatch") && d.IsSection() && anyAccess(d.Block) {
				p := proxy{d: d}
				for _, x := range parents {
					if x.Is("VirtualHost") {
						p.vhost = x
					}
				}
				all = append(all, p)
			}
			return nil
		})
	}
	mainCount, hostCount, most := 0, map[*apacheconf.Directive]int{}, 0
	for _, p := range all {
		if p.vhost == nil {
			mainCount++
		} else {
			hostCount[p.vhost]++
		}
	}
	for _, n := range hostCount {
		most = max(most, n)
	}
	edits := map[string][]edit{}
	var reviews []Difference
	var texts []SectionText
	for _, p := range all {
		// The main server's sections apply in every virtual host too.
		n := mainCount + hostCount[p.vhost]
		if p.vhost == nil {
			n = mainCount + most
		}
		if n > 1 {
			reviews = append(reviews, Difference{Pos: p.d.Pos, Text: "access rules in <" + p.d.Name + "> sections are not translated where a server has several (which of them merge depends on the request); left as they are (2.4 needs mod_access_compat for them, or a Require written by hand)"})
			continue
		}
		es, review := convertProxy(cfg, p.d)
		if review != "" {
			reviews = append(reviews, Difference{Pos: p.d.Pos, Text: review})
		}
		edits[p.d.Pos.File] = append(edits[p.d.Pos.File], es...)
		texts = append(texts, proxyText(p.d, es, review))
	}
	return edits, reviews, texts
}

// convertProxy translates one <Proxy> section standing alone: as a
// section over the server's defaults, which is what it is for the
// requests it matches.
func convertProxy(cfg *Config, d *apacheconf.Directive) ([]edit, string) {
	alone := &apacheconf.Directive{Name: "Directory", Args: []string{"/"}, Raw: "/", Block: d.Block, Pos: d.Pos}
	pcfg, err := Build([]*apacheconf.Directive{alone}, Options{Semantics: cfg.Semantics, Modules: cfg.Modules,
		BaseDir: cfg.BaseDir, ServerRoot: cfg.ServerRoot, DocumentRoot: "/", ForwardUnfaithful: true})
	if err != nil {
		return nil, "access rules in <" + d.Name + "> not translated: " + err.Error()
	}
	for _, s := range pcfg.Dirs {
		if s.directive == alone {
			return convertSection(pcfg, s)
		}
	}
	return nil, "access rules in <" + d.Name + "> not translated"
}

// loadedFiles lists every file the configuration reads (Includes too),
// and returns each top file's directives as read with no modules assumed
// loaded: plain[i] when load read them so already, or read again.
func loadedFiles(files []string, opt LoadOptions, plain [][]*apacheconf.Directive) ([]string, [][]*apacheconf.Directive) {
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

// edit replaces lines [from, to] of a file (1-based) with text; an edit
// with no text deletes them.
type edit struct {
	from, to int
	text     []string
	// withCompat is written after text where the output keeps
	// mod_access_compat loaded (compatReset).
	withCompat []string
}

// compatReset is what a section translate rewrites says where
// mod_access_compat stays loaded, if its legacy lines gave it an
// Order/Allow/Deny state of its own (they replace the inherited one):
// without them it would inherit the state they replaced, whose Satisfy
// Any and Allow (of an .htaccess file left as it is) would grant past its
// Require; Satisfy All starts a fresh one that admits everybody and
// leaves the decision to Require. A section without such lines inherits
// the state in the legacy and in the translation alike. indent is the
// section's.
//
// It is written inside <IfModule mod_access_compat.c>: a 2.2
// configuration that loads no mod_access_compat of its own (2.2 had
// mod_authz_host) keeps none, and Satisfy would then stop Apache.
func compatReset(indent string) []string {
	return []string{
		indent + "# orderly DIR-10: mod_access_compat stays loaded: what this section inherits from it must not decide here",
		indent + "<IfModule mod_access_compat.c>",
		indent + "    Satisfy All",
		indent + "</IfModule>",
	}
}

// convertSection writes the translation of one section.
func convertSection(cfg *Config, s *Section) ([]edit, string) {
	var access []*apacheconf.Directive
	block := s.block
	if s.directive != nil {
		block = s.directive.Block
	}
	for _, d := range block {
		if isAccessLine(d) {
			access = append(access, d)
		}
	}
	if len(access) == 0 {
		return nil, ""
	}
	indent := strings.Repeat(" ", max(access[0].Pos.Col-1, 0))
	compat, authz, why := inherited(cfg, s)
	if why == "" {
		why = sslSatisfyAny(cfg, s, compat) // ssl.go
	}
	if why == "" && cfg.Semantics == Compat24 && (authz.authz == nil || authz.authz.Root == nil) && authTypeSet(cfg, s) {
		why = "AuthType with no Require in force: Apache 2.4 answers 500 (AH01627) here; decide what was meant"
	}
	var extra []edit // after the section: filesCombos
	switch {
	case why != "":
	case isFiles(s):
		extra, why = filesCombos(cfg, s)
	case s.Kind == KindLocation && !s.Fnmatch, s.Kind == KindLocationMatch:
		extra, why = locationCombos(cfg, s)
	}
	var text []string
	if why != "" && locationMergesAnd(cfg, s) {
		// Whatever merges before this <Location>, Apache decided what it
		// inherited AND its own Require: 2.4's AuthMerging And.
		text = append(text, indent+"# orderly DIR-10: Require translated to 2.4 Require, combined with what this section inherits (Satisfy All)")
		text = append(text, indent+"AuthMerging And")
		text = append(text, renderOwnRequire(cfg, s.Conf.Authz, indent)...)
		why = ""
	} else if why != "" {
		// Fail closed: the section refuses every request until a person
		// writes its Require (the legacy lines stay, commented).
		text = append(text, indent+"# orderly DIR-10: NEEDS REVIEW, refused until translated by hand: "+why)
		for _, d := range access {
			text = append(text, indent+"# "+d.Name+" "+d.Raw)
		}
		text = append(text, indent+"Require all denied")
	} else {
		// The directives written inside a Require container that are not
		// access lines (AuthName, AuthType: mod_authz_core reads them as
		// the section's own) stay, before the translation.
		for _, d := range access {
			for _, h := range inContainers(d) {
				text = append(text, indent+h.Name+" "+h.Raw)
			}
		}
		text = append(text, indent+"# orderly DIR-10: Order/Allow/Deny/Satisfy/Require translated to 2.4 Require")
		text = append(text, renderScope(cfg, compat, authz, indent)...)
	}
	es := make([]edit, 0, len(access)+len(extra))
	for i, d := range access {
		e := edit{from: d.Pos.Line, to: max(d.EndLine, d.Pos.Line)}
		if i == 0 {
			e.text = text
			if s.Conf.Compat != nil {
				// Its Order/Allow/Deny (or, 2.4, Satisfy) replaced the
				// state it inherited; without them it would inherit it.
				e.withCompat = compatReset(indent)
			}
		}
		es = append(es, e)
	}
	return append(es, extra...), why
}

// locationMergesAnd reports whether a <Location> whose inheritance depends
// on the request (<Files> or <DirectoryMatch> sections merge before it)
// can still be translated: under 2.4-compat it only adds Require lines,
// and nothing it may inherit from has a Require or Satisfy Any, so every
// request was decided as the inherited Order/Allow/Deny AND this
// section's Require, which AuthMerging And writes in 2.4 over the
// translations of those sections.
func locationMergesAnd(cfg *Config, s *Section) bool {
	own := s.Conf
	if s.Kind != KindLocation || s.Fnmatch || s.Regex != nil || cfg.Semantics != Compat24 ||
		own.Compat != nil || own.Authz == nil || own.Authz.Root == nil || own.Authz.Merge == MergeAnd || own.Authz.Merge == MergeOr {
		return false
	}
	plain := func(c *DirConf) bool {
		if c.Authz != nil || c.Requires22 != nil {
			return false
		}
		if c.Compat != nil {
			for _, v := range c.Compat.Satisfy {
				if v == policy.SatisfyAny {
					return false
				}
			}
		}
		return true
	}
	// The directories its URLs map to, and any below or matching by
	// pattern; every <Files> and <DirectoryMatch>; earlier <Location>s.
	file := filepath.Join(cfg.DocumentRoot, s.Path) + "/"
	var before []*Section
	for _, d := range cfg.Dirs {
		if d.Depth == 0 || d.Fnmatch || strings.HasPrefix(file, d.Path) || strings.HasPrefix(d.Path, file) {
			before = append(before, d)
			before = append(before, d.Conf.Files...)
		}
	}
	before = append(before, cfg.DirMatches...)
	before = append(before, cfg.Files...)
	for _, l := range cfg.Locations {
		if l == s {
			break
		}
		before = append(before, l)
	}
	for _, b := range before {
		if !plain(b.Conf) {
			return false
		}
	}
	return plain(cfg.Defaults) || cfg.Defaults == nil
}

// renderOwnRequire writes a section's own Require tree, for AuthMerging.
func renderOwnRequire(cfg *Config, a *AuthzSlot, indent string) []string {
	authz := &layers{authz: a}
	classes := methodClasses(cfg, &layers{}, authz)
	var out []string
	for _, cl := range classes {
		r := forMethod(a.Root, cl.rep)
		if r == nil {
			r = &policy.Node{Kind: policy.Leaf, Provider: policy.ProvAllGranted, Methods: policy.AllMethods}
		}
		if len(classes) == 1 {
			return policy.Render(r, indent)
		}
		open, close := "<Limit "+strings.Join(cl.names, " ")+">", "</Limit>"
		if cl.rest {
			open, close = "<LimitExcept "+strings.Join(cl.except, " ")+">", "</LimitExcept>"
		}
		out = append(out, indent+open)
		out = append(out, policy.Render(r, indent+"    ")...)
		out = append(out, indent+close)
	}
	return out
}

// inContainers are the directives inside the Require container d (and
// the <Limit> and containers in it) that are not access lines: they
// configure the section the container is in.
func inContainers(d *apacheconf.Directive) []*apacheconf.Directive {
	switch d.LowerName() {
	case "requireall", "requireany", "requirenone", "limit", "limitexcept":
	default:
		return nil
	}
	var out []*apacheconf.Directive
	for _, c := range d.Block {
		switch n := c.LowerName(); {
		case n == "requireall" || n == "requireany" || n == "requirenone" || n == "limit" || n == "limitexcept":
			out = append(out, inContainers(c)...)
		case !accessNames[n]:
			out = append(out, c)
		}
	}
	return out
}

func onlyAccess(d *apacheconf.Directive) bool {
	for _, c := range d.Block {
		if !accessNames[c.LowerName()] {
			return false
		}
	}
	return true
}

// layers is what one section has in force: its compat layer and its
// Require layer (2.4-compat: the authz slot; 2.2: the Require lines and
// Satisfy).
type layers struct {
	compat *policy.Compat
	authz  *AuthzSlot
	req22  []policy.Require22
	// 2.2's group files in force: Require group is mod_authz_groupfile's
	// with AuthGroupFile, mod_authz_dbm's with AuthDBMGroupFile.
	groupFile, dbmGroups bool
	sat22                [policy.MaxMethods]policy.Satisfy
	satSet               policy.MethodMask
}

// same reports whether a and b hold the same layers: the same objects,
// so that they render to the same text (the converse need not hold).
func (a *layers) same(b *layers) bool {
	sameSlot := a.authz == b.authz || a.authz != nil && b.authz != nil && *a.authz == *b.authz
	return a.compat == b.compat && sameSlot &&
		len(a.req22) == len(b.req22) && (len(a.req22) == 0 || &a.req22[0] == &b.req22[0]) &&
		a.groupFile == b.groupFile && a.dbmGroups == b.dbmGroups && a.sat22 == b.sat22 && a.satSet == b.satSet
}

// inherited returns the section's two layers with what it inherits folded
// in, or why that depends on the request.
func inherited(cfg *Config, s *Section) (*layers, *layers, string) {
	chain, why := inheritedChain(cfg, s)
	if why != "" {
		if selfDenies(cfg, s) {
			// The section refuses everyone by itself: what it inherits
			// cannot change that.
			return &layers{compat: s.Conf.Compat}, &layers{}, ""
		}
		return nil, nil, why
	}
	compat, authz := mergeLayers(append(chain, s))
	return compat, authz, ""
}

// inheritedChain lists the sections that merge before s for every
// request s applies to, or says why they differ from request to request.
func inheritedChain(cfg *Config, s *Section) ([]*Section, string) {
	if s.Kind == KindHtaccess || s.htChain != nil {
		return s.htChain, ""
	}
	return ancestors(cfg, s)
}

// mergeLayers folds the layers of the sections, in Apache's merge order.
// As the directory, file and location walks do, the sections of one walk
// are merged among themselves first and their result over what the walks
// before gave: AuthMerging And/Or is not associative.
func mergeLayers(chain []*Section) (*layers, *layers) {
	var l layers
	var walked *AuthzSlot // this walk's sections so far
	phase := -1
	for _, a := range chain {
		if p := WalkPhase(a); p != phase {
			l.authz, walked, phase = mergeAuthzOver(l.authz, walked), nil, p
		}
		c := a.Conf
		if c.Compat != nil {
			l.compat = c.Compat
		}
		if c.Authz != nil {
			walked = mergeAuthzOver(walked, c.Authz)
		}
		if c.Requires22 != nil {
			l.req22 = c.Requires22
		}
		if c.GroupFile != nil {
			l.groupFile = *c.GroupFile != ""
		}
		if c.DBMGroupFile != nil {
			l.dbmGroups = *c.DBMGroupFile != ""
		}
		for set := c.Satisfy22Set; set != 0; set &= set - 1 {
			i := bits.TrailingZeros64(uint64(set))
			l.sat22[i] = c.Satisfy22[i]
		}
		l.satSet |= c.Satisfy22Set
	}
	l.authz = mergeAuthzOver(l.authz, walked)
	return &l, &l
}

// mergeAuthzOver is MergeAuthz where either side may be missing.
func mergeAuthzOver(base, add *AuthzSlot) *AuthzSlot {
	if add == nil {
		return base
	}
	return MergeAuthz(base, add)
}

// walkEnd is the index in chain (sections in merge order) of the first
// one a walk after phase merges.
func walkEnd(chain []*Section, phase int) int {
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
	// Only the layers the section does not set itself are inherited.
	own := s.Conf
	needCompat := own.Compat == nil
	needSat22 := cfg.Semantics == Legacy22 && own.Satisfy22Set != policy.AllMethods
	needAuthz := own.Requires22 == nil && (own.Authz == nil || own.Authz.Root == nil || own.Authz.Merge == MergeAnd || own.Authz.Merge == MergeOr)
	return ancestorsWith(cfg, s, func(c *DirConf) bool {
		// 2.4: an AuthType with no Require in force answers 500 (AH01627).
		return needCompat && c.Compat != nil || needSat22 && satisfiesAny(c) || needAuthz && (c.Authz != nil || c.Requires22 != nil || cfg.Semantics == Compat24 && c.AuthType != nil)
	})
}

// ancestorsWith is ancestors, hasAccess saying which sections' layers
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
		// The <Directory> sections of the other trees its URLs map to
		// (Alias targets below it, home directories) must be its own.
		for _, d := range cfg.Dirs {
			if slices.Contains(chain, d) || !hasAccess(d.Conf) && !nestedFilesAccess(d, hasAccess) {
				continue
			}
			for _, r := range others {
				if d.Fnmatch || r == "" || strings.HasPrefix(r, d.Path) || strings.HasPrefix(d.Path, r) {
					return nil, "an Alias or UserDir maps some of this <Location>'s URLs to directories whose <Directory> sections with access rules differ"
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
			case locationsDisjoint(cfg, o.Path, s.Path):
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
	if isFiles(s) {
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
	for _, d := range cfg.Dirs {
		if !hasAccess(d.Conf) && !nested(d) {
			continue
		}
		if d.Depth == 0 || d.Path == strings.TrimSuffix(cfg.DocumentRoot, "/")+"/" || strings.HasPrefix(cfg.DocumentRoot+"/", d.Path) {
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
				return nil, "an Alias or UserDir leads requests to files outside the document root, which " + d.String() + " does not cover"
			}
		}
	}
	for _, o := range append(append([]*Section(nil), cfg.DirMatches...), cfg.Files...) {
		if o == s {
			break
		}
		if isFiles(o) && (isFiles(s) || s.Kind == KindLocationMatch) {
			continue // a <Files> section before: filesCombos, locationCombos
		}
		if hasAccess(o.Conf) || !isFiles(o) && nested(o) {
			return nil, "another <DirectoryMatch>/<Files> section with access rules may merge before this one"
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
	return withHtaccess(cfg, chain, strings.TrimSuffix(cfg.DocumentRoot, "/")+"/", true, allBelow, s.Kind == KindLocationMatch, hasAccess)
}

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
func authConfigOverrides(cfg *Config, hts []htFile, paths []string, written map[string]htWritten) (map[string][]edit, map[string]string) {
	governs := map[string][]*Section{} // by file: each server's governing section
	governing := func(p string) []*Section {
		if out, ok := governs[p]; ok {
			return out
		}
		var out []*Section
		for _, c := range serverConfigs(cfg) {
			var gov *Section
			for _, s := range fileChain(c, filepath.Dir(p)+"/") {
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
	limitOnly := func(s *Section) bool { return *s.Conf.Override&OrLimit != 0 && *s.Conf.Override&OrAuthCfg == 0 }
	// The files that need AuthConfig, by the sections governing them.
	others := map[*Section][]string{}
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
			if !limitOnly(g) || g.directive == nil {
				continue
			}
			var line *apacheconf.Directive // g's AllowOverride
			for _, x := range g.directive.Block {
				if x.Is("AllowOverride") {
					line = x
				}
			}
			if line == nil {
				continue
			}
			indent := strings.Repeat(" ", max(line.Pos.Col-1, 0))
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
			at := strings.Repeat(" ", max(g.directive.Pos.Col-1, 0))
			end := max(g.directive.EndLine, g.directive.Pos.Line)
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
			if uint16(info.Where)&OrAuthCfg != 0 && uint16(info.Where)&override == 0 {
				needs = true
			}
		}
		return nil
	})
	return needs
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

// locationsDisjoint reports whether no URL matches both of two plain
// <Location> paths: one must begin with the other; and in 2.4 the shorter
// one matches only where a "/" or the end follows it in the URL (unless
// it ends in "/" itself).
func locationsDisjoint(cfg *Config, a, b string) bool {
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
	file = filepath.Join(cfg.DocumentRoot, loc) + "/"
	mapped := false
	for _, a := range cfg.Aliases {
		switch {
		case a.Regex != nil:
			if p, ok := anchoredPrefix(a.Regex.String()); ok && !strings.HasPrefix(p, loc) && !strings.HasPrefix(loc, p) {
				continue // it matches only URLs that begin otherwise
			}
			others = append(others, aliasTree(a)) // it may match some of its URLs
		case !mapped && aliasPrefix(loc, a.Fake) > 0:
			if len(others) > 0 {
				return "", nil, "an AliasMatch before the Alias of this <Location> may map some of its URLs elsewhere"
			}
			file, mapped = filepath.Join(a.Real, loc[aliasPrefix(loc, a.Fake):])+"/", true
		case strings.HasPrefix(a.Fake, strings.TrimSuffix(loc, "/")):
			// An alias for URLs below it (or at it, as "/api" for
			// <Location /api/>): those map to its target.
			others = append(others, filepath.Clean(a.Real)+"/")
		}
	}
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

// aliasPrefix is mod_alias's alias_matches: a run of slashes in the alias
// matches any run in the URL path, and the match ends on a segment
// boundary. It returns the number of bytes of uri matched, or 0.
func aliasPrefix(uri, alias string) int {
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

// dirChain lists the plain <Directory> sections that apply to a directory
// path, shallowest first (excluding self).
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

func dirChain(cfg *Config, path string, self *Section) []*Section {
	var out []*Section
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
	return out
}

// dirAtDepth is the directory of path (ending in "/") with depth slashes.
func dirAtDepth(path string, depth int) (string, bool) {
	n := 0
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			n++
			if n == depth {
				return path[:i+1], true
			}
		}
	}
	return "", false
}

// renderScope writes the Require lines of a section from its layers.
func renderScope(cfg *Config, compat, authz *layers, indent string) []string {
	classes := methodClasses(cfg, compat, authz)
	if len(classes) == 1 {
		return policy.Render(scopeTree(cfg, compat, authz, classes[0].rep), indent)
	}
	var out []string
	for _, cl := range classes {
		if cl.rest {
			out = append(out, indent+"<LimitExcept "+strings.Join(cl.except, " ")+">")
		} else {
			out = append(out, indent+"<Limit "+strings.Join(cl.names, " ")+">")
		}
		out = append(out, policy.Render(scopeTree(cfg, compat, authz, cl.rep), indent+"    ")...)
		if cl.rest {
			out = append(out, indent+"</LimitExcept>")
		} else {
			out = append(out, indent+"</Limit>")
		}
	}
	return out
}

type methodClass struct {
	rep    int      // a method number of the class
	names  []string // its named methods
	rest   bool     // the class of unknown methods: written as LimitExcept
	except []string
}

// methodClasses groups the methods that the layers treat alike.
func methodClasses(cfg *Config, compat, authz *layers) []methodClass {
	names := cfg.methodNames
	if names == nil {
		names = methodNames(cfg.Methods)
	}
	if uniformMethods(compat, authz) {
		// No <Limit> anywhere in the layers: one class, every method.
		return []methodClass{{rep: policy.MethodInvalid, rest: true, names: names}}
	}
	key := func(m int) string { return methodKey(compat, authz, m) }
	restKey := key(policy.MethodInvalid)
	var classes []methodClass
	idx := map[string]int{restKey: 0}
	classes = append(classes, methodClass{rep: policy.MethodInvalid, rest: true})
	for _, name := range names {
		m := cfg.Methods.Number(name)
		k := key(m)
		i, ok := idx[k]
		if !ok {
			i = len(classes)
			idx[k] = i
			classes = append(classes, methodClass{rep: m})
		}
		classes[i].names = append(classes[i].names, name)
	}
	if len(classes) == 1 {
		return classes
	}
	for _, c := range classes[1:] {
		classes[0].except = append(classes[0].except, c.names...)
	}
	return append(classes[1:], classes[0])
}

// methodNames are the methods a translation names, in its order: the
// built-in ones, then the registered ones, by number.
func methodNames(ms *policy.Methods) []string {
	names := []string{"GET", "PUT", "POST", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PROPFIND", "PROPPATCH",
		"MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "VERSION-CONTROL", "CHECKOUT", "UNCHECKOUT", "CHECKIN", "UPDATE",
		"LABEL", "REPORT", "MKWORKSPACE", "MKACTIVITY", "BASELINE-CONTROL", "MERGE"}
	registered := ms.Registered()
	custom := make([]string, 0, len(registered))
	for name := range registered {
		custom = append(custom, name)
	}
	slices.SortFunc(custom, func(a, b string) int { return registered[a] - registered[b] })
	return slices.Clip(append(names, custom...))
}

// uniformMethods reports whether the layers decide every method alike:
// no line of them is limited to some methods, so methodKey would give
// every method the same key.
func uniformMethods(compat, authz *layers) bool {
	if c := compat.compat; c != nil {
		for m := 1; m < policy.MaxMethods; m++ {
			if c.Order[m] != c.Order[0] || c.Satisfy[m] != c.Satisfy[0] {
				return false
			}
		}
		for _, a := range c.Allows {
			if a.Methods != policy.AllMethods {
				return false
			}
		}
		for _, a := range c.Denys {
			if a.Methods != policy.AllMethods {
				return false
			}
		}
	}
	for m := 1; m < policy.MaxMethods && compat.satSet != 0; m++ { // unset: all alike
		if compat.sat22[m] != compat.sat22[0] {
			return false
		}
	}
	for _, q := range authz.req22 {
		if q.Methods != policy.AllMethods {
			return false
		}
	}
	if authz.authz != nil && authz.authz.Root != nil {
		return uniformTree(authz.authz.Root)
	}
	return true
}

func uniformTree(n *policy.Node) bool {
	if n.Methods != policy.AllMethods {
		return false
	}
	for _, c := range n.Children {
		if !uniformTree(c) {
			return false
		}
	}
	return true
}

func methodKey(compat, authz *layers, m int) string {
	bit := policy.MethodMask(1) << uint(m)
	var b strings.Builder
	if c := compat.compat; c != nil {
		fmt.Fprintf(&b, "o%d s%d ", c.Order[m], c.Satisfy[m])
		for i, a := range c.Allows {
			if a.Methods&bit != 0 {
				fmt.Fprintf(&b, "a%d ", i)
			}
		}
		for i, a := range c.Denys {
			if a.Methods&bit != 0 {
				fmt.Fprintf(&b, "d%d ", i)
			}
		}
	}
	fmt.Fprintf(&b, "S%d ", compat.sat22[m])
	for i, q := range authz.req22 {
		if q.Methods&bit != 0 {
			fmt.Fprintf(&b, "r%d ", i)
		}
	}
	if authz.authz != nil && authz.authz.Root != nil {
		fmt.Fprintf(&b, "z%t", authz.authz.Root.Methods&bit != 0)
		keyTree(&b, authz.authz.Root, bit)
	}
	return b.String()
}

func keyTree(b *strings.Builder, n *policy.Node, bit policy.MethodMask) {
	fmt.Fprintf(b, "(%t", n.Methods&bit != 0)
	for _, c := range n.Children {
		keyTree(b, c, bit)
	}
	b.WriteString(")")
}

// scopeTree is the Require tree deciding as the two layers do for method m.
func scopeTree(cfg *Config, compat, authz *layers, m int) *policy.Node {
	granted := &policy.Node{Kind: policy.Leaf, Provider: policy.ProvAllGranted, Methods: policy.AllMethods}
	c := compatTree(compat.compat, m)
	var sat policy.Satisfy
	var r *policy.Node
	if cfg.Semantics == Legacy22 {
		sat = compat.sat22[m]
		r = require22Tree(cfg, authz, m)
	} else {
		if compat.compat != nil {
			sat = compat.compat.Satisfy[m]
		}
		if authz.authz != nil && authz.authz.Root != nil {
			r = forMethod(authz.authz.Root, m)
		}
	}
	switch {
	case r == nil && sat == policy.SatisfyAny && cfg.Semantics != Legacy22:
		// 2.4: compat fails, then no Require: granted.
		return granted
	case r == nil:
		return c
	case sat == policy.SatisfyAny:
		return &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: []*policy.Node{c, r}}
	}
	return &policy.Node{Kind: policy.All, Methods: policy.AllMethods, Children: []*policy.Node{c, r}}
}

// forMethod keeps the parts of a Require tree that apply to method m,
// as a node limited to other methods is granted under RequireAll and
// neutral under RequireAny.
func forMethod(n *policy.Node, m int) *policy.Node {
	bit := policy.MethodMask(1) << uint(m)
	if n.Methods&bit == 0 {
		return nil
	}
	if n.Kind == policy.Leaf {
		c := *n
		c.Methods = policy.AllMethods
		return &c
	}
	c := *n
	c.Methods = policy.AllMethods
	c.Children = nil
	for _, ch := range n.Children {
		if k := forMethod(ch, m); k != nil {
			c.Children = append(c.Children, k)
		}
	}
	if len(c.Children) == 0 {
		return nil
	}
	return &c
}

// compatTree is Order/Allow/Deny for method m as a Require tree.
func compatTree(c *policy.Compat, m int) *policy.Node {
	all := func(p policy.Provider) *policy.Node {
		return &policy.Node{Kind: policy.Leaf, Provider: p, Methods: policy.AllMethods}
	}
	if c == nil {
		return all(policy.ProvAllGranted)
	}
	bit := policy.MethodMask(1) << uint(m)
	match := func(list []policy.AccessRule) (*policy.Node, bool, bool) {
		any := &policy.Node{Kind: policy.Any, Methods: policy.AllMethods}
		hasAll, empty := false, true
		for _, a := range list {
			if a.Methods&bit == 0 {
				continue
			}
			empty = false
			var leaf *policy.Node
			switch a.Kind {
			case policy.AccessAll:
				hasAll = true
				continue
			case policy.AccessIP:
				leaf = &policy.Node{Kind: policy.Leaf, Provider: policy.ProvIP, Subnets: []policy.Subnet{a.Subnet}}
			case policy.AccessHost:
				leaf = &policy.Node{Kind: policy.Leaf, Provider: policy.ProvHost, Args: []string{a.Name}}
			case policy.AccessEnv:
				leaf = &policy.Node{Kind: policy.Leaf, Provider: policy.ProvEnv, Args: []string{a.Name}}
			case policy.AccessNotEnv:
				leaf = &policy.Node{Kind: policy.All, Children: []*policy.Node{all(policy.ProvAllGranted),
					{Kind: policy.Leaf, Provider: policy.ProvEnv, Args: []string{a.Name}, Negate: true, Methods: policy.AllMethods}}}
			}
			leaf.Methods = policy.AllMethods
			any.Children = append(any.Children, leaf)
		}
		return any, hasAll, empty
	}
	allow, allowAll, allowEmpty := match(c.Allows)
	deny, denyAll, denyEmpty := match(c.Denys)
	none := func() *policy.Node { // not matched by the deny list
		n := *deny
		n.Negate = true
		return &policy.Node{Kind: policy.All, Methods: policy.AllMethods, Children: []*policy.Node{all(policy.ProvAllGranted), &n}}
	}
	switch c.Order[m] {
	case policy.DenyAllow:
		switch {
		case allowAll || denyEmpty:
			return all(policy.ProvAllGranted)
		case denyAll && allowEmpty:
			return all(policy.ProvAllDenied)
		case denyAll:
			return allow
		case allowEmpty:
			return none()
		}
		return &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: []*policy.Node{allow, none()}}
	default: // allow,deny and mutual-failure
		switch {
		case denyAll || allowEmpty:
			return all(policy.ProvAllDenied)
		case allowAll && denyEmpty:
			return all(policy.ProvAllGranted)
		case allowAll:
			return none()
		case denyEmpty:
			return allow
		}
		n := *deny
		n.Negate = true
		return &policy.Node{Kind: policy.All, Methods: policy.AllMethods, Children: []*policy.Node{allow, &n}}
	}
}

// require22Tree is 2.2's Require lines for method m as a 2.4 tree: the
// group file module decides first where it has lines and is authoritative,
// so user lines next to group lines never matter (they are dropped).
func require22Tree(cfg *Config, l *layers, m int) *policy.Node {
	bit := policy.MethodMask(1) << uint(m)
	var users, groups []*policy.Node
	for _, q := range l.req22 {
		if q.Methods&bit == 0 {
			continue
		}
		n := &policy.Node{Kind: policy.Leaf, Methods: policy.AllMethods, Args: q.Words[1:]}
		switch strings.ToLower(q.Words[0]) {
		case "valid-user":
			n.Provider = policy.ProvValidUser
			users = append(users, n)
		case "user":
			n.Provider = policy.ProvUser
			users = append(users, n)
		case "group":
			n.Provider = policy.ProvGroup
			if l.dbmGroups && cfg.Modules["authz_dbm_module"] {
				// AUTH-05: mod_authz_dbm's groups are 2.4's Require dbm-group.
				dbm := &policy.Node{Kind: policy.Leaf, Methods: policy.AllMethods, Provider: policy.ProvOther, Args: append([]string{"dbm-group"}, q.Words[1:]...)}
				if !l.groupFile {
					n = dbm
				} else {
					n = &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: []*policy.Node{n, dbm}}
				}
			}
			groups = append(groups, n)
		case "ldap-user", "ldap-group", "ldap-dn", "ldap-attribute", "ldap-filter":
			if cfg.Modules["authnz_ldap_module"] {
				// mod_authnz_ldap reads them the same way in 2.4.
				n.Provider, n.Args = policy.ProvOther, []string{strings.ToLower(q.Words[0]), q.Raw}
				users = append(users, n)
				continue
			}
			fallthrough
		default:
			// authz_default refuses an unknown keyword with 401: a user
			// must authenticate, then nobody is granted.
			n.Provider = policy.ProvUser
			n.Args = []string{"::no-such-user::"} // a user name cannot hold ":"
			users = append(users, n)
		}
	}
	pick := users
	if len(groups) > 0 && (cfg.GroupFirst || len(users) == 0) {
		pick = groups
	}
	if len(pick) == 0 {
		return nil
	}
	return &policy.Node{Kind: policy.Any, Methods: policy.AllMethods, Children: pick}
}

// atEnd as an edit's from and to appends its text to the file.
const atEnd = 1 << 30

// applyEdits rewrites a file's text: the edits es made, the LoadModule
// line of mod_access_compat commented out unless keepCompat, and with
// rename the catalogue's renames and removals (renameLine) made in the
// same pass, whose number it returns.
func applyEdits(src []byte, es []edit, keepCompat, rename bool) (string, int) {
	// starts[k] is where line k+1 begins; the text after the last
	// newline, even empty, is a line too.
	starts := make([]int, 1, bytes.Count(src, []byte("\n"))+2)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	lines := len(starts)
	starts = append(starts, len(src))
	sort.SliceStable(es, func(i, j int) bool { return es[i].from < es[j].from })
	size := len(src)
	for _, e := range es {
		for _, t := range e.text {
			size += len(t) + 1
		}
	}
	// The source is looked at and copied, never kept: a string over it,
	// not a copy of it.
	text := unsafe.String(unsafe.SliceData(src), len(src))
	var b strings.Builder
	b.Grow(size + 1024)
	// Every line is written through line, unless nothing is to be done to
	// any: then the file is copied a stretch at a time.
	renamed := 0
	perLine := rename || !keepCompat
	line := func(l string) {
		if !keepCompat && loadsAccessCompat(l) {
			b.WriteString("# orderly DIR-10: mod_access_compat no longer needed: ")
			b.WriteString(l)
			return
		}
		if !keepCompat {
			if rest, ok := logLevelWithoutCompat(l); ok {
				// A LogLevel for a module not loaded stops Apache.
				b.WriteString("# orderly DIR-10: mod_access_compat no longer loaded: ")
				b.WriteString(strings.TrimLeft(l, " \t"))
				if !strings.HasSuffix(l, "\n") {
					b.WriteByte('\n')
				}
				if rest != "" {
					b.WriteString(rest)
				}
				return
			}
		}
		if rename && renameLine(&b, l) {
			renamed++
		} else if !rename {
			b.WriteString(l)
		}
	}
	copyLines := func(text string) {
		if !perLine {
			b.WriteString(text)
			return
		}
		for l := range strings.Lines(text) {
			line(l)
		}
	}
	writeText := func(t string) {
		if perLine {
			copyLines(t + "\n")
			return
		}
		b.WriteString(t)
		b.WriteByte('\n')
	}
	next := 1 // the first line not yet copied
	for _, e := range es {
		if e.from == atEnd {
			break
		}
		if e.from < next || e.to > lines {
			continue // overlaps an edit already made, or past the end
		}
		copyLines(text[starts[next-1]:starts[e.from-1]])
		if e.from > lines && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n') // inserted after a last line with no newline
		}
		for _, t := range e.text {
			writeText(t)
		}
		if keepCompat {
			for _, t := range e.withCompat {
				writeText(t)
			}
		}
		next = e.to + 1
	}
	if next <= lines {
		copyLines(text[starts[next-1]:])
	}
	for _, e := range es {
		if e.from != atEnd {
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		for _, t := range e.text {
			writeText(t)
		}
	}
	return b.String(), renamed
}

// logLevelWithoutCompat reports whether l is a LogLevel line with a level
// for mod_access_compat, and returns it without that word ("" where
// nothing else is left).
func logLevelWithoutCompat(l string) (string, bool) {
	if w, ok := firstWord(l); ok && !strings.EqualFold(w, "LogLevel") {
		return "", false
	}
	f := strings.Fields(l)
	if len(f) < 2 || !strings.EqualFold(f[0], "LogLevel") {
		return "", false
	}
	kept := []string{f[0]}
	for _, w := range f[1:] {
		mod, _, found := strings.Cut(w, ":")
		switch strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(mod), "mod_"), ".c") {
		case "access_compat", "access_compat_module":
			if found {
				continue
			}
		}
		kept = append(kept, w)
	}
	if len(kept) == len(f) {
		return "", false
	}
	if len(kept) == 1 {
		return "", true
	}
	indent := leadingBlanks(l)
	return indent + strings.Join(kept, " ") + "\n", true
}

// loadsAccessCompat reports whether the line l loads mod_access_compat.
func loadsAccessCompat(l string) bool {
	if w, ok := firstWord(l); ok && !strings.EqualFold(w, "LoadModule") {
		return false
	}
	var buf [4]string
	t := fields(l, &buf)
	return len(t) >= 2 && strings.EqualFold(t[0], "LoadModule") && t[1] == "access_compat_module"
}

// fields returns the first (up to four) words of the line l, as
// strings.Fields would, without allocating: they are kept in buf.
func fields(l string, buf *[4]string) []string {
	for i := 0; i < len(l); i++ {
		if l[i] >= utf8.RuneSelf {
			f := strings.Fields(l) // Unicode white space: the slow way
			return f[:copy(buf[:], f)]
		}
	}
	n := 0
	for i := 0; i < len(l) && n < len(buf); {
		for i < len(l) && asciiSpace(l[i]) {
			i++
		}
		j := i
		for j < len(l) && !asciiSpace(l[j]) {
			j++
		}
		if j > i {
			buf[n] = l[i:j]
			n++
		}
		i = j
	}
	return buf[:n]
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// anyFold reports whether one of texts contains substr (containsFold).
func anyFold(texts []string, substr string) bool {
	return slices.ContainsFunc(texts, func(t string) bool { return containsFold(t, substr) })
}

// containsFold reports whether s contains substr, a lower-case ASCII
// word, in any case. It looks at a whole file, often for a word that is
// not there: seven places at a time are tested for the word's first two
// letters, and only where both are found is the rest compared.
func containsFold[T string | []byte](s T, substr string) bool {
	n, i := len(substr), 0
	if n >= 2 {
		c0, c1 := uint64(substr[0])*swar.Ones, uint64(substr[1])*swar.Ones
		for ; i+8 <= len(s); i += 7 {
			x := swar.Load(s, i) | 0x20*swar.Ones // letters in lower case
			// The high bit of each byte equal to the first letter, and
			// of each equal to the second.
			m0, m1 := swar.Zero(x^c0), swar.Zero(x^c1)
			// Places 0 to 6 of the word where both letters follow on.
			for m := m0 & (m1 >> 8) & ((0x80 * swar.Ones) >> 8); m != 0; m &= m - 1 {
				if foldAt(s, i+bits.TrailingZeros64(m)/8, substr) {
					return true
				}
			}
		}
	}
	for ; i <= len(s)-n; i++ {
		if foldAt(s, i, substr) {
			return true
		}
	}
	return false
}

// foldAt reports whether s holds substr at i, in any ASCII case.
func foldAt[T string | []byte](s T, i int, substr string) bool {
	if i+len(substr) > len(s) {
		return false
	}
	for j := range len(substr) {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != substr[j] {
			return false
		}
	}
	return true
}

// authTypeSet reports whether an AuthType (not None) is in force in s.
func authTypeSet(cfg *Config, s *Section) bool {
	chain, _ := inheritedChain(cfg, s)
	return authTypeIn(append(chain, s))
}

// authTypeIn reports whether an AuthType (not None) is in force after
// secs merge, in this order.
func authTypeIn(secs []*Section) bool {
	set := false
	for _, a := range secs {
		if a.Conf.AuthType != nil {
			set = *a.Conf.AuthType != ""
		}
	}
	return set
}

// authTypeOnly fails closed a section that sets an AuthType and no access
// rule, where no Require is in force (2.4-compat): Apache answered 500
// (AH01627) there, and the Require the translation gives the sections
// before it would let the request through. It writes Require all denied
// after the AuthType line.
func authTypeOnly(cfg *Config, s *Section) ([]edit, string) {
	if cfg.Semantics != Compat24 || *s.Conf.AuthType == "" {
		return nil, ""
	}
	_, authz, why := inherited(cfg, s)
	if why == "" {
		if authz.authz != nil && authz.authz.Root != nil {
			return nil, "" // a Require is in force
		}
		why = "AuthType with no Require in force: Apache 2.4 answers 500 (AH01627) here; decide what was meant"
	}
	var at *apacheconf.Directive
	for _, d := range s.directive.Block {
		if d.LowerName() == "authtype" {
			at = d
		}
	}
	if at == nil {
		return nil, why // inside a container: the section's review says so
	}
	indent := strings.Repeat(" ", max(at.Pos.Col-1, 0))
	end := max(at.EndLine, at.Pos.Line)
	return []edit{{from: end + 1, to: end, text: []string{
		indent + "# orderly DIR-10: NEEDS REVIEW, refused until translated by hand: " + why,
		indent + "Require all denied"}}}, why
}

// selfDenies reports whether a section's own host-access rules refuse
// every request of every method with Satisfy All (2.4-compat), so that
// nothing it inherits matters.
func selfDenies(cfg *Config, s *Section) bool {
	c := s.Conf.Compat
	if c == nil {
		return false
	}
	for m := 0; m < policy.MaxMethods; m++ {
		sat := c.Satisfy[m]
		if cfg.Semantics == Legacy22 {
			if s.Conf.Satisfy22Set&(1<<uint(m)) == 0 {
				return false // 2.2: Satisfy is inherited from core
			}
			sat = s.Conf.Satisfy22[m]
		}
		if sat == policy.SatisfyAny {
			return false
		}
		if t := compatTree(c, m); t.Kind != policy.Leaf || t.Provider != policy.ProvAllDenied {
			return false
		}
	}
	return true
}

// renames are the line-level changes of the upgrade catalogue that do not
// depend on a section: a directive renamed, or removed with a comment.
var renames = map[string]struct{ id, to, why string }{
	"maxclients":                  {"DIR-02", "MaxRequestWorkers", ""},
	"maxrequestsperchild":         {"DIR-01", "MaxConnectionsPerChild", ""},
	"namevirtualhost":             {"DIR-08", "", "NameVirtualHost has no effect in 2.4"},
	"defaulttype":                 {"DIR-03", "", "DefaultType has no effect in 2.4; use ForceType or AddType"},
	"acceptmutex":                 {"DIR-09", "", "replaced by Mutex"},
	"lockfile":                    {"DIR-09", "", "replaced by Mutex"},
	"sslmutex":                    {"DIR-09", "", "replaced by Mutex"},
	"rewritelock":                 {"DIR-09", "", "replaced by Mutex"},
	"rewritelog":                  {"BEH-09", "", "use LogLevel rewrite:traceN"},
	"rewriteloglevel":             {"BEH-09", "", "use LogLevel rewrite:traceN"},
	"authzuserauthoritative":      {"DIR-11", "", "removed in 2.4; RequireAll/RequireAny decide how Require lines combine"},
	"authzgroupfileauthoritative": {"DIR-11", "", "removed in 2.4; RequireAll/RequireAny decide how Require lines combine"},
	"authzdefaultauthoritative":   {"DIR-11", "", "removed in 2.4"},
	"authzdbmauthoritative":       {"DIR-11", "", "removed in 2.4"},
	"authzownerauthoritative":     {"DIR-11", "", "removed in 2.4"},
	"authzldapauthoritative":      {"DIR-11", "", "removed in 2.4"},
}

// goneModules are 2.2 modules that 2.4 renamed or dropped (BLD-02).
var goneModules = map[string]string{
	"authn_alias_module":   "authn_core_module mod_authn_core.so",
	"authz_default_module": "",
	"authn_default_module": "",
	"disk_cache_module":    "cache_disk_module mod_cache_disk.so",
	"mem_cache_module":     "",
}

// modulePath is the directory part of a LoadModule line's file.
func modulePath(file string) string {
	file = strings.Trim(file, `"`)
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[:i+1]
	}
	return ""
}

// renameLine writes the line l (with its newline) to b, renamed or
// removed if the catalogue says so, and reports whether it was.
func renameLine(b *strings.Builder, l string) bool {
	// Most lines are none of those changed, as their first word says.
	if w, ok := firstWord(l); ok && !renamed(w) {
		b.WriteString(l)
		return false
	}
	var buf [4]string
	f := fields(l, &buf)
	if len(f) == 0 || strings.HasPrefix(f[0], "#") {
		b.WriteString(l)
		return false
	}
	indent := leadingBlanks(l)
	// The name in lower case, in a buffer: looked up and compared, never
	// kept, so not allocated.
	var lb [32]byte
	lower := appendLower(lb[:0], f[0])
	if r, ok := renames[string(lower)]; ok {
		if r.to != "" {
			b.WriteString(indent + "# orderly " + r.id + ": " + f[0] + " renamed " + r.to + "\n")
			b.WriteString(indent + r.to + strings.TrimPrefix(strings.TrimLeft(l, " \t"), f[0]))
			return true
		}
		b.WriteString(indent + "# orderly " + r.id + ": " + r.why + ": " + strings.TrimLeft(l, " \t"))
		return true
	}
	if string(lower) == "keepalive" && len(f) == 2 && !strings.EqualFold(f[1], "on") && !strings.EqualFold(f[1], "off") {
		v := "On"
		if f[1] == "0" {
			v = "Off"
		}
		b.WriteString(indent + "# orderly DIR-07: KeepAlive takes only On or Off (2.2 read " + f[1] + " as " + v + ")\n")
		b.WriteString(indent + "KeepAlive " + v + "\n")
		return true
	}
	if string(lower) == "loadmodule" && len(f) >= 2 {
		if to, ok := goneModules[f[1]]; ok {
			b.WriteString(indent + "# orderly BLD-02: " + f[1] + " is not part of 2.4: " + strings.TrimLeft(l, " \t"))
			if to != "" {
				if !strings.HasSuffix(l, "\n") {
					b.WriteByte('\n') // the last line, with none at its end
				}
				id, file, _ := strings.Cut(to, " ")
				dir := ""
				if len(f) >= 3 {
					dir = modulePath(f[2])
				}
				b.WriteString(indent + "LoadModule " + id + " " + dir + file + "\n")
			}
			return true
		}
		if slices.Contains(builtinModules, f[1]) {
			// Compiled into some 2.4 builds (Debian's): loading it there
			// stops the server; shared elsewhere (RHEL's).
			nl := ""
			if !strings.HasSuffix(l, "\n") {
				nl = "\n"
			}
			b.WriteString(indent + "# orderly ORD-06: " + f[1] + " is built into some 2.4 servers, which refuse to load it again\n")
			b.WriteString(indent + "<IfModule !" + f[1] + ">\n")
			b.WriteString("    " + l + nl)
			b.WriteString(indent + "</IfModule>\n")
			return true
		}
	}
	b.WriteString(l)
	return false
}

// firstWord returns the first word of l, as fields would, when l's blanks
// before it and after it are ASCII: ok is false where fields must decide
// (a byte from 0x80, which may be Unicode white space).
func firstWord(l string) (w string, ok bool) {
	i := 0
	for i < len(l) && asciiSpace(l[i]) {
		i++
	}
	j := i
	for j < len(l) && !asciiSpace(l[j]) {
		if l[j] >= utf8.RuneSelf {
			return "", false
		}
		j++
	}
	return l[i:j], true
}

// renamed reports whether renameLine may change a line whose first word
// is w: a name of renames, KeepAlive or LoadModule, in any case.
func renamed(w string) bool {
	var lower [32]byte
	if len(w) > len(lower) || renamedLens&(1<<len(w)) == 0 {
		return false // no name is that long (TestRenamed)
	}
	l := appendLower(lower[:0], w)
	_, ok := renames[string(l)]
	return ok || string(l) == "keepalive" || string(l) == "loadmodule"
}

// renamedLens has bit n set when a name renameLine acts on is n long.
var renamedLens = func() uint64 {
	lens := uint64(1)<<len("keepalive") | 1<<len("loadmodule")
	for n := range renames {
		lens |= 1 << len(n)
	}
	return lens
}()

// appendLower appends s in lower case (ASCII letters only, as httpd
// compares directive names).
func appendLower(dst []byte, s string) []byte {
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// userOrGroup reports whether text has a User or Group line (Unix only in
// 2.2's core, mod_unixd's in 2.4): the name first on the line, after
// blanks, then blanks and a value.
func userOrGroup(text string) bool {
	for l := range strings.Lines(text) {
		l = strings.TrimLeft(l, " \t")
		var rest string
		switch {
		case len(l) > 4 && strings.EqualFold(l[:4], "user"):
			rest = l[4:]
		case len(l) > 5 && strings.EqualFold(l[:5], "group"):
			rest = l[5:]
		default:
			continue
		}
		if v := strings.TrimLeft(rest, " \t"); len(v) < len(rest) && v != "" && !strings.ContainsRune("\t\n\f\r ", rune(v[0])) {
			return true
		}
	}
	return false
}

// addModules returns text with the LoadModule lines 2.4 needs where a
// configuration that loads its modules lacks them: the core authorization
// and authentication modules (ERR-02, ERR-04) and an MPM (2.2 had one
// compiled in), and mod_access_compat where compat: lines left as they
// are still use it, which a 2.2 tree never loads (its Order/Allow/Deny
// were mod_authz_host's). They go after the last LoadModule line of text
// (ml, from loadsModules), with the path of the lines before them.
func addModules(text string, ml moduleLines, have map[string]bool, all []string, compat bool) []byte {
	if ml.end == 0 {
		return []byte(text)
	}
	dir := ml.dir
	var add []string
	mpm := false
	for m := range have {
		if strings.HasPrefix(m, "mpm_") {
			mpm = true
		}
	}
	if !mpm {
		add = append(add, "# orderly: Apache 2.4 loads its MPM as a module (2.2's was compiled in)\n", "LoadModule mpm_prefork_module "+dir+"mod_mpm_prefork.so\n")
	}
	for _, m := range []struct {
		id, file, why string
		need          func() bool
	}{
		{"authz_core_module", "mod_authz_core.so", "ERR-02: needed by 2.4's Require and Auth* directives", nil},
		{"authz_host_module", "mod_authz_host.so", "AUTH-01: needed by 2.4's Require ip and Require host", nil},
		{"authn_core_module", "mod_authn_core.so", "ERR-04: needed by 2.4's Auth* directives", nil},
		{"access_compat_module", "mod_access_compat.so", "DIR-10: the Order/Allow/Deny/Satisfy lines left as they are need mod_access_compat", func() bool { return compat }},
		{"lbmethod_byrequests_module", "mod_lbmethod_byrequests.so", "ERR-03: 2.4's balancer methods are modules of their own", func() bool { return have["proxy_balancer_module"] }},
		{"slotmem_shm_module", "mod_slotmem_shm.so", "ERR-03: 2.4's mod_proxy_balancer needs a slotmem provider", func() bool { return have["proxy_balancer_module"] }},
		{"socache_shmcb_module", "mod_socache_shmcb.so", "ERR-03: 2.4's shmcb session cache is a module of its own", func() bool { return anyFold(all, "shmcb") }},
		{"filter_module", "mod_filter.so", "ERR-03: 2.4's AddOutputFilterByType is mod_filter's", func() bool { return anyFold(all, "addoutputfilterbytype") }},
	} {
		if !have[m.id] && (m.need == nil || m.need()) {
			add = append(add, "# orderly "+m.why+"\n", "LoadModule "+m.id+" "+dir+m.file+"\n")
		}
	}
	if !have["unixd_module"] && slices.ContainsFunc(all, userOrGroup) {
		// Built into Debian's Apache (where loading it again is an
		// error), a module of its own in a default build: load it where
		// it is not there yet.
		add = append(add, "# orderly ERR-01: 2.4's User and Group are mod_unixd's\n",
			"<IfModule !unixd_module>\n", "    LoadModule unixd_module "+dir+"mod_unixd.so\n", "</IfModule>\n")
	}
	if len(add) == 0 {
		return []byte(text)
	}
	// The file's text is copied once, with the lines added.
	size := len(text) + 1
	for _, a := range add {
		size += len(a)
	}
	out := make([]byte, 0, size)
	out = append(out, text[:ml.end]...)
	if !strings.HasSuffix(text[:ml.end], "\n") {
		out = append(out, '\n') // the last line of a file without a newline at its end
	}
	for _, a := range add {
		out = append(out, a...)
	}
	return append(out, text[ml.end:]...)
}

// moduleLines is where a text loads modules: end is the offset just past
// its last LoadModule line (0: it has none), and dir the directory part of
// the last such line that names one ("modules/" if none does).
type moduleLines struct {
	end int
	dir string
}

// loadsModules adds the modules text loads to have and reports where.
func loadsModules(text string, have map[string]bool) moduleLines {
	ml := moduleLines{dir: "modules/"}
	var buf [4]string
	at := 0
	// The modules added go after the last LoadModule line, or after the
	// end of the <IfModule> section it is in.
	depth, inSection := 0, false
	for l := range strings.Lines(text) {
		at += len(l)
		w, ok := firstWord(l)
		switch {
		case ok && strings.EqualFold(w, "<IfModule") || strings.HasPrefix(strings.ToLower(w), "<ifmodule"):
			depth++
			continue
		case ok && strings.EqualFold(w, "</IfModule>"):
			if depth > 0 {
				depth--
			}
			if depth == 0 && inSection {
				ml.end, inSection = at, false
			}
			continue
		case ok && !strings.EqualFold(w, "LoadModule"):
			continue
		}
		f := fields(l, &buf)
		if len(f) >= 3 && strings.EqualFold(f[0], "LoadModule") {
			have[f[1]] = true
			if depth == 0 {
				ml.end = at
			} else {
				inSection = true
			}
			if j := strings.LastIndexByte(f[2], '/'); j >= 0 {
				ml.dir = strings.Trim(f[2][:j+1], `"`)
			}
		}
	}
	return ml
}

// satisfiesAny reports whether a section sets Satisfy Any for some method
// (2.2): "Satisfy All" is the default's behaviour.
func satisfiesAny(c *DirConf) bool {
	for m := range c.Satisfy22 {
		if c.Satisfy22Set&(1<<uint(m)) != 0 && c.Satisfy22[m] == policy.SatisfyAny {
			return true
		}
	}
	return false
}

// htFile is an .htaccess file to translate, with the configuration (the
// main server's or a virtual host's) whose sections it merges below.
type htFile struct {
	sec *Section
	cfg *Config
	// closed: an .htaccess file translate cannot read as Apache does,
	// refused until translated by hand (closeHtaccess); sec is nil.
	path   string
	closed []edit
}

// findHtaccess parses the .htaccess files under the document roots and
// Alias targets that hold access rules, each with its chain: the
// <Directory> sections and .htaccess files above it, in Apache's merge
// order. Files whose translation would not mean what they meant are left
// as they are and reported: one that is refused (Apache answers 500 for
// its directory) or has lines AllowOverride Nonfatal skips, since the
// AuthConfig that Require needs could change that; one with access rules
// in a nested section; one below a wildcard or regex <Directory>
// section; one that servers with different sections reach.
// An htSearch is the search for a configuration's .htaccess files, under
// way (startHtaccess) while the rest is translated, until the files found
// are read (findHtaccess).
type htSearch struct {
	cfg    *Config
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
	cfg *Config
}

// startHtaccess starts the search for the .htaccess files under the
// document roots, Alias targets and UserDir directories of cfg.
func startHtaccess(cfg *Config) *htSearch {
	type root = htRoot
	roots := []root{{cfg.DocumentRoot, cfg}}
	// A regex alias's target only where it has no back-reference (walk's
	// Roots).
	addAliases := func(c *Config) {
		for _, a := range c.Aliases {
			if a.Regex == nil || !strings.Contains(a.Real, "$") {
				roots = append(roots, root{a.Real, c})
			}
		}
	}
	// UserDir: "/home/*/public_html" is each user's directory; a path with
	// no "*" holds one directory per user.
	addUserDirs := func(c *Config) {
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
	go func() { hs.found <- dirscan.Find(hs.search, maxHtaccessDirs) }()
	return hs
}

// findHtaccess reads the .htaccess files the search found, each with the
// configurations that reach it.
func findHtaccess(hs *htSearch) ([]htFile, []Difference, []string) {
	cfg, roots, search, res := hs.cfg, hs.roots, hs.search, <-hs.found
	hs.truncated = res.Truncated
	var reviews []Difference
	if res.Truncated {
		reviews = append(reviews, Difference{Pos: apacheconf.Pos{File: search[0].Dir},
			Text: fmt.Sprintf("the search for .htaccess files stopped after %d directories; those further down were not translated", maxHtaccessDirs)})
	}
	found := map[string][]*Config{}
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
	seen := map[string]*Section{}
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
			if c.Semantics == Compat24 {
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
		if c := c0(found[p]); c.Semantics == Legacy22 && nestedAccess(ds) {
			if blocks := accessIfVersions(raw); len(blocks) > 0 {
				if ds22, err := apacheconf.Conditionals(raw, apacheconf.Options{Modules: c.Modules, Version: c.Version}); err == nil && !nestedAccess(ds22) {
					ds, ifv = ds22, blocks
				}
			}
		}
		pos := apacheconf.Pos{File: p, Line: 1}
		review := func(why string) {
			reviews = append(reviews, Difference{Pos: pos, Text: why + "; left as it is"})
		}
		// unknown: left as it is, its rules in force on 2.4 unread.
		markUnknown := func() {
			for _, c := range found[p] {
				c.htFound().unknown = append(c.htFound().unknown, filepath.Dir(p)+"/")
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
		chain := fileChain(c, dir)
		differ := false
		for _, o := range found[p][1:] {
			differ = differ || !slices.Equal(fileChain(o, dir), chain)
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
		wild := wildApplies(c, dir)
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
			if _, lerr := c.ParseHtaccessWith(p, data, HtaccessAllow{Override: override, List: list}, c.BaseDir); lerr == nil {
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
		sec.block = ds
		sec.ifVersions = ifv
		// Apache's merge order: each directory's <Directory> sections,
		// then its .htaccess file, from "/" down.
		sec.htChain = append([]*Section(nil), chain...)
		for up := filepath.Dir(filepath.Dir(p)); ; up = filepath.Dir(up) {
			for _, name := range cfg.AccessFileNames {
				if h := seen[filepath.Join(up, name)]; h != nil {
					sec.htChain = append(sec.htChain, h)
				}
			}
			if up == "/" || up == "." {
				break
			}
		}
		sort.SliceStable(sec.htChain, func(i, j int) bool { return mergeRank(sec.htChain[i]) < mergeRank(sec.htChain[j]) })
		seen[p] = sec
		for _, c := range found[p] {
			c.htFound().parsed = append(c.htFound().parsed, sec)
		}
		// The file's <Files> sections merge after everything above, the
		// file itself included, and after the <Files> sections before
		// them that match the same names (filesCombos).
		files := 0
		for _, f := range sec.Conf.Files {
			if !hasAccess(f.Conf) {
				continue
			}
			files++
			f.htChain = append(append([]*Section(nil), sec.htChain...), sec)
		}
		if hasAccess(sec.Conf) || files > 0 {
			out = append(out, htFile{sec: sec, cfg: c})
		}
	}
	return out, reviews, paths
}

func c0(cs []*Config) *Config { return cs[0] }

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

// wildApplies reports whether a regex <Directory> (or <DirectoryMatch>)
// section matches dir (ending in "/") or a directory above it: Apache
// merges those after the .htaccess files, over what a file says.
func wildApplies(c *Config, dir string) bool {
	for _, d := range c.DirMatches {
		for _, p := range dirPrefixes(dir) {
			if d.Regex != nil && (mayMatch(d.Regex, p) || mayMatch(d.Regex, strings.TrimSuffix(p, "/"))) {
				return true
			}
		}
	}
	return false
}

// dirPrefixes lists "/", "/a/", "/a/b/" ... of dir (ending in "/").
func dirPrefixes(dir string) []string {
	var out []string
	for i := 0; i < len(dir); i++ {
		if dir[i] == '/' {
			out = append(out, dir[:i+1])
		}
	}
	return out
}

// fileChain is the <Directory> sections, wildcard ones included, that
// Apache merges for the directory dir (ending in "/"), in its order: by
// depth, configuration order among equals.
func fileChain(c *Config, dir string) []*Section {
	prefixes := dirPrefixes(dir)
	var out []*Section
	for _, d := range c.Dirs {
		switch {
		case d.Depth == 0, !d.Fnmatch && strings.HasPrefix(dir, d.Path):
			out = append(out, d)
		case d.Fnmatch:
			pattern := strings.ReplaceAll(d.Path, "[!", "[^")
			for _, p := range prefixes {
				if ok, err := path.Match(pattern, p); err == nil && ok {
					out = append(out, d)
					break
				}
			}
		}
	}
	return out
}

// mergeRank orders <Directory> sections and .htaccess files as Apache
// merges them: by depth, and at one depth the sections before the file.
func mergeRank(s *Section) int {
	if s.Kind == KindHtaccess {
		return 2*(strings.Count(filepath.Dir(s.Path)+"/", "/")-1) + 1
	}
	return 2 * s.Depth
}

// anyAccess reports whether any access directive appears, at any depth.
func anyAccess(ds []*apacheconf.Directive) bool {
	for _, d := range ds {
		if mentionsAccess(d) {
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
		case mentionsAccess(d):
			return true
		}
	}
	return false
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

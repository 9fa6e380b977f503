package lint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/internal/dirscan"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// Options say how to read the configuration.
type Options struct {
	// ServerRoot resolves relative Include, DocumentRoot and file paths
	// when the configuration sets no ServerRoot; empty means the directory
	// of the first file.
	ServerRoot string
	// DocumentRoot is the main server's document root when the files set
	// none.
	DocumentRoot string
	// Defines are the -D names for <IfDefine>.
	Defines []string
	// Modules are modules to treat as loaded beyond the LoadModule lines,
	// by identifier ("rewrite_module") or source name ("mod_rewrite.c").
	Modules []string
	// MaxDirs bounds the directories walked looking for .htaccess files
	// (0: 100000).
	MaxDirs int
	// Semantics are what orderly serve is to read the rules as, for the
	// refusals it would make (ORD-14): "2.2" (the default) or
	// "2.4-compat".
	Semantics string
}

// Finding is one occurrence of a rule.
type Finding struct {
	ID        string
	Severity  Severity
	Pos       apacheconf.Pos // Col is 1-based; 0 when unknown
	Directive string         // the directive as written, or what the finding is about
	Change    string         // what changes in 2.4, for this occurrence
	Fix       string         // what to do
}

// Report is the result of [Lint].
type Report struct {
	Findings []Finding
	Files    []string // every file read: the configuration, its includes, .htaccess files
}

// Count returns the number of findings at or above severity min.
func (r *Report) Count(min Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity.Rank() >= min.Rank() {
			n++
		}
	}
	return n
}

type dir = apacheconf.Directive

// A node is one directive of the configuration or of an .htaccess file,
// with where it sits.
type node struct {
	d       *dir
	name    string // d.Name in lower case
	parents []*dir // enclosing sections, outermost first
	ht      *htFile
	vh      *vhost
	scope   *scope // the access scope it belongs to; nil at server level
	// text is d as written (see written) for the Order, Allow, Deny and
	// Satisfy lines of a scope, each the subject of findings of several
	// checks (ERR-02 and the scope's own): made once, when the scope is
	// summarised. "" for the other nodes.
	text string
}

// written returns n's directive as written.
func (n *node) written() string {
	if n.text != "" {
		return n.text
	}
	return written(n.d)
}

// topLevel reports whether n is at server or virtual-host level (outside
// any per-directory section) of the main configuration.
func (n *node) topLevel() bool {
	if n.ht != nil {
		return false
	}
	for _, p := range n.parents {
		if !p.Is("VirtualHost") {
			return false
		}
	}
	return true
}

type vhost struct {
	d          *dir
	docRoot    string
	docRootD   *dir
	accessFile []string
}

type htFile struct {
	path string
	dir  string
	ds   []*dir
}

type linter struct {
	opt       Options
	root      string // server root
	lastRule  int    // the index in rules of the last finding's rule
	tree      []*dir
	tops      []topFile // the files given, each a regular file, where its directives start in tree
	nodes     []*node
	byName    [][]*node       // the nodes by name, by nameIndex
	nameIndex map[string]int  // lower-case name -> index in byName
	loaded    map[string]*dir // module identifier -> LoadModule (nil for Options.Modules)
	loadLines []*dir
	fragment  bool
	docRoot   string
	docRootD  *dir
	access    []string // AccessFileName of the main server
	vhosts    []*vhost
	hts       []*htFile
	scopes    []*scope
	tr        *translated // what orderly translate writes (DIR-10 fixes), and its model
	// byModel are the scopes by their section in translate's model, and
	// below how many scopes with a Require of their own each section is
	// merged before (attachModel).
	byModel  map[*translate.Section]*scope
	below    map[*translate.Section]int
	sem      translate.Semantics // the model's semantics
	found    findingList
	files    []string
	seenFile map[string]bool
	maxDirs  int
}

// mpmNames are the names <IfModule> may test for the MPM. 2.2 compiled its
// MPM in, so a 2.2 configuration's MPM sections are read as if every MPM
// were loaded: they all carry directives to check.
var mpmNames = []string{"prefork.c", "worker.c", "event.c", "mpm_prefork_module", "mpm_worker_module", "mpm_event_module"}

// mentionsMPM reports whether a configuration file's text may hold an
// <IfModule> on an MPM: it names one, or has a continuation line (that
// may split a name). Reading with the MPMs taken as loaded can only
// differ from reading without where it does.
func mentionsMPM(src []byte) bool {
	for _, w := range mpmWords {
		if containsAt(src, w.word, w.rare) {
			return true
		}
	}
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\\')
		if j < 0 {
			return false
		}
		i += j + 1
		if rest := src[i:]; bytes.HasPrefix(rest, []byte("\n")) || bytes.HasPrefix(rest, []byte("\r\n")) {
			return true
		}
	}
}

// mpmWords are what mentionsMPM looks for (mpmNames, in fewer looks),
// each with a byte of it that is rare in configuration text.
var mpmWords = []struct {
	word string
	rare byte
}{{"mpm_", '_'}, {"prefork.c", 'k'}, {"worker.c", 'k'}, {"event.c", 'v'}}

// containsAt reports whether src contains word, looked for at the places
// of its byte rare, one IndexByte at a time: bytes.Contains looks at the
// places of its first byte, which for these words ('m', 'p', 'w', 'e')
// are among the commonest of a configuration, and costs several times as
// much.
func containsAt(src []byte, word string, rare byte) bool {
	k := strings.IndexByte(word, rare)
	for i := k; i < len(src); i++ {
		j := bytes.IndexByte(src[i:], rare)
		if j < 0 {
			return false
		}
		i += j
		if start := i - k; start+len(word) <= len(src) && string(src[start:start+len(word)]) == word {
			return true
		}
	}
	return false
}

// isMPM reports whether the module with identifier id is an MPM.
func isMPM(id string) bool { return strings.HasPrefix(id, "mpm_") }

// fragmentModules are assumed loaded for <IfModule> in a fragment (no
// LoadModule line): the set orderly's loader assumes.
var fragmentModules = translate.FragmentModules

// Lint reads the configuration files (each with everything it includes)
// and the .htaccess files they lead to, and returns the findings. A
// configuration that cannot be read is an error: an
// apacheconf.ErrorList, each entry "file:line: message".
func Lint(files []string, opt Options) (*Report, error) {
	if len(files) == 0 {
		return nil, apacheconf.ErrorList{{Msg: "no configuration file given"}}
	}
	// What orderly translate writes, for the fixes of DIR-10, then what
	// orderly serve would refuse in the same model (and in the .htaccess
	// files it reads): on another core from the start, with the semantics
	// the options name, or 2.2's where they name none, a guess checked
	// once the configuration is read (most are 2.2 throughout).
	guess := opt
	if guess.Semantics == "" {
		guess.Semantics = string(translate.Legacy22)
	}
	// The translation and lint search the same trees for .htaccess files:
	// each directory is listed once for both.
	dirs := new(dirscan.Cache)
	tl := startTranslated(files, guess, dirs)
	l, err := read(files, opt)
	if err != nil {
		tl.wait() // nothing reads files once Lint returns
		return nil, err
	}
	if serveOpt := l.serveOptions(); loadOptions(serveOpt).Semantics != loadOptions(guess).Semantics {
		tl.wait()
		tl = startTranslated(files, serveOpt, dirs)
	}
	// The search for .htaccess files is system calls: the scopes of the
	// configuration are made meanwhile, theirs once they are read.
	search := l.startHtaccess(dirs)
	config := len(l.nodes)
	l.buildScopes(l.nodes[:config], false)
	l.readHtaccess(search)
	l.buildScopes(l.nodes[config:], true)
	l.check(tl.converted)
	l.reportRefusals(<-tl.refusals)
	return &Report{Findings: l.found.sorted(l.files), Files: l.files}, nil
}

// read reads and indexes the configuration files (with what they
// include), not yet the .htaccess files.
func read(files []string, opt Options) (*linter, error) {
	l := &linter{opt: opt, nameIndex: map[string]int{}, loaded: map[string]*dir{}, seenFile: map[string]bool{}, maxDirs: opt.MaxDirs}
	if l.maxDirs <= 0 {
		l.maxDirs = 100000
	}
	if err := l.load(files); err != nil {
		return nil, err
	}
	l.root = opt.ServerRoot
	if l.root == "" {
		l.root = filepath.Dir(files[0])
	}
	l.model()
	return l, nil
}

// serveOptions are the options lint gives translate's model (orderly
// serve's refusals, orderly translate's text): the linter's, the
// semantics worked out from the configuration where they name none.
func (l *linter) serveOptions() Options {
	opt := l.opt
	if opt.Semantics == "" {
		opt.Semantics = l.semantics()
	}
	return opt
}

// A topFile is a configuration file given to [Lint]: name, and first, the
// index in the linter's tree of its first top-level directive (the first
// after it when it has none, as a file of Include lines only).
type topFile struct {
	name  string
	first int
}

// loaded is the result of apacheconf.Load.
type loaded struct {
	ds  []*dir
	err error
}

func (l *linter) load(files []string) error {
	defines := map[string]bool{}
	for _, d := range l.opt.Defines {
		defines[d] = true
	}
	var all []*dir
	var errs apacheconf.ErrorList
	// The files given are one configuration, read one after the other: a
	// module the files before load is loaded for the <IfModule> sections
	// of those after (a site file given after apache2.conf, its
	// <IfModule mod_ssl.c> read as apache2.conf's LoadModule lines say).
	var prior []string
	for i, f := range files {
		before := prior
		// mpm is set when a file read may hold an <IfModule> on an MPM.
		mpm := false
		top, _ := os.ReadFile(f) // nil for a directory or a pattern
		topMPM := mentionsMPM(top)
		read := func(mods []string) ([]*dir, error) {
			m := map[string]bool{}
			for _, x := range l.opt.Modules {
				m[x] = true
			}
			for _, x := range before {
				m[x] = true
			}
			for _, x := range mods {
				m[x] = true
			}
			opt := apacheconf.Options{ServerRoot: l.opt.ServerRoot, Defines: defines, Modules: m}
			if mods == nil {
				opt.ReadFile = func(name string) ([]byte, error) {
					if name == f && top != nil {
						mpm = mpm || topMPM
						return top, nil // read and looked at already
					}
					b, err := os.ReadFile(name)
					mpm = mpm || mentionsMPM(b)
					return b, err
				}
			}
			return apacheconf.Load(f, opt)
		}
		// Most configurations read here load no MPM (2.2 compiled it in).
		// Those with an <IfModule> on one are read a second time, with
		// every MPM's <IfModule> taken. Given a core to spare, and a
		// main file that says so, that reading runs beside the first
		// rather than after it.
		readMPM := func() ([]*dir, error) { return read(mpmNames) }
		var spec chan loaded
		if topMPM && runtime.GOMAXPROCS(0) > 1 {
			spec = make(chan loaded, 1)
			go func() {
				ds, err := read(mpmNames)
				spec <- loaded{ds, err}
			}()
			readMPM = func() ([]*dir, error) {
				r := <-spec
				spec = nil
				return r.ds, r.err
			}
		}
		ds, err := read(nil)
		if err == nil {
			hasLoad, hasMPM := len(before) > 0, slices.ContainsFunc(before, isMPM)
			eachLoadModule(ds, func(id string) {
				hasLoad = true
				hasMPM = hasMPM || isMPM(id)
			})
			switch {
			case !hasLoad && len(l.opt.Modules) == 0:
				ds, err = read(append(slices.Clone(fragmentModules), mpmNames...))
			case !hasMPM && mpm:
				ds, err = readMPM()
			}
		}
		if spec != nil {
			<-spec // not needed: waited for all the same, so that nothing reads files once Lint returns
		}
		if err != nil {
			var el apacheconf.ErrorList
			if errors.As(err, &el) {
				errs = append(errs, el...)
			} else {
				errs = append(errs, &apacheconf.Error{Pos: apacheconf.Pos{File: f}, Msg: err.Error()})
			}
			continue
		}
		if top != nil {
			l.tops = append(l.tops, topFile{f, len(all)})
		}
		all = append(all, ds...)
		if i < len(files)-1 {
			eachLoadModule(ds, func(id string) { prior = append(prior, id) })
		}
	}
	if len(errs) > 0 {
		return errs
	}
	l.tree = all
	return nil
}

// eachLoadModule calls fn with the module of every LoadModule line in ds
// (at any depth), in order.
func eachLoadModule(ds []*dir, fn func(id string)) {
	for _, d := range ds {
		if d.LowerName() == "loadmodule" && len(d.Args) > 0 {
			fn(d.Args[0])
		}
		eachLoadModule(d.Block, fn)
	}
}

// addFile records a file read, once.
func (l *linter) addFile(f string) {
	if f != "" && !l.seenFile[f] {
		l.seenFile[f] = true
		l.files = append(l.files, f)
	}
}

// model indexes the directives, the modules, the document roots and the
// virtual hosts.
func (l *linter) model() {
	// A big configuration has tens of thousands of directives: their
	// nodes are made in one slice, and the directives of a block share
	// one copy of their parents (read only), the copies made in another.
	count, slots := countDirectives(l.tree, 0)
	w := modelWalk{l: l, nodes: make([]node, 0, count), blocks: make([]*dir, 0, slots), tops: l.tops}
	l.nodes = make([]*node, 0, count)
	// Each file given is read before what it includes, even when its
	// first directive is an Include (replaced by the included file's
	// directives) or it has nothing but Include lines: the findings about
	// the whole configuration (DIR-05, DIR-06, ORD-08) are at its start.
	w.block(l.tree, nil, nil, true)
	w.addTops(len(l.tree))
	l.fragment = len(l.loadLines) == 0
	for _, m := range l.opt.Modules {
		l.loaded[moduleID(m)] = nil
	}
	if l.fragment && len(l.opt.Modules) == 0 {
		for _, m := range fragmentModules {
			l.loaded[m] = nil
		}
	}
	if l.docRoot == "" && l.opt.DocumentRoot != "" {
		l.docRoot = l.abs(l.opt.DocumentRoot)
	}
	if len(l.access) == 0 {
		l.access = []string{".htaccess"}
	}
	for _, v := range l.vhosts {
		if len(v.accessFile) == 0 {
			v.accessFile = l.access
		}
	}
}

// countDirectives returns the number of directives in ds, at depth in
// the tree, with the directives of their blocks, and the number of
// parents those blocks have between them.
func countDirectives(ds []*dir, depth int) (directives, parents int) {
	directives = len(ds)
	for _, d := range ds {
		if len(d.Block) > 0 {
			n, p := countDirectives(d.Block, depth+1)
			directives += n
			parents += depth + 1 + p
		}
	}
	return directives, parents
}

// A modelWalk is (*linter).model's walk over the configuration, in
// pre-order: each block is walked with what it is in (its parents, its
// virtual host) worked out once for all its directives.
type modelWalk struct {
	l        *linter
	nodes    []node    // where the nodes are made
	blocks   []*dir    // where the parents of each block are made
	tops     []topFile // the files given whose first directive is still to come
	lastFile string    // the file of the last directive
	// recent holds, at each place of a cheap hash of a name, the last
	// name looked up there and its index in byName: the parser gives
	// the directives of one spelling the same lower-case string, so most
	// names are found by comparing a string with itself, not hashed for
	// the map (nameAt).
	recent [128]struct {
		name string
		at   int
	}
}

// addTops records the files given whose directives start at or before
// the top-level directive at (the index in the linter's tree).
func (w *modelWalk) addTops(at int) {
	for len(w.tops) > 0 && w.tops[0].first <= at {
		w.l.addFile(w.tops[0].name)
		w.tops = w.tops[1:]
	}
}

// nameAt returns w.l.nameAt(name), remembered in recent.
func (w *modelWalk) nameAt(name string) int {
	if len(name) < 2 {
		return w.l.nameAt(name)
	}
	r := &w.recent[(len(name)*17+int(name[len(name)-1])*9+int(name[len(name)-2])*3+int(name[0]))%len(w.recent)]
	if r.name != name {
		r.name, r.at = name, w.l.nameAt(name)
	}
	return r.at
}

// block adds the directives of ds and of their blocks. parents are the
// sections ds is in, vh the innermost <VirtualHost> of them, and top
// whether they are all <VirtualHost>.
func (w *modelWalk) block(ds []*dir, parents []*dir, vh *vhost, top bool) {
	l := w.l
	for i, d := range ds {
		if len(parents) == 0 {
			w.addTops(i) // ds is the tree
		}
		if d.Pos.File != w.lastFile {
			l.addFile(d.Pos.File)
			w.lastFile = d.Pos.File
		}
		w.nodes = append(w.nodes, node{d: d, name: d.LowerName(), parents: parents, vh: vh})
		n := &w.nodes[len(w.nodes)-1]
		l.add(n, w.nameAt(n.name))
		inner, innerTop := vh, false // what the block of d is in
		switch n.name {
		case "virtualhost":
			if d.IsSection() {
				inner, innerTop = &vhost{d: d}, top
				l.vhosts = append(l.vhosts, inner)
			}
		case "serverroot":
			if len(parents) == 0 && len(d.Args) == 1 {
				l.root = l.abs(d.Args[0])
			}
		case "loadmodule":
			if len(d.Args) == 2 {
				l.loadLines = append(l.loadLines, d)
				l.loaded[d.Args[0]] = d
			}
		case "documentroot":
			if top && len(d.Args) == 1 {
				if vh != nil {
					vh.docRoot, vh.docRootD = l.abs(d.Args[0]), d
				} else {
					l.docRoot, l.docRootD = l.abs(d.Args[0]), d
				}
			}
		case "accessfilename":
			if top && len(d.Args) > 0 {
				if vh != nil {
					vh.accessFile = d.Args
				} else {
					l.access = d.Args
				}
			}
		}
		if len(d.Block) > 0 {
			at := len(w.blocks)
			w.blocks = append(append(w.blocks, parents...), d)
			w.block(d.Block, w.blocks[at:len(w.blocks):len(w.blocks)], inner, innerTop)
		}
	}
}

// add indexes n, whose name has the index i in byName (nameAt).
func (l *linter) add(n *node, i int) {
	l.nodes = append(l.nodes, n)
	l.byName[i] = append(l.byName[i], n)
}

// nameAt returns the index in byName of the directives named name (lower
// case), made for the first of them.
func (l *linter) nameAt(name string) int {
	i, ok := l.nameIndex[name]
	if !ok {
		i = len(l.byName)
		l.nameIndex[name] = i
		l.byName = append(l.byName, nil)
	}
	return i
}

// named returns the directives named name (lower case), in order.
func (l *linter) named(name string) []*node {
	if i, ok := l.nameIndex[name]; ok {
		return l.byName[i]
	}
	return nil
}

// abs resolves p against the server root, as httpd's ap_server_root_relative.
func (l *linter) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return cleanPath(p)
	}
	return cleanPath(filepath.Join(l.root, p))
}

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

// moduleID returns the identifier for a module name given as identifier
// or as source name: "mod_rewrite.c" -> "rewrite_module".
func moduleID(m string) string {
	if x, ok := strings.CutSuffix(m, ".c"); ok {
		switch x {
		case "prefork", "worker", "event":
			return "mpm_" + x + "_module"
		case "util_ldap":
			return "ldap_module"
		}
		return strings.TrimPrefix(x, "mod_") + "_module"
	}
	return m
}

// has reports whether the module with identifier id is loaded.
func (l *linter) has(id string) bool {
	_, ok := l.loaded[id]
	return ok
}

// moduleChecks reports whether module-dependent checks apply: the
// configuration says which modules it loads.
func (l *linter) moduleChecks() bool { return !l.fragment }

// modules24 exist only in 2.4: a configuration that loads one was written
// for 2.4, and relies on none of 2.2's defaults.
var modules24 = []string{"authz_core_module", "authn_core_module", "access_compat_module", "unixd_module",
	"mpm_event_module", "mpm_worker_module", "mpm_prefork_module"}

// written24 reports whether the configuration was written for 2.4.
func (l *linter) written24() bool {
	for _, id := range modules24 {
		if d, ok := l.loaded[id]; ok && d != nil {
			return true
		}
	}
	return false
}

// An htRoot is a directory searched for .htaccess files.
type htRoot struct {
	path  string
	names []string
	at    *dir // the DocumentRoot or <Directory>; nil for Options.DocumentRoot
	doc   bool // a document root
}

// An htSearch is the search for .htaccess files under the roots, under
// way: each directory is listed once, several at a time, while the
// linter goes on (startHtaccess), and the files found are read after
// (readHtaccess).
type htSearch struct {
	roots []htRoot
	at    []int // each root's index in the search
	found chan dirscan.Result
}

// startHtaccess starts the search for the .htaccess files under every
// document root and every <Directory> that exists on disk, through
// cache.
func (l *linter) startHtaccess(cache *dirscan.Cache) *htSearch {
	type root = htRoot
	aliases, dirs := l.named("alias"), l.named("directory")
	scriptAliases := l.named("scriptalias")
	roots := make([]root, 0, 1+len(l.vhosts)+len(aliases)+len(scriptAliases)+len(dirs))
	if l.docRoot != "" {
		roots = append(roots, root{l.docRoot, l.access, l.docRootD, true})
	}
	for _, v := range l.vhosts {
		if v.docRoot != "" {
			roots = append(roots, root{v.docRoot, v.accessFile, v.docRootD, true})
		}
	}
	// Alias targets are served like document roots.
	for _, named := range [][]*node{aliases, scriptAliases} {
		for _, n := range named {
			if n.ht != nil || len(n.d.Args) != 2 {
				continue
			}
			names := l.access
			if n.vh != nil {
				names = n.vh.accessFile
			}
			roots = append(roots, root{l.abs(n.d.Args[1]), names, n.d, false})
		}
	}
	// <Directory> paths, but not the top of the file system (<Directory />,
	// <Directory /usr>): httpd reads .htaccess files only where requests
	// lead, and those trees hold no served content of their own.
	for _, n := range dirs {
		if n.ht != nil || !n.d.IsSection() || len(n.d.Args) != 1 || n.d.Args[0] == "~" || hasWildcard(n.d.Args[0]) {
			continue
		}
		p := l.abs(n.d.Args[0])
		if components(p) < 2 {
			continue
		}
		names := l.access
		if n.vh != nil {
			names = n.vh.accessFile
		}
		roots = append(roots, root{p, names, n.d, false})
	}
	search := make([]dirscan.Root, 0, len(roots))
	hs := &htSearch{roots: roots, at: make([]int, len(roots)), found: make(chan dirscan.Result, 1)}
	walked := make(map[string]int, len(roots))
	for i, r := range roots {
		n, ok := walked[r.path]
		if !ok {
			n = len(search)
			walked[r.path] = n
			search = append(search, dirscan.Root{Dir: r.path, Names: r.names})
		}
		hs.at[i] = n
	}
	go func() { hs.found <- cache.Find(search, l.maxDirs) }()
	return hs
}

// readHtaccess reads the .htaccess files the search found, and those above
// each document root (httpd looks for one at every level from the root
// down where overrides are allowed).
func (l *linter) readHtaccess(hs *htSearch) {
	roots, at, found := hs.roots, hs.at, <-hs.found
	seen := map[string]bool{}
	readHt := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		data, err := os.ReadFile(p)
		if err != nil {
			return
		}
		h := &htFile{path: p, dir: filepath.Dir(p)}
		ds, perr := apacheconf.Parse(p, data)
		l.addFile(p)
		l.hts = append(l.hts, h)
		if perr != nil {
			var el apacheconf.ErrorList
			msg := perr.Error()
			pos := apacheconf.Pos{File: p, Line: 1, Col: 1}
			if errors.As(perr, &el) && len(el) > 0 {
				pos, msg = el[0].Pos, el[0].Msg
			}
			if pos.Col == 0 {
				pos.Col = 1
			}
			l.report("ORD-07", pos, filepath.Base(p), "this .htaccess file does not parse ("+msg+"): Apache answers 500 for everything below "+h.dir+".", "")
			return
		}
		h.ds = l.flatten(ds)
		count, _ := countDirectives(h.ds, 0)
		nodes := make([]node, 0, count)
		l.addHtaccess(h, &nodes, h.ds, nil)
	}
	// The levels above document roots, with the names read there.
	type aboveKey struct{ dir, names string }
	above := map[aboveKey]bool{}
	for i, r := range roots {
		if !found.Listed[at[i]] {
			if r.doc {
				pos := apacheconf.Pos{File: l.firstFile(), Line: 1, Col: 1}
				directive := "DocumentRoot " + r.path
				if r.at != nil {
					pos, directive = posOf(r.at), written(r.at)
				}
				l.report("ORD-13", pos, directive, "the document root "+r.path+" is not readable on this machine: .htaccess files under it, and whether they rely on 2.2's AllowOverride All (DIR-04), could not be checked.", "")
			}
			continue
		}
		// The levels above a document root: httpd's directory walk
		// starts at "/". Document roots are often siblings: a level is
		// read for its names once (and then those above it too).
		for p := filepath.Dir(r.path); r.doc; p = filepath.Dir(p) {
			key := aboveKey{p, strings.Join(r.names, "\x00")} // one name: no copy
			if above[key] {
				break
			}
			above[key] = true
			for _, name := range r.names {
				readHt(filepath.Join(p, name))
			}
			if p == filepath.Dir(p) {
				break
			}
		}
		for _, f := range found.Files[at[i]] {
			readHt(f) // once: seen
		}
	}
	slices.SortFunc(l.hts, func(a, b *htFile) int { return strings.Compare(a.path, b.path) })
}

// addHtaccess adds the directives ds of the .htaccess file h, in the
// sections parents, and those of their blocks, in pre-order: the nodes
// made in nodes (with room for them all), the directives of a block
// sharing one copy of their parents.
func (l *linter) addHtaccess(h *htFile, nodes *[]node, ds, parents []*dir) {
	for _, d := range ds {
		*nodes = append(*nodes, node{d: d, name: d.LowerName(), parents: parents, ht: h})
		n := &(*nodes)[len(*nodes)-1]
		l.add(n, l.nameAt(n.name))
		if len(d.Block) > 0 {
			l.addHtaccess(h, nodes, d.Block, append(parents[:len(parents):len(parents)], d))
		}
	}
}

func (l *linter) firstFile() string {
	if len(l.files) > 0 {
		return l.files[0]
	}
	return ""
}

// flatten evaluates <IfModule> and <IfDefine> in an .htaccess file, as
// httpd does while reading it.
func (l *linter) flatten(ds []*dir) []*dir {
	var out []*dir
	for _, d := range ds {
		if (d.Is("IfModule") || d.Is("IfDefine")) && d.IsSection() {
			arg, not := strings.CutPrefix(strings.TrimSpace(d.Raw), "!")
			name := strings.Fields(arg + " x")[0]
			var holds bool
			if d.Is("IfModule") {
				holds = l.has(moduleID(name)) || isBuiltin(moduleID(name))
			} else {
				holds = slices.Contains(l.opt.Defines, name)
			}
			if holds != not {
				out = append(out, l.flatten(d.Block)...)
			}
			continue
		}
		if d.IsSection() {
			d.Block = l.flatten(d.Block)
		}
		out = append(out, d)
	}
	return out
}

// report adds a finding of rule id. Empty change or fix texts take the
// rule's.
func (l *linter) report(id string, pos apacheconf.Pos, directive, change, fix string) {
	i := l.lastRule
	if rules[i].ID != id {
		var ok bool
		if i, ok = ruleIndex[id]; !ok {
			panic("lint: unknown rule " + id)
		}
		l.lastRule = i // findings come in runs of one rule
	}
	r := &rules[i]
	if change == "" {
		change = r.Change
	}
	if fix == "" {
		fix = r.Fix
	}
	l.found.add(record{pos: pos, rule: i, directive: directive, change: change, fix: fix})
}

// at adds a finding about directive d.
func (l *linter) at(id string, d *dir, change, fix string) {
	l.report(id, posOf(d), written(d), change, fix)
}

func posOf(d *dir) apacheconf.Pos {
	p := d.Pos
	if p.Col == 0 {
		p.Col = 1
	}
	return p
}

// written returns d as written: "Name args" or "<Name args>".
func written(d *dir) string {
	if d.IsSection() {
		if d.Raw == "" {
			return "<" + d.Name + ">"
		}
		return "<" + d.Name + " " + apacheconf.RedactURLPasswords(d.Raw) + ">"
	}
	return d.Redacted()
}

// hasWildcard reports whether a path has fnmatch wildcards.
func hasWildcard(s string) bool { return strings.ContainsAny(s, "*?[") }

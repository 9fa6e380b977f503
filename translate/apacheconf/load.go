package apacheconf

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Options configures [Load].
type Options struct {
	// ServerRoot is the directory that relative Include paths (and a
	// relative ServerRoot directive) resolve against. If empty, it is the
	// directory of the top file. A ServerRoot directive outside any section
	// overrides it for everything after it.
	ServerRoot string

	// Defines are the -D names, for <IfDefine NAME> and <IfDefine !NAME>.
	// Define and UnDefine directives in the configuration change a copy.
	Defines map[string]bool

	// Modules are extra modules to treat as loaded for <IfModule>, by either
	// of their names: "mod_rewrite.c" or "rewrite_module". The other name of
	// each is derived. The modules built into Debian's apache2 are loaded
	// too (for 2.2: core, http_core, mod_so, mod_log_config, mod_logio;
	// its MPM, prefork.c or worker.c, was built in too: name it here),
	// but for those set to false here: {"version_module": false} reads
	// as if mod_version were not there, <IfVersion> unevaluated.
	Modules map[string]bool

	// Version is the httpd version the configuration is read as:
	// MAJOR.MINOR.PATCH, such as "2.2.34" or "2.4.71", optionally
	// followed by a tag such as "-dev"; "" means "2.4.71". Only 2.2 and
	// 2.4 are known. It decides what is evaluated (see [Load]) and is
	// what <IfVersion> compares with.
	Version string

	// Known reports whether the server knows the directive name, or with
	// section the section <name> (name without the '<'), for
	// <IfDirective> and <IfSection>. It is asked while the configuration
	// is read, with no word of the modules loaded so far. nil leaves
	// those sections unevaluated: kept as sections, as an unknown
	// section is, for the caller to refuse.
	Known func(name string, section bool) bool

	// Getenv looks a variable up in the environment httpd runs with,
	// for ${NAME}; nil means os.LookupEnv.
	Getenv func(name string) (string, bool)

	// Warn, if not nil, is called with each warning httpd would log
	// while reading (the AH number leads the message: AH00111 for a
	// ${NAME} that is not defined, mod_macro's AH02798 to AH02803 and
	// AH02989), in the order of reading, once the reading is done.
	Warn func(*Error)

	// State, if not nil, is the state reading starts from, in place of
	// ServerRoot, Defines and Modules: for the .htaccess files of a
	// configuration read by [LoadState], give its State to
	// [Conditionals]. It is not changed.
	State *State

	// Admit, if not nil, is asked about each directive the reader itself
	// executes in an .htaccess file ([Conditionals]: the <If...>
	// sections, <Macro>, Use, UndefMacro) before it executes it, as
	// Apache's invoke_cmd checks them against AllowOverride: msg, if not
	// "", is the error that stops the reading; skip leaves the directive
	// out (AllowOverride Nonfatal=Override), a section's lines read as
	// if it were not there.
	Admit func(d *Directive) (skip bool, msg string)

	// ReadFile reads a configuration file; nil means os.ReadFile. The
	// loader keeps the bytes it returns (the directives' words are
	// slices of them): they must not be changed afterwards.
	ReadFile func(name string) ([]byte, error)
	// Glob expands one wildcard path component (its directory part has its
	// wildcard characters escaped); nil means filepath.Glob.
	Glob func(pattern string) ([]string, error)
	// Stat tells directories from files; nil means os.Stat.
	Stat func(name string) (fs.FileInfo, error)
	// ReadDir lists an included directory; nil means os.ReadDir.
	ReadDir func(name string) ([]fs.DirEntry, error)
}

// Load reads filename and everything it includes and evaluates, in the
// order of the text, what httpd executes while it reads its configuration
// (the directives it runs as it reads them, EXEC_ON_READ), and returns the
// flattened tree:
//
//   - an Include or IncludeOptional is replaced by the directives of the
//     files it names, each keeping its own Pos and with a Trail of the
//     Include directives that brought its file in;
//   - an <IfModule>, <IfDefine>, <IfVersion>, <IfFile>, <IfDirective> or
//     <IfSection> whose condition holds is replaced by its contents, and
//     one whose condition does not hold is dropped;
//   - a <Macro> section is taken as a definition and dropped, an
//     UndefMacro drops one, and a Use is replaced by the directives of
//     the macro's lines with its arguments substituted, each at its
//     line in the <Macro> body and with the Use at the end of its Trail;
//   - the ${NAME} references of every line read are resolved, before the
//     line is split into words (see below);
//   - every other section (<Directory>, <VirtualHost>, <Location>, <Limit>,
//     <Files>, ...) is kept as a section.
//
// The directives that change what follows stay in the tree: LoadModule
// (whose module counts as loaded from then on), ServerRoot, Define and
// UnDefine.
//
// What exists depends on Options.Version, and on the modules loaded when
// it is read; what does not exist is not evaluated and stays in the tree
// as written, for the caller to refuse as httpd does ("Invalid command"):
//
//   - <IfVersion> needs mod_version (built into Debian's 2.4; a module to
//     load in 2.2);
//   - Define, UnDefine and IncludeOptional are 2.4's;
//   - <IfFile>, <IfDirective> and <IfSection> are 2.4.34's, and the last
//     two are evaluated only with Options.Known;
//   - <Macro>, Use and UndefMacro need mod_macro (2.4).
//
// Before 2.4.35, the argument of <IfModule>, <IfDefine> (and <IfFile>,
// <IfDirective>, <IfSection>) is one word cut at its last '>'; from
// 2.4.35 it is the first word before the last '>' of the line, so that
// it may be quoted. <IfVersion> is mod_version's: the operators =, ==, <,
// <=, >, >=, ~ (a regular expression, also written /re/ after = or ==),
// each negated by a leading '!', and a version of one to three numbers.
// <IfFile> holds when its path, relative to the server root, exists.
//
// A ${NAME} reference is resolved as httpd's ap_resolve_env does, on the
// whole line before it is split into words (so a value with spaces makes
// several words, and may make the directive's name), in the order of the
// text: in 2.4 by the value of the last Define that gave NAME one (Define
// NAME alone gives none; names are case-insensitive here), then by the
// environment (Options.Getenv); in 2.2 by the environment only. A
// reference to nothing stays as written, with a warning in 2.4 (AH00111,
// to Options.Warn). The lines of a section whose condition does not hold
// are not resolved, nor those of a <Macro> body until a Use. A directive
// made by a resolved line keeps the Pos of the line. Sections are nested
// as written: a line that a ${} reference turns into a section tag, or
// out of one, is refused.
//
// A macro is mod_macro's: its parameters are replaced in its lines
// wherever they appear, left to right, the longest name first at a place,
// a value for a parameter starting with '@' in double quotes; the lines
// are then read as configuration (resolved, evaluated); names are
// case-insensitive; a Use within the expansion of the same macro is an
// error. A <Macro> body's sections must be balanced (httpd would only
// warn; here the tree would not parse).
//
// Like httpd 2.4, Load treats filename itself as an Include would (it may be
// a directory or a wildcard), except that a relative filename is relative to
// the working directory.
//
// Paths are resolved as httpd 2.4 does (server/config.c, server/util.c
// ap_dir_nofnmatch and ap_dir_fnmatch): a relative path is relative to the
// server root; wildcards (*, ?, [...], [!...]) may appear in any component,
// match no leading dot, and are expanded in lexical order one component at
// a time; a directory, named or matched, stands for every entry in it, dot
// files too, recursively, in lexical order. Include fails when a wildcard
// matches nothing or a file cannot be read; IncludeOptional ignores what is
// missing. (2.2's Include, which has wildcards in the last component only,
// is read as 2.4's.)
//
// Include cycles are errors, and so is nesting more than 128 Includes or
// directories deep, as in httpd. To stay bounded on any input, Load also
// stops after reading 10000 files and directories or 64 MiB (macro
// expansions counted).
//
// Errors are httpd's, in its words. Load returns the tree and, if anything
// went wrong, an [ErrorList] with all the errors it found; the tree then
// holds what could be read.
func Load(filename string, opt Options) ([]*Directive, error) {
	ds, _, err := LoadState(filename, opt)
	return ds, err
}

// LoadState is [Load], and returns also the [State] the configuration
// leaves in force, for its .htaccess files.
func LoadState(filename string, opt Options) ([]*Directive, *State, error) {
	l, err := newLoader(opt, false)
	if err != nil {
		return nil, nil, err
	}
	if l.root == "" {
		l.root = filepath.Dir(filename)
	}
	inc := &inclusion{l: l}
	inc.run(filename)
	l.finish()
	return inc.out, l.state(), l.errs.Err()
}

// newLoader returns a loader for opt; htaccess says whether it reads
// an .htaccess file.
func newLoader(opt Options, htaccess bool) (*loader, error) {
	v, err := parseVersion(opt.Version)
	if err != nil {
		return nil, ErrorList{{Msg: err.Error()}}
	}
	l := &loader{opt: opt, ver: v, htaccess: htaccess}
	if l.opt.ReadFile == nil {
		l.opt.ReadFile = os.ReadFile
	}
	if l.opt.Glob == nil {
		l.opt.Glob = filepath.Glob
	}
	if l.opt.Stat == nil {
		l.opt.Stat = os.Stat
	}
	if l.opt.ReadDir == nil {
		l.opt.ReadDir = os.ReadDir
	}
	if l.opt.Getenv == nil {
		l.opt.Getenv = os.LookupEnv
	}
	if s := opt.State; s != nil {
		l.root, l.defines, l.vars, l.modules = s.root, clone(s.defines), clone(s.vars), clone(s.modules)
		// Since 2.4.30 the macros of the configuration are those of its
		// .htaccess files (PR 57525).
		if !htaccess || v.atLeast(2, 4, 30) {
			l.macros, l.anyMacro = clone(s.macros), s.anyMacro
		} else {
			l.macros = map[string]*macro{}
		}
		return l, nil
	}
	l.root = opt.ServerRoot
	l.defines, l.vars, l.modules, l.macros = map[string]bool{}, map[string]string{}, map[string]bool{}, map[string]*macro{}
	l.init(opt.Modules, opt.Defines)
	return l, nil
}

// finish sorts the errors and hands the warnings over.
func (l *loader) finish() {
	l.errs.sort()
	if l.opt.Warn != nil {
		for _, w := range l.warns {
			l.opt.Warn(w)
		}
	}
}

// init sets the -D names and the loaded modules: the built-in ones and
// modules, each by both of its names.
func (l *loader) init(modules, defines map[string]bool) {
	for name, ok := range defines {
		if ok {
			l.defines[name] = true
		}
	}
	builtin := builtinModules
	if l.ver.is22() {
		builtin = builtinModules22
	}
	for _, name := range builtin {
		l.modules[name] = true
	}
	for name, ok := range modules {
		if ok {
			l.modules[name] = true
			if other := otherName(name); other != "" {
				l.modules[other] = true
			}
		}
	}
	for name, ok := range modules {
		if !ok {
			delete(l.modules, name)
			delete(l.modules, otherName(name))
		}
	}
}

// A loader holds the state of one Load.
type loader struct {
	opt      Options
	ver      version
	htaccess bool              // reading an .htaccess file (Conditionals): nothing is included or defined, and the tree is not changed
	root     string            // the server root
	defines  map[string]bool   // -D names and Define directives
	vars     map[string]string // values of Define directives, by name in lower case
	modules  map[string]bool   // loaded modules, by both names
	macros   map[string]*macro // by name in lower case
	anyMacro bool              // a <Macro> was read
	errs     ErrorList
	warns    []*Error
	files    []string // keys of the files being read, outermost first
	names    []string // their names
	reads    int      // files and directories read
	bytes    int      // bytes of files read
	abort    bool     // too much to read; stop
}

func (l *loader) errorf(pos Pos, trail []Pos, msg string) {
	l.errs = append(l.errs, &Error{Pos: pos, Msg: msg, Trail: trail})
}

// read counts a file or directory read and reports whether there is
// budget left for it.
func (l *loader) read() bool {
	if l.abort {
		return false
	}
	l.reads++
	if l.reads > maxReads {
		l.abort = true
		l.errorf(Pos{}, nil, "too many configuration files and directories to read (more than "+strconv.Itoa(maxReads)+"); is there an Include loop?")
		return false
	}
	return true
}

// A frame is where directives are read.
type frame struct {
	trail     []Pos // the Include (and Use) chain
	inSection bool  // inside a section other than the conditional ones
	// file is httpd's name of the file being read (config_file->name):
	// its path, or for a macro's expansion "macro 'NAME' (defined on
	// line N of "FILE") used on line M of "FILE"", by which mod_macro
	// tells recursion.
	file string
	// noRefs says that the lines of the text read have no ${NAME}
	// reference to resolve (!mayRefer): they are not each searched for
	// one.
	noRefs bool
}

// readText parses text, the file f.file read in frame f, and returns its
// directives with what httpd executes while reading evaluated (expand);
// they and the parser's errors have the Trail of f. Where the text has no
// ${NAME} reference and no directive to evaluate (nameKind), the
// directives it executes (LoadModule, ...) are executed in order, and
// its tree is kept as it is, not walked.
func (l *loader) readText(text string, f frame) []*Directive {
	p := &parser{file: f.file, trail: f.trail}
	p.parse(text)
	for _, e := range p.errs {
		e.Trail = f.trail
		l.errs = append(l.errs, e)
	}
	f.noRefs = !mayRefer(text)
	if !f.noRefs || p.walk {
		return l.expand(p.top, f)
	}
	for _, d := range p.execs {
		l.exec(d, f.inSection)
	}
	return p.top
}

// expand evaluates what httpd executes while reading (see Load) in ds, the
// directives of one file read in frame f, and returns the result. In
// Load, ds is the loader's to change; in Conditionals, it is not changed.
func (l *loader) expand(ds []*Directive, f frame) []*Directive {
	// In Load the result is written over ds for as long as no directive
	// gives more than one (an Include, a conditional section, a Use do):
	// out is capped where the next directive to read is, so that such a
	// directive moves it to an array of its own.
	out, shared := ds[:0], !l.htaccess
	if !shared {
		out = make([]*Directive, 0, len(ds))
	}
	for i, d := range ds {
		if l.abort {
			break
		}
		if !f.noRefs {
			d = l.expandVars(d)
		}
		if d != nil {
			if shared {
				out = ds[: len(out) : i+1]
			}
			out = l.directive(d, f, out)
			shared = shared && len(out) <= i+1
		}
	}
	return out
}

// directive evaluates d, its line resolved, and appends the result to out.
// The names it evaluates or has exec execute are kindOf's: a tree without
// them is not walked.
func (l *loader) directive(d *Directive, f frame, out []*Directive) []*Directive {
	invalid := func(name string) {
		l.errorf(d.Pos, d.Trail, "Invalid command '"+name+"', perhaps misspelled or defined by a module not included in the server configuration")
	}
	n := d.LowerName()
	if l.htaccess && l.opt.Admit != nil && l.executes(n) {
		skip, msg := l.opt.Admit(d)
		if msg != "" {
			l.errorf(d.Pos, d.Trail, msg)
			return out
		}
		if skip && d.IsSection() {
			// Its lines are read where it stands, and its end line then
			// closes nothing (ap_build_config_sub): the file is broken.
			l.errorf(d.Pos, d.Trail, "</"+d.Name+"> without matching <"+d.Name+" section")
			return out
		}
		if skip {
			return out
		}
	}
	switch {
	case (n == "ifmodule" || n == "ifdefine" || n == "ifversion" || n == "iffile" || n == "ifdirective" || n == "ifsection") && l.evaluates(n):
		if !d.IsSection() {
			invalid(d.Name)
			break
		}
		ok, msg := l.holds(d, n)
		if msg != "" {
			// A line with no '>' at all: the parser said so.
			if !strings.HasSuffix(msg, "> directive missing closing '>'") || strings.Contains(sectionArgs(d), ">") {
				l.errorf(d.Pos, d.Trail, msg)
			}
		} else if ok {
			out = append(out, l.expand(d.Block, f)...)
			l.checkClose(d, n)
		}
	case n == "macro" && l.evaluates(n):
		if !d.IsSection() {
			invalid(d.Name)
			break
		}
		l.defineMacro(d, f)
	case (n == "use" || n == "undefmacro") && l.evaluates(n):
		if d.IsSection() {
			invalid("<" + d.Name)
			break
		}
		if n == "use" {
			out = append(out, l.useMacro(d, f)...)
		} else {
			l.undefMacro(d)
		}
	case (n == "include" || n == "includeoptional" && !l.ver.is22()) && !l.htaccess:
		if d.IsSection() {
			invalid("<" + d.Name)
			break
		}
		out = append(out, l.include(d, f)...)
	case d.IsSection():
		if l.htaccess {
			c := *d
			d = &c
		}
		g := f
		g.inSection = true
		d.Block = l.expand(d.Block, g)
		out = append(out, d)
	default:
		if !l.htaccess {
			l.exec(d, f.inSection)
		}
		out = append(out, d)
	}
	return out
}

// executes reports whether the reader executes the directive (lower-case
// name n) itself in an .htaccess file.
func (l *loader) executes(n string) bool {
	switch n {
	case "ifmodule", "ifdefine", "ifversion", "iffile", "ifdirective", "ifsection", "macro", "use", "undefmacro":
		return l.evaluates(n)
	}
	return false
}

// A nameKind is what the loader does with a directive, by its name
// (kindOf), besides keeping it in the tree: the parser notes the
// directives it has to look at, so that a tree with none to evaluate is
// not walked (readText).
type nameKind uint8

const (
	kept      nameKind = iota // nothing
	executed                  // executed (exec) where it is no section: LoadModule, Define, UnDefine
	rooted                    // executed where it is in no section: ServerRoot
	evaluated                 // evaluated (directive): a conditional section, an Include, mod_macro's
)

// kindOf returns the kind of the directives named n (in lower case), as
// directive and exec treat them, whatever the version and the modules
// loaded.
func kindOf(n string) nameKind {
	switch n {
	case "loadmodule", "define", "undefine":
		return executed
	case "serverroot":
		return rooted
	case "ifmodule", "ifdefine", "ifversion", "iffile", "ifdirective", "ifsection", "macro", "use", "undefmacro", "include", "includeoptional":
		return evaluated
	}
	return kept
}

// exec executes the plain directives that change how the rest is read
// (kindOf names them).
func (l *loader) exec(d *Directive, inSection bool) {
	bad := func(msg string) { l.errorf(d.Pos, d.Trail, msg) }
	switch d.LowerName() {
	case "loadmodule":
		if len(d.Args) != 2 || d.Args[0] == "" || d.Args[1] == "" {
			bad("LoadModule takes two arguments, a module name and the name of a shared object file to load it from")
			return
		}
		l.modules[d.Args[0]] = true
		if s := sourceName(d.Args[0], d.Args[1]); s != "" {
			l.modules[s] = true
		}
	case "serverroot":
		if inSection {
			return // httpd refuses it there; that is for the caller to say
		}
		if len(d.Args) != 1 || d.Args[0] == "" {
			bad("ServerRoot takes one argument, Common directory of server-related files (logs, confs, etc.)")
			return
		}
		l.root = l.resolve(d.Args[0])
	case "define":
		if l.ver.is22() {
			return
		}
		if len(d.Args) < 1 || len(d.Args) > 2 || d.Args[0] == "" {
			bad("Define takes 1-2 arguments, Define a variable, optionally to a value.  Same as passing -D to the command line.")
			return
		}
		if strings.Contains(d.Args[0], ":") {
			bad("Variable name must not contain ':'")
			return
		}
		l.defines[d.Args[0]] = true
		if len(d.Args) == 2 && d.Args[1] != "" { // TAKE12 passes "" as no value
			l.vars[lowerASCII(d.Args[0])] = d.Args[1]
		}
	case "undefine":
		if l.ver.is22() {
			return
		}
		if len(d.Args) != 1 || d.Args[0] == "" {
			bad("UnDefine takes one argument, Undefine the existence of a variable. Undo a Define.")
			return
		}
		if strings.Contains(d.Args[0], ":") {
			bad("Variable name must not contain ':'")
			return
		}
		// The name as written; the value by any case (an APR table).
		delete(l.defines, d.Args[0])
		delete(l.vars, lowerASCII(d.Args[0]))
	}
}

// Conditionals evaluates what httpd executes while it reads ds, the
// directives of a file it reads while serving (an .htaccess file), as Load
// does: the conditional sections (<IfModule>, <IfDefine>, <IfVersion>,
// <IfFile>, <IfDirective>, <IfSection>), ${NAME} references (httpd reads
// .htaccess files with the same code as its configuration), <Macro>, Use
// and UndefMacro, each where opt.Version and the modules have it. What an
// .htaccess file may not hold (Include, Define, LoadModule, ...) is left
// as it is, for the caller to refuse. opt.State, from [LoadState], gives
// what the configuration left in force: the server root, the defined
// names and values, the modules loaded and (from 2.4.30) the macros;
// without it, opt.ServerRoot, Defines and Modules (the modules loaded,
// by either name; the built-in ones are added) do. ReadFile, Glob and
// ReadDir are not used. ds itself is not changed.
func Conditionals(ds []*Directive, opt Options) ([]*Directive, error) {
	l, err := newLoader(opt, true)
	if err != nil {
		return nil, err
	}
	file := ""
	if len(ds) > 0 {
		file = ds[0].Pos.File
	}
	out := l.expand(ds, frame{file: file})
	l.finish()
	return out, l.errs.Err()
}

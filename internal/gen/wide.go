package gen

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/txtar"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// Wide configurations: what the generator adds to an access
// configuration when it draws from the whole directive space. Some of it
// makes Apache refuse to start (an unknown name, a directive of a module
// not loaded or outside its contexts, arguments it rejects, Error), some
// makes it answer 500 for a directory (the same in an .htaccess file),
// and the rest must be decided by orderly as Apache decides it, or
// refused by orderly at load as a directive it does not evaluate.

// A Construct is one kind of thing a wide configuration can hold.
type Construct string

// The constructs.
const (
	// Misspelt: unknown names, misspellings of real directives (Dney,
	// Requre, Satisfyy), third-party directives (php_value,
	// DOSHashTableSize), bad words of access directives (Require all
	// grant), and real names in another letter case, which are valid.
	Misspelt Construct = "misspelt"
	// Unloaded: real directives of modules the case does not load
	// (ExpiresActive, Header, RewriteRule, SSLRequireSSL...), bare
	// (Invalid command) or inside an <IfModule> for their module.
	Unloaded Construct = "unloaded"
	// Table: directives of the table (directive.All()) whose module is
	// loaded, in a context they allow, with plausible arguments: chosen
	// by hand (curated below) or found by asking Apache (probed.go).
	Table Construct = "table"
	// OutOfContext: directives of the table where their contexts do not
	// allow them (not allowed here).
	OutOfContext Construct = "context"
	// BadArgs: directives of the table with arguments Apache refuses: none,
	// or more than they take, or a FLAG's Maybe; and, unless BadValues
	// is avoided, values the directive's own code refuses.
	BadArgs Construct = "bad-args"
	// Modules: one to three of ExtraModules loaded (the case's modules
	// file), so that their directives are in the table draw.
	Modules Construct = "modules"
	// IfModule: <IfModule> for modules loaded, not loaded and unknown, in
	// both forms (mod_x.c, x_module), negated or not.
	IfModule Construct = "ifmodule"
	// IfDefine: Define and UnDefine, <IfDefine> on defined and undefined
	// names, Error under a condition.
	IfDefine Construct = "ifdefine"
	// IfVersion: <IfVersion> with operators that hold and do not hold for
	// the oracle's 2.4.71.
	IfVersion Construct = "ifversion"
	// IfOther: <IfDirective>, <IfSection> and <IfFile>.
	IfOther Construct = "ifdirective"
	// Vars: ${VAR} references to Define'd variables (an address, a
	// directory, a realm) and to undefined ones.
	Vars Construct = "vars"
	// Symlinks: symbolic links in the document root to files and
	// directories inside and outside it, dangling, or of another owner,
	// with Options FollowSymLinks, -FollowSymLinks, SymLinksIfOwnerMatch.
	Symlinks Construct = "symlinks"
	// NonASCII: UTF-8 names (and names with a space, %, +) in the
	// document root, <Files> patterns with ?, *, [...] over them, and
	// requests that percent-encode them in upper or lower case hex, or
	// send them raw.
	NonASCII Construct = "nonascii"
	// Trace: TraceEnable On, Off or extended, and TRACE requests.
	Trace Construct = "trace"
	// Htaccess: .htaccess files with access rules and any of the above,
	// below a <Directory> with an AllowOverride (and sometimes
	// AllowOverrideList, Nonfatal=).
	Htaccess Construct = "htaccess"
)

// Finer switches: parts of the constructs above that Options.Avoid can
// leave out on their own (they are not drawn on their own).
const (
	// NonfatalOrder: AllowOverride values with Nonfatal= before All
	// (Apache's All, core.c set_override: override = OR_ALL, drops the
	// Nonfatal= before it) or after None (the Nonfatal bit makes the
	// override set non-empty, so Apache reads the .htaccess file where
	// None alone skips it); avoided, the generator writes All first and
	// None last.
	NonfatalOrder Construct = "nonfatal-order"
	// HtaccessNoIndex: directories without their index file in a
	// configuration with .htaccess files; avoided, every directory of
	// the tree gets an index.html.
	HtaccessNoIndex Construct = "htaccess-no-index"
	// UnsetOverrideSections: preprocessor sections (<IfModule>,
	// <IfDefine>, <IfVersion>, <IfFile>...) in an .htaccess file read
	// where AllowOverride was never set (Apache 2.4 reads the file and
	// refuses every directive in it).
	UnsetOverrideSections Construct = "unset-override-sections"
	// TraceAboveRoot: TRACE requests whose path climbs above the root
	// ("/.."), which Apache refuses with 400 before TraceEnable.
	TraceAboveRoot Construct = "trace-above-root"
	// ErrorDocumentURLSymlinks: ErrorDocument 403 with a full URL in a
	// configuration with symbolic links (whose 403, from the directory
	// walk, Apache does not redirect).
	ErrorDocumentURLSymlinks Construct = "errordocument-url-symlinks"
	// QuietLogLevel: LogLevel above error (crit, or a module's crit),
	// under which Apache logs no access denial.
	QuietLogLevel Construct = "quiet-loglevel"
	// BadValues: the part of BadArgs that Apache's configuration reader
	// does not check (server/config.c invoke_cmd counts the arguments and
	// reads a FLAG's On or Off) but the directive's own code does
	// (AllowEncodedSlashes Maybe, FileETag None gen, Header, LogLevel
	// info gen...); avoided, BadArgs writes only what invoke_cmd refuses,
	// by the directive's args_how.
	BadValues Construct = "bad-values"
	// UnknownFilterProvider: AddOutputFilterByType DEFLATE where
	// mod_deflate is not loaded (Apache refuses to start).
	UnknownFilterProvider Construct = "unknown-filter-provider"
	// DocumentRootMoved: a DocumentRoot other than the case's document
	// root (a directory of it, or the extra directory).
	DocumentRootMoved Construct = "documentroot-moved"
	// ErrorDocumentLocal: ErrorDocument 401 or 403 to a local path
	// (an internal redirect, itself decided by access control).
	ErrorDocumentLocal Construct = "errordocument-local"
	// NonfatalSkipsCompat: AllowOverride Nonfatal=Override (or All)
	// without Limit or AuthConfig, under which an .htaccess file's
	// Order, Allow, Deny or Satisfy is skipped (AH02295) but still
	// makes mod_access_compat's configuration for the file, which has
	// no merger and so replaces the inherited one; avoided, such a
	// value gets both classes.
	NonfatalSkipsCompat Construct = "nonfatal-skips-compat"
)

// Constructs lists every construct, in the order the generator draws them.
var Constructs = []Construct{Misspelt, Unloaded, Table, OutOfContext, BadArgs, Modules,
	IfModule, IfDefine, IfVersion, IfOther, Vars, Symlinks, NonASCII, Trace, Htaccess}

// Options say what GenerateWith draws from.
type Options struct {
	// Wide is the share of configurations drawn from the whole directive
	// space (0: none, as Generate).
	Wide float64
	// Avoid lists constructs a wide configuration never holds.
	Avoid map[Construct]bool
	// AvoidDirectives lists directives (lower case) the draws of the
	// table (Table, OutOfContext, BadArgs, Unloaded) never write.
	AvoidDirectives map[string]bool
	// AvoidModules lists modules of ExtraModules (by name) a case never
	// loads.
	AvoidModules map[string]bool
}

// constructList joins the names of cs.
func constructList(cs []Construct) string {
	var s []string
	for _, c := range cs {
		s = append(s, string(c))
	}
	if len(s) == 0 {
		return "(nothing beyond access rules)"
	}
	return strings.Join(s, ", ")
}

// ctx is where the generator is writing.
type ctx int

const (
	ctxServer ctx = iota
	ctxDirectory
	ctxLocation
	ctxFiles
	ctxHtaccess
)

// wideState is the generator's state for a wide configuration.
type wideState struct {
	wide     bool
	on       map[Construct]bool // the constructs this configuration may hold
	usedSet  map[Construct]bool // those it holds
	out      *strings.Builder   // the file being written
	indent   int                // preprocessor sections open around the line
	where    ctx
	override directive.Override // AllowOverride of the .htaccess file being written
	// fatal is how many directives that stop Apache from starting the
	// configuration may still hold (the .htaccess files hold them
	// freely: there they make a 500).
	fatal      int
	mods       []string        // the case's modules (names)
	loaded     map[string]bool // module identifiers the oracle loads
	twoGone    bool            // GEN_TWO was UnDefine'd
	traced     bool            // TraceEnable was written
	varNet     string          // GEN_NET's value, "" if not defined
	varDir     string          // GEN_DIR's value
	links      []string        // URL paths of the symbolic links
	extraFiles []txtar.File    // symbolic links, .htaccess files, files outside the root
	nlinks     int
	// allIndexed gives every directory of the tree an index.html.
	allIndexed bool
}

func (g *generator) use(c Construct) {
	if g.usedSet == nil {
		g.usedSet = map[Construct]bool{}
	}
	g.usedSet[c] = true
}

// used lists the constructs the configuration holds.
func (g *generator) used() []Construct {
	var out []Construct
	for _, c := range Constructs {
		if g.usedSet[c] {
			out = append(out, c)
		}
	}
	return out
}

// startWide makes the configuration wide: it chooses the constructs
// (each with probability 0.4, at least one), the modules and whether one
// directive may stop Apache from starting (three times in ten).
func (g *generator) startWide() {
	g.wide = true
	g.on = map[Construct]bool{}
	// Every construct is drawn, avoided or not, so that what a seed
	// gives changes little when a construct is avoided.
	var allowed []Construct
	for _, c := range Constructs {
		on := g.chance(0.4)
		if !g.opt.Avoid[c] {
			allowed = append(allowed, c)
			g.on[c] = on
		}
	}
	if !slices.ContainsFunc(allowed, func(c Construct) bool { return g.on[c] }) && len(allowed) > 0 {
		g.on[pick(g, allowed)] = true
	}
	if g.on[Modules] {
		for _, m := range pickN(g, ExtraModules, 1+g.intn(3)) {
			if !g.opt.AvoidModules[m] {
				g.mods = append(g.mods, m)
			}
		}
		slices.Sort(g.mods)
		if len(g.mods) > 0 {
			g.use(Modules)
		}
	}
	g.loaded = LoadedModules(g.mods)
	g.allIndexed = g.on[Htaccess] && g.opt.Avoid[HtaccessNoIndex]
	if g.chance(0.3) {
		g.fatal = 1
	}
}

// names widens a list of names with the non-ASCII ones.
func (g *generator) names(base, wide []string) []string {
	if !g.nonASCII() {
		return base
	}
	g.use(NonASCII)
	return append(slices.Clone(base), wide...)
}

func (g *generator) nonASCII() bool { return g.wide && g.on[NonASCII] }

var (
	wideTopNames  = []string{"café", "日本", "naïve"}
	wideSubNames  = []string{"ünter", "sub dir"}
	wideFileNames = []string{"résumé.html", "Ünïcode.TXT", "señor.txt", "with space.html", "100%.txt", "a+b.html"}
	wideFilesPats = []string{"r?sum?.html", "r??sum??.html", "*é*", "[rR]ésumé.html", "señor.*", "with space.html",
		"100%*", "*+*", "Ü*", "*.TXT", "?nïcode.TXT", "??nïcode.TXT"}
	wideFilesRes = []string{"é", `^r.sum.\.html$`, `^r..sum..\.html$`, `\+`, "%", " ", "^[^a-z]", "(?i)ü", "^.nïcode", `\xc3`}
)

// wideFiles writes a <Files> or <FilesMatch> section over the names
// that are not plain ASCII words.
func (g *generator) wideFiles(depth int) {
	g.use(NonASCII)
	g.addFilePaths(func(base string) bool {
		return strings.IndexFunc(base, func(r rune) bool { return r >= 0x80 || r == ' ' || r == '%' || r == '+' }) >= 0
	})
	if g.chance(0.6) {
		g.line(depth, "<Files %s>", g.quote(pick(g, wideFilesPats)))
		g.body(depth+1, false)
		g.line(depth, "</Files>")
		return
	}
	g.line(depth, "<FilesMatch %s>", g.quote(pick(g, wideFilesRes)))
	g.body(depth+1, false)
	g.line(depth, "</FilesMatch>")
}

// enter sets the context for a section's body and returns what restores
// it; inside an .htaccess file every section is of the file.
func (g *generator) enter(c ctx) func() {
	old := g.where
	if old != ctxHtaccess {
		g.where = c
	}
	return func() { g.where = old }
}

// spell returns a directive's name, in another letter case sometimes.
func (g *generator) spell(name string) string {
	if !g.wide || !g.on[Misspelt] || !g.chance(0.08) {
		return name
	}
	g.use(Misspelt)
	switch g.intn(3) {
	case 0:
		return strings.ToLower(name)
	case 1:
		return strings.ToUpper(name)
	}
	b := []byte(name)
	for i := range b {
		if g.chance(0.5) {
			b[i] ^= 0x20 * byte(boolInt(b[i] >= 'a' && b[i] <= 'z' || b[i] >= 'A' && b[i] <= 'Z'))
		}
	}
	return string(b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// netVar returns ${GEN_NET} sometimes, where it is defined.
func (g *generator) netVar() string {
	if !g.wide || g.varNet == "" || !g.chance(0.2) {
		return ""
	}
	g.use(Vars)
	return "${GEN_NET}"
}

// realmVar returns a quoted realm with a ${VAR} reference sometimes.
func (g *generator) realmVar() string {
	if !g.wide || !g.on[Vars] || !g.chance(0.3) {
		return ""
	}
	g.use(Vars)
	return pick(g, []string{`"${GEN_REALM}"`, `"${GEN_NOPE}"`, `"${GEN_REALM} Area"`, `${GEN_REALM}`})
}

// varPath writes a <Directory> path with ${GEN_DIR} for its first part
// sometimes.
func (g *generator) varPath(path string) string {
	if !g.wide || g.varDir == "" {
		return path
	}
	p := apachetest.DocRootPlaceholder + "/" + g.varDir
	if path != p && !strings.HasPrefix(path, p+"/") || !g.chance(0.5) {
		return path
	}
	g.use(Vars)
	return apachetest.DocRootPlaceholder + "/${GEN_DIR}" + path[len(p):]
}

// preamble writes what a wide configuration starts with: Define lines,
// TraceEnable, an Options line for the document root, directives of the
// wider space; and makes the symbolic links.
func (g *generator) preamble() {
	wrote := false
	if g.on[IfDefine] || g.on[Vars] {
		g.line(0, "Define GEN_ON")
		if g.chance(0.5) {
			g.line(0, "Define GEN_TWO")
		}
		wrote = true
		g.use(IfDefine)
	}
	if g.on[Vars] {
		g.varNet = g.subnetWord()
		g.line(0, "Define GEN_NET %s", g.varNet)
		if len(g.dirs) > 1 {
			g.varDir = strings.SplitN(pick(g, g.dirs[1:]), "/", 2)[0]
			g.line(0, "Define GEN_DIR %s", g.quote(g.varDir))
		}
		g.line(0, `Define GEN_REALM "Staff Area"`)
		g.use(Vars)
	}
	if g.on[Trace] && g.chance(0.7) {
		g.traceEnable()
		wrote = true
	}
	if g.on[Symlinks] {
		g.symlinks()
		if g.chance(0.5) {
			g.line(0, "<Directory %s>", g.quote(apachetest.DocRootPlaceholder))
			g.line(1, "Options %s", pick(g, symOptions))
			g.line(0, "</Directory>")
			wrote = true
		}
	}
	for range g.intn(3) {
		wrote = g.noise(0) || wrote
	}
	if wrote {
		g.line(0, "")
	}
}

// between writes what a wide configuration has between its sections.
func (g *generator) between() {
	wrote := false
	if g.on[IfDefine] && !g.twoGone && g.chance(0.15) {
		g.line(0, "UnDefine GEN_TWO")
		g.twoGone = true
		wrote = true
	}
	if g.on[Trace] && !g.traced && g.chance(0.3) {
		g.traceEnable()
		wrote = true
	}
	if g.chance(0.35) {
		wrote = g.noise(0) || wrote
	}
	if wrote {
		g.line(0, "")
	}
}

// postamble writes the .htaccess files and their AllowOverride sections.
func (g *generator) postamble() {
	if g.on[Trace] && !g.traced {
		g.line(0, "")
		g.traceEnable()
	}
	if g.on[Htaccess] {
		g.htaccessFiles()
	}
}

// traceEnable writes TraceEnable at the server level (or, where one
// directive may stop Apache, with a bad value).
func (g *generator) traceEnable() {
	g.traced = true
	g.use(Trace)
	if g.fatalOK() && g.chance(0.15) {
		g.line(0, "TraceEnable %s", pick(g, []string{"Maybe", "On Off"}))
		return
	}
	g.line(0, "TraceEnable %s", pick(g, []string{"On", "Off", "off", "extended", "Extended", "Off"}))
}

// fatalOK reports whether a directive that stops Apache from reading
// the configuration may be written here, and counts it.
func (g *generator) fatalOK() bool {
	if g.where == ctxHtaccess {
		return true
	}
	if g.fatal > 0 {
		g.fatal--
		return true
	}
	return false
}

// bodyNoise adds to a section's (or .htaccess file's) body: directives
// of the wider space, an Options line, a Define, Error under a condition.
func (g *generator) bodyNoise(depth int) {
	if g.chance(0.45) {
		for range 1 + g.intn(2) {
			g.noise(depth)
		}
	}
	if g.on[Symlinks] && g.chance(0.3) {
		g.line(depth, "Options %s", pick(g, symOptions))
		g.use(Symlinks)
	}
	if g.on[IfDefine] && g.chance(0.08) {
		g.use(IfDefine)
		name, neg := "GEN_ON", "!"
		if g.fatalOK() {
			name, neg = pick(g, []string{"GEN_ON", "GEN_OFF"}), pick(g, []string{"", "!"})
		}
		g.line(depth, "<IfDefine %s%s>", neg, name)
		g.line(depth+1, `Error "GEN_ON must be defined"`)
		g.line(depth, "</IfDefine>")
	}
	if g.on[IfDefine] && g.chance(0.04) {
		g.line(depth, "Define GEN_LATE")
		g.use(IfDefine)
	}
	if g.on[Trace] && g.where != ctxHtaccess && g.chance(0.05) && g.fatalOK() {
		g.line(depth, "<Limit TRACE>")
		g.line(depth+1, "Require all denied")
		g.line(depth, "</Limit>")
		g.use(Trace)
	}
}

// hasCond reports whether a preprocessor construct is on.
func (g *generator) hasCond() bool {
	return g.on[IfModule] || g.on[IfDefine] || g.on[IfVersion] || g.on[IfOther]
}

// wrap runs fn, which writes at depth, inside a preprocessor section
// with probability p (in a wide configuration with one of them on).
func (g *generator) wrap(depth int, p float64, fn func()) {
	if !g.wide || !g.hasCond() || !g.chance(p) {
		fn()
		return
	}
	open, name := g.condition()
	g.line(depth, "%s", open)
	g.indent++
	fn()
	g.indent--
	g.line(depth, "</%s>", name)
}

// condition returns the opening line of a preprocessor section and its
// name.
func (g *generator) condition() (string, string) {
	var kinds []Construct
	for _, c := range []Construct{IfModule, IfDefine, IfVersion, IfOther} {
		if g.on[c] {
			kinds = append(kinds, c)
		}
	}
	c := pick(g, kinds)
	g.use(c)
	neg := ""
	if g.chance(0.3) {
		neg = "!"
	}
	switch c {
	case IfModule:
		return fmt.Sprintf("<IfModule %s%s>", neg, g.moduleCond()), "IfModule"
	case IfDefine:
		names := []string{"GEN_ON", "GEN_TWO", "GEN_OFF", "gen_on", "GEN_LATE"}
		if g.varNet != "" {
			names = append(names, "GEN_NET")
		}
		return fmt.Sprintf("<IfDefine %s%s>", neg, pick(g, names)), "IfDefine"
	case IfVersion:
		return fmt.Sprintf("<IfVersion %s>", pick(g, versionConds)), "IfVersion"
	}
	switch g.intn(3) {
	case 0:
		return fmt.Sprintf("<IfDirective %s%s>", neg, pick(g, []string{"Order", "Dney", "ExpiresActive", "Require", "RewriteRule", "php_value", "order"})), "IfDirective"
	case 1:
		return fmt.Sprintf("<IfSection %s%s>", neg, pick(g, []string{"Limit", "Macro", "RequireAll", "Proxy", "Directory", "Limt"})), "IfSection"
	}
	return fmt.Sprintf("<IfFile %s%s>", neg, g.quote(pick(g, []string{"@AUTH@/users", "@EXTRA@/nosuch", "@DOCROOT@/index.html", "@AUTH@/groups", "@DOCROOT@"}))), "IfFile"
}

var versionConds = []string{">= 2.4", "< 2.4", "= 2.4.71", "2.4.71", "> 2.4.70", "<= 2.2.34", "!= 2.4.71",
	`~ ^2\.4`, `/^2\.2/`, `!~ ^2\.4`, "> 2.4.100", "< 2.10", "= 2.4", "< 2.4.9", ">= 2.4.71", "== 2.4.71", "2.4"}

// moduleCond names a module for <IfModule>: loaded, one a case may load
// but this one does not, or unknown; as mod_x.c or x_module.
func (g *generator) moduleCond() string {
	var id string
	switch x := g.intn(10); {
	case x < 5:
		var ids []string
		for m := range g.loaded {
			if m != "mpm" && m != "core_module" && m != "http_module" {
				ids = append(ids, m)
			}
		}
		sort.Strings(ids)
		id = pick(g, ids)
	case x < 8:
		var ids []string
		for _, m := range ExtraModules {
			if !g.loaded[m+"_module"] {
				ids = append(ids, m+"_module")
			}
		}
		if len(ids) == 0 {
			return "mod_php5.c"
		}
		id = pick(g, ids)
	default:
		return pick(g, []string{"mod_php5.c", "php7_module", "mod_security2.c", "mod_evasive20.c", "evasive20_module", "mod_ssl.c", "ssl_module", "mod_rewrite"})
	}
	if id == "mpm_event_module" || g.chance(0.5) {
		return id
	}
	return "mod_" + moduleName(id) + ".c"
}

// noise writes one directive of the wider space at depth, for the
// context being written; it reports whether it wrote one.
func (g *generator) noise(depth int) bool {
	type kind struct {
		c Construct
		w int
	}
	var kinds []kind
	total := 0
	for _, k := range []kind{{Table, 10}, {Misspelt, 2}, {Unloaded, 3}, {OutOfContext, 1}, {BadArgs, 1}} {
		if g.on[k.c] {
			kinds = append(kinds, k)
			total += k.w
		}
	}
	if total == 0 {
		return false
	}
	x := g.intn(total)
	var c Construct
	for _, k := range kinds {
		if x < k.w {
			c = k.c
			break
		}
		x -= k.w
	}
	switch c {
	case Table:
		it, ok := g.tableItem(true)
		if !ok {
			return false
		}
		g.wrap(depth, 0.15, func() { g.line(depth, "%s", it) })
	case Misspelt:
		if g.fatalOK() {
			g.line(depth, "%s", pick(g, misspelt))
		} else {
			g.line(depth, "<IfModule %s>", pick(g, []string{"mod_php5.c", "mod_evasive20.c", "security2_module", "mod_php7.c"}))
			g.line(depth+1, "%s", pick(g, thirdParty))
			g.line(depth, "</IfModule>")
		}
	case Unloaded:
		name, args, mod, ok := g.unloadedItem()
		if !ok {
			return false
		}
		if g.fatalOK() {
			g.line(depth, "%s", joinArgs(name, args))
		} else {
			cond := mod
			if g.chance(0.5) {
				cond = "mod_" + moduleName(mod) + ".c"
			}
			g.line(depth, "<IfModule %s>", cond)
			g.line(depth+1, "%s", joinArgs(name, args))
			g.line(depth, "</IfModule>")
			g.use(IfModule)
		}
	case OutOfContext, BadArgs:
		if !g.fatalOK() {
			return false
		}
		var it string
		var ok bool
		if c == OutOfContext {
			it, ok = g.tableItem(false)
		} else {
			it, ok = g.badArgs()
		}
		if !ok {
			return false
		}
		g.line(depth, "%s", it)
	}
	g.use(c)
	return true
}

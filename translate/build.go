package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/orderly-proxy/orderly/internal/par"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// Options tune Build.
type Options struct {
	Semantics    Semantics
	ServerRoot   string // relative AuthUserFile, AuthGroupFile, DocumentRoot resolve against it
	DocumentRoot string // used when the configuration sets none
	// BaseDir makes file names in rule IDs and messages relative, so that
	// IDs do not change when the tree moves.
	BaseDir string
	// Modules are the modules loaded, by identifier ("rewrite_module").
	Modules map[string]bool
	// ForwardUnfaithful loads a configuration with directives orderly
	// cannot evaluate (Config.Unfaithful), ignoring them; without it they
	// are errors.
	ForwardUnfaithful bool
	// Omit takes the access lines with these rule IDs out of the policy,
	// as if they were deleted (rules demoted to shadow-only). IDs of the
	// other rules do not change.
	Omit map[string]bool
	// RenderOnly builds a model that is written out (Convert), never
	// decided on: the address lists are not compiled for lookups, and
	// rules get no IDs unless Omit needs them.
	RenderOnly bool
	// Partial returns, with the errors, the model of everything else: each
	// directive in error left out (orderly lint reads its findings from
	// it). Such a model is never served or written out.
	Partial bool
}

// Build turns a loaded configuration (apacheconf.Load) into the access
// model. Every problem is reported, each as "file:line: message"; the
// error is an apacheconf.ErrorList.
func Build(ds []*apacheconf.Directive, opt Options) (*Config, error) {
	if opt.Semantics == "" {
		opt.Semantics = Compat24
	}
	b := &builder{
		opt: opt,
		cfg: &Config{
			Semantics:         opt.Semantics,
			ForwardUnfaithful: opt.ForwardUnfaithful,
			RenderOnly:        opt.RenderOnly,
			Omit:              opt.Omit,
			Methods:           &policy.Methods{},
			MergeSlashes:      true,
			Defaults:          &DirConf{},
			AccessFileNames:   []string{".htaccess"},
			DefaultOverride:   OrUnset,
			Modules:           opt.Modules,
			Limits:            newServerLimits(),
		},
		ordinals: map[string]int{},
		set:      map[string]bool{},
		order:    new(int),
	}
	switch opt.Semantics {
	case Compat24:
	case Legacy22:
		b.cfg.DefaultOverride = OrAll // 2.2: AllowOverride All by default
		b.cfg.MergeSlashes = false    // 2.2 has no MergeSlashes: r->uri keeps "//"
	default:
		return nil, apacheconf.ErrorList{{Msg: fmt.Sprintf("semantics %q is unknown (use %q or %q)", opt.Semantics, Legacy22, Compat24)}}
	}
	b.cfg.Defaults.Options = defaultOptions(opt.Semantics)
	b.cfg.GroupFirst = groupFirst(ds)
	b.serverRoot = opt.ServerRoot
	b.cfg.ServerRoot = opt.ServerRoot
	b.apartOK = hostsApart(ds, opt)
	// <Limit> registers methods in configuration order before anything is
	// evaluated; walk the tree once for them so that masks are complete.
	for _, d := range ds {
		b.topLevel(d)
	}
	b.buildHosts()
	b.nameBased()
	if b.cfg.DocumentRoot == "" {
		b.cfg.DocumentRoot = opt.DocumentRoot
	}
	if b.cfg.DocumentRoot == "" && len(b.errs) == 0 {
		b.errs = append(b.errs, &apacheconf.Error{Msg: "no DocumentRoot: the configuration sets none and legacy.document_root is empty"})
	}
	b.checkStrictHost()
	sortSections(b.cfg)
	if len(b.errs) > 0 && !opt.Partial {
		return nil, b.errs
	}
	b.cfg.ServerRoot = b.serverRoot
	b.cfg.BaseDir = opt.BaseDir
	if !b.overrideSet {
		b.cfg.Differences = append(b.cfg.Differences, Difference{Text: "AllowOverride is never set: under Apache 2.2 .htaccess files may hold any directive; under 2.4 they are still read, and any directive in them answers 500"})
	}
	b.cfg.Default = b.defaultRule(nil, "server")
	for _, vb := range b.vhosts {
		v := vb.vhost
		b.cfg.Differences = append(b.cfg.Differences, vb.cfg.Differences...)
		b.cfg.Unfaithful = append(b.cfg.Unfaithful, vb.cfg.Unfaithful...)
		b.cfg.Unservable = append(b.cfg.Unservable, vb.cfg.Unservable...)
		v.Config = mergeServer(b.cfg, vb.cfg, vb.set)
		v.Config.Default = vb.defaultRule(vb.directive, vb.scope...)
		b.defaults = append(b.defaults, vb.defaults...)
		b.cfg.VHosts = append(b.cfg.VHosts, v)
	}
	b.cfg.Rules = append(b.rules, b.defaults...)
	if len(b.errs) > 0 {
		return b.cfg, b.errs // Partial
	}
	return b.cfg, nil
}

type builder struct {
	// rwParsed is the rewrite line rewriteValue parsed last (rewrite.go).
	rwParsed rewriteParsed
	opt      Options
	// skipped is the row of the directive admit last skipped for
	// AllowOverride Nonfatal=Override, until dirDirective reads it.
	skipped *directive.Info
	// owned are the rules a section has taken as its Lines (own).
	owned map[*policy.Rule]bool
	// vanished: the Require container just read held only lines
	// Options.Omit took out, and went with them.
	vanished bool
	// strictHost is the StrictHostCheck On line of the server being
	// built, if any.
	strictHost *apacheconf.Directive
	cfg        *Config
	errs       apacheconf.ErrorList
	ordinals   map[string]int
	idBuf      []byte // ruleID's key, reused
	// relFile's last answer.
	lastFile, lastRel string
	order             *int // shared by the main builder and its hosts
	serverRoot        string
	rules             []*policy.Rule
	defaults          []*policy.Rule

	// For a <VirtualHost>: the host being built, its directive and scope
	// for rule IDs, and which server-wide settings it set itself. The
	// main builder keeps the builders of its hosts.
	vhost     *VHost
	directive *apacheconf.Directive
	scope     []string
	set       map[string]bool
	vhosts    []*builder

	// htaccess is set while building an .htaccess file: the AllowOverride
	// categories in force and the non-fatal flags.
	htaccess *htaccessMode

	overrideSet bool // some <Directory> sets AllowOverride
	parent      *builder

	// reDefault is RegexDefaultOptions as the configuration has set it so
	// far (nil: not at all); regexopts.go.
	reDefault *RegexDefaults

	// A host built apart (buildHosts), on another core: its rules get
	// their IDs, and its sections their order, only once the hosts
	// before it in the configuration have theirs.
	apart   bool
	pending []pendingID // rules awaiting their ID, in the order made
	made    []*Section  // sections numbered from 0, awaiting an offset

	// For the main builder: the hosts to build apart, in order, when
	// apartOK.
	later   []*laterHost
	apartOK bool

	// nameVHosts are the addresses of NameVirtualHost directives (2.2).
	nameVHosts []nameVHost
}

// A nameVHost is one address of a NameVirtualHost directive.
type nameVHost struct {
	addr VHostAddr
	d    *apacheconf.Directive
}

// A pendingID is a rule whose ID waits for the ordinal of its key.
type pendingID struct {
	r   *policy.Rule
	key string
	n   int // the ordinal, once known
}

// A laterHost is a <VirtualHost> whose contents are built after the main
// server's, with where its errors and rules go in the main builder's.
type laterHost struct {
	vb              *builder
	d               *apacheconf.Directive
	errsAt, rulesAt int
}

func (b *builder) markOverride() {
	for x := b; x != nil; x = x.parent {
		x.overrideSet = true
		if x.apart {
			return // buildHosts passes it on
		}
	}
}

// nextOrder numbers sections uniquely: in configuration order for the
// server configuration, apart from it for .htaccess files.
func (b *builder) nextOrder() int {
	if b.htaccess != nil || b.order == nil {
		return int(1<<40 + htaccessOrder.Add(1))
	}
	n := *b.order
	*b.order++
	return n
}

func (b *builder) errorf(d *apacheconf.Directive, format string, args ...any) {
	b.errs = append(b.errs, &apacheconf.Error{Pos: d.Pos, Msg: fmt.Sprintf(format, args...)})
}

func (b *builder) relFile(f string) string {
	if f == b.lastFile {
		return b.lastRel // a file's directives come one after another
	}
	rel := f
	if b.opt.BaseDir != "" {
		if r, err := filepath.Rel(b.opt.BaseDir, f); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
	}
	b.lastFile, b.lastRel = f, rel
	return rel
}

// rule makes the Rule of a directive. Its ID hashes the relative file, the
// enclosing sections, the normalised directive and its ordinal among
// identical siblings (design.md, "Rule IDs").
func (b *builder) rule(d *apacheconf.Directive, scope []string) *policy.Rule {
	if b.noIDs() {
		return renderRule
	}
	r := &policy.Rule{File: b.relFile(d.Pos.File), Line: d.Pos.Line, Text: d.Text()}
	if b.apart {
		b.pending = append(b.pending, pendingID{r: r, key: string(b.ruleKey(d, scope))})
	} else {
		r.ID = b.ruleID(d, scope, true)
	}
	b.rules = append(b.rules, r)
	return r
}

// ruleID is the ID of the directive's rule; take consumes its ordinal, so
// that the next identical sibling gets the next one.
func (b *builder) ruleID(d *apacheconf.Directive, scope []string, take bool) string {
	key := b.ruleKey(d, scope)
	n := b.ordinals[string(key)]
	if take {
		b.ordinals[string(key)] = n + 1
	}
	return ruleHash(key, n)
}

// ruleHash is the ID of the n-th rule with key (design.md, "Rule IDs"). It
// may append to key's array.
func ruleHash(key []byte, n int) string {
	key = append(key, 0)
	key = strconv.AppendInt(key, int64(n), 10)
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:6])
}

// ruleKey is a rule's key, in a buffer reused by the next call: its file,
// scope and normalised directive, NUL-separated.
func (b *builder) ruleKey(d *apacheconf.Directive, scope []string) []byte {
	key := append(b.idBuf[:0], b.relFile(d.Pos.File)...)
	key = append(key, 0)
	for i, s := range scope {
		if i > 0 {
			key = append(key, 0)
		}
		key = append(key, s...)
	}
	key = append(key, 0)
	key = append(key, d.LowerName()...)
	key = append(key, ' ')
	for i, a := range d.Args {
		if i > 0 {
			key = append(key, ' ')
		}
		key = append(key, a...)
	}
	b.idBuf = key
	return key
}

// demotable are the directives Options.Omit can take out of a policy:
// access lines and settings (IsSectionAccess), whose absence is what
// deleting the line means, and RewriteRule lines (with their RewriteCond
// lines).
var demotable = func() map[string]bool {
	m := map[string]bool{"rewriterule": true} // with its RewriteCond lines (rewriteLine)
	for k := range sectionAccess {
		m[k] = true
	}
	return m
}()

// omitted reports whether d is a rule Options.Omit takes out; its ID is
// then used up, so that the IDs of the rules after it do not move.
func (b *builder) omitted(d *apacheconf.Directive, name string, scope []string) bool {
	if len(b.opt.Omit) == 0 || !demotable[name] || !b.opt.Omit[b.ruleID(d, scope, false)] {
		return false
	}
	b.ruleID(d, scope, true)
	return true
}

func (b *builder) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || b.serverRoot == "" {
		return p
	}
	return filepath.Join(b.serverRoot, p)
}

func sectionHeader(d *apacheconf.Directive) string {
	return "<" + d.LowerName() + " " + strings.Join(d.Args, " ") + ">"
}

// within returns scope with the section d inside it, for the keys of the
// rules of d's directives; nothing where rules have no IDs.
func (b *builder) within(scope []string, d *apacheconf.Directive) []string {
	if b.noIDs() {
		return nil
	}
	return append(append([]string(nil), scope...), sectionHeader(d))
}

// accessDirectives are the directives whose placement decides access.
var accessDirectives = map[string]bool{
	"order": true, "allow": true, "deny": true, "satisfy": true, "require": true,
	"requireall": true, "requireany": true, "requirenone": true,
	"authtype": true, "authname": true, "authuserfile": true, "authgroupfile": true,
	"authmerging": true, "authzsendforbiddenonfailure": true, "authbasicprovider": true,
	"limit": true, "limitexcept": true,
}

func mentionsAccess(d *apacheconf.Directive) bool {
	found := false
	apacheconf.Walk([]*apacheconf.Directive{d}, func(x *apacheconf.Directive, _ []*apacheconf.Directive) error {
		if accessDirectives[x.LowerName()] {
			found = true
		}
		return nil
	})
	return found
}

func (b *builder) topLevel(d *apacheconf.Directive) {
	parent := ""
	if b.vhost != nil {
		parent = "VirtualHost"
	}
	info := b.admit(d, directive.Server, parent)
	if info == nil {
		return
	}
	name := d.LowerName()
	switch name {
	case "serverroot":
		if len(d.Args) == 1 {
			b.serverRoot = d.Args[0]
		}
	case "documentroot":
		if len(d.Args) != 1 {
			b.errorf(d, "DocumentRoot takes one argument")
			return
		}
		b.cfg.DocumentRoot = filepath.Clean(b.resolve(d.Args[0]))
	case "alias", "scriptalias", "aliasmatch", "scriptaliasmatch":
		b.alias(d, name)
	case "accessfilename":
		if len(d.Args) > 0 {
			b.cfg.AccessFileNames = append([]string(nil), d.Args...)
			b.set["accessfilename"] = true
		}
	case "mergeslashes":
		if b.cfg.Semantics == Legacy22 {
			b.errorf(d, "MergeSlashes is an Apache 2.4 directive, unknown to 2.2; use semantics \"2.4-compat\"")
			return
		}
		if len(d.Args) == 1 {
			b.cfg.MergeSlashes = !strings.EqualFold(d.Args[0], "off")
			b.set["mergeslashes"] = true
		}
	case "namevirtualhost":
		if b.cfg.Semantics != Legacy22 {
			return // AH00548: NameVirtualHost has no effect in 2.4
		}
		if b.vhost != nil {
			b.errorf(d, "NameVirtualHost cannot occur within <VirtualHost> section")
			return
		}
		for _, a := range d.Args {
			va, err := parseVHostAddr(a)
			if err != "" {
				b.errorf(d, "%s", strings.Replace(err, "<VirtualHost>", "NameVirtualHost", 1))
				return
			}
			b.nameVHosts = append(b.nameVHosts, nameVHost{addr: va, d: d})
		}
	case "traceenable":
		v := ""
		if len(d.Args) == 1 {
			v = strings.ToLower(d.Args[0])
		}
		if v != "on" && v != "off" && v != "extended" {
			b.errorf(d, "TraceEnable must be one of 'on', 'off', or 'extended'")
			return
		}
		b.cfg.TraceEnable, b.cfg.TraceRule = v, b.rule(d, b.scope)
	case "limitrequestbody", "limitxmlrequestbody", "limitrequestline", "limitrequestfieldsize", "limitrequestfields",
		"httpprotocoloptions", "stricthostcheck":
		b.limits(d, nil)
	case "redirect", "redirectmatch", "redirecttemp", "redirectpermanent", "redirectrelative", "usecanonicalname", "errordocument":
		b.redirects(d, nil)
	case "allowencodedslashes":
		b.set["allowencodedslashes"] = true
		if len(d.Args) >= 1 {
			switch strings.ToLower(d.Args[0]) {
			case "on":
				b.cfg.AllowEncodedSlashes = EncodedSlashesOn
			case "nodecode":
				b.cfg.AllowEncodedSlashes = EncodedSlashesNoDecode
			default:
				b.cfg.AllowEncodedSlashes = EncodedSlashesOff
			}
		}
	case "directory", "directorymatch", "files", "filesmatch", "location", "locationmatch":
		if s := b.section(d, nil, b.scope); s != nil {
			switch s.Kind {
			case KindDirectory:
				b.cfg.Dirs = append(b.cfg.Dirs, s)
			case KindDirectoryMatch:
				b.cfg.DirMatches = append(b.cfg.DirMatches, s)
			case KindFiles, KindFilesMatch:
				b.cfg.Files = append(b.cfg.Files, s)
			default:
				b.cfg.Locations = append(b.cfg.Locations, s)
			}
		}
	case "rewriteengine", "rewritebase", "rewriteoptions", "rewritecond", "rewriterule", "rewritemap":
		b.rewriteDirective(d, nil)
	case "setenvif", "setenvifnocase", "browsermatch", "browsermatchnocase":
		b.cfg.ServerEnv = b.setEnvIf(d, b.scope, b.cfg.ServerEnv)
	case "hostnamelookups":
		b.hostnameLookups(d, b.cfg.Defaults)
	case "directoryindex":
		b.cfg.Defaults.DirIndex = addIndex(b.cfg.Defaults.DirIndex, d)
	case "options":
		b.options(d, b.cfg.Defaults, b.scope)
	case "sethandler", "addhandler", "addtype", "forcetype", "defaulttype":
		b.cgiHandler(d, name)
		b.unevaluated(d, info)
		if name == "sethandler" && len(d.Args) > 0 {
			h := d.Args[0]
			b.cfg.Defaults.Handler = &h
		}
	case "fallbackresource":
		b.cfg.Defaults.Fallback = b.fallback(d)
	case "acceptpathinfo":
		if v := b.acceptPathInfo(d); v != nil {
			b.cfg.Defaults.AcceptPathInfo, b.cfg.Defaults.AcceptPathInfoRule = v, b.namedRule(d, b.scope)
		}
	case "directoryslash", "directorycheckhandler", "directoryindexredirect":
		b.cfg.Defaults.Dir = b.dirSetting(d, name, b.cfg.Defaults.Dir, b.scope)
	case "sslrequiressl", "sslverifyclient", "sslverifydepth", "sslcacertificatefile", "sslcacertificatepath", "ssloptions", "sslusername", "sslengine":
		b.ssl(d, name, b.cfg.Defaults, b.scope, true) // ssl.go
	case "virtualhost":
		if b.vhost != nil {
			b.errorf(d, "<VirtualHost> cannot occur within <VirtualHost> section")
			return
		}
		b.virtualHost(d)
	case "servername":
		b.serverName(d)
		if b.vhost != nil && len(d.Args) >= 1 {
			// server_hostname, which matches_aliases compares with the
			// Host (strcasecmp): the name without "scheme://" and port,
			// as serverName read it.
			b.vhost.Name = b.cfg.Limits.Name
		}
	case "serveralias":
		if b.vhost == nil {
			// core.c set_server_alias: the main server has no names.
			b.errorf(d, "ServerAlias only used in <VirtualHost>")
			return
		}
		for _, a := range d.Args {
			b.vhost.Aliases = append(b.vhost.Aliases, strings.ToLower(a))
		}
	case "regexdefaultoptions":
		b.regexDefaultOptions(d) // regexopts.go
	case "if", "elseif", "else":
		b.ifSection(d)
	case "proxy", "proxymatch":
		// Applied to proxied requests only, which orderly refuses
		// (ProxyPass, ProxyRequests): their contents must be known.
		b.opaque(d, "", false)
	case "loadmodule":
		if len(d.Args) > 0 && !stockModules[d.Args[0]] && !strings.HasPrefix(d.Args[0], "mpm_") {
			b.notFaithful(d, "third-party module "+d.Args[0]+": orderly cannot know its access or mapping hooks")
		}
	case "error":
		// core's Error: Apache stops reading with this message.
		b.errorf(d, "%s", strings.Join(d.Args, " "))
	default:
		b.unevaluated(d, info)
		if name == "userdir" {
			b.userDir(d)
		}
	}
}

// fallback reads FallbackResource (ap_set_string_slot, TAKE1).
func (b *builder) fallback(d *apacheconf.Directive) *string {
	if len(d.Args) != 1 {
		b.errorf(d, "FallbackResource takes one argument, Set a default handler")
		return nil
	}
	f := d.Args[0]
	return &f
}

// dirSetting reads one of mod_dir's switches into the section's (a
// copy; nil: none yet): DirectorySlash and DirectoryCheckHandler are
// FLAG, DirectoryIndexRedirect is configure_redirect.
func (b *builder) dirSetting(d *apacheconf.Directive, name string, cur *DirSettings, scope []string) *DirSettings {
	ds := DirSettings{Slash: -1, CheckHandler: -1, IndexRedirect: -1}
	if cur != nil {
		ds = *cur
	}
	if len(d.Args) != 1 {
		if name == "directoryindexredirect" {
			b.errorf(d, "DirectoryIndexRedirect takes one argument, On, Off, or a 3xx status code.")
		} else {
			b.errorf(d, "%s takes one argument, On or Off", d.Name)
		}
		return cur
	}
	arg := strings.ToLower(d.Args[0])
	if name != "directoryindexredirect" {
		if arg != "on" && arg != "off" {
			b.errorf(d, "%s must be On or Off", d.Name)
			return cur
		}
		v := int8(0)
		if arg == "on" {
			v = 1
		}
		if name == "directoryslash" {
			ds.Slash = v
		} else {
			ds.CheckHandler = v
		}
		return &ds
	}
	switch {
	case arg == "on", arg == "temp":
		ds.IndexRedirect = 302
	case arg == "off":
		ds.IndexRedirect = 0
	case arg == "permanent":
		ds.IndexRedirect = 301
	case arg == "seeother":
		ds.IndexRedirect = 303
	case arg[0] >= '0' && arg[0] <= '9':
		n := atoi(arg)
		if n < 300 || n > 399 {
			b.errorf(d, "DirectoryIndexRedirect only accepts values between 300 and 399")
			return cur
		}
		ds.IndexRedirect = n
	default:
		b.errorf(d, "DirectoryIndexRedirect ON|OFF|permanent|temp|seeother|3xx")
		return cur
	}
	ds.IndexRedirectRule = b.namedRule(d, scope)
	return &ds
}

// namedRule is rule, nil for a model only written out.
func (b *builder) namedRule(d *apacheconf.Directive, scope []string) *policy.Rule {
	if r := b.rule(d, scope); r != renderRule {
		return r
	}
	return nil
}

// acceptPathInfo reads AcceptPathInfo (set_accept_path_info).
func (b *builder) acceptPathInfo(d *apacheconf.Directive) *string {
	if len(d.Args) != 1 {
		b.errorf(d, "AcceptPathInfo takes one argument, Set to on or off for PATH_INFO to be accepted by handlers, or default for the per-handler preference")
		return nil
	}
	v := strings.ToLower(d.Args[0])
	if v != "on" && v != "off" && v != "default" {
		b.errorf(d, "AcceptPathInfo must be set to on, off or default")
		return nil
	}
	return &v
}

// offArg reports a directive switched off ("CheckSpelling Off", "UserDir
// disabled"), which changes nothing.
// userDir records where a UserDir line maps /~user URLs: absolute
// directories (UserDirs), or directories of the users' home directories
// (UserDirHomes), which the configuration does not name.
func (b *builder) userDir(d *apacheconf.Directive) {
	if offArg(d) {
		return
	}
	for _, a := range d.Args {
		switch {
		case strings.HasPrefix(a, "/"):
			b.cfg.UserDirs = append(b.cfg.UserDirs, a)
		case strings.EqualFold(a, "enabled"), strings.EqualFold(a, "disabled"), strings.Contains(a, "://"):
		default:
			if !strings.EqualFold(d.Args[0], "enabled") && !strings.EqualFold(d.Args[0], "disabled") {
				b.cfg.UserDirHomes = true
			}
		}
	}
}

func offArg(d *apacheconf.Directive) bool {
	return len(d.Args) > 0 && (strings.EqualFold(d.Args[0], "off") || strings.EqualFold(d.Args[0], "disabled") && len(d.Args) == 1)
}

// notFaithful records a directive orderly cannot evaluate as Apache does.
func (b *builder) notFaithful(d *apacheconf.Directive, why string) {
	u := Difference{Pos: d.Pos, Text: d.Name + ": " + why}
	if b.htaccess != nil {
		// At request time: refuse rather than guess (500), unless the
		// operator chose to forward, or the file is only written out.
		if !b.opt.ForwardUnfaithful && !b.opt.RenderOnly {
			b.ownErrorf(d, "%s; orderly cannot decide as Apache would", u.Text)
		}
		return
	}
	b.cfg.Unfaithful = append(b.cfg.Unfaithful, u)
	if !b.opt.ForwardUnfaithful {
		b.errs = append(b.errs, unfaithfulRefusal(u))
	}
}

// unfaithfulRefusal is orderly serve's refusal to start on u, a
// directive of the configuration it cannot evaluate.
func unfaithfulRefusal(u Difference) *apacheconf.Error {
	return &apacheconf.Error{Pos: u.Pos, Msg: u.Text + "; refusing to start (set legacy.forward_unfaithful = true to forward these requests and let the backend enforce it)"}
}

// cannotServe is a refusal of orderly serve's own (ownErrorf) for what
// Apache 2.4 serves and orderly cannot evaluate (a provider, an alias):
// an error, or, in a model only written out, where Apache reads it the
// same way, kept in Config.Unservable for lint.
func (b *builder) cannotServe(d *apacheconf.Directive, format string, args ...any) {
	if !b.opt.RenderOnly {
		b.ownErrorf(d, format, args...)
		return
	}
	if b.htaccess == nil {
		b.cfg.Unservable = append(b.cfg.Unservable, &apacheconf.Error{Pos: d.Pos, Msg: fmt.Sprintf(format, args...), Own: true})
	}
}

// addIndex is mod_dir's add_index: names are added to the list;
// "disabled" empties it, and an empty, non-nil list turns the index
// lookup off (nil means not set: inherit, or the default index.html).
func addIndex(list []string, d *apacheconf.Directive) []string {
	for _, a := range d.Args {
		if strings.EqualFold(a, "disabled") {
			list = []string{}
			continue
		}
		list = append(list, a)
	}
	if list == nil {
		list = []string{}
	}
	return list
}

func (b *builder) alias(d *apacheconf.Directive, name string) {
	if len(d.Args) != 2 {
		b.errorf(d, "%s takes two arguments, a path and a target", d.Name)
		return
	}
	a := Alias{Fake: d.Args[0], Real: d.Args[1], Pos: d.Pos}
	if strings.HasSuffix(name, "match") {
		a.Regex = b.compileRegex(d, d.Args[0], b.regexOpts(false), msgAliasRegex)
		if a.Regex == nil {
			return
		}
	}
	b.cfg.Aliases = append(b.cfg.Aliases, a)
}

// section builds a <Directory>, <Files>, <Location> (or Match) section.
func (b *builder) section(d *apacheconf.Directive, parent *Section, scope []string) *Section {
	name := d.LowerName()
	if len(d.Args) == 0 {
		b.errorf(d, "<%s> needs an argument", d.Name)
		return nil
	}
	s := &Section{Pos: d.Pos, Order: b.nextOrder(), Conf: &DirConf{}}
	if b.apart {
		b.made = append(b.made, s)
	}
	args := d.Args
	regex := strings.HasSuffix(name, "match")
	if args[0] == "~" {
		if len(args) < 2 {
			b.errorf(d, "<%s ~> block must specify a path", d.Name)
			return nil
		}
		regex = true
		args = args[1:]
	}
	if len(args) > 1 {
		b.errorf(d, "Multiple <%s> arguments not (yet) supported.", d.Name)
		return nil
	}
	s.Pattern = args[0]
	switch {
	case strings.HasPrefix(name, "directory"):
		s.Kind = KindDirectory
		if regex {
			s.Kind = KindDirectoryMatch
		}
	case strings.HasPrefix(name, "files"):
		s.Kind = KindFiles
		if regex {
			s.Kind = KindFilesMatch
		}
	default:
		s.Kind = KindLocation
		if regex {
			s.Kind = KindLocationMatch
		}
	}
	if parent != nil {
		nested := (s.Kind == KindFiles || s.Kind == KindFilesMatch) &&
			(parent.Kind == KindDirectory || parent.Kind == KindDirectoryMatch || parent.Kind == KindHtaccess)
		if !nested {
			b.errorf(d, "<%s cannot occur within %s section", d.Name, parent)
			return nil
		}
	}
	if regex {
		// USE_ICASE is AP_REG_ICASE on Windows only: case counts here.
		opt := b.regexOpts(false)
		// 2.2's directory walk matches with AP_REG_NOTEOL (server/request.c,
		// 2.2.34 line 1114): "$" never matches the end of the name.
		opt.NotEOL = s.Kind == KindDirectoryMatch && b.cfg.Semantics == Legacy22
		re := b.compileRegex(d, s.Pattern, opt, msgSectionRegex)
		if re == nil {
			return nil
		}
		if s.Kind == KindDirectoryMatch && strings.Contains(s.Pattern, "$") {
			b.differ(d, "\"$\" in a <DirectoryMatch>: it never matches in Apache 2.2 (AP_REG_NOTEOL); in 2.4 it matches the end of the file name")
		}
		s.Regex = re
	} else {
		switch s.Kind {
		case KindDirectory:
			p := s.Pattern
			if p != "/" {
				if !strings.HasPrefix(p, "/") {
					p = b.resolve(p)
				}
				p = path.Clean(p)
				if !strings.HasSuffix(p, "/") {
					p += "/"
				}
			}
			s.Path = p
			if p != "/" {
				s.Depth = strings.Count(p, "/")
			}
		case KindFiles:
			s.Path = path.Clean(s.Pattern)
			if s.Pattern == "" {
				s.Path = ""
			}
		default:
			s.Path = s.Pattern
		}
		s.Fnmatch = fnmatchTest(s.Path) // apr_fnmatch_test: else strcmp
	}
	scope = b.within(scope, d)
	s.block = d.Block
	s.directive = d
	ctx := &dirCtx{sec: s, conf: s.Conf, limited: policy.AllMethods, scope: scope, parent: d.Name}
	first := len(b.rules)
	for _, c := range d.Block {
		b.dirDirective(c, ctx)
	}
	b.own(s, first)
	s.block = nil
	if s.Conf.Compat != nil && !b.opt.RenderOnly {
		s.Conf.Compat.Compile()
	}
	if !b.noIDs() {
		markStructural(s.Conf)
	}
	s.Default = b.defaultRule(d, scope...)
	return s
}

// own gives s the rules made since b.rules[first] that no section inside
// it took (a nested section's are its own).
func (b *builder) own(s *Section, first int) {
	for _, r := range b.rules[first:] {
		if !b.owned[r] {
			if b.owned == nil {
				b.owned = map[*policy.Rule]bool{}
			}
			b.owned[r] = true
			s.Lines = append(s.Lines, r)
		}
	}
}

// defaultRule makes the synthetic rule of a scope, which counts the
// decisions no directive made there. Its ID hashes the scope the way a
// directive's does, with "(default)" for the directive.
func (b *builder) defaultRule(d *apacheconf.Directive, scope ...string) *policy.Rule {
	if b.noIDs() {
		return renderRule
	}
	file, line, text := "", 0, "(default) server"
	if d != nil {
		file, line = b.relFile(d.Pos.File), d.Pos.Line
		text = "(default) <" + d.Name + " " + d.Raw + ">"
		if d.Raw == "" {
			text = "(default) <" + d.Name + " " + strings.Join(d.Args, " ") + ">"
		}
	}
	r := &policy.Rule{File: file, Line: line, Text: text, Default: true}
	b.defaults = append(b.defaults, r)
	key := file + "\x00" + strings.Join(scope, "\x00") + "\x00(default)"
	if b.apart {
		b.pending = append(b.pending, pendingID{r: r, key: key})
	} else {
		n := b.ordinals[key]
		b.ordinals[key] = n + 1
		r.ID = ruleHash(append(b.idBuf[:0], key...), n)
	}
	return r
}

// noIDs reports whether rules go without IDs: in a model only written out
// (Options.RenderOnly), where no rule is counted or omitted. Its lines
// then share renderRule, and Config.Rules is empty.
func (b *builder) noIDs() bool { return b.opt.RenderOnly && len(b.opt.Omit) == 0 }

// renderRule is the Rule of every line of a model only written out: one
// that is never counted, and never changed.
var renderRule = &policy.Rule{Text: "(written out)"}

// dirCtx is the state of a walk inside one section: the <Limit> mask in
// force and the Require container being filled.
type dirCtx struct {
	sec       *Section
	conf      *DirConf
	limited   policy.MethodMask
	scope     []string
	container *policy.Node // current <RequireAll/Any/None>, nil at section level
	inRequire string       // name of the innermost Require container
	parent    string       // the enclosing section as written, "" at the top of an .htaccess file
}

func (b *builder) compat(c *DirConf) *policy.Compat {
	if c.Compat == nil {
		c.Compat = &policy.Compat{}
	}
	return c.Compat
}

func (b *builder) authz(c *DirConf) *AuthzSlot {
	if c.Authz == nil {
		c.Authz = &AuthzSlot{ForbiddenOnFail: -1}
	}
	return c.Authz
}

var (
	orders    = map[string]policy.Order{"allow,deny": policy.AllowDeny, "deny,allow": policy.DenyAllow, "mutual-failure": policy.MutualFailure}
	satisfies = map[string]policy.Satisfy{"all": policy.SatisfyAll, "any": policy.SatisfyAny}
)

// keyword reads the single, case-insensitive keyword argument of d,
// reporting a wrong count or an unknown word.
func keyword[T any](b *builder, d *apacheconf.Directive, values map[string]T, bad string) (T, bool) {
	var zero T
	if len(d.Args) != 1 {
		b.errorf(d, "%s takes one argument", d.Name)
		return zero, false
	}
	v, ok := values[strings.ToLower(d.Args[0])]
	if !ok {
		b.errorf(d, "%s", bad)
	}
	return v, ok
}

// setPerMethod sets v for every method of the <Limit> mask in force, as
// Order and Satisfy do (cmd->limited).
func setPerMethod[T any](vals *[policy.MaxMethods]T, rules *[policy.MaxMethods]*policy.Rule, v T, r *policy.Rule, limited policy.MethodMask) {
	for i := range vals {
		if limited&(1<<uint(i)) != 0 {
			vals[i] = v
			if rules != nil {
				rules[i] = r
			}
		}
	}
}

// skippedConfig makes the per-directory configuration that Apache makes
// for the module of a directive AllowOverride Nonfatal=Override skips
// (ap_walk_config_sub sets the module's config vector before invoke_cmd
// refuses the directive): mod_access_compat, mod_authn_file and
// mod_authz_groupfile have no merger, so their empty configuration
// replaces the inherited Order/Allow/Deny, AuthUserFile and AuthGroupFile
// (2.4 only: 2.2 has no Nonfatal).
func (b *builder) skippedConfig(info *directive.Info, conf *DirConf, ctx *dirCtx) {
	none := ""
	switch info.Module {
	case "access_compat_module":
		b.compat(conf)
	case "authn_file_module":
		if conf.UserFile == nil {
			conf.UserFile = &none // AH01619 where a password is checked
		}
	case "authz_groupfile_module":
		if conf.GroupFile == nil {
			conf.GroupFile = &none // AH01664: Require group denies
		}
	case "core_module":
		if conf.Options == nil && ctx.sec.Kind == KindHtaccess {
			conf.Options = &CoreOptions{Opts: OptUnset}
		}
	}
}

func (b *builder) dirDirective(d *apacheconf.Directive, ctx *dirCtx) {
	name := d.LowerName()
	conf := ctx.conf
	info := b.admit(d, ctxOf(b, ctx), ctx.parent)
	if info == nil {
		if skipped := b.skipped; skipped != nil {
			b.skipped = nil
			b.skippedConfig(skipped, conf, ctx)
		}
		return
	}
	if conf.Options == nil && ctx.sec.Kind == KindHtaccess && info.Module == "core_module" {
		// The file now has a core configuration, whose options merge.
		conf.Options = &CoreOptions{Opts: OptUnset}
	}
	if name != "rewriterule" && b.omitted(d, name, ctx.scope) {
		return // a RewriteRule takes its conditions with it (rewriteLine)
	}
	switch name {
	case "order":
		o, ok := keyword(b, d, orders, "unknown order")
		if !ok {
			return
		}
		c := b.compat(conf)
		r := b.rule(d, ctx.scope)
		if c.OrderRule == nil && r != renderRule {
			c.OrderRule = new([policy.MaxMethods]*policy.Rule)
		}
		setPerMethod(&c.Order, c.OrderRule, o, r, ctx.limited)
	case "satisfy":
		v, ok := keyword(b, d, satisfies, "Satisfy either 'any' or 'all'.")
		if !ok {
			return
		}
		r := b.rule(d, ctx.scope)
		if !sectionHas(ctx.sec, d, "order", "allow", "deny") {
			b.differ(d, "a Satisfy without Order/Allow/Deny in its section: Apache 2.4 starts a new, allowing host-access configuration here (dropping an inherited Deny); 2.2 keeps the inherited one")
		}
		if v == policy.SatisfyAny && !sectionHas(ctx.sec, d, "require") {
			b.differ(d, "Satisfy Any with no Require in its section: where no Require applies and Order/Allow/Deny refuse, Apache 2.4 grants and 2.2 answers 403")
		}
		if b.cfg.Semantics == Legacy22 {
			// 2.2: core keeps Satisfy; Order/Allow/Deny are untouched.
			if conf.Satisfy22Rule == nil && r != renderRule {
				conf.Satisfy22Rule = new([policy.MaxMethods]*policy.Rule)
			}
			setPerMethod(&conf.Satisfy22, conf.Satisfy22Rule, v, r, ctx.limited)
			conf.Satisfy22Set |= ctx.limited
			return
		}
		c := b.compat(conf)
		if c.SatisfyRule == nil && r != renderRule {
			c.SatisfyRule = new([policy.MaxMethods]*policy.Rule)
		}
		setPerMethod(&c.Satisfy, c.SatisfyRule, v, r, ctx.limited)
	case "allow", "deny":
		b.allowDeny(d, ctx, name == "allow")
	case "require":
		if len(d.Args) > 0 && strings.EqualFold(d.Args[0], "group") && sectionHas(ctx.sec, d, "require user", "require valid-user") ||
			len(d.Args) > 0 && (strings.EqualFold(d.Args[0], "user") || strings.EqualFold(d.Args[0], "valid-user")) && sectionHas(ctx.sec, d, "require group") {
			b.differ(d, "Require lines for users and for groups in one section: Apache 2.4 grants if any line does; in 2.2 the group file module decides first, refusing users outside the groups")
		}
		if b.cfg.Semantics == Legacy22 {
			b.require22(d, ctx)
			return
		}
		b.require(d, ctx)
	case "requireall", "requireany", "requirenone", "authmerging", "authzsendforbiddenonfailure":
		if b.cfg.Semantics == Legacy22 {
			b.errorf(d, "%s is an Apache 2.4 directive, unknown to 2.2; with 2.4 directives in the configuration use semantics \"2.4-compat\"", d.Name)
			return
		}
		if name == "authmerging" || name == "authzsendforbiddenonfailure" {
			b.authz24(d, ctx, name)
			return
		}
		b.requireSection(d, ctx, name)
	case "authtype":
		if len(d.Args) == 1 && !strings.EqualFold(d.Args[0], "none") && !sectionHas(ctx.sec, d, "require", "requireall", "requireany", "requirenone") {
			b.differ(d, "AuthType with no Require in its section: where no Require applies, Apache 2.4 answers 500 (AH01627) and 2.2 serves the request")
		}
		if len(d.Args) != 1 {
			b.errorf(d, "AuthType takes one argument")
			return
		}
		v := d.Args[0]
		if strings.EqualFold(v, "none") {
			v = ""
		}
		conf.AuthType = &v
		conf.AuthTypeRule = b.rule(d, ctx.scope)
	case "authname":
		if len(d.Args) != 1 {
			b.errorf(d, "AuthName takes one argument")
			return
		}
		name, err := exprString(d.Args[0])
		if err != nil {
			b.errorf(d, "Could not parse auth name expression '%s': %v", d.Args[0], err)
			return
		}
		v := strings.ReplaceAll(name, `"`, `\"`)
		conf.AuthName = &v
		b.rule(d, ctx.scope)
	case "authuserfile":
		if len(d.Args) < 1 || len(d.Args) > 2 {
			b.errorf(d, "AuthUserFile takes one argument")
			return
		}
		v := b.resolve(d.Args[0])
		conf.UserFile = &v
		b.rule(d, ctx.scope)
	case "authdbmgroupfile":
		if len(d.Args) > 0 {
			v := b.resolve(d.Args[0])
			conf.DBMGroupFile = &v
		}
		b.unevaluated(d, info)
	case "authgroupfile":
		if len(d.Args) != 1 {
			b.errorf(d, "AuthGroupFile takes one argument")
			return
		}
		v := b.resolve(d.Args[0])
		conf.GroupFile = &v
		b.rule(d, ctx.scope)
	case "authbasicauthoritative":
		v, ok := keyword(b, d, onOff, "AuthBasicAuthoritative must be On or Off")
		if !ok {
			return
		}
		b.rule(d, ctx.scope)
		conf.BasicAuthoritative = &v
	case "authbasicprovider":
		for _, a := range d.Args {
			// translate writes it as it is: 2.4 reads it the same way.
			if !strings.EqualFold(a, "file") {
				b.cannotServe(d, "AuthBasicProvider %s cannot be evaluated by orderly (only \"file\" is supported); refusing to load", a)
			}
		}
	case "authzuserauthoritative", "authzgroupfileauthoritative":
		if b.cfg.Semantics != Legacy22 {
			b.errorf(d, "Invalid command '%s': removed in Apache 2.4 (catalogue DIR-11); with semantics %q the configuration must be valid 2.4", d.Name, Compat24)
			return
		}
		v, ok := keyword(b, d, onOff, d.Name+" must be On or Off")
		if !ok {
			return
		}
		b.rule(d, ctx.scope)
		if name == "authzuserauthoritative" {
			conf.UserAuthoritative = &v
		} else {
			conf.GroupAuthoritative = &v
		}
	case "authzdbmauthoritative", "authzownerauthoritative", "authzldapauthoritative", "authzdbdauthoritative", "authzdefaultauthoritative":
		if b.cfg.Semantics != Legacy22 {
			b.errorf(d, "Invalid command '%s': removed in Apache 2.4 (catalogue DIR-11); with semantics %q the configuration must be valid 2.4", d.Name, Compat24)
			return
		}
		b.notFaithful(d, "this 2.2 authoritative flag belongs to a module orderly does not evaluate")
	case "limit", "limitexcept":
		b.limit(d, ctx, name == "limitexcept")
	case "files", "filesmatch":
		if b.inLimit(d, ctx) {
			return
		}
		if s := b.section(d, ctx.sec, ctx.scope); s != nil {
			conf.Files = append(conf.Files, s)
		}
	case "directory", "directorymatch", "location", "locationmatch", "virtualhost":
		b.errorf(d, "<%s cannot occur within %s section", d.Name, ctx.sec)
	case "setenvif", "setenvifnocase", "browsermatch", "browsermatchnocase":
		conf.SetEnv = b.setEnvIf(d, ctx.scope, conf.SetEnv)
	case "hostnamelookups":
		b.hostnameLookups(d, conf)
	case "directoryindex":
		conf.DirIndex = addIndex(conf.DirIndex, d)
	case "options":
		b.options(d, conf, ctx.scope)
	case "sethandler", "addhandler", "addtype", "forcetype", "defaulttype":
		b.cgiHandler(d, name)
		b.unevaluated(d, info)
		if name == "sethandler" && len(d.Args) > 0 {
			h := d.Args[0]
			conf.Handler = &h
		}
	case "fallbackresource":
		if f := b.fallback(d); f != nil {
			conf.Fallback = f
		}
	case "acceptpathinfo":
		if v := b.acceptPathInfo(d); v != nil {
			conf.AcceptPathInfo, conf.AcceptPathInfoRule = v, b.namedRule(d, ctx.scope)
		}
	case "directoryslash", "directorycheckhandler", "directoryindexredirect":
		conf.Dir = b.dirSetting(d, name, conf.Dir, ctx.scope)
	case "sslrequiressl", "sslverifyclient", "sslverifydepth", "sslcacertificatefile", "sslcacertificatepath", "ssloptions", "sslusername", "sslengine":
		b.ssl(d, name, conf, ctx.scope, false) // ssl.go
	case "allowoverride":
		b.markOverride()
		v, nonfatal, err := parseOverride(d.Args, b.cfg.Semantics == Legacy22)
		if err != "" {
			b.errorf(d, "%s", err)
			return
		}
		if ctx.sec.Kind == KindDirectory {
			// Elsewhere Apache accepts it and it has no effect (AH00114).
			conf.Override, conf.NonFatal = &v, nonfatal
			conf.OverrideOpts = overrideOptions(d.Args)
		}
	case "allowoverridelist":
		list, err := b.overrideList(d)
		if err != "" {
			b.errorf(d, "%s", err)
			return
		}
		if ctx.sec.Kind == KindDirectory {
			conf.OverrideList = list // elsewhere it has no effect (AH00115)
		}
	case "limitrequestbody", "limitxmlrequestbody":
		b.limits(d, ctx)
	case "redirect", "redirectmatch", "redirecttemp", "redirectpermanent", "redirectrelative", "usecanonicalname", "errordocument":
		b.redirects(d, ctx)
	case "if", "elseif", "else":
		if b.inLimit(d, ctx) {
			return
		}
		b.ifSection(d)
	case "error":
		b.errorf(d, "%s", strings.Join(d.Args, " "))
	case "rewriteengine", "rewritebase", "rewriteoptions", "rewritecond", "rewriterule", "rewritemap":
		b.rewriteDirective(d, ctx)
	default:
		b.unevaluated(d, info)
		if name == "userdir" {
			b.userDir(d)
		}
	}
}

// inLimit refuses a section that core's filesection and ifsection
// refuse inside a <Limit> or <LimitExcept>, or inside a Require container,
// which clears cmd->limited's last bit to the same end
// (ap_check_cmd_context with NOT_IN_LIMIT).
func (b *builder) inLimit(d *apacheconf.Directive, ctx *dirCtx) bool {
	if ctx.limited == policy.AllMethods {
		return false
	}
	b.errorf(d, "<%s> cannot occur within <Limit> or <LimitExcept> section", d.Name)
	return true
}

func (b *builder) limit(d *apacheconf.Directive, ctx *dirCtx, except bool) {
	if len(d.Args) == 0 {
		b.errorf(d, "<%s> directive requires additional arguments", d.Name)
		return
	}
	var mask policy.MethodMask
	for _, m := range d.Args {
		if b.htaccess != nil && b.cfg.Methods.Number(m) == policy.MethodInvalid {
			b.errorf(d, "Could not register method '%s' for <%s from .htaccess configuration", m, d.Name)
			return
		}
		n, ok := b.cfg.Methods.Register(m)
		if !ok {
			b.errorf(d, "Maximum new request methods reached while registering method %s.", m)
			return
		}
		if n == 6 && !except {
			b.errorf(d, "TRACE cannot be controlled by <Limit>, see TraceEnable")
			return
		}
		mask |= 1 << uint(n)
	}
	if except {
		mask = ^mask
	}
	if ctx.limited&mask == 0 {
		b.errorf(d, "<%s> directive excludes all methods", d.Name)
		return
	}
	if ctx.limited&mask == ctx.limited {
		b.errorf(d, "<%s> directive specifies methods already excluded", d.Name)
		return
	}
	inner := *ctx
	inner.limited = ctx.limited & mask
	inner.scope = b.within(ctx.scope, d)
	inner.parent = d.Name
	for _, c := range d.Block {
		b.dirDirective(c, &inner)
	}
}

func (b *builder) allowDeny(d *apacheconf.Directive, ctx *dirCtx, allow bool) {
	if len(d.Args) < 2 {
		b.errorf(d, "%s requires at least two arguments, 'from' followed by hostnames or IP-address wildcards", d.Name)
		return
	}
	if !strings.EqualFold(d.Args[0], "from") {
		b.errorf(d, "allow and deny must be followed by 'from'")
		return
	}
	c := b.compat(ctx.conf)
	r := b.rule(d, ctx.scope)
	for _, w := range d.Args[1:] {
		a, err, differ := accessWord(w, b.cfg.Semantics)
		if err != "" {
			b.errorf(d, "%s", err)
			return
		}
		if differ != "" {
			b.differ(d, differ)
		}
		a.Methods, a.Rule = ctx.limited, r
		if r != renderRule {
			a.Part = r.NewPart(w)
		}
		if allow {
			c.Allows = append(c.Allows, a)
		} else {
			c.Denys = append(c.Denys, a)
		}
	}
}

// accessWord reads the word w of an Allow or Deny line (after "from"):
// its kind and what it names; or Apache's refusal of it (err), or how
// Apache 2.2 and 2.4 read it differently (differ).
func accessWord(w string, sem Semantics) (a policy.AccessRule, err, differ string) {
	a.Word = w
	lw := strings.ToLower(w)
	switch {
	case strings.HasPrefix(lw, "env=!"):
		a.Kind, a.Name = policy.AccessNotEnv, w[5:]
	case strings.HasPrefix(lw, "env="):
		a.Kind, a.Name = policy.AccessEnv, w[4:]
	case lw == "all":
		a.Kind = policy.AccessAll
	case strings.Contains(w, "/"):
		addr, mask, _ := strings.Cut(w, "/")
		sn, perr := policy.ParseSubnet(addr, mask, true)
		if perr == policy.ErrNotIP {
			return a, "An IP address was expected", ""
		} else if perr != nil {
			return a, perr.Error(), ""
		}
		a.Kind, a.Subnet = policy.AccessIP, sn
	default:
		sn, perr := policy.ParseSubnet(w, "", false)
		switch {
		case perr == nil:
			a.Kind, a.Subnet = policy.AccessIP, sn
		case perr != policy.ErrNotIP:
			return a, perr.Error(), ""
		case strings.Contains(w, "#") && sem != Legacy22:
			return a, "No comments are allowed here", ""
		case strings.Contains(w, "#"):
			// 2.2 has no such check: "#" is a host name that never
			// matches, and every word after it is still a rule.
			a.Kind, a.Name = policy.AccessHost, w
			differ = "\"#\" in an Allow/Deny line: Apache 2.2 reads it and every word after it as host names; Apache 2.4 refuses to start"
		default:
			a.Kind, a.Name = policy.AccessHost, w
		}
	}
	return a, "", differ
}

// providerLine is the argument line of a Require as written, after the
// provider's name (and "not"): mod_authz_core hands it to the provider
// whole.
func providerLine(raw string, negate bool) string {
	skip := func(s string) string {
		s = strings.TrimLeft(s, " \t")
		if i := strings.IndexAny(s, " \t"); i >= 0 {
			return strings.TrimLeft(s[i:], " \t")
		}
		return ""
	}
	if negate {
		raw = skip(raw)
	}
	return skip(raw)
}

// require adds one Require line to the section's tree (add_authz_provider).
func (b *builder) require(d *apacheconf.Directive, ctx *dirCtx) {
	args := d.Args
	if len(args) == 0 {
		b.errorf(d, "Require requires at least one argument")
		return
	}
	n := &policy.Node{Kind: policy.Leaf, Methods: ctx.limited}
	if strings.EqualFold(args[0], "not") {
		n.Negate = true
		args = args[1:]
		if len(args) == 0 {
			b.errorf(d, "Require not requires a provider")
			return
		}
	}
	prov, rest := args[0], args[1:]
	switch prov {
	case "all":
		if len(rest) == 1 && strings.EqualFold(rest[0], "granted") {
			n.Provider = policy.ProvAllGranted
		} else if len(rest) == 1 && strings.EqualFold(rest[0], "denied") {
			n.Provider = policy.ProvAllDenied
		} else {
			b.errorf(d, "'Require all' does not take arguments other than 'granted' or 'denied'")
			return
		}
	case "ip":
		if len(rest) == 0 {
			b.errorf(d, "Require ip requires an argument")
			return
		}
		n.Provider = policy.ProvIP
		for _, w := range rest {
			addr, mask, has := strings.Cut(w, "/")
			sn, err := policy.ParseSubnet(addr, mask, has)
			if err == policy.ErrNotIP {
				b.errorf(d, "ip address '%s' appears to be invalid", w)
				return
			} else if err != nil {
				b.errorf(d, "ip address '%s' appears to be invalid: %v", w, err)
				return
			}
			n.Subnets = append(n.Subnets, sn)
		}
	case "host":
		n.Provider = policy.ProvHost
		for _, w := range rest {
			if i := strings.IndexByte(w, '#'); i >= 0 {
				w = w[:i]
				if w != "" {
					n.Args = append(n.Args, w)
				}
				break
			}
			n.Args = append(n.Args, w)
		}
	case "env":
		n.Provider = policy.ProvEnv
		n.Args = rest
	case "method":
		n.Provider = policy.ProvMethod
		if len(rest) == 0 {
			b.errorf(d, "Require method requires an argument")
			return
		}
		for _, m := range rest {
			num := b.cfg.Methods.Number(m)
			if num == policy.MethodInvalid {
				b.errorf(d, "Invalid Method '%s'", m)
				return
			}
			n.MethodOK |= 1 << uint(num)
		}
	case "local":
		n.Provider = policy.ProvLocal
	case "valid-user":
		n.Provider = policy.ProvValidUser
	case "user":
		n.Provider = policy.ProvUser
		n.Args = rest
		if !b.requireExpr(d, n, rest) {
			return
		}
	case "group":
		n.Provider = policy.ProvGroup
		n.Args = rest
		if !b.requireExpr(d, n, rest) {
			return
		}
	case "expr", "forward-dns", "file-owner", "file-group", "dbm-group", "ldap-user", "ldap-group", "ldap-dn", "ldap-attribute", "ldap-filter", "dbd-group":
		b.cannotServe(d, "Require %s cannot be evaluated by orderly; refusing to load", prov)
		if !b.opt.RenderOnly {
			return
		}
		// translate writes it as it is: 2.4 reads it the same way.
		n.Provider = policy.ProvOther
		n.Args = []string{prov, providerLine(d.Raw, n.Negate)}
	default:
		b.errorf(d, "Unknown Authz provider: %s", prov)
		return
	}
	n.Rule = b.rule(d, ctx.scope)
	parent, pname := b.container(ctx)
	if n.Negate && parent.Kind == policy.Any {
		b.errorf(d, "negative Require directive has no effect in %s directive", pname)
		return
	}
	parent.Methods |= n.Methods
	parent.Children = append(parent.Children, n)
}

// container returns the Require container being filled, creating the
// section's implicit <RequireAny> (create_default_section), and its name
// for messages.
func (b *builder) container(ctx *dirCtx) (*policy.Node, string) {
	if ctx.container != nil {
		return ctx.container, "<" + ctx.inRequire + ">"
	}
	slot := b.authz(ctx.conf)
	if slot.Root == nil {
		slot.Root = &policy.Node{Kind: policy.Any}
	}
	return slot.Root, "<RequireAny>"
}

func (b *builder) requireSection(d *apacheconf.Directive, ctx *dirCtx, name string) {
	if len(d.Args) != 0 {
		b.errorf(d, "<%s> directive doesn't take additional arguments", d.Name)
		return
	}
	sec := &policy.Node{Kind: policy.Any}
	switch name {
	case "requireall":
		sec.Kind = policy.All
	case "requirenone":
		sec.Negate = true
	}
	inner := *ctx
	inner.container = sec
	inner.inRequire = d.Name
	inner.parent = d.Name
	inner.scope = b.within(ctx.scope, d)
	inner.limited = ctx.limited &^ (1 << (policy.MaxMethods - 1))
	// Its contents are read as any directive of the section, but with
	// AuthConfig's directives alone allowed (ctxOf): AuthName, Satisfy or
	// a <Limit> act as they would outside, and the Require lines inside
	// fill this container.
	omitted := false
	for _, c := range d.Block {
		if b.omitted(c, c.LowerName(), inner.scope) {
			omitted = true
			continue
		}
		b.dirDirective(c, &inner)
		if b.vanished {
			omitted, b.vanished = true, false
		}
	}
	if len(sec.Children) == 0 && omitted {
		// Options.Omit took every Require line out: the container goes
		// with them, as a deletion of the lines would take it.
		b.vanished = true
		return
	}
	if len(sec.Children) == 0 {
		b.errorf(d, "<%s> directive contains no authorization directives", d.Name)
		return
	}
	parent, pname := b.container(ctx)
	if sec.Negate && parent.Kind == policy.Any {
		b.errorf(d, "<%s> directive has no effect in %s directive", d.Name, pname)
		return
	}
	allNegative := true
	for _, c := range sec.Children {
		if !c.Negate {
			allNegative = false
		}
	}
	if allNegative && !sec.Negate {
		b.errorf(d, "<%s> directive contains only negative authorization directives", d.Name)
		return
	}
	if !b.noIDs() {
		markStructuralLeaves(sec)
	}
	parent.Methods |= sec.Methods
	if !sec.Negate && sec.Kind == parent.Kind {
		parent.Children = append(parent.Children, sec.Children...)
		return
	}
	parent.Children = append(parent.Children, sec)
}

// markStructural marks the access lines of a section whose deletion
// would change more than their own words (policy.Rule.Structural): the
// only Allow or Deny line of a section that names no Order (or, in 2.4,
// Satisfy), after which the section would inherit its parent's host
// access; the only Require line (2.2); and the Require lines whose
// deletion would empty their container, leave it negated lines only, or
// narrow the methods it applies to.
func markStructural(c *DirConf) {
	if cp := c.Compat; cp != nil && cp.OrderRule == nil && cp.SatisfyRule == nil {
		if r := soleRule(cp.Allows, cp.Denys); r != nil {
			r.Structural = true
		}
	}
	if len(c.Requires22) > 0 {
		only := c.Requires22[0].Rule
		for _, q := range c.Requires22[1:] {
			if q.Rule != only {
				only = nil
				break
			}
		}
		if only != nil {
			only.Structural = true
		}
	}
	if c.Authz != nil && c.Authz.Root != nil {
		markStructuralLeaves(c.Authz.Root)
	}
}

// soleRule returns the rule of every word of the lists when they are
// all one line's, nil otherwise.
func soleRule(lists ...[]policy.AccessRule) *policy.Rule {
	var only *policy.Rule
	for _, l := range lists {
		for _, a := range l {
			switch {
			case only == nil:
				only = a.Rule
			case a.Rule != only:
				return nil
			}
		}
	}
	return only
}

// markStructuralLeaves marks the Require lines among n's children whose
// deletion would change n beyond losing them (markStructural).
func markStructuralLeaves(n *policy.Node) {
	for i, ch := range n.Children {
		if ch.Kind != policy.Leaf || ch.Rule == nil {
			continue
		}
		var others policy.MethodMask
		positive := false
		for j, o := range n.Children {
			if j != i {
				others |= o.Methods
				positive = positive || !o.Negate
			}
		}
		if len(n.Children) == 1 || !positive || ch.Methods&^others != 0 {
			ch.Rule.Structural = true
		}
	}
}

// setEnvIf adds a SetEnvIf-family line to list (add_setenvif_core).
func (b *builder) setEnvIf(d *apacheconf.Directive, scope []string, list []*EnvRule) []*EnvRule {
	name := d.LowerName()
	icase := strings.HasSuffix(name, "nocase")
	args := d.Args
	attr := "User-Agent"
	if strings.HasPrefix(name, "setenvif") {
		if len(args) < 1 {
			b.errorf(d, "Missing header-field name for %s", d.Name)
			return list
		}
		attr, args = args[0], args[1:]
	}
	if len(args) < 1 || args[0] == "" {
		b.errorf(d, "Missing regular expression for %s", d.Name)
		return list
	}
	pattern, features := args[0], args[1:]
	if len(features) == 0 {
		b.errorf(d, "Missing envariable expression for %s", d.Name)
		return list
	}
	r := b.rule(d, scope)
	var e *EnvRule
	if n := len(list); n > 0 {
		last := list[n-1]
		if strings.EqualFold(last.Name, attr) && last.ICase == icase && last.Pattern == pattern {
			e = last
		}
	}
	if e == nil {
		e = &EnvRule{Name: attr, Pattern: pattern, ICase: icase, Rule: r}
		for _, o := range list {
			if equalFoldASCII(o.Name, attr) {
				e.first = o.nameKey()
				break
			}
		}
		if s, ok := nonRegexPattern(pattern); ok {
			e.Substr = s
		} else {
			e.Re = b.compileRegex(d, pattern, b.regexOpts(icase), setEnvIfNames[name]+" regex could not be compiled.")
			if e.Re == nil {
				return list
			}
		}
		switch strings.ToLower(attr) {
		case "remote_addr":
			e.Attr = AttrRemoteAddr
		case "remote_host":
			e.Attr = AttrRemoteHost
		case "request_uri":
			e.Attr = AttrRequestURI
		case "request_method":
			e.Attr = AttrRequestMethod
		case "request_protocol":
			e.Attr = AttrRequestProtocol
		case "server_addr":
			e.Attr = AttrServerAddr
		default:
			e.Attr = AttrHeader
			if !headerNameRE.MatchString(attr) {
				re := b.compileRegex(d, attr, b.regexOpts(icase), setEnvIfNames[name]+"Header name regex could not be compiled.")
				if re == nil {
					return list
				}
				e.Attr, e.NameRe, e.NameFold = AttrHeaderRegex, re, re
				if !re.Options().ICase {
					// Where the names' spelling is lost (Go's header
					// map, explain), a match without regard to case
					// tells whether a name can match at all.
					e.NameFold, _ = regex.Compile(attr, b.regexOpts(true))
				}
			}
		}
		list = append(list, e)
	}
	for _, f := range features {
		v, val, hasEq := strings.Cut(f, "=")
		var ft Feature
		switch {
		case hasEq && val != "":
			ft = Feature{Name: v, Value: val, Unset: strings.HasPrefix(val, "!")}
		case strings.HasPrefix(v, "!"):
			ft = Feature{Name: v[1:], Unset: true}
		default:
			ft = Feature{Name: v, Value: "1"}
		}
		replaced := false
		for i := range e.Features {
			if strings.EqualFold(e.Features[i].Name, ft.Name) {
				e.Features[i], replaced = ft, true
				break
			}
		}
		if !replaced {
			e.Features = append(e.Features, ft)
		}
	}
	return list
}

// exprString evaluates a constant ap_expr string expression, as AuthName
// is in 2.4 (server/util_expr_scan.l, string state): backslash escapes
// (octal, \n \r \t \b \f, any other character as itself) are applied.
// Variables (%{...}) and regex back-references need a request, which
// orderly does not evaluate: they are refused.
func exprString(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+1 < len(s) && s[i+1] == '{':
			return "", fmt.Errorf("variables in the expression cannot be evaluated by orderly")
		case c == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			return "", fmt.Errorf("regex back-references in the expression cannot be evaluated by orderly")
		case c == '\\' && i+1 < len(s):
			i++
			e := s[i]
			switch {
			case e >= '0' && e <= '9':
				// flex takes the longer of \\[0-7]{1,3} and \\[0-9]+; the
				// second is an error.
				octal, digits := 0, 0
				for i+octal < len(s) && octal < 3 && s[i+octal] >= '0' && s[i+octal] <= '7' {
					octal++
				}
				for i+digits < len(s) && s[i+digits] >= '0' && s[i+digits] <= '9' {
					digits++
				}
				if digits > octal {
					return "", fmt.Errorf("Bad escape sequence")
				}
				v, _ := strconv.ParseUint(s[i:i+octal], 8, 16)
				if v > 0xff {
					return "", fmt.Errorf("Escape sequence out of bound")
				}
				b.WriteByte(byte(v))
				i += octal - 1
			case e == 'n':
				b.WriteByte('\n')
			case e == 'r':
				b.WriteByte('\r')
			case e == 't':
				b.WriteByte('\t')
			case e == 'b':
				b.WriteByte('\b')
			case e == 'f':
				b.WriteByte('\f')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// parseOverride is set_override (server/core.c): AllowOverride All, None,
// or categories, with Nonfatal=Override|Unknown|All (2.4 only). As in
// Apache, None and All replace what the words before them set, the
// Nonfatal= flags included, an unknown Nonfatal= value is ignored, and a
// word is read up to its '=' (FileInfo=x is FileInfo).
func parseOverride(args []string, v22 bool) (v, nonfatal uint16, err string) {
	if len(args) == 0 {
		return 0, 0, "AllowOverride requires at least one argument"
	}
	for _, w := range args {
		k, opt, hasOpt := strings.Cut(w, "=")
		switch strings.ToLower(k) {
		case "limit":
			v |= OrLimit
		case "options":
			v |= OrOptions
		case "fileinfo":
			v |= OrFileInfo
		case "authconfig":
			v |= OrAuthCfg
		case "indexes":
			v |= OrIndexes
		case "nonfatal":
			if v22 {
				return 0, 0, "Illegal override option " + k
			}
			if !hasOpt {
				return 0, 0, "=Override, =Unknown or =All expected after " + k
			}
			switch strings.ToLower(opt) {
			case "override":
				nonfatal |= 1
			case "unknown":
				nonfatal |= 2
			case "all":
				nonfatal |= 3
			}
		case "none":
			v, nonfatal = 0, 0
		case "all":
			v, nonfatal = OrAll, 0
		default:
			return 0, 0, "Illegal override option " + k
		}
	}
	return v, nonfatal, ""
}

// overrideList is set_override_list (server/core.c): AllowOverrideList
// None, or directive names. A name no loaded module knows, or of a
// directive that may not appear in <Directory> or .htaccess, is dropped
// (Apache's warnings AH00116, AH02304).
func (b *builder) overrideList(d *apacheconf.Directive) ([]string, string) {
	list := []string{}
	for _, w := range d.Args {
		if strings.EqualFold(w, "none") {
			if len(d.Args) != 1 {
				return nil, "'None' not allowed with other directives in AllowOverrideList"
			}
			return list, ""
		}
		info, _ := directive.Find(w, b.tableVersion(), b.loaded)
		if info == nil || info.Where&(directive.OrAll|directive.AccessConf) == 0 {
			continue
		}
		list = append(list, strings.ToLower(w))
	}
	return list, ""
}

// HtaccessAllow is what AllowOverride and AllowOverrideList, merged down
// to a directory, let its .htaccess file hold.
type HtaccessAllow struct {
	// Override are the categories (Or* bits, OrUnset where AllowOverride
	// was never set) and NonFatal the Nonfatal= flags (1 Override, 2
	// Unknown).
	Override, NonFatal uint16
	// Opts are the options Options may set (override_opts).
	Opts OptionBits
	// List is AllowOverrideList, lower case.
	List []string
}

// Reads reports whether Apache reads the .htaccess file at all
// (ap_directory_walk: an override or an override list).
func (a HtaccessAllow) Reads() bool {
	return a.Override != 0 || a.NonFatal != 0 || len(a.List) > 0
}

// htaccessMode checks each directive of an .htaccess file against the
// AllowOverride categories in force and the modules loaded, as
// ap_parse_htaccess and invoke_cmd do.
type htaccessMode struct {
	override, nonfatal uint16
	list               []string // AllowOverrideList
	modules            map[string]bool
	overrideOpts       OptionBits // the options Options may set (override_opts)
}

// htaccessOrder numbers .htaccess sections apart from the configuration's,
// so that the merge cache tells every file version from the others.
var htaccessOrder atomic.Int64

// ParseHtaccess builds the section of one .htaccess file (path, read as
// data) under the AllowOverride categories in force. Every error is
// reported; Apache answers 500 for the requests below such a file.
func (c *Config) ParseHtaccess(path string, data []byte, override, nonfatal uint16, baseDir string) (*Section, error) {
	return c.ParseHtaccessOpts(path, data, override, nonfatal, OptOverrideDefault, baseDir)
}

// ParseHtaccessOpts is ParseHtaccess with the options AllowOverride
// Options=... lets the file set (overrideOpts; OptOverrideDefault where no
// AllowOverride in force names Options).
func (c *Config) ParseHtaccessOpts(path string, data []byte, override, nonfatal uint16, overrideOpts OptionBits, baseDir string) (*Section, error) {
	return c.ParseHtaccessWith(path, data, HtaccessAllow{Override: override, NonFatal: nonfatal, Opts: overrideOpts}, baseDir)
}

// ParseHtaccessWith is ParseHtaccess under everything AllowOverride and
// AllowOverrideList allow.
func (c *Config) ParseHtaccessWith(path string, data []byte, allow HtaccessAllow, baseDir string) (*Section, error) {
	override, nonfatal, overrideOpts := allow.Override, allow.NonFatal, allow.Opts
	ds, err := apacheconf.Parse(path, data)
	if err != nil {
		return nil, err
	}
	b := &builder{
		opt:        Options{Semantics: c.Semantics, BaseDir: baseDir, ForwardUnfaithful: c.ForwardUnfaithful, RenderOnly: c.RenderOnly, Omit: c.Omit},
		cfg:        c,
		ordinals:   map[string]int{},
		htaccess:   &htaccessMode{override: override, nonfatal: nonfatal, list: allow.List, modules: c.Modules, overrideOpts: overrideOpts},
		serverRoot: c.ServerRoot,
	}
	if ds, err = apacheconf.Conditionals(ds, apacheconf.Options{Modules: c.Modules, Version: c.Version, State: c.ReadState, Admit: b.readerAdmit}); err != nil {
		return nil, err
	}
	s := &Section{Kind: KindHtaccess, Pattern: path, Path: path, Pos: apacheconf.Pos{File: path, Line: 1},
		Order: b.nextOrder(), Conf: &DirConf{}, block: ds}
	scope := []string{"htaccess " + b.relFile(path)}
	ctx := &dirCtx{sec: s, conf: s.Conf, limited: policy.AllMethods, scope: scope}
	for _, d := range ds {
		b.dirDirective(d, ctx)
	}
	b.own(s, 0)
	if len(b.errs) > 0 {
		markOwn(b.errs)
		return nil, b.errs
	}
	if s.Conf.Compat != nil {
		s.Conf.Compat.Compile()
	}
	markStructural(s.Conf)
	s.Default = b.defaultRule(&apacheconf.Directive{Name: "htaccess", Args: []string{b.relFile(path)}, Pos: s.Pos}, scope...)
	s.Rules = append(b.rules, b.defaults...)
	return s, nil
}

// virtualHost builds a <VirtualHost> with a builder of its own that shares
// the main one's rule bookkeeping, method registry and modules.
func (b *builder) virtualHost(d *apacheconf.Directive) {
	v := &VHost{Pos: d.Pos}
	for _, a := range d.Args {
		va, err := parseVHostAddr(a)
		if err != "" {
			b.errorf(d, "%s", err)
			return
		}
		v.Addrs = append(v.Addrs, va)
	}
	if len(v.Addrs) == 0 {
		b.errorf(d, "<VirtualHost> directive requires additional arguments")
		return
	}
	vb := &builder{
		vhost: v, scope: b.within(nil, d), set: map[string]bool{},
		opt: b.opt, ordinals: b.ordinals, serverRoot: b.serverRoot, order: b.order, parent: b, reDefault: b.reDefault,
		cfg: &Config{Semantics: b.cfg.Semantics, ForwardUnfaithful: b.cfg.ForwardUnfaithful, RenderOnly: b.cfg.RenderOnly, Omit: b.cfg.Omit, Methods: b.cfg.Methods, Modules: b.cfg.Modules,
			Defaults: &DirConf{}, MergeSlashes: b.cfg.MergeSlashes, Limits: b.cfg.Limits.forHost()},
	}
	vb.cfg.Defaults.Options = defaultOptions(b.cfg.Semantics)
	vb.directive = d
	b.vhosts = append(b.vhosts, vb)
	if b.apartOK {
		vb.apart, vb.order = true, new(int)
		b.later = append(b.later, &laterHost{vb: vb, d: d, errsAt: len(b.errs), rulesAt: len(b.rules)})
		return
	}
	for _, c := range d.Block {
		vb.topLevel(c)
	}
	b.errs = append(b.errs, vb.errs...)
	b.rules = append(b.rules, vb.rules...)
	vb.rules = nil
}

// hostsApart reports whether the virtual hosts of ds can be built apart
// from the main server and from each other, on several cores, with the
// same result as one after another: there are enough of them, no rule is
// to be omitted (whose ID must be known as it is read), and no <Limit>
// in one registers a method (whose number depends on the order of
// registration).
func hostsApart(ds []*apacheconf.Directive, opt Options) bool {
	if len(opt.Omit) > 0 || runtime.GOMAXPROCS(0) < 2 {
		return false
	}
	hosts, custom := 0, false
	for _, d := range ds {
		if d.LowerName() != "virtualhost" {
			continue
		}
		hosts++
		apacheconf.Walk(d.Block, func(x *apacheconf.Directive, _ []*apacheconf.Directive) error {
			if n := x.LowerName(); n == "limit" || n == "limitexcept" {
				for _, m := range x.Args {
					custom = custom || (*policy.Methods)(nil).Number(m) == policy.MethodInvalid
				}
			}
			return nil
		})
	}
	return hosts >= 2 && !custom
}

// buildHosts builds the virtual hosts set apart, on every core, then, in
// the order of the configuration, gives their rules their IDs and their
// sections their numbers, and puts their errors and rules where building
// them in place would have.
func (b *builder) buildHosts() {
	par.Do(len(b.later), func(i int) {
		h := b.later[i]
		for _, c := range h.d.Block {
			h.vb.topLevel(c)
		}
	})
	errs, rules := b.errs, b.rules
	b.errs, b.rules = nil, nil
	e, r := 0, 0
	for _, h := range b.later {
		vb := h.vb
		b.errs = append(append(b.errs, errs[e:h.errsAt]...), vb.errs...)
		b.rules = append(append(b.rules, rules[r:h.rulesAt]...), vb.rules...)
		e, r = h.errsAt, h.rulesAt
		for i := range vb.pending {
			p := &vb.pending[i]
			p.n = b.ordinals[p.key]
			b.ordinals[p.key] = p.n + 1
		}
		for _, s := range vb.made {
			s.Order += *b.order
		}
		*b.order += *vb.order
		if vb.overrideSet {
			b.markOverride()
		}
	}
	// The ordinals known, the IDs are hashed on every core.
	par.Do(len(b.later), func(i int) {
		var buf []byte
		for _, p := range b.later[i].vb.pending {
			buf = append(buf[:0], p.key...)
			p.r.ID = ruleHash(buf, p.n)
		}
	})
	for _, h := range b.later {
		h.vb.rules, h.vb.pending, h.vb.made, h.vb.apart, h.vb.order = nil, nil, nil, false, b.order
	}
	b.errs = append(b.errs, errs[e:]...)
	b.rules = append(b.rules, rules[r:]...)
	b.later = nil
}

// parseVHostAddr reads one address of <VirtualHost>: "*:80", "_default_",
// "10.0.0.1", "[2001:db8::1]:443", "*".
func parseVHostAddr(a string) (VHostAddr, string) {
	var v VHostAddr
	host, port := a, ""
	if strings.HasPrefix(a, "[") {
		i := strings.Index(a, "]")
		if i < 0 {
			return v, "Invalid address or port in <VirtualHost> " + a
		}
		host, port = a[1:i], strings.TrimPrefix(a[i+1:], ":")
	} else if i := strings.LastIndexByte(a, ':'); i >= 0 && strings.Count(a, ":") == 1 {
		host, port = a[:i], a[i+1:]
	}
	switch port {
	case "", "*":
	default:
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return v, "Invalid address or port in <VirtualHost> " + a
		}
		v.Port = n
	}
	switch strings.ToLower(host) {
	case "*", "_default_":
		v.Wildcard = true
		return v, ""
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		// A host name would be resolved at start-up by Apache; orderly
		// does not guess.
		return v, "<VirtualHost " + a + ">: orderly needs an IP address or *, not a host name"
	}
	v.IP = ip.Unmap()
	return v, ""
}

// mergeServer is the configuration of a virtual host: its own directives
// merged with the main server's (ap_fixup_virtual_hosts and the modules'
// server merges): the main server's <Directory> and <Location> sections
// apply inside every virtual host, before the host's own; the host's own
// aliases come first; unset settings are inherited.
func mergeServer(main, own *Config, set map[string]bool) *Config {
	c := *main
	c.VHosts = nil
	if own.DocumentRoot != "" {
		c.DocumentRoot = own.DocumentRoot
	}
	c.Aliases = append(append([]Alias(nil), own.Aliases...), main.Aliases...)
	// Where /~user may lead: the host's and the main server's, for
	// translate's bounds.
	c.UserDirs = append(append([]string(nil), own.UserDirs...), main.UserDirs...)
	c.UserDirHomes = main.UserDirHomes || own.UserDirHomes
	c.Dirs = append(append([]*Section(nil), main.Dirs...), own.Dirs...)
	c.DirMatches = append(append([]*Section(nil), main.DirMatches...), own.DirMatches...)
	sortSections(&c)
	c.Files = append(append([]*Section(nil), main.Files...), own.Files...)
	c.Locations = append(append([]*Section(nil), main.Locations...), own.Locations...)
	c.ServerEnv = append(append([]*EnvRule(nil), main.ServerEnv...), own.ServerEnv...)
	d := *main.Defaults
	if own.Defaults.DirIndex != nil {
		d.DirIndex = own.Defaults.DirIndex
	}
	d.Limits = MergeDirLimits(main.Defaults.Limits, own.Defaults.Limits)
	d.Redirects = MergeDirRedirects(main.Defaults.Redirects, own.Defaults.Redirects)
	d.Rewrite = MergeRewrite(main.Defaults.Rewrite, own.Defaults.Rewrite)
	if own.Defaults.HostnameLookups != LookupsUnset {
		d.HostnameLookups = own.Defaults.HostnameLookups
	}
	if main.Defaults.Options != nil && own.Defaults.Options != nil {
		o := main.Defaults.Options.Merge(*own.Defaults.Options)
		d.Options = &o
	}
	mergeSSL(&c, &d, main, own) // ssl.go
	c.Defaults = &d
	c.Limits = mergeServerLimits(main.Limits, own.Limits)
	c.Redirects = append(append([]*Redirect(nil), own.Redirects...), main.Redirects...)
	c.Rewrite = mergeServerRewrite(main.Rewrite, own.Rewrite)
	if set["accessfilename"] {
		c.AccessFileNames = own.AccessFileNames
	}
	if set["mergeslashes"] {
		c.MergeSlashes = own.MergeSlashes
	}
	// merge_core_server_configs: a host's own TraceEnable, else the main
	// server's.
	if own.TraceEnable != "" {
		c.TraceEnable, c.TraceRule = own.TraceEnable, own.TraceRule
	}
	// merge_core_dir_configs copies the host's own AllowEncodedSlashes,
	// set or not: a virtual host does not inherit the main server's.
	c.AllowEncodedSlashes = own.AllowEncodedSlashes
	return &c
}

var onOff = map[string]bool{"on": true, "off": false}

// authz24 handles AuthMerging and AuthzSendForbiddenOnFailure.
func (b *builder) authz24(d *apacheconf.Directive, ctx *dirCtx, name string) {
	conf := ctx.conf
	if name == "authmerging" {
		if len(d.Args) != 1 {
			b.errorf(d, "AuthMerging takes one argument")
			return
		}
		a := b.authz(conf)
		switch strings.ToLower(d.Args[0]) {
		case "off":
			a.Merge = MergeOff
		case "and":
			a.Merge = MergeAnd
		case "or":
			a.Merge = MergeOr
		default:
			b.errorf(d, "The AuthMerging directive must be 'Off', 'And' or 'Or'")
			return
		}
		b.rule(d, ctx.scope)
		return
	}
	if len(d.Args) != 1 {
		b.errorf(d, "AuthzSendForbiddenOnFailure takes one argument")
		return
	}
	a := b.authz(conf)
	switch strings.ToLower(d.Args[0]) {
	case "on":
		a.ForbiddenOnFail = 1
	case "off":
		a.ForbiddenOnFail = 0
	default:
		b.errorf(d, "AuthzSendForbiddenOnFailure must be On or Off")
		return
	}
	b.rule(d, ctx.scope)
}

// differ records a place where 2.2 and 2.4 with mod_access_compat decide
// differently.
func (b *builder) differ(d *apacheconf.Directive, text string) {
	b.cfg.Differences = append(b.cfg.Differences, Difference{Pos: d.Pos, Text: text})
}

// require22 records a Require line as 2.2's core does: raw words, any
// keyword (an unknown one refuses every request with 401 at run time).
func (b *builder) require22(d *apacheconf.Directive, ctx *dirCtx) {
	if len(d.Args) == 0 {
		b.errorf(d, "Require requires at least one argument")
		return
	}
	switch strings.ToLower(d.Args[0]) {
	case "all", "ip", "host", "env", "method", "local", "expr", "not", "forward-dns":
		b.errorf(d, "Require %s is an Apache 2.4 form, unknown to 2.2; with 2.4 directives in the configuration use semantics \"2.4-compat\"", d.Args[0])
		return
	}
	if ctx.conf.Requires22 == nil {
		ctx.conf.Requires22 = []policy.Require22{}
	}
	ctx.conf.Requires22 = append(ctx.conf.Requires22, policy.Require22{Methods: ctx.limited, Words: d.Args, Rule: b.rule(d, ctx.scope), Raw: providerLine(d.Raw, false)})
}

// groupFirst reports whether mod_authz_groupfile's auth_checker runs
// before mod_authz_user's in 2.2: modules register their hooks in
// LoadModule order, and mod_authz_groupfile must follow mod_authz_owner.
// A configuration that loads neither (a fragment) has the stock order,
// groupfile first.
func groupFirst(ds []*apacheconf.Directive) bool {
	pos := map[string]int{}
	n := 0
	apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
		if d.LowerName() == "loadmodule" && len(d.Args) > 0 {
			if _, ok := pos[d.Args[0]]; !ok {
				pos[d.Args[0]] = n
				n++
			}
		}
		return nil
	})
	g, gok := pos["authz_groupfile_module"]
	u, uok := pos["authz_user_module"]
	if !gok || !uok {
		return true
	}
	if o, ok := pos["authz_owner_module"]; ok && o > g {
		g = o
	}
	return g < u
}

// sectionHas reports whether the section that holds d (its block, nested
// <Limit> sections included) has a directive whose name (or, for
// Require, name and first argument: "require user") is one of names.
func sectionHas(sec *Section, d *apacheconf.Directive, names ...string) bool {
	if sec == nil || sec.block == nil {
		return false
	}
	if sec.names == nil {
		// Every directive name in the section, nested ones included, and
		// "name arg0": built once, asked for many of its directives.
		sec.names = map[string]bool{}
		apacheconf.Walk(sec.block, func(x *apacheconf.Directive, _ []*apacheconf.Directive) error {
			n := x.LowerName()
			sec.names[n] = true
			if n == "require" && len(x.Args) > 0 {
				sec.names[n+" "+strings.ToLower(x.Args[0])] = true
			}
			return nil
		})
	}
	for _, want := range names {
		if sec.names[want] {
			return true
		}
	}
	return false
}

// sortSections orders <Directory> sections as ap_core_reorder_directories
// does: by number of components ("/" counts 0), keeping configuration
// order among equals. Regex sections (<DirectoryMatch>, <Directory ~>)
// are sorted the same way among themselves, by the "/" in their pattern
// text (ap_count_dirs), and are merged after the plain ones.
func sortSections(c *Config) {
	sort.SliceStable(c.Dirs, func(i, j int) bool { return c.Dirs[i].Depth < c.Dirs[j].Depth })
	sort.SliceStable(c.DirMatches, func(i, j int) bool {
		return strings.Count(c.DirMatches[i].Pattern, "/") < strings.Count(c.DirMatches[j].Pattern, "/")
	})
}

// requireExpr makes the argument line of Require user/group an expression
// when it refers to %{...} (2.4 parses it with ap_expr).
func (b *builder) requireExpr(d *apacheconf.Directive, n *policy.Node, args []string) bool {
	t, err := policy.ParseTemplate(strings.Join(args, " "))
	if err != nil {
		b.notFaithful(d, err.Error())
		return false
	}
	n.Expr = t
	return true
}

package translate

import (
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
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
	// RenderOnly builds a model that is written out (translate/convert), never
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
		opt: &opt,
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
		order:    new(int),
		cache:    new(buildCache),
		main:     new(mainBuild),
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
	scan := prescanOf(ds)
	b.cfg.Authz22 = b.authz22Chain(scan.loadOrder)
	b.serverRoot = opt.ServerRoot
	b.cfg.ServerRoot = opt.ServerRoot
	b.main.apartOK = hostsApart(scan, opt)
	if b.main.apartOK {
		b.main.later = make([]laterHost, 0, scan.hosts)
	}
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
	for _, vb := range b.main.vhosts {
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

// A builder reads directives into a Config: the main server's, a
// virtual host's (a builder of its own, which the main one keeps), or
// an .htaccess file's section.
type builder struct {
	opt *Options // Build's, shared with its hosts' builders
	// rwParsed is the rewrite line rewriteValue parsed last (rewrite.go),
	// made at the first.
	rwParsed *rewriteParsed
	// skipped is the row of the directive admit last skipped for
	// AllowOverride Nonfatal=Override, until dirDirective reads it.
	skipped *directive.Info
	// owned are the rules a section has taken as its Lines (own).
	owned map[*policy.Rule]bool
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
	// for rule IDs, and which server-wide settings it set itself.
	vhost     *VHost
	directive *apacheconf.Directive
	scope     []string
	set       map[string]bool

	// htaccess is set while building an .htaccess file: the AllowOverride
	// categories in force and the non-fatal flags.
	htaccess *htaccessMode

	parent *builder

	// reDefault is RegexDefaultOptions as the configuration has set it so
	// far (nil: not at all); regexopts.go.
	reDefault *RegexDefaults

	// For a host built apart (apart, below): the rules awaiting their
	// ID, in the order made, and its sections numbered from 0, awaiting
	// an offset.
	pending []pendingID
	made    []*Section

	// main is what only the main server's builder keeps; nil for the
	// others.
	main *mainBuild

	// cache is shared by the builders of one goroutine (the main
	// server's and its hosts', read with the same version and modules);
	// nil for an .htaccess file's builder, which asks the table each
	// time and allocates each value alone.
	cache *buildCache

	// vanished: the Require container just read held only lines
	// Options.Omit took out, and went with them.
	vanished bool
	// overrideSet: some <Directory> sets AllowOverride.
	overrideSet bool
	// apart: a host built apart (buildHosts), on another core: its rules
	// get their IDs, and its sections their order, only once the hosts
	// before it in the configuration have theirs.
	apart bool
}

// A mainBuild is what the main server's builder keeps of its own: the
// builders of its virtual hosts, in configuration order; the hosts to
// build apart, in order, where that can be done (apartOK), and what the
// last of them started with; the addresses of NameVirtualHost
// directives (2.2).
type mainBuild struct {
	vhosts     []*builder
	later      []laterHost
	apartOK    bool
	start      *hostStart
	nameVHosts []nameVHost
}

// A buildCache is what the builders of one goroutine share: the
// directive table's answers admit has had, and the slabs their
// sections, Order/Allow/Deny configurations and Allow and Deny lists
// are allocated from.
type buildCache struct {
	admits   admitCache
	sections slab[sectionAlloc]
	compats  slab[policy.Compat]
	access   slab[policy.AccessRule]
}

// The largest arrays of a buildCache's slabs, of 8 to 16 KiB: what is
// left of the last ones is not much.
const (
	sectionSlab = 16
	compatSlab  = 32
	accessSlab  = 128
)

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
// server's, with where its errors and rules go in the main builder's,
// and what it starts with.
type laterHost struct {
	vb              *builder // once made (newHost)
	d               *apacheconf.Directive
	errsAt, rulesAt int
	start           *hostStart
}

// A hostStart is what a virtual host starts with from the main server
// where its <VirtualHost> is read: the ServerRoot, RegexDefaultOptions,
// request limits and port (ServerLimits.forHost) and MergeSlashes so
// far. The hosts read one after another share one until the main
// server changes it.
type hostStart struct {
	serverRoot   string
	reDefault    *RegexDefaults
	limits       ServerLimits
	mergeSlashes bool
}

// setsOwn records that the server being built sets the server-wide
// setting name (lower case) itself, for mergeServer: in set, made at
// the first.
func (b *builder) setsOwn(name string) {
	if b.set == nil {
		b.set = map[string]bool{}
	}
	b.set[name] = true
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

// MentionsAccess reports whether d is an access directive or a section
// holding one (accessDirectives), at any depth.
func MentionsAccess(d *apacheconf.Directive) bool {
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
		if p := b.resolve(d.Args[0]); cleanAbs(p) {
			b.cfg.DocumentRoot = p
		} else {
			b.cfg.DocumentRoot = filepath.Clean(p)
		}
	case "alias", "scriptalias", "aliasmatch", "scriptaliasmatch":
		b.alias(d, name)
	case "authnprovideralias":
		b.providerAlias(d)
	case "accessfilename":
		if len(d.Args) > 0 {
			b.cfg.AccessFileNames = append([]string(nil), d.Args...)
			b.setsOwn("accessfilename")
		}
	case "mergeslashes":
		if b.cfg.Semantics == Legacy22 {
			b.errorf(d, "MergeSlashes is an Apache 2.4 directive, unknown to 2.2; use semantics \"2.4-compat\"")
			return
		}
		if len(d.Args) == 1 {
			b.cfg.MergeSlashes = !strings.EqualFold(d.Args[0], "off")
			b.setsOwn("mergeslashes")
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
			b.main.nameVHosts = append(b.main.nameVHosts, nameVHost{addr: va, d: d})
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
		b.setsOwn("allowencodedslashes")
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
	case "ldapcacheentries", "ldapcachettl", "ldapopcacheentries", "ldapopcachettl", "ldaptrustedglobalcert",
		"ldaptrustedmode", "ldapverifyservercert", "ldapconnectiontimeout", "ldaptimeout",
		"ldapconnectionpoolttl", "ldapretries", "ldapretrydelay", "ldaptrustedclientcert":
		b.ldapServerDirective(d, name) // ldapserver.go
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
			b.vhost.Aliases = append(b.vhost.Aliases, toLower(a))
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

// section builds a <Directory>, <Files>, <Location> (or Match) section.
func (b *builder) section(d *apacheconf.Directive, parent *Section, scope []string) *Section {
	name := d.LowerName()
	if len(d.Args) == 0 {
		b.errorf(d, "<%s> needs an argument", d.Name)
		return nil
	}
	s := b.newSection(d.Pos)
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
				if !cleanAbs(p) {
					p = path.Clean(p)
				}
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

// sectionAlloc is a Section with its DirConf, allocated as one.
type sectionAlloc struct {
	sec  Section
	conf DirConf
}

// newSection returns a new Section at pos, numbered, with an empty
// DirConf: allocated as one, from the builder's slab where it has one.
func (b *builder) newSection(pos apacheconf.Pos) *Section {
	var a *sectionAlloc
	if b.cache != nil {
		a = b.cache.sections.new(sectionSlab)
	} else {
		a = &sectionAlloc{}
	}
	a.sec = Section{Pos: pos, Order: b.nextOrder(), Conf: &a.conf}
	return &a.sec
}

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

// compat returns the Order/Allow/Deny configuration of c, made empty
// (from the builder's slab where it has one) if it had none.
func (b *builder) compat(c *DirConf) *policy.Compat {
	if c.Compat == nil {
		if b.cache != nil {
			c.Compat = b.cache.compats.new(compatSlab)
		} else {
			c.Compat = &policy.Compat{}
		}
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
	v, ok := values[toLower(d.Args[0])]
	if !ok {
		b.errorf(d, "%s", bad)
	}
	return v, ok
}

// setPerMethod sets v for every method of the <Limit> mask in force, as
// Order and Satisfy do (cmd->limited).
func setPerMethod[T any](vals *[policy.MaxMethods]T, rules *[policy.MaxMethods]*policy.Rule, v T, r *policy.Rule, limited policy.MethodMask) {
	if limited == policy.AllMethods { // outside <Limit>: every one
		fill(vals[:], v)
		if rules != nil {
			fill(rules[:], r)
		}
		return
	}
	for i := range vals {
		if limited&(1<<uint(i)) != 0 {
			vals[i] = v
			if rules != nil {
				rules[i] = r
			}
		}
	}
}

// fill sets every element of s to v, copying what it has set so far
// over twice as much each time.
func fill[T any](s []T, v T) {
	if len(s) == 0 {
		return
	}
	s[0] = v
	for n := 1; n < len(s); n *= 2 {
		copy(s[n:], s[:n])
	}
}

// differ records a place where 2.2 and 2.4 with mod_access_compat decide
// differently.
func (b *builder) differ(d *apacheconf.Directive, text string) {
	b.cfg.Differences = append(b.cfg.Differences, Difference{Pos: d.Pos, Text: text})
}

// A nameSet is a set of the directive names sectionHas is asked about,
// one bit each.
type nameSet uint16

// The names of a nameSet: lower-case directive names, and for Require
// its first argument too.
const (
	hasOrder            nameSet = 1 << iota // Order
	hasAllow                                // Allow
	hasDeny                                 // Deny
	hasRequire                              // Require, any argument
	hasRequireAll                           // <RequireAll>
	hasRequireAny                           // <RequireAny>
	hasRequireNone                          // <RequireNone>
	hasRequireUser                          // Require user
	hasRequireValidUser                     // Require valid-user
	hasRequireGroup                         // Require group
)

// namesOf is the nameSet of the directive d, whose lower-case name is n.
func namesOf(n string, d *apacheconf.Directive) nameSet {
	switch n {
	case "order":
		return hasOrder
	case "allow":
		return hasAllow
	case "deny":
		return hasDeny
	case "requireall":
		return hasRequireAll
	case "requireany":
		return hasRequireAny
	case "requirenone":
		return hasRequireNone
	case "require":
		if len(d.Args) == 0 {
			return hasRequire
		}
		switch toLower(d.Args[0]) {
		case "user":
			return hasRequire | hasRequireUser
		case "valid-user":
			return hasRequire | hasRequireValidUser
		case "group":
			return hasRequire | hasRequireGroup
		}
		return hasRequire
	}
	return 0
}

// A blockIndex is what a section's block holds, worked out once for
// the directives of the section that ask: the names of its directives,
// nested sections included (sectionHas), and how many words its Allow
// and Deny lines hold, in its <Limit> sections too (the length its
// lists will have, to allocate them once).
type blockIndex struct {
	names         nameSet
	built         bool
	allows, denys int32
}

// add indexes the directives ds; own says whether their Allow and Deny
// lines are the section's own (not those of a nested <Files>).
func (x *blockIndex) add(ds []*apacheconf.Directive, own bool) {
	for _, d := range ds {
		n := d.LowerName()
		x.names |= namesOf(n, d)
		if own && len(d.Args) > 1 {
			switch n {
			case "allow":
				x.allows += int32(len(d.Args) - 1)
			case "deny":
				x.denys += int32(len(d.Args) - 1)
			}
		}
		if len(d.Block) > 0 {
			x.add(d.Block, own && (n == "limit" || n == "limitexcept"))
		}
	}
}

// indexed returns the index of the section's block, built at the first
// call.
func (s *Section) indexed() *blockIndex {
	if !s.index.built {
		s.index.add(s.block, true)
		s.index.built = true
	}
	return &s.index
}

// sectionHas reports whether the section (its block, nested sections
// included) has a directive whose name (or, for Require, name and first
// argument: "require user") is one of names.
func sectionHas(sec *Section, names nameSet) bool {
	if sec == nil || sec.block == nil {
		return false
	}
	return sec.indexed().names&names != 0
}

// sortSections orders <Directory> sections as ap_core_reorder_directories
// does: by number of components ("/" counts 0), keeping configuration
// order among equals. Regex sections (<DirectoryMatch>, <Directory ~>)
// are sorted the same way among themselves, by the "/" in their pattern
// text (ap_count_dirs), and are merged after the plain ones.
func sortSections(c *Config) {
	slices.SortStableFunc(c.Dirs, func(a, b *Section) int { return cmp.Compare(a.Depth, b.Depth) })
	slices.SortStableFunc(c.DirMatches, func(a, b *Section) int {
		return cmp.Compare(strings.Count(a.Pattern, "/"), strings.Count(b.Pattern, "/"))
	})
}

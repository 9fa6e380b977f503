package translate

import (
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/internal/par"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// virtualHost builds a <VirtualHost> with a builder of its own that shares
// the main one's rule bookkeeping, method registry and modules; where
// the hosts are built apart (buildHosts), it only notes what the host
// starts with.
func (b *builder) virtualHost(d *apacheconf.Directive) {
	for _, a := range d.Args {
		if _, err := parseVHostAddr(a); err != "" {
			b.errorf(d, "%s", err)
			return
		}
	}
	if len(d.Args) == 0 {
		b.errorf(d, "<VirtualHost> directive requires additional arguments")
		return
	}
	start := hostStart{serverRoot: b.serverRoot, reDefault: b.reDefault, limits: b.cfg.Limits.forHost(), mergeSlashes: b.cfg.MergeSlashes}
	m := b.main
	if m.start == nil || *m.start != start {
		m.start = new(hostStart)
		*m.start = start
	}
	h := laterHost{d: d, errsAt: len(b.errs), rulesAt: len(b.rules), start: m.start}
	if m.apartOK {
		m.later = append(m.later, h)
		return
	}
	vb := b.newHost(&h)
	m.vhosts = append(m.vhosts, vb)
	for _, c := range d.Block {
		vb.topLevel(c)
	}
	vb.built()
	b.errs = append(b.errs, vb.errs...)
	b.rules = append(b.rules, vb.rules...)
	vb.rules = nil
}

// A hostAlloc is what a virtual host's building allocates, as one: its
// builder, its configuration and per-directory defaults with their
// Options, the VHost, its own count of sections (a host built apart),
// and room for the first address, ServerAlias, <Directory> and
// <Location> of the host and the first two sections it makes, which
// most hosts do not outgrow.
type hostAlloc struct {
	vb       builder
	cfg      Config
	defaults DirConf
	options  CoreOptions
	v        VHost
	order    int
	addr     [1]VHostAddr
	alias    [1]string
	dir, loc [1]*Section
	made     [2]*Section
}

// newHost returns the builder of the virtual host h, which virtualHost
// checked, with what it starts with from the main server.
func (b *builder) newHost(h *laterHost) *builder {
	a := new(hostAlloc)
	v := &a.v
	v.Pos = h.d.Pos
	v.Addrs, v.Aliases = a.addr[:0], a.alias[:0]
	for _, arg := range h.d.Args {
		va, _ := parseVHostAddr(arg)
		v.Addrs = append(v.Addrs, va)
	}
	a.options = DefaultOptions(b.cfg.Semantics)
	a.defaults.Options = &a.options
	a.cfg = Config{Semantics: b.cfg.Semantics, ForwardUnfaithful: b.cfg.ForwardUnfaithful, RenderOnly: b.cfg.RenderOnly, Omit: b.cfg.Omit, Methods: b.cfg.Methods, Modules: b.cfg.Modules,
		Defaults: &a.defaults, MergeSlashes: h.start.mergeSlashes, Limits: h.start.limits, Dirs: a.dir[:0], Locations: a.loc[:0]}
	vb := &a.vb
	vb.vhost, vb.scope, vb.directive = v, b.within(nil, h.d), h.d
	vb.opt, vb.ordinals, vb.serverRoot, vb.order, vb.parent, vb.reDefault, vb.cache = b.opt, b.ordinals, h.start.serverRoot, b.order, b, h.start.reDefault, b.cache
	vb.cfg = &a.cfg
	if b.main.apartOK {
		vb.apart, vb.order, vb.made = true, &a.order, a.made[:0]
	}
	return vb
}

// built ends the building of a virtual host's directives: its lists
// that newHost gave room and that are still empty are nil, as they are
// for the main server.
func (b *builder) built() {
	if len(b.vhost.Aliases) == 0 {
		b.vhost.Aliases = nil
	}
	if len(b.cfg.Dirs) == 0 {
		b.cfg.Dirs = nil
	}
	if len(b.cfg.Locations) == 0 {
		b.cfg.Locations = nil
	}
}

// hostsApart reports whether the virtual hosts of the configuration
// (its prescan p) can be built apart from the main server and from each
// other, on several cores, with the same result as one after another:
// there are enough of them, no rule is to be omitted (whose ID must be
// known as it is read), and no <Limit> in one registers a method (whose
// number depends on the order of registration).
func hostsApart(p *prescan, opt Options) bool {
	if len(opt.Omit) > 0 || runtime.GOMAXPROCS(0) < 2 {
		return false
	}
	return p.hosts >= 2 && !p.customMethod
}

// A prescan is what Build reads of the directives before it builds
// anything, in one walk of them all.
type prescan struct {
	// loadOrder numbers the modules of the LoadModule lines in the
	// order of their first (authz22Chain).
	loadOrder map[string]int
	// hosts counts the <VirtualHost> sections at the top level;
	// customMethod says whether a <Limit> or <LimitExcept> in one of
	// them names a method that is not a standard one (hostsApart).
	hosts        int
	customMethod bool
}

// prescanOf walks ds, sections' contents included, for their prescan.
func prescanOf(ds []*apacheconf.Directive) *prescan {
	p := &prescan{loadOrder: map[string]int{}}
	p.scan(ds, false, true)
	return p
}

// scan notes what the directives ds and those in them tell the
// prescan: top says whether ds are the configuration's top level,
// inHost whether they are in a <VirtualHost> there.
func (p *prescan) scan(ds []*apacheconf.Directive, inHost, top bool) {
	for _, d := range ds {
		host := inHost
		switch d.LowerName() {
		case "loadmodule":
			if len(d.Args) > 0 {
				if _, ok := p.loadOrder[d.Args[0]]; !ok {
					p.loadOrder[d.Args[0]] = len(p.loadOrder)
				}
			}
		case "limit", "limitexcept":
			if inHost {
				for _, m := range d.Args {
					p.customMethod = p.customMethod || (*policy.Methods)(nil).Number(m) == policy.MethodInvalid
				}
			}
		case "virtualhost":
			if top {
				p.hosts++
				host = true
			}
		}
		if len(d.Block) > 0 {
			p.scan(d.Block, host, false)
		}
	}
}

// buildHosts builds the virtual hosts set apart, on every core, then, in
// the order of the configuration, gives their rules their IDs and their
// sections their numbers, and puts their errors and rules where building
// them in place would have.
func (b *builder) buildHosts() {
	m := b.main
	par.DoWith(len(m.later), func() func(int) {
		cache := new(buildCache) // this goroutine's
		return func(i int) {
			h := &m.later[i]
			h.vb = b.newHost(h)
			h.vb.cache = cache
			for _, c := range h.d.Block {
				h.vb.topLevel(c)
			}
			h.vb.built()
		}
	})
	errs, rules := b.errs, b.rules
	b.errs, b.rules = nil, nil
	e, r := 0, 0
	m.vhosts = slices.Grow(m.vhosts, len(m.later))
	for i := range m.later {
		h := &m.later[i]
		vb := h.vb
		m.vhosts = append(m.vhosts, vb)
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
	par.Do(len(m.later), func(i int) {
		var buf []byte
		for _, p := range m.later[i].vb.pending {
			buf = append(buf[:0], p.key...)
			p.r.ID = ruleHash(buf, p.n)
		}
	})
	for i := range m.later {
		h := &m.later[i]
		h.vb.rules, h.vb.pending, h.vb.made, h.vb.apart, h.vb.order, h.vb.cache = nil, nil, nil, false, b.order, b.cache
	}
	b.errs = append(b.errs, errs[e:]...)
	b.rules = append(b.rules, rules[r:]...)
	m.later = nil
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
	switch toLower(host) {
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
//
// The merge is written over own, its Defaults and their Options, which
// it returns: a host's own configuration is not needed once merged, and
// a thousand hosts then do not each allocate another.
func mergeServer(main, own *Config, set map[string]bool) *Config {
	o, od := *own, *own.Defaults // what the host set
	c, d := own, own.Defaults
	*c, *d = *main, *main.Defaults
	c.VHosts = nil
	if o.DocumentRoot != "" {
		c.DocumentRoot = o.DocumentRoot
	}
	c.Aliases = joined(o.Aliases, main.Aliases)
	// Where /~user may lead: the host's and the main server's, for
	// translate's bounds.
	c.UserDirs = joined(o.UserDirs, main.UserDirs)
	c.UserDirHomes = main.UserDirHomes || o.UserDirHomes
	// Sorted in place: new lists.
	c.Dirs = slices.Concat(main.Dirs, o.Dirs)
	c.DirMatches = slices.Concat(main.DirMatches, o.DirMatches)
	sortSections(c)
	c.Files = joined(main.Files, o.Files)
	c.Locations = joined(main.Locations, o.Locations)
	c.ServerEnv = joined(main.ServerEnv, o.ServerEnv)
	if od.DirIndex != nil {
		d.DirIndex = od.DirIndex
	}
	d.Limits = MergeDirLimits(main.Defaults.Limits, od.Limits)
	d.Redirects = MergeDirRedirects(main.Defaults.Redirects, od.Redirects)
	d.Rewrite = MergeRewrite(main.Defaults.Rewrite, od.Rewrite)
	if od.HostnameLookups != LookupsUnset {
		d.HostnameLookups = od.HostnameLookups
	}
	if main.Defaults.Options != nil && od.Options != nil {
		*od.Options = main.Defaults.Options.Merge(*od.Options)
		d.Options = od.Options
	}
	c.SSL = mergeSSL(main.SSL, o.SSL) // ssl.go
	d.SSL = MergeSSLDir(main.Defaults.SSL, od.SSL)
	c.LDAPServer = mergeLDAPServer(main.LDAPServer, o.LDAPServer)
	c.Defaults = d
	c.Limits = mergeServerLimits(main.Limits, o.Limits)
	c.Redirects = joined(o.Redirects, main.Redirects)
	c.Rewrite = mergeServerRewrite(main.Rewrite, o.Rewrite)
	if set["accessfilename"] {
		c.AccessFileNames = o.AccessFileNames
	}
	if set["mergeslashes"] {
		c.MergeSlashes = o.MergeSlashes
	}
	// merge_core_server_configs: a host's own TraceEnable, else the main
	// server's.
	if o.TraceEnable != "" {
		c.TraceEnable, c.TraceRule = o.TraceEnable, o.TraceRule
	}
	// merge_core_dir_configs copies the host's own AllowEncodedSlashes,
	// set or not: a virtual host does not inherit the main server's.
	c.AllowEncodedSlashes = o.AllowEncodedSlashes
	return c
}

// joined is a followed by b, as mergeServer's lists are: where one of
// them is empty, the other itself, capped at its length so that an
// append to it copies it (no one changes their elements in place);
// else a new list; nil where both are empty.
func joined[S ~[]E, E any](a, b S) S {
	switch {
	case len(a) == 0 && len(b) == 0:
		return nil
	case len(b) == 0:
		return slices.Clip(a)
	case len(a) == 0:
		return slices.Clip(b)
	}
	return slices.Concat(a, b)
}

// Servers returns the main server's configuration and each virtual
// host's.
func (cfg *Config) Servers() []*Config {
	out := []*Config{cfg}
	for _, v := range cfg.VHosts {
		out = append(out, v.Config)
	}
	return out
}

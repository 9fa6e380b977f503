package translate

import (
	"strings"
	"sync/atomic"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

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
		opt:        &Options{Semantics: c.Semantics, BaseDir: baseDir, ForwardUnfaithful: c.ForwardUnfaithful, RenderOnly: c.RenderOnly, Omit: c.Omit},
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

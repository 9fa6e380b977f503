package translate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// LoadOptions say how to read legacy files.
type LoadOptions struct {
	Options
	Defines map[string]bool // -D names for <IfDefine>
	Modules []string        // modules to treat as loaded for <IfModule>, beyond LoadModule lines
	// Version is the legacy server's version, for <IfVersion> and for
	// what the reader evaluates ("2.2.34"); "" is DefaultVersion of the
	// semantics.
	Version string

	// OnRead, when set, is told each configuration file the reader read
	// (translate/convert writes them all out, empty ones included).
	OnRead func(name string)
	// OnParsed, when set, is given the directives read, every file's,
	// before the model is built from them: what starts on them (a search
	// of the document roots) runs beside the building. It must not
	// change them.
	OnParsed func(ds []*apacheconf.Directive)
}

// DefaultVersion is the version a configuration is read as when
// legacy.version is not set: the last 2.2 release for semantics "2.2",
// Debian's 2.4 for "2.4-compat".
func DefaultVersion(s Semantics) string {
	if s == Legacy22 {
		return "2.2.34"
	}
	return "2.4.71"
}

// FragmentModules are the modules a conf.d-style fragment (a file with no
// LoadModule line of its own) is assumed to run under when the
// configuration names none (legacy.modules): those of Debian's stock
// Apache 2.4 with mod_access_compat, plus authz_groupfile and remoteip.
var FragmentModules = []string{
	"mpm_event_module", "authz_core_module", "authz_host_module", "authn_core_module",
	"authn_file_module", "auth_basic_module", "authz_user_module", "authz_groupfile_module",
	"access_compat_module", "setenvif_module", "env_module", "alias_module", "dir_module",
	"mime_module", "remoteip_module", "filter_module", "deflate_module", "negotiation_module",
	"reqtimeout_module", "status_module", "autoindex_module",
}

// FragmentModules22 are the modules a fragment is assumed to run under
// with semantics "2.2": those Debian's Apache 2.2 enabled by default
// (apache2.2-common's mods-enabled), plus mod_version, which the
// <IfVersion> blocks of packaged configuration files need. There is no
// mod_authz_core, mod_authn_core or mod_access_compat in 2.2: the
// <IfModule mod_authz_core.c> branch of a dual 2.2/2.4 block is the 2.4
// one.
var FragmentModules22 = []string{
	"alias_module", "auth_basic_module", "authn_file_module", "authz_default_module",
	"authz_groupfile_module", "authz_host_module", "authz_user_module", "autoindex_module",
	"cgi_module", "deflate_module", "dir_module", "env_module", "mime_module",
	"negotiation_module", "reqtimeout_module", "setenvif_module", "status_module",
	"version_module",
}

// fragmentModulesFor are the modules assumed for a fragment read with the
// semantics s.
func fragmentModulesFor(s Semantics) []string {
	if s == Legacy22 {
		return FragmentModules22
	}
	return FragmentModules
}

// Load reads the legacy files (each with everything it includes) and
// builds the access model. Errors are an apacheconf.ErrorList.
func Load(files []string, opt LoadOptions) (*Config, error) {
	cfg, _, _, err := LoadSource(files, opt)
	return cfg, err
}

// LoadSource is Load, returning also each file's directives as read, or nil
// for a file read with modules assumed loaded (a fragment, or
// LoadOptions.Modules): those are not what apacheconf.Load with no
// modules would read; and each file's text (nil if it could not be read).
func LoadSource(files []string, opt LoadOptions) (*Config, [][]*apacheconf.Directive, [][]byte, error) {
	if len(files) == 0 {
		return nil, nil, nil, apacheconf.ErrorList{{Msg: "no legacy files given"}}
	}
	srcs := make([][]byte, len(files))
	var all []*apacheconf.Directive
	var plain [][]*apacheconf.Directive
	var errs apacheconf.ErrorList
	loaded := map[string]bool{}
	fragment := true
	version := opt.Version
	if version == "" {
		version = DefaultVersion(opt.Semantics)
	}
	var state *apacheconf.State
	for i, f := range files {
		mods := map[string]bool{}
		for _, m := range opt.Modules {
			mods[m] = true
		}
		// The file is read once, for the question and the loading.
		src, rerr := os.ReadFile(f)
		srcs[i] = src
		readFile := func(name string) ([]byte, error) {
			if opt.OnRead != nil {
				opt.OnRead(name)
			}
			if name == f && rerr == nil && src != nil {
				b := src
				src = nil // later reads (an Include of itself) read again
				return b, nil
			}
			return os.ReadFile(name)
		}
		if !hasLoadModule(f, src) {
			if len(opt.Modules) == 0 {
				for _, m := range fragmentModulesFor(opt.Semantics) {
					mods[m] = true
				}
			}
		} else {
			fragment = false
		}
		aopt := apacheconf.Options{ServerRoot: opt.ServerRoot, Defines: opt.Defines, Modules: mods, ReadFile: readFile, Version: version}
		if len(mods) > 0 {
			// <IfDirective>/<IfSection> ask the directive table, with the
			// modules assumed; a configuration that loads its own leaves
			// them for the builder to refuse.
			aopt.Known = knownIn(tableVersion(opt.Semantics), mods)
		}
		ds, st, err := apacheconf.LoadState(f, aopt)
		state = st
		if err != nil {
			var el apacheconf.ErrorList
			if errors.As(err, &el) {
				errs = append(errs, el...)
			} else {
				errs = append(errs, &apacheconf.Error{Pos: apacheconf.Pos{File: f}, Msg: err.Error()})
			}
			continue
		}
		apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
			if d.LowerName() == "loadmodule" && len(d.Args) > 0 {
				loaded[d.Args[0]] = true
			}
			return nil
		})
		all = append(all, ds...)
		if len(mods) == 0 {
			plain = append(plain, ds)
		} else {
			plain = append(plain, nil)
		}
	}
	if len(errs) > 0 {
		return nil, nil, nil, errs
	}
	for _, m := range opt.Modules {
		loaded[m] = true
	}
	for _, m := range builtinModules {
		loaded[m] = true
	}
	if fragment && len(opt.Modules) == 0 {
		for _, m := range fragmentModulesFor(opt.Semantics) {
			loaded[m] = true
		}
	}
	opt.Options.Modules = loaded
	if opt.BaseDir == "" {
		opt.BaseDir = filepath.Dir(files[0])
	}
	if opt.OnParsed != nil {
		opt.OnParsed(all)
	}
	cfg, err := Build(all, opt.Options)
	if cfg != nil {
		// .htaccess files are read with what the configuration defined.
		cfg.Version, cfg.ReadState = version, state
		for _, v := range cfg.VHosts {
			v.Config.Version, v.Config.ReadState = version, state
		}
	}
	return cfg, plain, srcs, err
}

// knownIn answers <IfDirective> and <IfSection> from the directive table:
// whether the version knows the name from a module of mods or the core.
func knownIn(v directive.Version, mods map[string]bool) func(string, bool) bool {
	return func(name string, section bool) bool {
		if section {
			name = "<" + name
		}
		info, _ := directive.Find(name, v, func(m string) bool { return mods[m] || mods[strings.TrimSuffix(m, "_module")+".c"] })
		return info != nil
	}
}

// tableVersion is the directive table's version for semantics s.
func tableVersion(s Semantics) directive.Version {
	if s == Legacy22 {
		return directive.V22
	}
	return directive.V24
}

// hasLoadModule reports whether the file f, whose text is src (nil if it
// could not be read), with its includes, loads any module itself. A full configuration says so in its own first lines,
// outside any section; only a file that does not is read with its
// includes.
func hasLoadModule(f string, src []byte) bool {
	if src != nil && apacheconf.HasTopLevel(src, "LoadModule") {
		return true
	}
	found := false
	ds, _ := apacheconf.Load(f, apacheconf.Options{})
	apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
		if d.LowerName() == "loadmodule" {
			found = true
		}
		return nil
	})
	return found
}

// IsBuiltinModule reports whether the module m ("core_module") is one of
// builtinModules.
func IsBuiltinModule(m string) bool { return slices.Contains(builtinModules, m) }

// builtinModules are compiled into Debian's apache2 ("apache2 -l").
var builtinModules = []string{"core_module", "so_module", "watchdog_module", "http_module",
	"log_config_module", "logio_module", "version_module", "unixd_module"}

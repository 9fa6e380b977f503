package translate

import (
	"fmt"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

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

// offArg reports a directive switched off ("CheckSpelling Off", "UserDir
// disabled"), which changes nothing.
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

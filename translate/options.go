package translate

import (
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// Options (core) as Apache keeps and merges it (server/core.c:
// set_options, set_allow_opts, merge_core_dir_configs; 2.2.34 and the 2.4.x
// branch). What the options do to a request is evaluated in package walk:
// FollowSymLinks and SymLinksIfOwnerMatch in the directory walk, Indexes
// where mod_autoindex would answer. ExecCGI and MultiViews are refused at
// load where orderly cannot tell what they do (cgiHandler, options).

// OptionBits are core's allow_options_t bits (include/http_core.h), with
// Apache's values.
type OptionBits uint8

// The option bits.
const (
	OptIndexes  OptionBits = 1 // OPT_INDEXES: Indexes
	OptIncludes OptionBits = 2 // OPT_INCLUDES: IncludesNOEXEC (Includes with OptIncWithExec)
	OptSymLinks OptionBits = 4 // OPT_SYM_LINKS: FollowSymLinks
	OptExecCGI  OptionBits = 8 // OPT_EXECCGI: ExecCGI
	// OptUnset marks options no plain Options line set: only +/- lines,
	// which merge over what a section inherits.
	OptUnset OptionBits = 16
	// OptIncWithExec is OPT_INC_WITH_EXEC (2.2's OPT_INCNOEXEC bit,
	// inverted since 2.2.12): Includes with exec=.
	OptIncWithExec OptionBits = 32
	OptSymOwner    OptionBits = 64  // OPT_SYM_OWNER: SymLinksIfOwnerMatch
	OptMulti       OptionBits = 128 // OPT_MULTI: MultiViews

	// OptAll is "Options All": everything but SymLinksIfOwnerMatch and
	// MultiViews.
	OptAll = OptIndexes | OptIncludes | OptIncWithExec | OptSymLinks | OptExecCGI
	// OptOverrideDefault are the options an .htaccess file may set where
	// no AllowOverride Options=... says otherwise (override_opts).
	OptOverrideDefault = OptAll | OptSymOwner | OptMulti
)

// CoreOptions are core_dir_config's opts, opts_add and opts_remove: what
// the Options lines of one section set, or, merged, what is in force.
type CoreOptions struct {
	Opts, Add, Remove OptionBits
	// Rule is the section's last Options line, which a refusal of the
	// options in force names (nil: none, or a model only written out).
	Rule *policy.Rule
}

// DefaultOptions are the options of the main server's defaults
// (create_core_dir_config for no directory): All in 2.2, FollowSymLinks in
// 2.4, with OptUnset.
func DefaultOptions(s Semantics) CoreOptions {
	if s == Legacy22 {
		return CoreOptions{Opts: OptUnset | OptAll}
	}
	return CoreOptions{Opts: OptUnset | OptSymLinks}
}

// Merge merges the options of a section (add) over those it inherits, as
// merge_core_dir_configs does (and core_opts_merge in the directory walk,
// which lacks only the rule for Includes): a section whose options a plain
// Options line set replaces them; one with only +/- lines adds and
// removes, and its additions and removals stay for the sections below.
func (base CoreOptions) Merge(add CoreOptions) CoreOptions {
	if add.Opts&OptUnset == 0 {
		return add
	}
	var out CoreOptions
	out.Add = base.Add&^add.Remove | add.Add
	out.Remove = base.Remove&^add.Add | add.Remove
	out.Opts = base.Opts&^out.Remove | out.Add
	// Includes with exec inherited, IncludesNOEXEC here: exec goes.
	if base.Opts&(OptIncludes|OptIncWithExec) == OptIncludes|OptIncWithExec &&
		add.Opts&(OptIncludes|OptIncWithExec) == OptIncludes {
		out.Opts &^= OptIncWithExec
	}
	return out
}

// optionWord is one word of Options or of AllowOverride Options=...
// (ap_cstr_casecmp: ASCII letters in either case).
func optionWord(w string) (OptionBits, bool) {
	for _, o := range optionWords {
		if len(o.name) == len(w) && equalFoldASCII(o.name, w) {
			return o.bits, true
		}
	}
	return 0, false
}

var optionWords = []struct {
	name string
	bits OptionBits
}{
	{"indexes", OptIndexes}, {"includes", OptIncludes | OptIncWithExec}, {"includesnoexec", OptIncludes},
	{"followsymlinks", OptSymLinks}, {"symlinksifownermatch", OptSymOwner}, {"execcgi", OptExecCGI},
	{"multiviews", OptMulti}, {"runscripts", OptMulti | OptExecCGI}, {"none", 0}, {"all", OptAll},
}

// foldASCII lowercases ASCII letters only, as Apache's comparisons do.
func foldASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// options reads an Options line into conf, as set_options does: Apache
// 2.4 refuses to mix +/- words with plain ones, and allows None and All
// only first (options24); 2.2 accepts any mix, and its first plain word
// clears what the words before it set (the +/- ones stay recorded for the
// sections below). In an .htaccess file each option must be one
// AllowOverride Options=... allows. MultiViews turned on is refused
// (notFaithful) where mod_negotiation is loaded.
func (b *builder) options(d *apacheconf.Directive, conf *DirConf, scope []string) {
	allowed := OptOverrideDefault
	if b.htaccess != nil {
		allowed = b.htaccess.overrideOpts
	}
	v24 := b.cfg.Semantics != Legacy22
	at, msg := options24(d.Args)
	if msg != "" && !v24 {
		b.differ(d, "Options: Apache 2.4 refuses this line (\""+msg+"\"); 2.2 accepts it, and its first word without + or - drops what the words with one before it set on this section (they still apply to the sections below)")
	}
	o := CoreOptions{Opts: OptUnset} // a section's core_dir_config
	if conf.Options != nil {
		o = *conf.Options
	}
	first, multi := true, false
	for i, w := range d.Args {
		if v24 && i == at {
			b.errorf(d, "%s", msg)
			return
		}
		var action byte
		if w != "" && (w[0] == '+' || w[0] == '-') {
			action, w = w[0], w[1:]
		} else if first {
			o.Opts = 0
			first = v24 // 2.2 clears only here; 2.4 after every word
		}
		if v24 {
			first = false
		}
		opt, ok := optionWord(w)
		if !ok {
			b.errorf(d, "Illegal option %s", w)
			return
		}
		if allowed&opt != opt {
			b.errorf(d, "Option %s not allowed here", w)
			return
		}
		switch action {
		case '-':
			o.Remove |= opt
			o.Add &^= opt
			o.Opts &^= opt
		case '+':
			o.Add |= opt
			o.Remove &^= opt
			o.Opts |= opt
		default:
			o.Opts |= opt
		}
		multi = multi || action != '-' && opt&OptMulti != 0
	}
	if r := b.rule(d, scope); r != renderRule {
		o.Rule = r
	}
	conf.Options = &o
	if multi && b.loaded("negotiation_module") {
		b.notFaithful(d, "MultiViews: mod_negotiation answers a request for a file that does not exist with a variant (name.*) it chooses by the Accept headers, each variant checked by its own <Files> sections; orderly does not negotiate")
	}
}

// options24 is Apache 2.4's check of the order of an Options line's words
// (set_options): the word it refuses the line at, before reading the word
// itself, and its message; -1 and "" if it does not.
func options24(args []string) (int, string) {
	const mix = "Either all Options must start with + or -, or no Option may."
	first, merge, allNone := true, false, false
	for i, w := range args {
		if w != "" && (w[0] == '+' || w[0] == '-') {
			if !merge && !first && !allNone {
				return i, mix
			}
			merge, w = true, w[1:]
		} else if !first && merge {
			return i, mix
		}
		switch {
		case equalFoldASCII(w, "none"):
			if !first {
				return i, "'Options None' must be the first Option given."
			} else if merge {
				return i, "You may not use 'Options +None' or 'Options -None'."
			}
			allNone = true
		case equalFoldASCII(w, "all"):
			if !first {
				return i, "'Options All' must be the first option given."
			} else if merge {
				return i, "You may not use 'Options +All' or 'Options -All'."
			}
			allNone = true
		}
		if _, ok := optionWord(w); !ok {
			break // "Illegal option" comes first
		}
		first = false
	}
	return -1, ""
}

// overrideOptions is what AllowOverride sets of override_opts (set_override):
// Options=list the options listed (set_allow_opts: words separated by
// commas; an illegal word ends the list, silently, keeping those before
// it; an empty list changes nothing), Options alone "All" (which excludes
// SymLinksIfOwnerMatch and MultiViews), and a line without Options the
// default: every option. The directory walk takes it with AllowOverride
// (core_opts_merge), for the .htaccess files below.
func overrideOptions(args []string) OptionBits {
	opts := OptOverrideDefault
	for _, w := range args {
		k, v, hasV := strings.Cut(w, "=")
		if foldASCII(k) != "options" {
			continue
		}
		if !hasV {
			opts = OptAll
			continue
		}
		first := true
		for _, t := range strings.Split(v, ",") {
			if t == "" {
				continue
			}
			if first {
				opts, first = 0, false
			}
			bits, ok := optionWord(t)
			if !ok {
				break
			}
			opts |= bits
		}
	}
	return opts
}

// cgiHandler refuses (notFaithful) a directive that can make mod_cgi's
// handler apply where mod_cgi or mod_cgid is loaded: SetHandler or
// AddHandler cgi-script, AddType or ForceType (2.2: DefaultType)
// application/x-httpd-cgi. mod_cgi answers 403 ("Options ExecCGI is off
// in this directory", AH02809; mod_cgid AH01262) for a script whose
// options lack ExecCGI, unless ScriptAlias mapped it; which requests get
// the handler is mod_mime's and core's to say (file extensions, nested
// sections), which orderly does not evaluate. ScriptAlias alone never
// meets the check and is not refused.
func (b *builder) cgiHandler(d *apacheconf.Directive, name string) {
	if len(d.Args) == 0 || !b.loaded("cgi_module") && !b.loaded("cgid_module") {
		return
	}
	if name == "defaulttype" && b.cfg.Semantics != Legacy22 {
		return // ignored by 2.4 (AH00117)
	}
	v := d.Args[0]
	if i := strings.IndexByte(v, ';'); i >= 0 && name != "sethandler" && name != "addhandler" {
		v = v[:i]
	}
	v = foldASCII(strings.TrimSpace(v))
	if v != "cgi-script" && v != "application/x-httpd-cgi" && !strings.Contains(v, "%{") {
		return
	}
	b.notFaithful(d, "ExecCGI: this gives requests mod_cgi's handler, which answers 403 (AH02809/AH01262 \"Options ExecCGI is off in this directory\") where the options in force lack ExecCGI and ScriptAlias did not map the request; orderly does not evaluate which requests get a handler (mod_mime's extensions, SetHandler in nested sections), so it cannot tell which those are")
}

// defaultOptions is DefaultOptions for a server's defaults (DirConf).
func defaultOptions(s Semantics) *CoreOptions {
	o := DefaultOptions(s)
	return &o
}

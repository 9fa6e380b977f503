package translate

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/regex"
	"github.com/orderly-proxy/orderly/translate/rewrite"
)

// Rewrite is mod_rewrite's configuration of a server (Config.Rewrite:
// its rules, run in translate_name) or of a directory (DirConf.Rewrite:
// the per-directory rules run in fixups, and the engine's state, which
// the server level also sets for its defaults).
type Rewrite struct {
	// Engine is RewriteEngine: 1 On, -1 Off, 0 not set here;
	// EngineRule is its line.
	Engine     int8
	EngineRule *policy.Rule
	// Options are RewriteOptions' bits; OptionsSet says the section set
	// some.
	Options    RewriteOption
	OptionsSet bool
	// Base is RewriteBase (BaseSet: the section set one).
	Base    string
	BaseSet bool
	// Dir is the per-directory prefix the rules strip: the section's
	// path with a final slash ("" at the server level).
	Dir   string
	Rules []*rewrite.Rule
	// Maps are the server's RewriteMap lines by name.
	Maps map[string]*rewrite.Map

	conds []*rewrite.Cond // RewriteCond lines waiting for their rule
}

// RewriteOption is a RewriteOptions bit (OPTION_*).
type RewriteOption uint16

// The options.
const (
	RewriteInherit RewriteOption = 1 << iota
	RewriteInheritBefore
	RewriteNoSlash
	RewriteAnyURI
	RewriteMergeBase
	RewriteInheritDown
	RewriteInheritDownBefore
	RewriteIgnoreInherit
	RewriteIgnoreContextInfo
	RewriteLegacyPrefixDocroot
	RewriteUnsafePrefixStat
)

var rewriteOptionNames = map[string]RewriteOption{
	"inherit": RewriteInherit, "inheritbefore": RewriteInheritBefore, "allownoslash": RewriteNoSlash,
	"allowanyuri": RewriteAnyURI, "mergebase": RewriteMergeBase, "inheritdown": RewriteInheritDown,
	"inheritdownbefore": RewriteInheritDownBefore, "ignoreinherit": RewriteIgnoreInherit,
	"ignorecontextinfo": RewriteIgnoreContextInfo, "legacyprefixdocroot": RewriteLegacyPrefixDocroot,
	"unsafeprefixstat": RewriteUnsafePrefixStat,
}

// On reports whether the engine is on in a merged configuration.
func (r *Rewrite) On() bool { return r != nil && r.Engine > 0 }

// inheritRules is the order config_perdir_merge and config_server_merge
// join a base's rules with a section's: 1 the section's first
// (Inherit, or the base's InheritDown), -1 the base's first
// (InheritBefore, InheritDownBefore), 0 the section's alone.
func inheritRules(base, over *Rewrite, opts RewriteOption) int {
	switch {
	case opts&RewriteInherit != 0 || base.Options&RewriteInheritDown != 0 && opts&RewriteIgnoreInherit == 0:
		return 1
	case opts&RewriteInheritBefore != 0 || base.Options&RewriteInheritDownBefore != 0 && opts&RewriteIgnoreInherit == 0:
		return -1
	}
	return 0
}

// MergeRewrite is config_perdir_merge: over (a section's own
// configuration) over base (what the sections before left). Either may
// be nil.
func MergeRewrite(base, over *Rewrite) *Rewrite {
	if over == nil {
		return base
	}
	if base == nil {
		return over
	}
	a := &Rewrite{Engine: base.Engine, EngineRule: base.EngineRule, Options: base.Options, OptionsSet: base.OptionsSet || over.OptionsSet, Dir: over.Dir}
	if over.Engine != 0 {
		a.Engine, a.EngineRule = over.Engine, over.EngineRule
	}
	if over.OptionsSet {
		a.Options = over.Options
	}
	if a.Options&RewriteMergeBase != 0 {
		a.Base, a.BaseSet = base.Base, base.BaseSet || over.BaseSet
		if over.BaseSet {
			a.Base = over.Base
		}
	} else {
		a.Base, a.BaseSet = over.Base, over.BaseSet
	}
	a.Rules = joinRules(base.Rules, over.Rules, inheritRules(base, over, a.Options))
	return a
}

// mergeServerRewrite is config_server_merge: a virtual host's own
// server configuration over the main server's.
func mergeServerRewrite(main, own *Rewrite) *Rewrite {
	if main == nil && own == nil {
		return nil
	}
	if main == nil {
		main = &Rewrite{}
	}
	if own == nil {
		own = &Rewrite{}
	}
	a := &Rewrite{Engine: main.Engine, EngineRule: main.EngineRule, Options: main.Options, OptionsSet: main.OptionsSet || own.OptionsSet}
	if own.Engine != 0 {
		a.Engine, a.EngineRule = own.Engine, own.EngineRule
	}
	if own.OptionsSet {
		a.Options = own.Options
	}
	order := inheritRules(main, own, a.Options)
	a.Rules = joinRules(main.Rules, own.Rules, order)
	a.Maps = own.Maps
	if order != 0 {
		// apr_hash_overlay: the overlay's maps win, the host's under
		// Inherit, the main server's under InheritBefore.
		base, overlay := main.Maps, own.Maps
		if order < 0 {
			base, overlay = own.Maps, main.Maps
		}
		a.Maps = make(map[string]*rewrite.Map, len(base)+len(overlay))
		for k, v := range base {
			a.Maps[k] = v
		}
		for k, v := range overlay {
			a.Maps[k] = v
		}
	}
	return a
}

func joinRules(base, own []*rewrite.Rule, order int) []*rewrite.Rule {
	switch order {
	case 1:
		return append(append([]*rewrite.Rule(nil), own...), base...)
	case -1:
		return append(append([]*rewrite.Rule(nil), base...), own...)
	}
	return own
}

// rewriteVars are the %{NAME} variables whose value orderly computes as
// lookup_variable does; any other name lookup_variable knows is refused
// (its value is the legacy server's own: its environment, its process,
// its file owners), and a name it does not know is empty.
var rewriteVars = map[string]bool{
	"TIME": true, "TIME_YEAR": true, "TIME_MON": true, "TIME_DAY": true, "TIME_HOUR": true,
	"TIME_MIN": true, "TIME_SEC": true, "TIME_WDAY": true, "IPV6": true, "HTTPS": true,
	"IS_SUBREQ": true, "PATH_INFO": true, "AUTH_TYPE": true, "HTTP_HOST": true,
	"SERVER_NAME": true, "REMOTE_ADDR": true, "SERVER_ADDR": true, "HTTP_ACCEPT": true,
	"THE_REQUEST": true, "HTTP_COOKIE": true, "SERVER_PORT": true, "REMOTE_HOST": true,
	"REMOTE_USER": true, "REQUEST_URI": true, "HTTP_REFERER": true, "QUERY_STRING": true,
	"DOCUMENT_ROOT": true, "HTTP_FORWARDED": true, "REQUEST_METHOD": true, "REQUEST_SCHEME": true,
	"HTTP_USER_AGENT": true, "SCRIPT_FILENAME": true, "SERVER_PROTOCOL": true,
	"REQUEST_FILENAME": true, "HTTP_PROXY_CONNECTION": true,
}

// opaqueVars are the names lookup_variable knows whose value orderly
// cannot know.
var opaqueVars = map[string]string{
	"REMOTE_PORT":           "the client's port",
	"CONN_REMOTE_ADDR":      "the address of the peer that connected to the legacy server",
	"SCRIPT_USER":           "the owner of the file",
	"SCRIPT_GROUP":          "the group of the file",
	"REMOTE_IDENT":          "an identd answer",
	"API_VERSION":           "the legacy server's module magic number",
	"SERVER_ADMIN":          "the legacy server's ServerAdmin",
	"SERVER_SOFTWARE":       "the legacy server's banner",
	"CONTEXT_PREFIX":        "the context of an Alias",
	"CONTEXT_DOCUMENT_ROOT": "the context of an Alias",
}

// checkVar says why orderly cannot expand %{name}, or "".
func checkVar(name string) string {
	if len(name) < 4 {
		return ""
	}
	if name[3] == ':' && len(name) > 4 {
		switch strings.ToUpper(name[:3]) {
		case "ENV":
			return ""
		case "SSL":
			return "%{" + name + "}: mod_ssl's variables in rewrite rules are not evaluated by orderly"
		}
		return ""
	}
	if len(name) > 5 && name[4] == ':' {
		switch strings.ToUpper(name[:4]) {
		case "HTTP":
			return ""
		case "LA-U", "LA-F":
			if inner := strings.ToUpper(name[5:]); strings.HasPrefix(inner, "LA-U:") || strings.HasPrefix(inner, "LA-F:") {
				return "%{" + name + "}: a look-ahead inside a look-ahead is not evaluated by orderly"
			}
			return checkVar(name[5:])
		}
		return ""
	}
	up := strings.ToUpper(name)
	if why := opaqueVars[up]; why != "" {
		return "%{" + name + "} is " + why + ", which orderly cannot know"
	}
	return ""
}

// rewriteDirective reads RewriteEngine, RewriteOptions, RewriteBase,
// RewriteCond, RewriteRule and RewriteMap at the server level (ctx nil)
// or in a section. Apache has checked their values already
// (rewriteValue).
func (b *builder) rewriteDirective(d *apacheconf.Directive, ctx *dirCtx) {
	var dconf *Rewrite // the per-directory configuration
	var sconf *Rewrite // the server's, at the server level
	if ctx == nil {
		if b.cfg.Rewrite == nil {
			b.cfg.Rewrite = &Rewrite{}
		}
		if b.cfg.Defaults.Rewrite == nil {
			b.cfg.Defaults.Rewrite = &Rewrite{}
		}
		sconf, dconf = b.cfg.Rewrite, b.cfg.Defaults.Rewrite
	} else {
		switch ctx.sec.Kind {
		case KindDirectory, KindDirectoryMatch, KindHtaccess:
		default:
			b.notFaithful(d, "mod_rewrite in a <"+ctx.sec.Kind.String()+"> section: orderly evaluates it at the server level, in <Directory> sections and in .htaccess files")
			return
		}
		if ctx.conf.Rewrite == nil {
			ctx.conf.Rewrite = &Rewrite{Dir: rewriteDir(ctx.sec)}
		}
		dconf = ctx.conf.Rewrite
	}
	var scope []string
	if ctx != nil {
		scope = ctx.scope
	} else {
		scope = b.scope
	}
	switch d.LowerName() {
	case "rewriteengine":
		if len(d.Args) != 1 {
			return
		}
		v := int8(-1)
		if strings.EqualFold(d.Args[0], "on") {
			v = 1
		}
		r := b.rule(d, scope)
		dconf.Engine, dconf.EngineRule = v, r
		if sconf != nil {
			sconf.Engine, sconf.EngineRule = v, r
		}
	case "rewriteoptions":
		var o RewriteOption
		for _, w := range d.Args {
			o |= rewriteOptionNames[strings.ToLower(w)]
		}
		dconf.Options |= o
		dconf.OptionsSet = true
		if sconf != nil {
			sconf.Options |= o
			sconf.OptionsSet = true
		}
		b.rule(d, scope)
	case "rewritebase":
		if len(d.Args) == 1 {
			dconf.Base, dconf.BaseSet = d.Args[0], true
		}
		b.rule(d, scope)
	case "rewritemap":
		b.rewriteMapLine(d, sconf)
	case "rewritecond", "rewriterule":
		b.rewriteLine(d, sconf, dconf, scope)
	}
}

// rewriteDir is the prefix config_perdir_create gives a section: its
// path (a regex's text) with a final slash.
func rewriteDir(s *Section) string {
	switch {
	case s.Kind == KindHtaccess:
		return rewrite.DirPrefix(filepath.Dir(s.Path))
	case s.Regex != nil:
		return rewrite.DirPrefix(s.Regex.String())
	}
	return rewrite.DirPrefix(s.Path)
}

func (b *builder) rewriteEnv() rewrite.Env {
	return rewrite.Env{
		Compile: func(p string, icase bool) (*regex.Regexp, error) { return regex.Compile(p, b.regexOpts(icase)) },
		KnownStatus: func(s int) bool {
			return knownStatus(s, b.cfg.Semantics == Legacy22)
		},
		V22: b.cfg.Semantics == Legacy22,
	}
}

// rewriteLine reads a RewriteCond (kept for the next RewriteRule) or a
// RewriteRule, refusing what orderly does not evaluate.
func (b *builder) rewriteLine(d *apacheconf.Directive, sconf, dconf *Rewrite, scope []string) {
	into := dconf
	if sconf != nil {
		into = sconf
	}
	if d.LowerName() == "rewritecond" {
		_, c, err := b.parsedRewrite(d)
		if err != nil {
			b.notFaithful(d, err.Error())
			return
		}
		if why := condUnsupported(c); why != "" {
			b.notFaithful(d, why)
			return
		}
		c.Line = b.rule(d, scope)
		into.conds = append(into.conds, c)
		return
	}
	if b.omitted(d, "rewriterule", scope) {
		// Demoted: the rule is not there, nor are the conditions that
		// were its own.
		into.conds = nil
		return
	}
	r, _, err := b.parsedRewrite(d)
	if err != nil {
		b.notFaithful(d, err.Error())
		return
	}
	r.Conds, into.conds = into.conds, nil
	if why := b.ruleUnsupported(r); why != "" {
		b.notFaithful(d, why)
		return
	}
	r.Line = b.rule(d, scope)
	into.Rules = append(into.Rules, r)
}

// condUnsupported says why orderly cannot evaluate a condition, or "".
func condUnsupported(c *rewrite.Cond) string {
	switch c.Type {
	case rewrite.CondExpr:
		return "a RewriteCond on an ap_expr, which orderly does not evaluate"
	}
	for _, v := range rewrite.Vars(c.Input) {
		if why := checkVar(v); why != "" {
			return why
		}
	}
	return ""
}

// ruleUnsupported says why orderly cannot evaluate a rule, or "".
func (b *builder) ruleUnsupported(r *rewrite.Rule) string {
	if r.Flags&rewrite.FlagProxy != 0 {
		return "RewriteRule [P] proxies the request elsewhere, through mod_proxy's <Proxy> sections, which orderly does not evaluate"
	}
	texts := append([]string{r.Subst}, r.Env...)
	for _, t := range texts {
		for _, v := range rewrite.Vars(t) {
			if why := checkVar(v); why != "" {
				return why
			}
		}
	}
	return ""
}

// rewriteMapLine reads RewriteMap (server level only): txt: and rnd:
// files (and a file named without a type) are read now, and again on
// each reload; int: maps are mod_rewrite's own; dbm:, dbd:, fastdbd: and
// prg: maps are refused.
func (b *builder) rewriteMapLine(d *apacheconf.Directive, sconf *Rewrite) {
	if sconf == nil || len(d.Args) < 2 {
		return
	}
	b.rule(d, b.scope)
	name, spec := d.Args[0], d.Args[1]
	lower := strings.ToLower(spec)
	m := &rewrite.Map{}
	switch {
	case strings.HasPrefix(lower, "dbm"), strings.HasPrefix(lower, "prg:"), strings.HasPrefix(lower, "dbd:"), strings.HasPrefix(lower, "fastdbd:"):
		b.notFaithful(d, "a "+strings.SplitN(strings.SplitN(lower, ":", 2)[0], "=", 2)[0]+" map, which orderly does not read (txt:, rnd: and int: maps are evaluated)")
		return
	case strings.HasPrefix(lower, "int:"):
		m.Kind, m.Func = rewrite.MapInt, spec[4:] // rewriteValue checked the name
	default:
		// txt: and rnd:, and a file named without a type (a txt: map).
		m.Kind = rewrite.MapTxt
		file := spec
		switch {
		case strings.HasPrefix(lower, "rnd:"):
			m.Kind, file = rewrite.MapRnd, spec[4:]
		case strings.HasPrefix(lower, "txt:"):
			file = spec[4:]
		}
		if !filepath.IsAbs(file) && b.serverRoot != "" {
			file = filepath.Join(b.serverRoot, file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			b.notFaithful(d, "orderly cannot read the map file: "+err.Error())
			return
		}
		m.Txt = rewrite.ParseTxtMap(bufio.NewReader(bytes.NewReader(data)))
	}
	if sconf.Maps == nil {
		sconf.Maps = map[string]*rewrite.Map{}
	}
	sconf.Maps[name] = m
}

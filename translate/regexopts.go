package translate

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// RegexDefaults are the compile flags ap_regcomp adds to every pattern
// (server/util_pcre.c default_cflags): none in 2.2; in 2.4 AP_REG_DEFAULT,
// DOTALL and DOLLAR_ENDONLY (include/ap_regex.h since 2.4.42, set again
// by core_pre_config before each read of the configuration), as
// RegexDefaultOptions leaves them. Only ICase, DotAll and DollarEndOnly
// are used.
type RegexDefaults = regex.Options

// initialRegexDefaults is default_cflags before any RegexDefaultOptions.
func initialRegexDefaults(s Semantics) RegexDefaults {
	if s == Legacy22 {
		return RegexDefaults{}
	}
	return RegexDefaults{DotAll: true, DollarEndOnly: true}
}

// regexOpts are the options ap_regcomp compiles a pattern with at this
// point of the configuration: the directive's own flags (icase), the
// defaults in force (RegexDefaultOptions so far, or for an .htaccess
// file, as the configuration left them), and in 2.4 PCRE2_DUPNAMES.
func (b *builder) regexOpts(icase bool) regex.Options {
	o := b.reDefaults()
	return regex.Options{
		ICase:         icase || o.ICase,
		DotAll:        o.DotAll,
		DollarEndOnly: o.DollarEndOnly,
		DupNames:      b.cfg.Semantics != Legacy22,
	}
}

func (b *builder) reDefaults() RegexDefaults {
	if b.htaccess != nil || b.reDefault == nil {
		if b.cfg.RegexDefaults != nil {
			return *b.cfg.RegexDefaults
		}
		return initialRegexDefaults(b.cfg.Semantics)
	}
	return *b.reDefault
}

// compileRegex compiles a directive's pattern as ap_pregcomp does. A
// pattern PCRE2 refuses is refused with the directive's own message
// (msg, Apache's words); one orderly cannot evaluate as PCRE2 would
// (recursion, backtracking verbs, \K, ...) is refused as orderly's.
func (b *builder) compileRegex(d *apacheconf.Directive, pattern string, opt regex.Options, msg string) *regex.Regexp {
	re, err := regex.Compile(pattern, opt)
	if err == nil {
		return re
	}
	var e *regex.Error
	if errors.As(err, &e) && e.Unsupported {
		b.ownErrorf(d, "%v; refusing to load", err)
		return nil
	}
	b.errorf(d, "%s", msg)
	return nil
}

// The messages of the directives that compile a regex when PCRE refuses
// it (server/core.c dirsection, filesection, urlsection;
// modules/mappers/mod_alias.c add_alias_internal;
// modules/metadata/mod_setenvif.c add_setenvif_core, where the
// directive's name comes first).
const (
	msgSectionRegex = "Regex could not be compiled"
	msgAliasRegex   = "Regular expression could not be compiled."
)

// setEnvIfNames are the names mod_setenvif's messages start with
// (cmd->cmd->name, as the command table spells it).
var setEnvIfNames = map[string]string{
	"setenvif":           "SetEnvIf",
	"setenvifnocase":     "SetEnvIfNoCase",
	"browsermatch":       "BrowserMatch",
	"browsermatchnocase": "BrowserMatchNoCase",
}

// regexDefaultOptions evaluates RegexDefaultOptions (server/core.c
// set_regex_default_options, 2.4): GLOBAL_ONLY; each word is "none"
// (no flag), "+NAME" (add), "-NAME" (remove) or "NAME" (that flag
// alone), NAME one of ICASE, DOTALL, DOLLAR_ENDONLY without regard to
// case (EXTENDED is AP_REG_EXTENDED, 0, and so "unknown"). It changes
// the patterns compiled after it, in configuration order, and those of
// every .htaccess file.
func (b *builder) regexDefaultOptions(d *apacheconf.Directive) {
	if b.vhost != nil {
		b.errorf(d, "%s cannot occur within <VirtualHost> section", d.Name)
		return
	}
	o := b.reDefaults()
	for _, w := range d.Args {
		if strings.EqualFold(w, "none") {
			o = RegexDefaults{}
			continue
		}
		how := 0
		name := w
		switch {
		case strings.HasPrefix(w, "+"):
			how, name = 1, w[1:]
		case strings.HasPrefix(w, "-"):
			how, name = -1, w[1:]
		}
		var flag RegexDefaults
		switch {
		case regex.EqualFold(name, "ICASE"):
			flag.ICase = true
		case regex.EqualFold(name, "DOTALL"):
			flag.DotAll = true
		case regex.EqualFold(name, "DOLLAR_ENDONLY"):
			flag.DollarEndOnly = true
		default:
			b.errorf(d, "RegexDefaultOptions: option '%s' unknown", name)
			return
		}
		switch how {
		case 1:
			o.ICase, o.DotAll, o.DollarEndOnly = o.ICase || flag.ICase, o.DotAll || flag.DotAll, o.DollarEndOnly || flag.DollarEndOnly
		case -1:
			o.ICase, o.DotAll, o.DollarEndOnly = o.ICase && !flag.ICase, o.DotAll && !flag.DotAll, o.DollarEndOnly && !flag.DollarEndOnly
		default:
			o = flag
		}
	}
	b.reDefault = &o
	b.cfg.RegexDefaults = &o
}

// fnmatchTest is apr_fnmatch_test (build.go's section has a variable
// named regex).
func fnmatchTest(p string) bool {
	// Only "*", "?" and "[" start a wildcard: a path without them (most
	// are) is read three bytes at a time.
	if strings.IndexByte(p, '*') < 0 && strings.IndexByte(p, '?') < 0 && strings.IndexByte(p, '[') < 0 {
		return false
	}
	return regex.FnmatchTest(p)
}

// mayMatch is a match for the translator's questions ("can this section
// apply here?"), where an evaluation that does not finish counts as one.
func mayMatch(re *regex.Regexp, s string) bool {
	ok, err := re.MatchString(s)
	return ok || err != nil
}

// compileRegex is the RE2 compile the builder had before translate/regex,
// for callers not yet moved to b.compileRegex: it refuses what RE2
// cannot express, and matches runes, not bytes.
func compileRegex(expr string, icase bool) (*regexp.Regexp, error) {
	if icase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("regex %q cannot be evaluated by orderly: %v", expr, err)
	}
	return re, nil
}

package translate

import (
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// Values that a directive's own code in Apache refuses, after
// invoke_cmd has counted its arguments (gate.go): orderly refuses them
// with Apache's words where it knows them. The rest (IndexOptions,
// Header, RequestReadTimeout, ExtFilterDefine...) it does not check.

// badValue reports Apache's error for the values of the directive d of
// row info, "" where orderly knows of none: the check is the row's
// (valueCheckOf), kw its keywords.
func (b *builder) badValue(check valueCheck, info *directive.Info, kw *keywordCheck, d *apacheconf.Directive, where directive.Context) string {
	switch check {
	case checkKeywords:
		return badKeyword(kw, d)
	case checkRewrite:
		return b.rewriteValue(info, d, where) // rewrite.go
	case checkLDAP:
		return b.ldapValue(info, d) // ldapserver.go
	case checkFileETag:
		return fileETag(d.Args, b.tableVersion())
	case checkLanguagePriority:
		return forceLanguagePriority(d.Args)
	case checkDAV:
		if len(d.Args) == 1 {
			return b.davProvider(d.Args[0])
		}
	case checkLogLevel:
		return b.logLevel(d.Args)
	case checkFilters:
		return b.filterProviders(info, d)
	}
	return ""
}

// A valueCheck is which of badValue's checks the values of a directive
// get: its row of the table decides (valueCheckOf), and admit's cache
// keeps it with the row.
type valueCheck uint8

// The checks.
const (
	noValueCheck          valueCheck = iota
	checkKeywords                    // one of its keywords (badKeyword)
	checkRewrite                     // mod_rewrite's (rewrite.go)
	checkLDAP                        // mod_ldap's (ldapserver.go)
	checkFileETag                    // FileETag's keywords
	checkLanguagePriority            // ForceLanguagePriority's
	checkDAV                         // DAV's provider
	checkLogLevel                    // LogLevel's levels
	checkFilters                     // AddOutputFilterByType's providers
)

// valueCheckOf is the check of the values of a directive of row info,
// whose row of keywords is kw (keywordsOf).
func valueCheckOf(info *directive.Info, kw *keywordCheck) valueCheck {
	switch {
	case info == nil:
		return noValueCheck
	case kw != nil:
		return checkKeywords
	case info.Module == "rewrite_module":
		return checkRewrite
	case info.Module == "ldap_module":
		return checkLDAP
	case info.Module == "core_module" && info.Name == "FileETag":
		return checkFileETag
	case info.Module == "negotiation_module" && info.Name == "ForceLanguagePriority":
		return checkLanguagePriority
	case info.Module == "dav_module" && info.Name == "DAV":
		return checkDAV
	case info.Module == "core_module" && info.Name == "LogLevel":
		return checkLogLevel
	case info.Module == "filter_module" && info.Name == "AddOutputFilterByType":
		return checkFilters
	}
	return noValueCheck
}

// keywords are directives of one argument whose code in Apache takes
// only some words (any case, as ap_cstr_casecmp compares them), by lower
// name and module, with its message for another word; the same in 2.2.34
// and 2.4 where both know the directive.
var keywords = map[string]*keywordCheck{
	"acceptpathinfo":           {"core_module", []string{"on", "off", "default"}, "AcceptPathInfo must be set to on, off or default"},
	"allowencodedslashes":      {"core_module", []string{"on", "off", "nodecode"}, "AllowEncodedSlashes must be On, Off, or NoDecode"},
	"enablemmap":               {"core_module", []string{"on", "off"}, "parameter must be 'on' or 'off'"},
	"enablesendfile":           {"core_module", []string{"on", "off"}, "parameter must be 'on' or 'off'"},
	"protocolshonororder":      {"core_module", []string{"on", "off"}, "ProtocolsHonorOrder must be 'on' or 'off'"},
	"serversignature":          {"core_module", []string{"on", "off", "email"}, "ServerSignature: use one of: off | on | email"},
	"usecanonicalphysicalport": {"core_module", []string{"on", "off"}, "parameter must be 'on' or 'off'"},
	"xbithack":                 {"include_module", []string{"on", "off", "full"}, "XBitHack must be set to Off, On, or Full"},
}

// A keywordCheck is a row of keywords: the module whose directive it
// checks, the words it takes and the message for another.
type keywordCheck struct {
	module string
	words  []string
	msg    string
}

// keywordsOf returns the row of keywords of the directive of row info
// whose lower-case name is name, nil where it has none (info nil
// included).
func keywordsOf(info *directive.Info, name string) *keywordCheck {
	if k := keywords[name]; k != nil && info != nil && k.module == info.Module {
		return k
	}
	return nil
}

// badKeyword reports Apache's error for a directive whose row of
// keywords is k (keywordsOf; nil for none) given another word, ""
// otherwise. The count of arguments is checked before.
func badKeyword(k *keywordCheck, d *apacheconf.Directive) string {
	if k == nil || len(d.Args) != 1 {
		return ""
	}
	for _, w := range k.words {
		if equalFoldASCII(d.Args[0], w) {
			return ""
		}
	}
	return k.msg
}

// fileETag is core.c set_etag_bits: each word a keyword, with a + or -
// before it but for None and All; Digest is 2.4's.
func fileETag(args []string, v directive.Version) string {
	for _, w := range args {
		signed := strings.HasPrefix(w, "+") || strings.HasPrefix(w, "-")
		if signed {
			w = w[1:]
		}
		switch {
		case equalFoldASCII(w, "none"), equalFoldASCII(w, "all"):
			if signed {
				return "FileETag keyword '" + w + "' cannot be used with '+' or '-'"
			}
		case equalFoldASCII(w, "size"), equalFoldASCII(w, "lmtime"), equalFoldASCII(w, "mtime"),
			equalFoldASCII(w, "lastmodified"), equalFoldASCII(w, "inode"):
		case equalFoldASCII(w, "digest") && v == directive.V24:
		default:
			return "Unknown keyword '" + w + "' for FileETag directive"
		}
	}
	return ""
}

// forceLanguagePriority is mod_negotiation's set_force_priority, run for
// each word (ITERATE) from a directory configuration that has none set
// yet: a ForceLanguagePriority before it in the same section, which
// Apache adds to, is not seen.
func forceLanguagePriority(args []string) string {
	none, other := false, false
	for _, w := range args {
		if w == "" {
			break // ITERATE stops at an empty word
		}
		switch {
		case equalFoldASCII(w, "none"):
			if other {
				return "Cannot combine ForceLanguagePriority options with None"
			}
			none = true
		case equalFoldASCII(w, "prefer"), equalFoldASCII(w, "fallback"):
			if none {
				opt := "Fallback"
				if equalFoldASCII(w, "prefer") {
					opt = "Prefer"
				}
				return "Cannot combine ForceLanguagePriority options None and " + opt
			}
			other = true
		default:
			return "Invalid ForceLanguagePriority option " + w
		}
	}
	return ""
}

// rewriteOptions is mod_rewrite's cmd_rewriteoptions, run for each word
// (ITERATE).
func rewriteOptions(args []string, v directive.Version) string {
	known := []string{"inherit", "allowanyuri", "mergebase"}
	if v == directive.V24 {
		known = append(known, "inheritbefore", "inheritdown", "inheritdownbefore", "ignoreinherit",
			"allownoslash", "ignorecontextinfo", "legacyprefixdocroot", "unsafeprefixstat")
	}
next:
	for _, w := range args {
		if w == "" {
			break // ITERATE stops at an empty word
		}
		if len(w) >= 13 && equalFoldASCII(w[:13], "maxredirects=") {
			continue // ignored, with a warning
		}
		for _, k := range known {
			if equalFoldASCII(w, k) {
				continue next
			}
		}
		return "RewriteOptions: unknown option '" + w + "'"
	}
	return ""
}

// davProvider is mod_dav's dav_cmd_dav: On is the provider "filesystem",
// which mod_dav_fs registers (the name compared exactly, as
// ap_lookup_provider does); Off none.
func (b *builder) davProvider(arg string) string {
	name := arg
	switch {
	case equalFoldASCII(arg, "off"):
		return ""
	case equalFoldASCII(arg, "on"):
		name = "filesystem"
	}
	if name == "filesystem" && b.loaded("dav_fs_module") {
		return ""
	}
	return "Unknown DAV provider: " + name
}

// logLevels are the levels of ap_parse_log_level (server/log.c), the
// trace levels 2.4's.
var logLevels = []string{"emerg", "alert", "crit", "error", "warn", "notice", "info", "debug",
	"trace1", "trace2", "trace3", "trace4", "trace5", "trace6", "trace7", "trace8"}

// logLevel is core.c set_loglevel. 2.4 takes each word (ITERATE) as a
// level, or as a loaded module's level: "rewrite:trace3", by the
// module's identifier with or without "_module" or by its source file
// ("mod_rewrite.c"), compared exactly. 2.2 takes the first word of its
// one argument as a level, the trace levels unknown.
func (b *builder) logLevel(args []string) string {
	if b.tableVersion() == directive.V22 {
		if len(args) == 1 {
			if w := strings.Fields(args[0]); len(w) > 0 && oneOfFold(w[0], logLevels[:8]) {
				return ""
			}
		}
		return "LogLevel requires level keyword: one of emerg/alert/crit/error/warn/notice/info/debug"
	}
	const bad = "Log level keyword must be one of emerg/alert/crit/error/warn/notice/info/debug/trace1/.../trace8"
	for _, w := range args {
		if w == "" {
			break // ITERATE stops at an empty word
		}
		i := strings.LastIndexByte(w, ':')
		if i < 0 {
			if !oneOfFold(w, logLevels) {
				return bad
			}
			continue
		}
		mod, level := w[:i], w[i+1:]
		switch {
		case level == "":
			return "Module specifier '" + mod + "' must be followed by a log level keyword"
		case !oneOfFold(level, logLevels):
			return mod + ":" + level + ": " + bad
		case !b.moduleNamed(mod) && !b.moduleNamed(mod+"_module"):
			return "Cannot find module " + mod
		}
	}
	return ""
}

// moduleNamed reports whether a loaded module has the identifier or the
// source file name name (core.c find_module).
func (b *builder) moduleNamed(name string) bool {
	id := name
	switch name {
	case "core.c":
		id = "core_module"
	case "http_core.c":
		id = "http_module"
	case "event.c", "prefork.c", "worker.c":
		id = "mpm_" + strings.TrimSuffix(name, ".c") + "_module"
	default:
		if x, ok := strings.CutPrefix(name, "mod_"); ok {
			if x, ok := strings.CutSuffix(x, ".c"); ok && x != "" {
				id = x + "_module"
			}
		}
	}
	return strings.HasSuffix(id, "_module") && b.loaded(id)
}

// oneOfFold reports whether s is one of words under ASCII case folding.
func oneOfFold(s string, words []string) bool {
	for _, w := range words {
		if equalFoldASCII(s, w) {
			return true
		}
	}
	return false
}

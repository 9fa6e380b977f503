package translate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// The gate: every directive the builder meets passes through admit first,
// which looks it up in the directive table (translate/directive) as
// Apache's configuration reader does before it runs a directive
// (server/config.c ap_walk_config_sub and invoke_cmd). A name the version
// does not know, or of a module the configuration does not load, is
// "Invalid command"; one whose req_override the context does not allow is
// "not allowed here"; one with a number of arguments its args_how does
// not take is Apache's "takes one argument" and the like, and one with a
// value its own code refuses, where orderly knows the check (values.go),
// is that code's error. Then, in the builder's default cases, a
// directive orderly does not evaluate and that can refuse, redirect,
// limit or change a request is refused (notFaithful), never ignored.

// tableVersion is the directive table's version for the semantics.
func (b *builder) tableVersion() directive.Version {
	if b.cfg.Semantics == Legacy22 {
		return directive.V22
	}
	return directive.V24
}

// loaded reports whether the module with identifier m is loaded. Without
// a list of modules (a model built from directives alone) every module
// counts as loaded; the names are still checked.
func (b *builder) loaded(m string) bool {
	mods := b.opt.Modules
	if b.htaccess != nil {
		mods = b.htaccess.modules
	}
	if mods == nil {
		return true
	}
	if mods[m] {
		return true
	}
	return false
}

// admit looks d up in the directive table for the context where it was
// met (parent is the enclosing section as written, "" at the top level
// of a file) and reports what Apache would: it returns the row, or nil
// after reporting the error (or, where the .htaccess file's
// AllowOverride says Nonfatal, after skipping the directive as Apache
// does with a warning).
func (b *builder) admit(d *apacheconf.Directive, where directive.Context, parent string) *directive.Info {
	var miss admitSlot
	row := b.find(d, &miss)
	info := row.info
	if info == nil {
		b.unknownDirective(d, where, row.known)
		return nil
	}
	var allowed directive.Override
	if b.htaccess != nil {
		allowed = directive.Override(b.htaccess.override)
	}
	if !info.Where.Allows(where, allowed) && !b.listed(info.Name) {
		b.notAllowed(d, info, where, parent)
		return nil
	}
	// Then invoke_cmd takes the arguments as the directive's args_how
	// says: a wrong number is a syntax error, which Nonfatal= does not
	// cover (it covers the two errors above only), nor the directive's
	// own errors for its values. A section's own reading of its
	// arguments is the loader's.
	if !d.IsSection() {
		if msg := directive.CheckArgs(info, b.tableVersion(), d.Args); msg != "" {
			b.errorf(d, "%s", msg)
			return nil
		}
		if row.check != noValueCheck {
			if msg := b.badValue(row.check, info, row.kw, d, where); msg != "" {
				b.errorf(d, "%s", msg)
				return nil
			}
		}
	}
	return info
}

// unknownDirective is admit's answer for a directive the table has no
// row of for the version and the modules loaded: known says whether the
// version knows its name from a module not loaded.
func (b *builder) unknownDirective(d *apacheconf.Directive, where directive.Context, known bool) {
	name := d.Name
	if d.IsSection() {
		name = "<" + d.Name
	}
	if b.htaccess != nil && b.htaccess.nonfatal&2 != 0 && where != directive.Authz {
		return // AH02296: Unknown directive ... (a warning)
	}
	msg := directive.InvalidCommand(name)
	other, otherName := directive.V24, "2.4"
	if b.tableVersion() == directive.V24 {
		other, otherName = directive.V22, "2.2"
	}
	switch {
	case !known && directive.Known(name, other) && other == directive.V24:
		msg += " (orderly: " + displayName(d) + " is an Apache 2.4 directive, unknown to 2.2; with 2.4 directives in the configuration use semantics \"2.4-compat\")"
	case !known && directive.Known(name, other):
		msg += " (orderly: " + displayName(d) + " is an Apache " + otherName + " directive that 2.4 removed; with semantics \"2.4-compat\" the configuration must be valid 2.4)"
	case known:
		msg += " (orderly: its module is not loaded"
		if b.fragment() {
			msg += "; a configuration without LoadModule lines is read with Debian's default modules, and legacy.modules names others"
		}
		msg += ")"
	}
	b.errorf(d, "%s", msg)
}

// notAllowed is admit's answer for a directive of row info that the
// context does not allow.
func (b *builder) notAllowed(d *apacheconf.Directive, info *directive.Info, where directive.Context, parent string) {
	if b.htaccess != nil && b.htaccess.nonfatal&1 != 0 && where != directive.Authz {
		// AH02295: ... in .htaccess forbidden by AllowOverride. The
		// module's configuration for the file was made all the same
		// (ap_walk_config_sub sets the config vectors before
		// invoke_cmd refuses), which matters where it does not merge.
		b.skipped = info
		return
	}
	if parent != "" && b.cfg.Semantics != Legacy22 {
		b.errorf(d, "%s not allowed in <%s> context", info.Name, parent)
	} else {
		b.errorf(d, "%s not allowed here", info.Name)
	}
}

// admitSets is the number of sets of an admitCache, 1<<admitSetBits.
const (
	admitSetBits = 7
	admitSets    = 1 << admitSetBits
)

// An admitCache holds the directive table's answers (directive.Find)
// for the names the builders of one goroutine meet, with the keywords
// row of each (badKeyword): the table is a map, asked once per
// directive otherwise, and a configuration of many virtual hosts
// repeats a few names thousands of times. A name has its set of two
// places (admitSetOf), which hold the last two names met of those
// that fall on it: looking one up costs a comparison of names or two,
// and a miss asks the table.
type admitCache [admitSets][2]admitSlot

// An admitSlot is one name's answer in an admitCache.
type admitSlot struct {
	name    string // lower case
	section bool
	known   bool
	check   valueCheck
	info    *directive.Info
	kw      *keywordCheck // its row of keywords, for info's module; nil if none
}

// admitSetOf is the set of a name (lower case) in an admitCache: of
// its length and three of its letters, mixed so that every one of them
// counts.
func admitSetOf(name string, section bool) int {
	h := uint32(len(name))
	if n := len(name); n > 0 {
		h |= uint32(name[0])<<8 | uint32(name[n/2])<<16 | uint32(name[n-1])<<24
	}
	if section {
		h = ^h
	}
	return int(h * 0x9e3779b1 >> (32 - admitSetBits))
}

// find returns the row of the directive table for d that the builder's
// version and modules give, whether the version knows its name at all
// (directive.Find), its row of keywords and the check of its values
// (valueCheckOf): from the builder's buildCache where it has one, else
// in miss, which the caller provides.
func (b *builder) find(d *apacheconf.Directive, miss *admitSlot) *admitSlot {
	// The table is looked up by the lower-case name, which the parser
	// has worked out: many names are not written as their module spells
	// them ("Allow" for "allow").
	name, section := d.LowerName(), d.IsSection()
	var set *[2]admitSlot
	if b.cache != nil {
		set = &b.cache.admits[admitSetOf(name, section)]
		for i := range set {
			if s := &set[i]; s.name == name && s.section == section {
				return s
			}
		}
	}
	key := name
	if section {
		key = "<" + name
	}
	info, known := directive.Find(key, b.tableVersion(), b.loaded)
	kw := keywordsOf(info, name)
	*miss = admitSlot{name: name, section: section, known: known, check: valueCheckOf(info, kw), info: info, kw: kw}
	if set == nil {
		return miss
	}
	// The newer first: the older of the two makes room.
	set[1], set[0] = set[0], *miss
	return &set[0]
}

// readerAdmit is apacheconf.Options.Admit for an .htaccess file: the
// sections and macros the reader executes pass AllowOverride as every
// other directive does (their req_override is OR_ALL, so they fail only
// where no category is allowed: AllowOverride never set under 2.4, or
// None with Nonfatal=, or AllowOverrideList alone).
func (b *builder) readerAdmit(d *apacheconf.Directive) (skip bool, msg string) {
	name := d.Name
	if d.IsSection() {
		name = "<" + d.Name
	}
	info, _ := directive.Find(name, b.tableVersion(), b.loaded)
	if info == nil || info.Where.Allows(directive.Htaccess, directive.Override(b.htaccess.override)) || b.listed(info.Name) {
		return false, ""
	}
	if b.htaccess.nonfatal&1 != 0 {
		return true, ""
	}
	return false, info.Name + " not allowed here"
}

// listed reports whether the .htaccess file being read may hold the
// directive name whatever AllowOverride says (AllowOverrideList).
func (b *builder) listed(name string) bool {
	return b.htaccess != nil && slices.Contains(b.htaccess.list, strings.ToLower(name))
}

// ownErrorf reports a refusal of orderly's own, where Apache would have
// gone on (apacheconf.Error.Own).
func (b *builder) ownErrorf(d *apacheconf.Directive, format string, args ...any) {
	b.errs = append(b.errs, &apacheconf.Error{Pos: d.Pos, Msg: fmt.Sprintf(format, args...), Own: true})
}

// fragment reports whether the configuration was read as a fragment,
// with the default modules assumed (no LoadModule line of its own).
func (b *builder) fragment() bool {
	mods := b.opt.Modules
	return mods != nil && mods["reqtimeout_module"] && mods["status_module"] && mods["negotiation_module"]
}

// effectWhy says what a directive of effect e can do that orderly does
// not evaluate.
var effectWhy = map[directive.Effect]string{
	directive.Decides: "it takes part in the access decision",
	directive.Maps:    "it changes which file a URL maps to, or answers with a redirect or an error",
	directive.Limits:  "it refuses requests by their size, form or method",
	directive.Changes: "it changes what access control sees of a request",
}

// unevaluated handles a directive that no case of the builder evaluates:
// inert ones are left to the backend; one that can refuse, redirect,
// limit or change a request is refused (notFaithful), with the reason
// unfaithful gives for it, or its effect's.
func (b *builder) unevaluated(d *apacheconf.Directive, info *directive.Info) {
	if info == nil {
		return
	}
	name := d.LowerName()
	if why := unfaithful[name]; why != "" {
		if !offArg(d) {
			b.notFaithful(d, why)
		}
		return
	}
	switch info.Effect {
	case directive.Inert, directive.Scope:
		return
	case directive.Reads:
		switch name {
		case "define", "undefine", "loadfile", "undefmacro":
			// Executed by the loader as it read them (LoadFile loads a
			// library, and nothing else).
		case "port":
			b.errorf(d, "Port was replaced with Listen in Apache 2.0")
		default:
			// A preprocessor section or a Use the loader could not
			// evaluate.
			b.ownErrorf(d, "%s: orderly cannot evaluate it here as Apache does while it reads its configuration", displayName(d))
		}
		return
	}
	if harmless(d, name) {
		return
	}
	b.notFaithful(d, "orderly does not evaluate it, and "+effectWhy[info.Effect])
}

// displayName is the directive's name as written, a section's with "<".
func displayName(d *apacheconf.Directive) string {
	if d.IsSection() {
		return "<" + d.Name
	}
	return d.Name
}

// harmless reports the arguments with which a directive that can change
// a request does nothing orderly must evaluate: switched off, or set to
// the value Apache has when it is not set at all.
func harmless(d *apacheconf.Directive, name string) bool {
	arg := ""
	if len(d.Args) == 1 {
		arg = strings.ToLower(d.Args[0])
	}
	switch name {
	case "checkspelling", "checkcaseonly", "proxyrequests", "proxyexpressenable", "hostnamelookups":
		return arg == "off"
	case "directoryslash":
		return arg == "on"
	case "acceptpathinfo":
		return arg == "default" || arg == "on" // Off refuses path info (404); On and Default leave it to the handler, as the backend does
	case "errordocument":
		// A local document or a message changes the body of a refusal,
		// not its status; a full URL turns it into a redirect.
		return len(d.Args) == 2 && !strings.Contains(d.Args[1], "://")
	}
	return false
}

// opaque checks the contents of a section orderly does not model (<If>,
// <Proxy>): every directive in it must be one Apache knows there, and
// none may refuse, redirect, limit or change a request unless the
// section can never apply to a request orderly decides (applies false).
func (b *builder) opaque(d *apacheconf.Directive, why string, applies bool) {
	refused := false
	var walk func(ds []*apacheconf.Directive, parent string)
	walk = func(ds []*apacheconf.Directive, parent string) {
		for _, c := range ds {
			info := b.admit(c, ctxOf(b, nil), parent)
			if info == nil {
				continue
			}
			if applies && !refused && info.Effect >= directive.Decides && !harmless(c, c.LowerName()) {
				refused = true
				b.notFaithful(d, why+" ("+displayName(c)+" at "+c.Pos.String()+")")
			}
			if c.IsSection() {
				walk(c.Block, c.Name)
			}
		}
	}
	walk(d.Block, d.Name)
}

// ctxOf is the directive context inside a section of b (ctx, where
// known, says whether inside a Require container).
func ctxOf(b *builder, ctx *dirCtx) directive.Context {
	if ctx != nil && ctx.container != nil {
		return directive.Authz
	}
	if b.htaccess != nil {
		return directive.Htaccess
	}
	return directive.Dir
}

// ifSection handles <If>, <ElseIf> and <Else>, whose expressions orderly
// does not evaluate: access rules in them are errors (forwarding would
// drop them), and any other directive that can refuse, redirect, limit or
// change a request is refused as not faithful.
func (b *builder) ifSection(d *apacheconf.Directive) {
	if MentionsAccess(d) {
		b.errorf(d, "access rules inside <%s> cannot be evaluated by orderly; refusing to load", d.Name)
		return
	}
	b.opaque(d, "<"+d.Name+"> expressions are not evaluated by orderly, and a directive inside can refuse, redirect, limit or change a request", true)
}

// nameBased marks the virtual hosts chosen by the Host header. In 2.4
// every address shared by several hosts is name-based. In 2.2 only the
// addresses NameVirtualHost names are (server/vhost.c): an address:port
// of several hosts that no NameVirtualHost names is served by its first
// host whatever the Host header says. A host whose address matches a
// NameVirtualHost address only in part (the same address with another
// port form), where 2.2 warns that the results are undefined, is refused.
func (b *builder) nameBased() {
	for _, vb := range b.main.vhosts {
		v := vb.vhost
		if b.cfg.Semantics != Legacy22 {
			v.NameBased = true
			continue
		}
		for _, a := range v.Addrs {
			for _, n := range b.main.nameVHosts {
				sameHost := a.Wildcard == n.addr.Wildcard && a.IP == n.addr.IP
				switch {
				case sameHost && a.Port == n.addr.Port:
					v.NameBased = true
				case sameHost && (a.Port == 0) != (n.addr.Port == 0):
					b.notFaithful(vb.directive, "its address and the NameVirtualHost at "+n.d.Pos.String()+" differ only in their port form, for which Apache 2.2 says the results are undefined")
				}
			}
		}
	}
}

// markOwn marks the errors that are refusals of orderly's own (a message
// of orderly's that is not an Apache message with orderly's hint): where
// an .htaccess file fails only for them, Apache would have served.
func markOwn(errs apacheconf.ErrorList) {
	for _, e := range errs {
		if strings.Contains(e.Msg, "orderly") && !strings.Contains(e.Msg, "(orderly: ") {
			e.Own = true
		}
	}
}

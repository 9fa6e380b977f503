package convert

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// edit replaces lines [from, to] of a file (1-based) with text; an edit
// with no text deletes them.
type edit struct {
	from, to int
	text     []string
	// withCompat is written after text where the output keeps
	// mod_access_compat loaded (compatReset).
	withCompat []string
}

// compatReset is what a section translate rewrites says where
// mod_access_compat stays loaded, if its legacy lines gave it an
// Order/Allow/Deny state of its own (they replace the inherited one):
// without them it would inherit the state they replaced, whose Satisfy
// Any and Allow (of an .htaccess file left as it is) would grant past its
// Require; Satisfy All starts a fresh one that admits everybody and
// leaves the decision to Require. A section without such lines inherits
// the state in the legacy and in the translation alike. indent is the
// section's.
//
// It is written inside <IfModule mod_access_compat.c>: a 2.2
// configuration that loads no mod_access_compat of its own (2.2 had
// mod_authz_host) keeps none, and Satisfy would then stop Apache.
func compatReset(indent string) []string {
	return indented(&compatResets, compatResetLines, indent)
}

var (
	compatResetLines = []string{
		"# orderly DIR-10: mod_access_compat stays loaded: what this section inherits from it must not decide here",
		"<IfModule mod_access_compat.c>",
		"    Satisfy All",
		"</IfModule>",
	}
	compatResets = indentations(compatResetLines)
	// translatedLine heads a section's translation (convertBlock).
	translatedLine = []string{"# orderly DIR-10: Order/Allow/Deny/Satisfy/Require translated to 2.4 Require"}
	translateds    = indentations(translatedLine)
)

// spaces are the indentations of up to len(spaces) columns, sliced
// rather than made for each line.
const spaces = "                                "

// indentAt is the indentation of a line whose text starts at column col.
func indentAt(col int) string {
	n := max(col-1, 0)
	if n <= len(spaces) {
		return spaces[:n]
	}
	return strings.Repeat(" ", n)
}

// indentations are lines indented by each number of spaces up to
// len(spaces), for indented.
func indentations(lines []string) (at [len(spaces) + 1][]string) {
	for n := range at {
		at[n] = indented(nil, lines, spaces[:n])
	}
	return at
}

// indented returns lines, each prefixed with indent: from at (made by
// indentations, shared by every section so indented, never written to)
// where indent is spaces alone, made anew otherwise.
func indented(at *[len(spaces) + 1][]string, lines []string, indent string) []string {
	if at != nil && len(indent) <= len(spaces) && indent == spaces[:len(indent)] {
		return at[len(indent)]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = indent + l
	}
	return out
}

// convertSection writes the translation of one section.
func convertSection(cfg *translate.Config, s *translate.Section) ([]edit, string) {
	return convertSectionAs(cfg, s, "")
}

// convertSectionAs is convertSection; a section given a reason (forced)
// is left for review with it, whatever it inherits.
func convertSectionAs(cfg *translate.Config, s *translate.Section, forced string) ([]edit, string) {
	var block []*apacheconf.Directive
	if d := s.Directive(); d != nil {
		block = d.Block
	}
	return convertBlock(cfg, s, block, forced)
}

// convertBlock is convertSectionAs for the section s written as block (an
// .htaccess file's directives, which no directive holds).
func convertBlock(cfg *translate.Config, s *translate.Section, block []*apacheconf.Directive, forced string) ([]edit, string) {
	var buf [8]*apacheconf.Directive // most sections have fewer access lines
	access := buf[:0]
	runs := 0 // of access lines that follow each other: an edit each
	for _, d := range block {
		if isAccessLine(d) {
			if len(access) == 0 || d.Pos.Line != max(access[len(access)-1].EndLine, access[len(access)-1].Pos.Line)+1 {
				runs++
			}
			access = append(access, d)
		}
	}
	// A 2.2 section with no access line but settings of the
	// authorization modules (converts): the translation goes after them.
	var after *apacheconf.Directive
	if len(access) == 0 {
		if after = chain22Anchor(cfg, s, block); after == nil {
			return nil, ""
		}
	}
	first := after
	if first == nil {
		first = access[0]
	}
	indent := indentAt(first.Pos.Col)
	var compat, authz *translate.Layers
	why := forced
	if why == "" {
		compat, authz, why = translate.Inherited(cfg, s)
	}
	if !s.Conf.HasAccessRules() && why == "" && len(authz.Req22) == 0 {
		return nil, "" // settings alone, no Require line in force: nothing they change
	}
	if why == "" {
		why = ldapReset22(cfg, s)
	}
	if why == "" {
		why = sslSatisfyAny(cfg, s, compat) // ssl.go
	}
	if why == "" && cfg.Semantics == translate.Legacy22 {
		why = fileGroup22(cfg, authz) // render.go
	}
	if why == "" && cfg.Semantics == translate.Compat24 && (authz.Authz == nil || authz.Authz.Root == nil) && authTypeSet(cfg, s) {
		why = "AuthType with no Require in force: Apache 2.4 answers 500 (AH01627) here; decide what was meant"
	}
	var extra []edit // after the section: filesCombos
	switch {
	case why != "":
	case translate.IsFiles(s):
		extra, why = filesCombos(cfg, s, compat, authz)
	case s.Kind == translate.KindLocation && !s.Fnmatch, s.Kind == translate.KindLocationMatch:
		extra, why = locationCombos(cfg, s, compat, authz)
	}
	var text []string
	if why != "" && forced == "" && locationMergesAnd(cfg, s) {
		// Whatever merges before this <Location>, Apache decided what it
		// inherited AND its own Require: 2.4's AuthMerging And.
		text = append(text, indent+"# orderly DIR-10: Require translated to 2.4 Require, combined with what this section inherits (Satisfy All)")
		text = append(text, indent+"AuthMerging And")
		text = append(text, renderOwnRequire(cfg, s.Conf.Authz, indent)...)
		why = ""
	} else if why != "" {
		// Fail closed: the section refuses every request until a person
		// writes its Require (the legacy lines stay, commented).
		text = append(text, indent+"# orderly DIR-10: NEEDS REVIEW, refused until translated by hand: "+why)
		for _, d := range access {
			text = append(text, indent+"# "+d.Name+" "+d.Raw)
		}
		text = append(text, indent+"Require all denied")
	} else {
		// The directives written inside a Require container that are not
		// access lines (AuthName, AuthType: mod_authz_core reads them as
		// the section's own) stay, before the translation.
		for _, d := range access {
			for _, h := range inContainers(d) {
				text = append(text, indent+h.Name+" "+h.Raw)
			}
		}
		rendered := renderScope(cfg, compat, authz, indent)
		if len(text) == 0 {
			// The heading goes before the lines rendered, in their list
			// where it has room.
			text = slices.Insert(rendered, 0, indented(&translateds, translatedLine, indent)...)
		} else {
			text = append(append(text, indented(&translateds, translatedLine, indent)...), rendered...)
		}
	}
	es := make([]edit, 0, runs+len(extra)+1)
	if after != nil {
		end := max(after.EndLine, after.Pos.Line)
		es = append(es, edit{from: end + 1, to: end, text: text})
	}
	for i, d := range access {
		e := edit{from: d.Pos.Line, to: max(d.EndLine, d.Pos.Line)}
		if i > 0 && e.from == es[len(es)-1].to+1 {
			// Right after the access line before it: the two go in one
			// edit (no other edit can fall between them).
			es[len(es)-1].to = e.to
			continue
		}
		if i == 0 {
			e.text = text
			if s.Conf.Compat != nil {
				// Its Order/Allow/Deny (or, 2.4, Satisfy) replaced the
				// state it inherited; without them it would inherit it.
				e.withCompat = compatReset(indent)
			}
		}
		es = append(es, e)
	}
	return append(es, extra...), why
}

// locationMergesAnd reports whether a <Location> whose inheritance depends
// on the request (<Files> or <DirectoryMatch> sections merge before it)
// can still be translated: under 2.4-compat it only adds Require lines,
// and nothing it may inherit from has a Require or Satisfy Any, so every
// request was decided as the inherited Order/Allow/Deny AND this
// section's Require, which AuthMerging And writes in 2.4 over the
// translations of those sections.
func locationMergesAnd(cfg *translate.Config, s *translate.Section) bool {
	own := s.Conf
	if s.Kind != translate.KindLocation || s.Fnmatch || s.Regex != nil || cfg.Semantics != translate.Compat24 ||
		own.Compat != nil || own.Authz == nil || own.Authz.Root == nil || own.Authz.Merge == translate.MergeAnd || own.Authz.Merge == translate.MergeOr {
		return false
	}
	plain := func(c *translate.DirConf) bool {
		if c.Authz != nil || c.Requires22 != nil {
			return false
		}
		if c.Compat != nil {
			for _, v := range c.Compat.Satisfy {
				if v == policy.SatisfyAny {
					return false
				}
			}
		}
		return true
	}
	// The directories its URLs map to, and any below or matching by
	// pattern; every <Files> and <DirectoryMatch>; earlier <Location>s.
	file := filepath.Join(cfg.DocumentRoot, s.Path) + "/"
	var before []*translate.Section
	for _, d := range cfg.Dirs {
		if d.Depth == 0 || d.Fnmatch || strings.HasPrefix(file, d.Path) || strings.HasPrefix(d.Path, file) {
			before = append(before, d)
			before = append(before, d.Conf.Files...)
		}
	}
	before = append(before, cfg.DirMatches...)
	before = append(before, cfg.Files...)
	for _, l := range cfg.Locations {
		if l == s {
			break
		}
		before = append(before, l)
	}
	for _, b := range before {
		if !plain(b.Conf) {
			return false
		}
	}
	return plain(cfg.Defaults) || cfg.Defaults == nil
}

// renderOwnRequire writes a section's own Require tree, for AuthMerging.
func renderOwnRequire(cfg *translate.Config, a *translate.AuthzSlot, indent string) []string {
	authz := &translate.Layers{Authz: a}
	classes := methodClasses(cfg, &translate.Layers{}, authz)
	var out []string
	for _, cl := range classes {
		r := forMethod(a.Root, cl.rep)
		if r == nil {
			r = &policy.Node{Kind: policy.Leaf, Provider: policy.ProvAllGranted, Methods: policy.AllMethods}
		}
		if len(classes) == 1 {
			return policy.Render(r, indent)
		}
		open, close := "<Limit "+strings.Join(cl.names, " ")+">", "</Limit>"
		if cl.rest {
			open, close = "<LimitExcept "+strings.Join(cl.except, " ")+">", "</LimitExcept>"
		}
		out = append(out, indent+open)
		out = append(out, policy.Render(r, indent+"    ")...)
		out = append(out, indent+close)
	}
	return out
}

// inContainers are the directives inside the Require container d (and
// the <Limit> and containers in it) that are not access lines: they
// configure the section the container is in.
func inContainers(d *apacheconf.Directive) []*apacheconf.Directive {
	switch d.LowerName() {
	case "requireall", "requireany", "requirenone", "limit", "limitexcept":
	default:
		return nil
	}
	var out []*apacheconf.Directive
	for _, c := range d.Block {
		switch n := c.LowerName(); {
		case n == "requireall" || n == "requireany" || n == "requirenone" || n == "limit" || n == "limitexcept":
			out = append(out, inContainers(c)...)
		case !accessName(n):
			out = append(out, c)
		}
	}
	return out
}

func onlyAccess(d *apacheconf.Directive) bool {
	for _, c := range d.Block {
		if !accessName(c.LowerName()) {
			return false
		}
	}
	return true
}

// authTypeSet reports whether an AuthType (not None) is in force in s.
func authTypeSet(cfg *translate.Config, s *translate.Section) bool {
	chain, _ := translate.InheritedChain(cfg, s)
	return authTypeIn(append(chain, s))
}

// authTypeIn reports whether an AuthType (not None) is in force after
// secs merge, in this order.
func authTypeIn(secs []*translate.Section) bool {
	set := false
	for _, a := range secs {
		if a.Conf.AuthType != nil {
			set = *a.Conf.AuthType != ""
		}
	}
	return set
}

// authTypeOnly fails closed a section that sets an AuthType and no access
// rule, where no Require is in force (2.4-compat): Apache answered 500
// (AH01627) there, and the Require the translation gives the sections
// before it would let the request through. It writes Require all denied
// after the AuthType line.
func authTypeOnly(cfg *translate.Config, s *translate.Section) ([]edit, string) {
	return authTypeOnlyAs(cfg, s, "")
}

// authTypeOnlyAs is authTypeOnly; a section given a reason (forced) is
// refused with it.
func authTypeOnlyAs(cfg *translate.Config, s *translate.Section, forced string) ([]edit, string) {
	if cfg.Semantics != translate.Compat24 || *s.Conf.AuthType == "" {
		return nil, ""
	}
	why := forced
	if why == "" {
		var authz *translate.Layers
		_, authz, why = translate.Inherited(cfg, s)
		if why == "" && authz.Authz != nil && authz.Authz.Root != nil {
			return nil, "" // a Require is in force
		}
	}
	if why == "" {
		why = "AuthType with no Require in force: Apache 2.4 answers 500 (AH01627) here; decide what was meant"
	}
	var at *apacheconf.Directive
	for _, d := range s.Directive().Block {
		if d.LowerName() == "authtype" {
			at = d
		}
	}
	if at == nil {
		return nil, why // inside a container: the section's review says so
	}
	indent := indentAt(at.Pos.Col)
	end := max(at.EndLine, at.Pos.Line)
	return []edit{{from: end + 1, to: end, text: []string{
		indent + "# orderly DIR-10: NEEDS REVIEW, refused until translated by hand: " + why,
		indent + "Require all denied"}}}, why
}

// chain22Names are the directives whose lines make a 2.2 section one the
// access translation writes with no access line of its own
// (translate.DirConf.SetsChain22).
var chain22Names = map[string]bool{
	"authgroupfile": true, "authzgroupfileauthoritative": true, "authzuserauthoritative": true,
	"authdbmgroupfile": true, "authzdbmtype": true, "authzdbmauthoritative": true, "authzldapauthoritative": true,
	"authzownerauthoritative": true,
}

// chain22Anchor is the last line of block, in a 2.2 section that sets what
// 2.2's authorization modules read, after which the translation of the
// Require lines in force goes; nil for a section that sets none (or only
// inside a container, where the section's review says so).
func chain22Anchor(cfg *translate.Config, s *translate.Section, block []*apacheconf.Directive) *apacheconf.Directive {
	if cfg.Semantics != translate.Legacy22 || !s.Conf.SetsChain22() {
		return nil
	}
	var at *apacheconf.Directive
	for _, d := range block {
		if n := d.LowerName(); chain22Names[n] || strings.HasPrefix(n, "authldap") {
			at = d
		}
	}
	return at
}

// ldapReset22 is why a 2.2 section cannot be translated whose only
// mod_authnz_ldap line is AuthzLDAPAuthoritative under a section with
// mod_authnz_ldap lines: the module has no merger, so in 2.2 the line
// gives the section a configuration without AuthLDAPURL (authentication
// by LDAP fails there, with a 500, and the ldap-* lines are declined); in
// 2.4, without the line, the section inherits the enclosing one's.
func ldapReset22(cfg *translate.Config, s *translate.Section) string {
	d := s.Conf.LDAP
	if d == nil {
		return ""
	}
	for _, l := range d.Lines {
		if !strings.EqualFold(l.Name, "AuthzLDAPAuthoritative") {
			return ""
		}
	}
	chain, why := translate.InheritedChain(cfg, s)
	if why == "" && !slices.ContainsFunc(chain, func(a *translate.Section) bool { return a.Conf.LDAP != nil }) {
		return "" // the defaults above it too: 2.4 has them without the line
	}
	return "AuthzLDAPAuthoritative is this section's only mod_authnz_ldap line: in 2.2 it leaves the section without AuthLDAPURL (the module has no merger), in 2.4 without it the section inherits the enclosing configuration; write the LDAP configuration this section needs"
}

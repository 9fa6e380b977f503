package convert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// A <Files> or <FilesMatch> section merges after the <Files> sections
// before it that match the same file name: Apache's file walk merges
// every one that matches, in configuration order (the main server's,
// then those of the <Directory> sections and .htaccess files that apply,
// in their merge order). What a section inherits from those depends on
// the name. Whether two sections can match one name at all is decided
// (regex.Overlap); where they can, each combination of earlier sections
// a name may match is merged as Apache merges it, and where that gives
// another answer than the section alone, the translation adds, after the
// section, a <FilesMatch> for exactly those names with their answer. In
// 2.4 (AuthMerging Off) a later section's Require replaces an earlier
// one's, so each name is decided by the last section it matches.

// maxFilesBefore bounds the earlier <Files> sections a section is
// combined with (2^n combinations).
const maxFilesBefore = 6

// filesNames is the set of names s matches.
func filesNames(s *translate.Section) regex.Names {
	switch {
	case s.Regex != nil:
		return s.Regex.Names()
	case s.Fnmatch:
		return regex.GlobNames(s.Path, regex.FnmPathname)
	}
	return regex.LiteralNames(s.Path)
}

// filesBefore lists the <Files> sections that merge before s wherever s
// applies, in merge order: the server's, then those nested in the
// sections of its chain (the <Directory> sections and .htaccess files
// that merge before it), as core concatenates them.
func filesBefore(cfg *translate.Config, s *translate.Section, chain []*translate.Section) []*translate.Section {
	var out []*translate.Section
	for _, o := range cfg.Files {
		if o == s {
			return out
		}
		out = append(out, o)
	}
	for _, d := range chain {
		for _, o := range d.Conf.Files {
			if o == s {
				return out
			}
			out = append(out, o)
		}
	}
	return out
}

// filesCombos returns the <FilesMatch> sections to write after s for the
// names it shares with earlier <Files> sections, where Apache's merge
// gives them another answer than s alone; or why that cannot be written.
// compat and authz are what s inherits (translate.Inherited).
func filesCombos(cfg *translate.Config, s *translate.Section, compat, authz *translate.Layers) ([]edit, string) {
	if translate.SelfDenies(cfg, s) {
		return nil, "" // refuses everyone, whatever merged before
	}
	chain, why := translate.InheritedChain(cfg, s)
	if why != "" {
		return nil, why
	}
	var before []*translate.Section
	own := filesNames(s)
	for _, o := range filesBefore(cfg, s, chain) {
		if mergesAccess(cfg, o) && regex.Overlap(filesNames(o), own) {
			before = append(before, o)
		}
	}
	indent := indentAt(s.Directive().Pos.Col)
	var text []string
	why = nameCombos(cfg, s, chain, before, compat, authz, indent+"    ", func(in, out []*translate.Section, with string, tree []string) string {
		pattern, ok := comboPattern(s, in, out)
		if !ok {
			return "a <Files> section that may match the same names merges before this one, and the names of both cannot be written as one pattern"
		}
		text = append(text, indent+`<FilesMatch "`+pattern+`">`,
			indent+"    # orderly DIR-10: the names "+s.String()+" shares with "+with+", which merge before it: what Apache 2.2 decided for them")
		text = append(text, tree...)
		text = append(text, indent+"</FilesMatch>")
		return ""
	})
	if why != "" || len(text) == 0 {
		return nil, why
	}
	end := max(s.Directive().EndLine, s.Directive().Pos.Line)
	return []edit{{from: end + 1, to: end, text: text}}, ""
}

// locationCombos returns the <If> sections to write at the end of the
// plain <Location> s for the files whose names <Files> sections with
// access rules match (they merge before it, in the file walk), where
// that gives another answer than s alone: <If> sections merge after
// everything, and test the name of the file a request maps to as <Files>
// does, the last component of REQUEST_FILENAME (not for a proxied
// request: mod_proxy maps it to no file, and no <Files> section applies).
// compat and authz are what s inherits (translate.Inherited).
func locationCombos(cfg *translate.Config, s *translate.Section, compat, authz *translate.Layers) ([]edit, string) {
	if translate.SelfDenies(cfg, s) {
		return nil, ""
	}
	chain, why := translate.InheritedChain(cfg, s)
	if why != "" {
		return nil, why
	}
	var before []*translate.Section
	for _, o := range filesBefore(cfg, s, chain) {
		if mergesAccess(cfg, o) {
			before = append(before, o)
		}
	}
	indent := indentAt(s.Directive().Pos.Col) + "    "
	var text []string
	why = nameCombos(cfg, s, chain, before, compat, authz, indent+"    ", func(in, out []*translate.Section, with string, tree []string) string {
		pattern, ok := comboPattern(nil, in, out)
		delim := strings.IndexFunc("#!|%,;:_", func(r rune) bool { return !strings.ContainsRune(pattern, r) })
		if !ok || delim < 0 || strings.Contains(pattern, `"`) {
			return "<Files> sections with access rules merge before this <Location> for some files, and their names cannot be written as one pattern"
		}
		d := string("#!|%,;:_"[delim])
		text = append(text, indent+`<If "%{REQUEST_FILENAME} !~ m#^proxy:# && %{REQUEST_FILENAME} =~ m#/([^/]*)\z# && $1 =~ m`+d+pattern+d+`">`,
			indent+"    # orderly DIR-10: files named as "+with+" match, which merge before this section: what Apache 2.2 decided for them")
		text = append(text, tree...)
		text = append(text, indent+"</If>")
		return ""
	})
	if why != "" || len(text) == 0 {
		return nil, why
	}
	if laterLocation(cfg, s) {
		return nil, "<Files> sections with access rules merge before this <Location> for some files, and a later <Location> section with access rules may apply to the same URLs: the <If> sections that would say what those files were decided by merge after it"
	}
	end := max(s.Directive().EndLine, s.Directive().Pos.Line)
	return []edit{{from: end, to: end - 1, text: text}}, ""
}

// mergesAccess reports whether a <Files> section that merges before
// another bears on its access: it has access rules, or (2.4) an AuthType,
// which with no Require in force answers 500.
func mergesAccess(cfg *translate.Config, o *translate.Section) bool {
	return o.Conf.HasAccessRules() || cfg.Semantics == translate.Compat24 && o.Conf.AuthType != nil
}

// laterLocation reports whether a <Location> or <LocationMatch> section
// with access rules that merges after s (later in the configuration, in
// the main server or a virtual host, whose sections follow the main
// server's) may apply where s does: an <If> section written in s merges
// after it, not before.
func laterLocation(cfg *translate.Config, s *translate.Section) bool {
	for _, c := range cfg.Servers() {
		i := slices.Index(c.Locations, s)
		if i < 0 {
			continue
		}
		for _, o := range c.Locations[i+1:] {
			if !o.Conf.HasAccessRules() {
				continue
			}
			plain := func(x *translate.Section) bool {
				return x.Kind == translate.KindLocation && !x.Fnmatch && x.Regex == nil
			}
			if !plain(s) || !plain(o) || !translate.LocationsDisjoint(c, s.Path, o.Path) {
				return true
			}
		}
	}
	return false
}

// nameCombos merges s over chain with each combination of the sections of
// before that one name may match (in, with the others out), and calls
// write for each whose answer differs from s's alone, with the sections
// named (with) and the Require lines (indented by indent). compat0 and
// authz0 are s merged over chain alone (translate.Inherited's, which
// merges the same sections). It returns why the combinations cannot be
// written.
func nameCombos(cfg *translate.Config, s *translate.Section, chain, before []*translate.Section, compat0, authz0 *translate.Layers, indent string, write func(in, out []*translate.Section, with string, tree []string) string) string {
	if len(before) == 0 {
		return ""
	}
	if len(before) > maxFilesBefore {
		return fmt.Sprintf("more than %d <Files> sections with access rules may match the same names and merge before this section", maxFilesBefore)
	}
	secs := func(in []*translate.Section) []*translate.Section {
		// The file walk's sections go after the directory walk's, before
		// the location walk's.
		n := translate.WalkEnd(chain, 1)
		return append(append(append(append(make([]*translate.Section, 0, len(chain)+len(in)+1), chain[:n]...), in...), chain[n:]...), s)
	}
	merge := func(in []*translate.Section) (*translate.Layers, *translate.Layers) {
		return translate.MergeLayers(secs(in))
	}
	// 2.4 answers 500 (AH01627) where an AuthType and no Require are in
	// force: refused, whatever the other translate.Layers say.
	noRequire := func(in []*translate.Section, authz *translate.Layers) bool {
		return cfg.Semantics == translate.Compat24 && (authz.Authz == nil || authz.Authz.Root == nil) && authTypeIn(secs(in))
	}
	refused0 := noRequire(nil, authz0)
	var alone []string // rendered when a combination needs comparing
	rendered := false
	// Whether each two of before may match one name, worked out once.
	names := make([]regex.Names, len(before))
	for i, o := range before {
		names[i] = filesNames(o)
	}
	disjoint := make([]uint64, len(before)) // bit j of disjoint[i]: i and j never meet
	for i := range before {
		for j := i + 1; j < len(before); j++ {
			if !regex.Overlap(names[i], names[j]) {
				disjoint[i] |= 1 << j
				disjoint[j] |= 1 << i
			}
		}
	}
	for mask := 1; mask < 1<<len(before); mask++ {
		var in, out []*translate.Section
		meet := true
		for i, o := range before {
			if mask&(1<<i) != 0 {
				in = append(in, o)
				meet = meet && disjoint[i]&uint64(mask) == 0
			} else {
				out = append(out, o)
			}
		}
		if !meet {
			continue // no name matches all of them
		}
		compat, authz := merge(in)
		refused := noRequire(in, authz) && !refused0
		if !refused && sameLayers(compat, compat0) && sameLayers(authz, authz0) {
			continue // what s sets hides every layer of in
		}
		if !rendered {
			alone, rendered = renderScope(cfg, compat0, authz0, indent), true
		}
		merged := renderScope(cfg, compat, authz, indent)
		if refused {
			merged = []string{indent + "# orderly DIR-10: an AuthType and no Require in force: Apache 2.4 answered 500 (AH01627)", indent + "Require all denied"}
		}
		if slices.Equal(merged, alone) {
			continue
		}
		var with []string
		for _, o := range in {
			with = append(with, fmt.Sprintf("%s (%s:%d)", o, o.Pos.File, o.Pos.Line))
		}
		if why := write(in, out, strings.Join(with, " and "), merged); why != "" {
			return why
		}
	}
	return ""
}

// comboPattern writes, for <FilesMatch>, a pattern that matches the
// names s (if not nil) and every section of in match, and no section of
// out does.
func comboPattern(s *translate.Section, in, out []*translate.Section) (string, bool) {
	var b strings.Builder
	b.WriteString("^")
	part := func(o *translate.Section, neg bool) bool {
		p, ok := namePattern(o, s)
		if !ok {
			return false
		}
		if neg {
			b.WriteString("(?!")
		} else {
			b.WriteString("(?=")
		}
		b.WriteString(p)
		b.WriteString(")")
		return true
	}
	for _, o := range in {
		if !part(o, false) {
			return "", false
		}
	}
	for _, o := range out {
		if !part(o, true) {
			return "", false
		}
	}
	if s != nil && !part(s, false) {
		return "", false
	}
	return b.String(), true
}

// namePattern is a PCRE pattern that matches, from the start of a name,
// the names o matches, compiled where s is (for its options).
func namePattern(o, s *translate.Section) (string, bool) {
	if o.Regex == nil {
		p, ok := regex.GlobPattern(o.Path, regex.FnmPathname, o.Fnmatch)
		return p, ok
	}
	expr := o.Regex.String()
	if strings.ContainsAny(expr, "\"\x00") || hasBackref(expr) {
		return "", false
	}
	p := `[\s\S]*?(?:` + expr + `)`
	oi, si := o.Regex.Options().ICase, s != nil && s.Regex != nil && s.Regex.Options().ICase
	switch {
	case oi && !si:
		p = "(?i:" + p + ")"
	case !oi && si:
		p = "(?-i:" + p + ")"
	}
	return p, true
}

// hasBackref reports whether a pattern may hold a numbered back reference
// ("\1"), which would count groups differently once combined.
func hasBackref(expr string) bool {
	for i := 0; i+1 < len(expr); i++ {
		if expr[i] == '\\' {
			if c := expr[i+1]; '1' <= c && c <= '9' || c == 'g' || c == 'k' {
				return true
			}
			i++
		}
	}
	return strings.Contains(expr, "(?P=") || strings.Contains(expr, "(?(")
}

// sameLayers reports whether a and b hold the same layers: the same
// objects, so that they render to the same text (the converse need not
// hold).
func sameLayers(a, b *translate.Layers) bool {
	sameSlot := a.Authz == b.Authz || a.Authz != nil && b.Authz != nil && *a.Authz == *b.Authz
	return a.Compat == b.Compat && sameSlot &&
		len(a.Req22) == len(b.Req22) && (len(a.Req22) == 0 || &a.Req22[0] == &b.Req22[0]) &&
		a.GroupFile == b.GroupFile && a.DBMGroups == b.DBMGroups && a.Sat22 == b.Sat22 && a.SatSet == b.SatSet &&
		a.UserNotAuth == b.UserNotAuth && a.GroupNotAuth == b.GroupNotAuth && a.DBMNotAuth == b.DBMNotAuth && a.LDAP == b.LDAP
}

package translate

import (
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// The .htaccess files take part in the directory walk: each merges after
// the <Directory> sections of its directory, before those of the
// directories below it, and before every <DirectoryMatch>, <Files> and
// <Location> section. A server section translated with what it inherits
// folded in must count them: those of the directories above every
// request it applies to join its chain; one that applies to some of its
// requests only, with access rules the section inherits, makes the
// section's inheritance depend on the request.

// htFound records, for Convert, the .htaccess files of a server: parsed
// (with their sections) or left as they are (unknown: their rules could
// be anything).
type htFound struct {
	parsed  []*Section
	unknown []string // directories, ending in "/"
}

// withHtaccess adds to chain (the sections that merge before a section,
// directory walk first) the .htaccess files of directories above dir, and
// of dir itself when atDir; an .htaccess file strictly below dir, less
// than below slashes deep, whose access rules the section would inherit
// (needs), makes it depend on the request: why says so. files tells
// that the file walk comes before the section (a <Location>): the <Files>
// sections of the .htaccess files above then merge before it, for some
// names.
func withHtaccess(cfg *Config, chain []*Section, dir string, atDir bool, below int, files bool, needs func(*DirConf) bool) ([]*Section, string) {
	if cfg.ht == nil {
		return chain, ""
	}
	applies := func(hdir string) (above, under bool) {
		if strings.HasPrefix(dir, hdir) && (hdir != dir || atDir) {
			return true, false
		}
		return false, hdir != dir && strings.HasPrefix(hdir, dir) && strings.Count(hdir, "/") < below
	}
	const why = "an .htaccess file below the directories this section applies to has access rules it would inherit for some requests only"
	var add []*Section
	for _, h := range cfg.ht.parsed {
		above, under := applies(filepath.Dir(h.Path) + "/")
		switch {
		case above && files && filesNeed(h, needs):
			return nil, "an .htaccess file above this section has <Files> sections with access rules that merge before it for some names"
		case above:
			add = append(add, h)
		case under && (needs(h.Conf) || files && filesNeed(h, needs)):
			return nil, why
		}
	}
	for _, hdir := range cfg.ht.unknown {
		if above, under := applies(hdir); above || under {
			return nil, "an .htaccess file translate leaves as it is merges before this section"
		}
	}
	if len(add) == 0 {
		return chain, ""
	}
	// Into the directory walk's part, in its order.
	n := walkEnd(chain, 0)
	out := append(append(append([]*Section(nil), chain[:n]...), add...), chain[n:]...)
	slices.SortStableFunc(out[:n+len(add)], func(a, b *Section) int { return mergeRank(a) - mergeRank(b) })
	return out, ""
}

// filesNeed reports whether an .htaccess file's <Files> sections hold
// access rules (needs): they merge before the location walk too.
func filesNeed(h *Section, needs func(*DirConf) bool) bool {
	for _, f := range h.Conf.Files {
		if needs(f.Conf) {
			return true
		}
	}
	return false
}

// noneBelow is withHtaccess's below for a section that no .htaccess file
// under its directory merges before.
const noneBelow = -1

// allBelow counts every .htaccess file under the directory.
const allBelow = math.MaxInt

// htFound returns the server's record of .htaccess files, made on first
// use.
func (c *Config) htFound() *htFound {
	if c.ht == nil {
		c.ht = &htFound{}
	}
	return c.ht
}

// ancestorCompat reports whether an Order/Allow/Deny of a <Directory>
// section or .htaccess file above dir (seen: those parsed so far) is in
// force there: translated to Require, which a Require below replaces.
func ancestorCompat(c *Config, dir string, seen map[string]*Section) bool {
	for _, s := range fileChain(c, dir) {
		if s.Conf.Compat != nil {
			return true
		}
	}
	for p, h := range seen {
		if h != nil && h.Conf.Compat != nil && strings.HasPrefix(dir, filepath.Dir(p)+"/") {
			return true
		}
	}
	return false
}

// closeHtaccess fails an .htaccess file closed: every access line (and
// container) of it commented out, and at its top "Require all denied"
// with why. It returns nil where the file has no Require or Satisfy line,
// whose legacy lines then keep deciding under mod_access_compat as they
// did.
func closeHtaccess(ds []*apacheconf.Directive, src []byte, why string, sem Semantics) []edit {
	access := accessLines(ds)
	requires, compat := false, false
	var own func(ds []*apacheconf.Directive)
	own = func(ds []*apacheconf.Directive) {
		for _, d := range ds {
			switch n := d.LowerName(); n {
			case "order", "allow", "deny":
				compat = true
			case "satisfy":
				compat = compat || sem == Compat24
			case "limit", "limitexcept":
				own(d.Block)
			}
		}
	}
	own(ds)
	for _, d := range access {
		n := d.LowerName()
		requires = requires || n != "order" && n != "allow" && n != "deny"
	}
	if !requires {
		return nil
	}
	lines := strings.Split(string(src), "\n")
	es := []edit{{from: 1, to: 0, text: []string{
		"# orderly DIR-10: NEEDS REVIEW, refused until translated by hand: " + why,
		"Require all denied"}}}
	if compat {
		es[0].withCompat = compatReset("")
	}
	for _, d := range access {
		e := edit{from: d.Pos.Line, to: max(d.EndLine, d.Pos.Line)}
		for l := e.from; l <= e.to && l <= len(lines); l++ {
			t := lines[l-1]
			e.text = append(e.text, leadingBlanks(t)+"# "+strings.TrimLeft(t, " \t"))
		}
		es = append(es, e)
	}
	return es
}

// compatConditional returns the first section of ds (files as written)
// that tests whether mod_access_compat is loaded, or one of its
// directives known: <IfModule mod_access_compat.c>, <IfDirective Order>,
// their "!" forms. With the module dropped such a section flips, and the
// branch the legacy server skipped is read: the output keeps the module
// instead.
func compatConditional(ds []*apacheconf.Directive) *apacheconf.Directive {
	for _, d := range ds {
		if d.Block == nil {
			continue
		}
		arg := strings.ToLower(strings.Trim(strings.TrimPrefix(strings.TrimSpace(d.Raw), "!"), `"`))
		switch d.LowerName() {
		case "ifmodule":
			switch arg {
			case "mod_access_compat.c", "access_compat_module", "mod_access_compat":
				return d
			}
		case "ifdirective":
			switch arg {
			case "order", "allow", "deny", "satisfy":
				return d
			}
		}
		if c := compatConditional(d.Block); c != nil {
			return c
		}
	}
	return nil
}

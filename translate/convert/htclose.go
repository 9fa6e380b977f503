package convert

import (
	"path/filepath"
	"strings"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// ancestorCompat reports whether an Order/Allow/Deny of a <Directory>
// section or .htaccess file above dir (seen: those parsed so far) is in
// force there: translated to Require, which a Require below replaces.
func ancestorCompat(c *translate.Config, dir string, seen map[string]*translate.Section) bool {
	for _, s := range translate.FileChain(c, dir) {
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
func closeHtaccess(ds []*apacheconf.Directive, src []byte, why string, sem translate.Semantics) []edit {
	access := accessLines(ds)
	requires, compat := false, false
	var own func(ds []*apacheconf.Directive)
	own = func(ds []*apacheconf.Directive) {
		for _, d := range ds {
			switch n := d.LowerName(); n {
			case "order", "allow", "deny":
				compat = true
			case "satisfy":
				compat = compat || sem == translate.Compat24
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

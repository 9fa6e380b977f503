package convert

import (
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// inheritsNothing reports whether what s is translated to does not depend
// on what merges before it: it refuses everyone itself, or it sets every
// layer it would inherit (its own Order/Allow/Deny, its own Require with
// no AuthMerging).
func inheritsNothing(cfg *translate.Config, s *translate.Section) bool {
	own := s.Conf
	needSat22 := cfg.Semantics == translate.Legacy22 && own.Satisfy22Set != policy.AllMethods
	needAuthz := own.Requires22 == nil && (own.Authz == nil || own.Authz.Root == nil || own.Authz.Merge == translate.MergeAnd || own.Authz.Merge == translate.MergeOr)
	return translate.SelfDenies(cfg, s) || own.Compat != nil && !needSat22 && !needAuthz
}

// A hostView is a virtual host's configuration (merged over the main
// server's) with what it has of its own that can change what a main
// server's section inherits.
type hostView struct {
	name string
	cfg  *translate.Config
	// dirs are the host's own <Directory> sections; others says it has
	// sections of other kinds, and mapping that it maps URLs to files
	// otherwise than the main server (DocumentRoot, Alias, UserDir,
	// RewriteRule), or reads other .htaccess files or methods.
	dirs            []*translate.Section
	others, mapping bool
}

// hostViews returns the virtual hosts of cfg that have something of their
// own that can change what a main server's section inherits.
func hostViews(cfg *translate.Config) []hostView {
	main := map[*translate.Section]bool{}
	for _, l := range [][]*translate.Section{cfg.Dirs, cfg.DirMatches, cfg.Files, cfg.Locations} {
		for _, s := range l {
			main[s] = true
		}
	}
	mainTrees := len(translate.RewriteTrees(cfg)) // a stat per rule: once
	var out []hostView
	for _, v := range cfg.VHosts {
		c := v.Config
		name := v.Name
		if name == "" {
			name = "<VirtualHost> at " + v.Pos.String()
		}
		h := hostView{name: name, cfg: c}
		for _, d := range c.Dirs {
			if !main[d] {
				h.dirs = append(h.dirs, d)
			}
		}
		for _, l := range [][]*translate.Section{c.DirMatches, c.Files, c.Locations} {
			for _, s := range l {
				h.others = h.others || !main[s]
			}
		}
		h.mapping = c.DocumentRoot != cfg.DocumentRoot || len(c.Aliases) != len(cfg.Aliases) ||
			len(c.UserDirs) != len(cfg.UserDirs) || c.UserDirHomes != cfg.UserDirHomes ||
			len(translate.RewriteTrees(c)) != mainTrees || c.Methods != cfg.Methods ||
			!slices.Equal(c.AccessFileNames, cfg.AccessFileNames)
		if h.mapping || h.others || len(h.dirs) > 0 {
			out = append(out, h)
		}
	}
	return out
}

// affects reports whether what the main server's section s inherits may
// differ in the host: a plain <Directory> by the host's own <Directory>
// sections at or above its path (or any that may match there), the
// others by anything of the host's own.
func (h *hostView) affects(main *translate.Config, s *translate.Section) bool {
	if s.Kind != translate.KindDirectory || s.Fnmatch {
		return h.mapping || h.others || len(h.dirs) > 0
	}
	if h.others || h.mapping && (h.cfg.Methods != main.Methods || !slices.Equal(h.cfg.AccessFileNames, main.AccessFileNames)) {
		return true
	}
	for _, d := range h.dirs {
		if d.Depth == 0 || d.Fnmatch || strings.HasPrefix(s.Path, d.Path) {
			return true
		}
	}
	return false
}

// sameEdits reports whether a and b make the same changes.
func sameEdits(a, b []edit) bool {
	return slices.EqualFunc(a, b, func(x, y edit) bool {
		return x.from == y.from && x.to == y.to && slices.Equal(x.text, y.text) && slices.Equal(x.withCompat, y.withCompat)
	})
}

package translate

import (
	"math"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The .htaccess files take part in the directory walk: each merges after
// the <Directory> sections of its directory, before those of the
// directories below it, and before every <DirectoryMatch>, <Files> and
// <Location> section. A server section translated with what it inherits
// folded in must count them: those of the directories above every
// request it applies to join its chain; one that applies to some of its
// requests only, with access rules the section inherits, makes the
// section's inheritance depend on the request.
//
// Who reads them records them here: translate/convert, which searches the
// directories a configuration serves for them (AddHtaccess,
// AddUnknownHtaccess).

// htFound records the .htaccess files of a server: parsed (with their
// sections) or left as they are (unknown: their rules could be anything).
type htFound struct {
	parsed  []*Section
	unknown []string // directories, ending in "/"
}

// htFound returns the server's record of .htaccess files, made on first
// use.
func (c *Config) htFound() *htFound {
	if c.ht == nil {
		c.ht = &htFound{}
	}
	return c.ht
}

// AddHtaccess records the .htaccess file sec (from ParseHtaccess), read
// by each of the servers cs, with what merges before it: chain, the
// <Directory> sections and .htaccess files of its directory and those
// above it, in any order (sorted here into Apache's: each directory's
// <Directory> sections, then its .htaccess file, from "/" down). The
// file's <Files> sections with access rules inherit the file's chain and
// the file (InheritedChain, Scope.MergedBefore); the servers' sections
// count the file (withHtaccess).
func AddHtaccess(sec *Section, chain []*Section, cs []*Config) {
	sec.htChain = slices.Clone(chain)
	sort.SliceStable(sec.htChain, func(i, j int) bool { return mergeRank(sec.htChain[i]) < mergeRank(sec.htChain[j]) })
	for _, c := range cs {
		c.htFound().parsed = append(c.htFound().parsed, sec)
	}
	for _, f := range sec.Conf.Files {
		if f.Conf.HasAccessRules() {
			f.htChain = append(slices.Clone(sec.htChain), sec)
		}
	}
}

// AddUnknownHtaccess records an .htaccess file in the directory dir
// (ending in "/") left as it is: its rules in force are unknown, and a
// section that would inherit them depends on the request.
func (c *Config) AddUnknownHtaccess(dir string) {
	c.htFound().unknown = append(c.htFound().unknown, dir)
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
	n := WalkEnd(chain, 0)
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

// FileChain is the <Directory> sections, wildcard ones included, that
// Apache merges for the directory dir (ending in "/"), in its order: by
// depth, configuration order among equals.
func FileChain(c *Config, dir string) []*Section {
	prefixes := dirPrefixes(dir)
	var out []*Section
	for _, d := range c.Dirs {
		switch {
		case d.Depth == 0, !d.Fnmatch && strings.HasPrefix(dir, d.Path):
			out = append(out, d)
		case d.Fnmatch:
			pattern := strings.ReplaceAll(d.Path, "[!", "[^")
			for _, p := range prefixes {
				if ok, err := path.Match(pattern, p); err == nil && ok {
					out = append(out, d)
					break
				}
			}
		}
	}
	return out
}

// dirPrefixes lists "/", "/a/", "/a/b/" ... of dir (ending in "/").
func dirPrefixes(dir string) []string {
	var out []string
	for i := 0; i < len(dir); i++ {
		if dir[i] == '/' {
			out = append(out, dir[:i+1])
		}
	}
	return out
}

// mergeRank orders <Directory> sections and .htaccess files as Apache
// merges them: by depth, and at one depth the sections before the file.
func mergeRank(s *Section) int {
	if s.Kind == KindHtaccess {
		return 2*(strings.Count(filepath.Dir(s.Path)+"/", "/")-1) + 1
	}
	return 2 * s.Depth
}

// WildApplies reports whether a regex <Directory> (or <DirectoryMatch>)
// section matches dir (ending in "/") or a directory above it: Apache
// merges those after the .htaccess files, over what a file says.
func WildApplies(c *Config, dir string) bool {
	for _, d := range c.DirMatches {
		for _, p := range dirPrefixes(dir) {
			if d.Regex != nil && (mayMatch(d.Regex, p) || mayMatch(d.Regex, strings.TrimSuffix(p, "/"))) {
				return true
			}
		}
	}
	return false
}

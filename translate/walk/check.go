package walk

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// A DirReader lists a directory; the file systems of this package are
// DirReaders, so that the .htaccess files of a tree can be checked
// ahead of the requests that read them.
type DirReader interface {
	ReadDir(name string) ([]fs.DirEntry, error)
}

func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// ReadDir lists name where orderly reads it.
func (p *PathMap) ReadDir(name string) ([]fs.DirEntry, error) {
	if r, ok := p.FS.(DirReader); ok {
		return r.ReadDir(p.Map(name))
	}
	return nil, fs.ErrInvalid
}

// Roots are the directories the configuration serves files from: the
// document roots of the main server and of every virtual host, and the
// targets of Alias directives (a regex alias's only where it has no
// back-reference).
func (e *Engine) Roots() []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p == "" || strings.Contains(p, "$") {
			return
		}
		p = path.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	add(e.cfg.DocumentRoot)
	for _, a := range e.cfg.Aliases {
		add(a.Real)
	}
	for _, v := range e.cfg.VHosts {
		add(v.Config.DocumentRoot)
		for _, a := range v.Config.Aliases {
			add(a.Real)
		}
	}
	sort.Strings(out)
	return out
}

// CheckHtaccess reads every access file (AccessFileName) below the
// directories roots as a request would (the directory walk down to it,
// with the AllowOverride in force there) and returns the errors of those
// Apache would answer 500 for, each "file:line: message". At most limit
// directories are visited (0: no limit); truncated reports whether the
// limit stopped the search.
func (e *Engine) CheckHtaccess(roots []string, limit int) (errs apacheconf.ErrorList, truncated bool) {
	r, ok := e.fs.(DirReader)
	if !ok {
		return nil, false
	}
	visited := 0
	seen := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		if truncated || seen[dir] {
			return
		}
		seen[dir] = true
		visited++
		if limit > 0 && visited > limit {
			truncated = true
			return
		}
		entries, err := r.ReadDir(dir)
		if err != nil {
			return
		}
		for _, name := range e.cfg.AccessFileNames {
			if i := sort.Search(len(entries), func(i int) bool { return entries[i].Name() >= name }); i < len(entries) && entries[i].Name() == name {
				errs = append(errs, e.htaccessErrors(dir)...)
				break
			}
		}
		for _, ent := range entries {
			if ent.IsDir() && ent.Type()&fs.ModeSymlink == 0 {
				visit(path.Join(dir, ent.Name()))
			}
		}
	}
	for _, root := range roots {
		visit(root)
	}
	return errs, truncated
}

// CheckHtaccessFound is CheckHtaccess where the search is done: found are
// the paths of the access files below roots (and possibly elsewhere),
// as a search of every directory under them, symbolic links not
// followed, found them. Those outside roots are not read.
func (e *Engine) CheckHtaccessFound(roots, found []string) apacheconf.ErrorList {
	var errs apacheconf.ErrorList
	seen := map[string]bool{}
	for _, p := range found {
		dir := path.Dir(p)
		if seen[dir] || !slices.Contains(e.cfg.AccessFileNames, path.Base(p)) || !slices.ContainsFunc(roots, func(r string) bool { return under(dir, r) }) {
			continue
		}
		seen[dir] = true
		errs = append(errs, e.htaccessErrors(dir)...)
	}
	return errs
}

// under reports whether dir is root or below it.
func under(dir, root string) bool {
	root = path.Clean(root)
	return dir == root || strings.HasPrefix(dir, root) && (root == "/" || dir[len(root)] == '/')
}

// htaccessErrors runs the directory walk to dir and returns the errors of
// the access files it read on the way.
func (e *Engine) htaccessErrors(dir string) apacheconf.ErrorList {
	var res Result
	e.dirWalk(strings.TrimSuffix(dir, "/")+"/", &res)
	var out apacheconf.ErrorList
	e.ht.Range(func(_, v any) bool {
		h := v.(*htEntry)
		if h.err == nil {
			return true
		}
		if el, ok := h.err.(apacheconf.ErrorList); ok {
			for _, x := range el {
				if strings.HasPrefix(x.Pos.File, dir+"/") && !strings.Contains(x.Pos.File[len(dir)+1:], "/") {
					out = append(out, x)
				}
			}
		}
		return true
	})
	return out
}

// Package dirscan finds files by name in directory trees: the .htaccess
// files under a configuration's document roots, which lint and translate
// look for before they read them.
//
// A tree of a thousand document roots is a few thousand directories, and
// listing one costs four system calls. Find lists each directory once,
// however many of the roots reach it, with several directories in flight
// at a time, so that the system calls of one overlap those of another.
package dirscan

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A Root is a directory tree to search, and the file names to find in it.
type Root struct {
	Dir   string
	Names []string
}

// Result is what Find found.
type Result struct {
	// Files holds, for each root in the order given, the paths of the files
	// under it (at any depth, the root itself included) whose name is one
	// of the root's names: in each directory its files first, in lexical
	// order, then its subdirectories', in lexical order.
	Files [][]string
	// Listed says, for each root, whether it is a directory that could be
	// listed.
	Listed []bool
	// Dirs is the number of directories listed.
	Dirs int
	// Truncated reports that the search stopped at the directory limit.
	Truncated bool
}

// listing is what one directory holds: the names of its subdirectories
// and of its files that one of the roots looks for, each sorted. Symbolic
// links are neither: like os.ReadDir's IsDir, a link to a directory is not
// followed.
type listing struct {
	dirs, files []string
	ok          bool // the directory could be listed
}

// workers is how many directories are listed at once. Listing is system
// calls, not computation: more than the cores pays while the calls wait.
const workers = 8

// Find searches the roots, listing at most maxDirs directories (0: no
// limit). A directory that cannot be listed is skipped, as is a root that
// is not a directory.
func Find(roots []Root, maxDirs int) Result {
	return (*Cache)(nil).Find(roots, maxDirs)
}

// A Cache holds the listings of the directories searched through it, for
// searches of one tree that run at about the same time: orderly lint's own
// and that of the translation it runs beside it, which look for the same
// names under the same roots. Each directory is listed once for all of
// them (a search that meets a directory another is listing waits for that
// listing). Nothing is ever dropped or listed again: a Cache is for one
// run over a tree that does not change meanwhile, not for a server that
// must see new files. The zero Cache is ready to use; a nil *Cache
// caches nothing.
type Cache struct {
	mu sync.Mutex
	m  map[cacheKey]*cached
}

// cacheKey is a directory and the names looked for in it (sorted, joined
// by NUL): a listing holds only the files of those names.
type cacheKey struct{ dir, names string }

// cached is a listing, made once; done is closed when l is set.
type cached struct {
	done chan struct{}
	l    listing
}

// Find searches the roots as the function Find does, taking the listings
// from c where another search made them already.
func (c *Cache) Find(roots []Root, maxDirs int) Result {
	s := &scan{want: map[string]bool{}, seen: map[string]*listing{}, limit: maxDirs, cache: c}
	s.cond = sync.NewCond(&s.mu)
	for _, r := range roots {
		for _, n := range r.Names {
			s.want[n] = true
		}
		s.push(filepath.Clean(r.Dir))
	}
	if c != nil {
		names := make([]string, 0, len(s.want))
		for n := range s.want {
			names = append(names, n)
		}
		slices.Sort(names)
		s.names = strings.Join(names, "\x00")
	}
	var done sync.WaitGroup
	for range workers {
		done.Go(s.work)
	}
	done.Wait()

	res := Result{Files: make([][]string, len(roots)), Listed: make([]bool, len(roots)), Dirs: s.listed, Truncated: s.truncated}
	for i, r := range roots {
		dir := filepath.Clean(r.Dir)
		res.Files[i] = s.collect(dir, r.Names, nil)
		res.Listed[i] = s.seen[dir].ok
	}
	return res
}

type scan struct {
	want  map[string]bool // the names any root looks for
	limit int
	cache *Cache // nil: list every directory
	names string // want's names, the cache's key with a directory

	mu        sync.Mutex
	cond      *sync.Cond          // signalled when todo grows or busy falls
	seen      map[string]*listing // every directory met, listed or not yet
	todo      []string            // directories met and not yet listed
	busy      int                 // directories being listed
	listed    int
	truncated bool
}

// push adds dir to the directories to list, unless it was met before.
// The caller holds s.mu (or runs before the workers start).
func (s *scan) push(dir string) {
	if _, ok := s.seen[dir]; ok {
		return
	}
	s.seen[dir] = &listing{}
	s.todo = append(s.todo, dir)
}

// work lists directories until none is left to list and none is being
// listed (whose subdirectories would be). It takes several at a time when
// many wait, so that the workers do not queue for the lock at every one.
func (s *scan) work() {
	var kinds fsKinds // this worker's: no lock to ask it
	defer kinds.close()
	var batch []string
	type done struct {
		dir string
		l   listing
	}
	var results []done
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.todo) == 0 && s.busy > 0 {
			s.cond.Wait()
		}
		if len(s.todo) == 0 {
			return // and busy is 0: every worker finds the same
		}
		n := min(len(s.todo), max(1, len(s.todo)/(2*workers)))
		if s.limit > 0 {
			n = min(n, s.limit-s.listed)
			if n <= 0 {
				s.truncated = true
				s.todo = s.todo[:0]
				if s.busy == 0 {
					s.cond.Broadcast()
				}
				continue
			}
		}
		batch = append(batch[:0], s.todo[len(s.todo)-n:]...)
		s.todo = s.todo[:len(s.todo)-n]
		s.listed += n
		s.busy++
		s.mu.Unlock()
		results = results[:0]
		for _, dir := range batch {
			results = append(results, done{dir, s.list(dir, &kinds)})
		}
		s.mu.Lock()
		pushed := len(s.todo)
		for _, r := range results {
			*s.seen[r.dir] = r.l
			for _, d := range r.l.dirs {
				s.push(join(r.dir, d))
			}
		}
		s.busy--
		// Waiting workers wait for more to list, or for the end.
		if len(s.todo) > pushed || s.busy == 0 {
			s.cond.Broadcast()
		}
	}
}

// list lists dir, or takes its listing from the cache.
func (s *scan) list(dir string, kinds *fsKinds) listing {
	if s.cache == nil {
		return readListing(dir, s.want, kinds)
	}
	k := cacheKey{dir, s.names}
	c := s.cache
	c.mu.Lock()
	e, ok := c.m[k]
	if !ok {
		e = &cached{done: make(chan struct{})}
		if c.m == nil {
			c.m = map[cacheKey]*cached{}
		}
		c.m[k] = e
	}
	c.mu.Unlock()
	if ok {
		<-e.done
		return e.l
	}
	e.l = readListing(dir, s.want, kinds)
	close(e.done)
	return e.l
}

// readListing lists dir, its names sorted. The slices are never written
// to once made: a cached listing is shared by the searches.
func readListing(dir string, want map[string]bool, kinds *fsKinds) listing {
	dirs, files, ok := readDir(dir, want, kinds)
	slices.Sort(dirs)
	slices.Sort(files)
	return listing{dirs: dirs, files: files, ok: ok}
}

// collect appends the files under dir named one of names to out.
func (s *scan) collect(dir string, names []string, out []string) []string {
	l := s.seen[dir]
	if l == nil || !l.ok {
		return out
	}
	for _, f := range l.files {
		if slices.Contains(names, f) {
			out = append(out, join(dir, f))
		}
	}
	for _, d := range l.dirs {
		out = s.collect(join(dir, d), names, out)
	}
	return out
}

func join(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

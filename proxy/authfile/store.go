package authfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultRefresh is how long a Store trusts what it last learned of a file
// when its Refresh is zero.
const DefaultRefresh = time.Second

// racyWindow is how recent a file's modification time must be, when the
// file is read, for the Store not to trust it: file systems record
// modification times coarsely (Linux to the timer tick, some file systems
// to the second), so a file changed again within the same tick, to the
// same size, would look unchanged.
const racyWindow = 2 * time.Second

// errNotRegular is the error for a path that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// Store caches parsed password and group files, text or DBM, by path,
// and reads a file again when its size, modification time or identity
// (device and inode) changes (for an SDBM database, that of its .pag or
// its .dir file), so that edits take effect without a restart, as they
// do in httpd, which reads these files on every request.
//
// A Store checks a file at most once per Refresh; between checks it
// answers from memory without a system call or an allocation. A check
// opens the file, as httpd does for each request, so a file that has been
// removed or made unreadable fails at the next check even if it has not
// changed. A file read less than two seconds after it last changed is
// read again at the next check, in case another change within the
// precision of the file system's clock left its size and time as they
// were.
//
// When a file can't be opened or read, Users and Groups return the error,
// and no stale copy: httpd answers such requests with status 500 (AH01620
// "Could not open password file"), and so should the caller.
//
// Paths are cached for the life of the Store, so they should come from
// the configuration, not from requests.
//
// The zero Store is ready to use. A Store is safe for concurrent use; its
// fields must not be changed once it is in use.
type Store struct {
	// Refresh is how long the Store trusts what it last learned of a
	// file before it checks the file again. Zero means DefaultRefresh.
	Refresh time.Duration

	// OnLoad, if not nil, is called each time a file has been read and
	// parsed, with the errors for its bad lines (nil if none), before
	// the new copy is returned. Calls for one path do not overlap. It
	// must not call the Store's methods for the same path.
	OnLoad func(path string, errs []error)

	// DefaultDBMType is the DBM type that AuthDBMType default stands
	// for, as the apr-util of the Apache whose configuration this is
	// resolves it: SDBM, DB, GDBM or NDBM. Empty means DefaultDBMType
	// (the package constant), which is DB.
	DefaultDBMType string

	users  fileCache[Users]
	groups fileCache[Groups]

	dbmUsers  [numDBMKinds]fileCache[Users]
	dbmGroups [numDBMKinds]fileCache[Groups]
	dbmHashes [numDBMKinds]fileCache[DBMHashes]

	now    func() int64 // clock in nanoseconds, for tests; nil for the monotonic clock
	checks atomic.Int64 // number of file checks, for tests
}

// NewStore returns a Store with the default settings.
func NewStore() *Store { return new(Store) }

// Users returns the password file at path, parsed by ParseUsers, reading
// it if it is new to the Store or has changed. The error is that of
// opening or reading the file, such as one for which errors.Is(err,
// fs.ErrNotExist); the errors for bad lines go to OnLoad.
func (s *Store) Users(path string) (*Users, error) {
	return load(s, &s.users, path, ParseUsers)
}

// Groups returns the group file at path, parsed by ParseGroups, reading it
// if it is new to the Store or has changed. Its errors are those of Users.
func (s *Store) Groups(path string) (*Groups, error) {
	return load(s, &s.groups, path, ParseGroups)
}

// epoch is the base of the Store's monotonic clock.
var epoch = time.Now()

func (s *Store) clock() int64 {
	if s.now != nil {
		return s.now()
	}
	return int64(time.Since(epoch))
}

func (s *Store) refresh() int64 {
	if s.Refresh > 0 {
		return int64(s.Refresh)
	}
	return int64(DefaultRefresh)
}

// A fileCache maps paths to the cached files of one kind. Its map is
// copied on each new path, so that lookups need no lock.
type fileCache[T any] struct {
	mu    sync.Mutex // held to add a path
	files atomic.Pointer[map[string]*cachedFile[T]]
}

// get returns the cachedFile of path, adding one if needed.
func (c *fileCache[T]) get(path string) *cachedFile[T] {
	if m := c.files.Load(); m != nil {
		if f := (*m)[path]; f != nil {
			return f
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]*cachedFile[T])
	if old := c.files.Load(); old != nil {
		if f := (*old)[path]; f != nil {
			return f
		}
		maps.Copy(m, *old)
	}
	f := new(cachedFile[T])
	m[path] = f
	c.files.Store(&m)
	return f
}

// A cachedFile is what a Store knows of one file.
type cachedFile[T any] struct {
	mu      sync.Mutex                   // held while checking the file
	state   atomic.Pointer[fileState[T]] // nil until the first check
	checked atomic.Int64                 // clock at the last check
}

// A fileState is the outcome of a check of a file.
type fileState[T any] struct {
	val      *T    // nil if err is not nil
	err      error // the error of opening or reading the file
	lineErrs []error
	info     fs.FileInfo
	dirInfo  fs.FileInfo       // of an SDBM database's .dir file; info is its .pag's
	sum      [sha256.Size]byte // of the content
	racy     bool              // the file was read too soon after it changed to trust info
}

// load returns the file at path from c, checking it first if it was last
// checked Refresh ago or more.
func load[T any](s *Store, c *fileCache[T], path string, parse func(string, []byte) (*T, []error)) (*T, error) {
	return loadWith(s, c, path, func(old *fileState[T]) (*fileState[T], bool) {
		return check(s, path, old, parse)
	})
}

// loadWith is load with the check of the file given: check returns old if
// the file has not changed since old was made, or else a new state, and
// whether that state comes from parsing the file.
func loadWith[T any](s *Store, c *fileCache[T], path string, check func(old *fileState[T]) (*fileState[T], bool)) (*T, error) {
	f := c.get(path)
	if st := f.state.Load(); st != nil && s.clock()-f.checked.Load() < s.refresh() {
		return st.val, st.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := s.clock()
	old := f.state.Load()
	if old != nil && now-f.checked.Load() < s.refresh() {
		return old.val, old.err // checked while we waited for the lock
	}
	st, parsed := check(old)
	f.state.Store(st)
	f.checked.Store(now)
	if parsed && s.OnLoad != nil {
		s.OnLoad(path, st.lineErrs)
	}
	return st.val, st.err
}

// check opens the file at path and returns old if the file has not
// changed since old was made, or else a new state; parsed reports whether
// the new state comes from parsing the file.
func check[T any](s *Store, path string, old *fileState[T], parse func(string, []byte) (*T, []error)) (st *fileState[T], parsed bool) {
	s.checks.Add(1)
	fh, err := openFile(path)
	if err != nil {
		return &fileState[T]{err: err}, false
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return &fileState[T]{err: err}, false
	}
	if !info.Mode().IsRegular() {
		return &fileState[T]{err: &fs.PathError{Op: "open", Path: path, Err: errNotRegular}}, false
	}
	if old != nil && old.err == nil && !old.racy && sameFile(old.info, info) {
		return old, false
	}
	var buf bytes.Buffer
	buf.Grow(int(min(info.Size(), 1<<30)) + bytes.MinRead)
	if _, err := buf.ReadFrom(fh); err != nil {
		return &fileState[T]{err: err}, false
	}
	st = &fileState[T]{
		info: info,
		sum:  sha256.Sum256(buf.Bytes()),
		racy: time.Since(info.ModTime()) < racyWindow,
	}
	if old != nil && old.err == nil && old.sum == st.sum {
		// Read again only because the last read was racy.
		st.val, st.lineErrs = old.val, old.lineErrs
		return st, false
	}
	st.val, st.lineErrs = parse(path, buf.Bytes())
	return st, true
}

// sameFile reports whether a and b describe the same file with the same
// size and modification time.
func sameFile(a, b fs.FileInfo) bool {
	return a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && os.SameFile(a, b)
}

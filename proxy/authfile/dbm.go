package authfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"strings"
	"time"
)

// ErrDBMUnsupported marks a DBM file orderly does not read: one of a
// type other than SDBM (Berkeley DB, GDBM, NDBM), which apr-util reads
// through a C library, or an AuthDBMType apr-util does not know. Its
// message says what the file is and how to convert it to SDBM.
var ErrDBMUnsupported = errors.New("DBM type not supported")

// A dbmKind is a DBM type as apr-util's dbm_open_type resolves the
// AuthDBMType names.
type dbmKind int

const (
	dbmSDBM dbmKind = iota
	dbmDB
	dbmGDBM
	dbmNDBM
	numDBMKinds
)

func (k dbmKind) String() string {
	return [...]string{"SDBM", "DB", "GDBM", "NDBM"}[k]
}

// DefaultDBMType is the type that AuthDBMType default stands for (and
// an AuthDBMType left unset, which is default) when Store.DefaultDBMType
// is empty: DB, Berkeley DB, which is what Debian's apr-util (1.6, built
// with libdb5.3) makes its default. Debian's htdbm and httxt2dbm, run
// without -T or -f, write Berkeley DB hash files; other builds of
// apr-util (with no Berkeley DB, or on Windows) default to SDBM, and
// Store.DefaultDBMType says so.
const DefaultDBMType = "DB"

// dbmKindOf resolves the AuthDBMType name t as dbm_open_type of apr-util's
// dbm/apr_dbm.c does: without regard to case, "default" is the default
// type, "db" Berkeley DB, and a letter before "dbm" names GDBM, NDBM or
// SDBM. An empty t is "default", the value mod_authn_dbm and
// mod_authz_dbm start with.
func (s *Store) dbmKindOf(t string) (dbmKind, error) {
	if t == "" || strings.EqualFold(t, "default") {
		d := s.DefaultDBMType
		if d == "" {
			d = DefaultDBMType
		}
		if d == "" || strings.EqualFold(d, "default") {
			return 0, fmt.Errorf("%w: DefaultDBMType %q names no DBM type", ErrDBMUnsupported, d)
		}
		k, err := s.dbmKindOf(d)
		if err != nil {
			return 0, fmt.Errorf("DefaultDBMType: %w", err)
		}
		return k, nil
	}
	switch {
	case strings.EqualFold(t, "db"):
		return dbmDB, nil
	case len(t) == 4 && strings.EqualFold(t[1:], "dbm"):
		switch t[0] {
		case 's', 'S':
			return dbmSDBM, nil
		case 'g', 'G':
			return dbmGDBM, nil
		case 'n', 'N':
			return dbmNDBM, nil
		}
	}
	// The DSO build of apr-util then looks for apr_dbm_<type>-1.so,
	// which fails (AH10285 "could not open dbm"): Apache answers 500.
	return 0, fmt.Errorf("%w: AuthDBMType %q is none of SDBM, GDBM, NDBM, DB and default", ErrDBMUnsupported, t)
}

// DBMUsers returns the users of an AuthDBMUserFile of the given
// AuthDBMType ("" = default), reading the file if it is new to the Store
// or has changed.
//
// As mod_authn_dbm (check_dbm_pw in modules/aaa/mod_authn_dbm.c, alike
// in 2.2 and 2.4) reads them, the key of a record is the user name,
// without a trailing NUL (NETSCAPE_DBM_COMPAT, which would add one, is
// defined nowhere in httpd), and the password hash is the value up to its
// first ':' (and, the value being copied into a C string, up to its first
// NUL). Users.Check then checks a password against the hash as it does
// for a password file; a record whose hash is in no supported format is
// reported to OnLoad as a *RecordError and never matches. A key with a
// NUL byte, which no request can name, is left out and reported.
//
// Only SDBM files are read. For Berkeley DB, GDBM and NDBM, which
// apr-util reads through C libraries, and for "default" when it stands
// for one of them (see DefaultDBMType), the error wraps
// ErrDBMUnsupported and says what the file is and how to convert it. A
// file that can't be opened, such as a missing .pag or .dir, gives the
// error of opening it (errors.Is(err, fs.ErrNotExist)): httpd answers
// 500 (AH10285 "could not open dbm"). A malformed SDBM file gives an
// error wrapping ErrSDBMMalformed.
//
// The Store watches both files of an SDBM database, NAME.pag and
// NAME.dir: apr_sdbm_store writes the .pag last, but a database may also
// be replaced file by file, and a .pag read between a writer's split
// and its last write comes with a .dir that changes without it.
func (s *Store) DBMUsers(path, dbmType string) (*Users, error) {
	k, err := s.dbmKindOf(dbmType)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return loadWith(s, &s.dbmUsers[k], path, func(old *fileState[Users]) (*fileState[Users], bool) {
		return checkDBM(s, path, k, old, usersFromSDBM)
	})
}

// DBMGroups returns the user->groups of an AuthDBMGroupFile of the given
// AuthzDBMType ("" = default). Its errors are those of DBMUsers.
//
// As get_dbm_grp of mod_authz_dbm (modules/aaa/mod_authz_dbm.c, alike in
// 2.2 and 2.4) reads a record, its groups are the part of its value
// after the first ':' up to the next ':', or the whole value when it has
// no ':' (a group-only file), separated by commas; empty names are
// skipped, as ap_getword skips runs of commas. So a file httxt2dbm made
// of "user hash:group1,group2:comment" lines serves as both user and
// group file, and so does one of htdbm, whose -t comment (the field
// after the hash) is then taken for the groups.
//
// The Groups returned compare group names with case, as mod_authz_dbm
// compares them with strcmp (unlike mod_authz_groupfile). Every key is a
// user of the Groups, "user:realm" keys included: mod_authz_dbm looks up
// "user:" + AuthName first and the user name only if that key is absent;
// Identity.DBMGroupsRealm does both. Groups.Has tells a user whose record
// names no group from a user with no record.
func (s *Store) DBMGroups(path, dbmType string) (*Groups, error) {
	k, err := s.dbmKindOf(dbmType)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return loadWith(s, &s.dbmGroups[k], path, func(old *fileState[Groups]) (*fileState[Groups], bool) {
		return checkDBM(s, path, k, old, groupsFromSDBM)
	})
}

// DBMHashes is an AuthDBMUserFile as mod_authn_dbm's get_dbm_realm_hash
// reads it for Digest authentication: the value of each record up to
// its first ':' (and its first NUL), by key. It is immutable and safe
// for concurrent use.
type DBMHashes struct {
	name   string
	hashes map[string]string
}

// RealmHash returns the H(A1) of user in realm: the record under the key
// "user:realm", as get_dbm_realm_hash (modules/aaa/mod_authn_dbm.c of
// 2.4) fetches it, up to its first ':'. The hash is returned as it is:
// mod_auth_digest compares it with nothing but the response it computes,
// so one that is not 32 hex digits never matches. found is false when no
// record has the key (AUTH_USER_NOT_FOUND: the next provider is asked).
func (h *DBMHashes) RealmHash(user, realm string) (hash string, found bool) {
	hash, found = h.hashes[user+":"+realm]
	return hash, found
}

// Len returns the number of records.
func (h *DBMHashes) Len() int { return len(h.hashes) }

// DBMHashes returns the AuthDBMUserFile at path of the given AuthDBMType
// ("" = default) as Digest authentication reads it (see
// DBMHashes.RealmHash), reading the file if it is new to the Store or
// has changed. Its errors are those of DBMUsers. Unlike DBMUsers, it
// checks no hash format: the records of a Digest file hold H(A1) values
// ("user:realm" keys), which are no password hashes, and a file may
// hold both kinds.
func (s *Store) DBMHashes(path, dbmType string) (*DBMHashes, error) {
	k, err := s.dbmKindOf(dbmType)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return loadWith(s, &s.dbmHashes[k], path, func(old *fileState[DBMHashes]) (*fileState[DBMHashes], bool) {
		return checkDBM(s, path, k, old, hashesFromSDBM)
	})
}

// hashesFromSDBM makes the DBMHashes of an AuthDBMUserFile (for
// get_dbm_realm_hash).
func hashesFromSDBM(name string, db *SDBM) (*DBMHashes, []error) {
	h := &DBMHashes{name: name, hashes: make(map[string]string, db.Len())}
	var errs []error
	for key, val := range records(name, db, &errs) {
		// The value is cut at its first ':'.
		hash, _, _ := strings.Cut(val, ":")
		h.hashes[key] = hash
	}
	return h, errs
}

// records yields the records of db that a lookup can reach, each value
// as the C string the modules copy it into (apr_pstrmemdup: up to its
// first NUL). A key with a NUL byte is left out, with an error appended
// to errs: the modules make their keys with strlen, so no lookup reaches
// it.
func records(name string, db *SDBM, errs *[]error) iter.Seq2[string, string] {
	return func(yield func(key, val string) bool) {
		for key, val := range db.All() {
			if strings.IndexByte(key, 0) >= 0 {
				*errs = append(*errs, &RecordError{File: name, Key: key, Err: errNULKey})
				continue
			}
			if !yield(key, cString(val)) {
				return
			}
		}
	}
}

// A RecordError describes a problem with one record of a DBM file. Its
// message has the form "file: user "name": message". Hashes are never
// part of the message.
type RecordError struct {
	File string // the path of the DBM file, without .pag
	Key  string // the key of the record: the user name
	Err  error  // wraps ErrUnsupportedHash, or says why the key is left out
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s: user %q: %v", e.File, e.Key, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// errNULKey is the error for a key with a NUL byte.
var errNULKey = errors.New("key has a NUL byte, so no request can name it: left out")

// cString returns b up to its first NUL, as a C string copied from it
// (apr_pstrmemdup) reads.
func cString(b string) string {
	if i := strings.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// usersFromSDBM makes the Users of an AuthDBMUserFile.
func usersFromSDBM(name string, db *SDBM) (*Users, []error) {
	u := &Users{name: name, users: make(map[string]userEntry, db.Len())}
	var errs []error
	for key, val := range records(name, db, &errs) {
		// check_dbm_pw: the hash ends at the first ':'.
		hash, _, _ := strings.Cut(val, ":")
		var e userEntry
		m, err := parseHash(hash)
		if err != nil {
			u.unsupported++
			errs = append(errs, &RecordError{File: name, Key: key, Err: err})
		} else {
			e.m, e.hash = m, hash
		}
		u.users[key] = e
	}
	return u, errs
}

// groupsFromSDBM makes the Groups of an AuthDBMGroupFile.
func groupsFromSDBM(name string, db *SDBM) (*Groups, []error) {
	g := &Groups{name: name, byUser: make(map[string][]int), exactCase: true, known: make(map[string]bool, db.Len())}
	var errs []error
	index := make(map[string]int) // group name → index in g.groups
	for key, val := range records(name, db, &errs) {
		g.known[key] = true
		// get_dbm_grp: the groups are the second ':' field, or the whole
		// value when there is no ':'.
		list := val
		if _, rest, ok := strings.Cut(list, ":"); ok {
			list, _, _ = strings.Cut(rest, ":")
		}
		var mine []int
		for group := range strings.SplitSeq(list, ",") {
			if group == "" {
				continue
			}
			i, ok := index[group]
			if !ok {
				i = len(g.groups)
				index[group] = i
				g.groups = append(g.groups, group)
			}
			dup := false
			for _, j := range mine {
				dup = dup || j == i
			}
			if !dup {
				mine = append(mine, i)
			}
		}
		if len(mine) > 0 {
			g.byUser[key] = mine
		}
	}
	return g, errs
}

// checkDBM is the check of a DBM file of kind k at path, as check is that
// of a text file: it returns old if the file has not changed since old
// was made, or else a new state, parsed by build for an SDBM database.
func checkDBM[T any](s *Store, path string, k dbmKind, old *fileState[T], build func(string, *SDBM) (*T, []error)) (st *fileState[T], parsed bool) {
	s.checks.Add(1)
	if k != dbmSDBM {
		return &fileState[T]{err: refuseDBM(s, path, k)}, false
	}
	// apr_sdbm_open opens NAME.dir, then NAME.pag.
	var files [2]*os.File
	var infos [2]fs.FileInfo
	for i, ext := range [2]string{".dir", ".pag"} {
		fh, err := openFile(path + ext)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = fmt.Errorf("%w%s", err, hintAt(path))
			}
			return &fileState[T]{err: err}, false
		}
		defer fh.Close()
		info, err := fh.Stat()
		if err != nil {
			return &fileState[T]{err: err}, false
		}
		if !info.Mode().IsRegular() {
			return &fileState[T]{err: &fs.PathError{Op: "open", Path: path + ext, Err: errNotRegular}}, false
		}
		files[i], infos[i] = fh, info
	}
	if old != nil && old.err == nil && !old.racy && sameFile(old.info, infos[1]) && sameFile(old.dirInfo, infos[0]) {
		return old, false
	}
	var data [2][]byte
	h := sha256.New()
	racy := false
	for i, fh := range files {
		var buf bytes.Buffer
		buf.Grow(int(min(infos[i].Size(), 1<<30)) + bytes.MinRead)
		if _, err := buf.ReadFrom(fh); err != nil {
			return &fileState[T]{err: err}, false
		}
		data[i] = buf.Bytes()
		fmt.Fprintf(h, "%d\n", len(data[i]))
		h.Write(data[i])
		racy = racy || time.Since(infos[i].ModTime()) < racyWindow
	}
	st = &fileState[T]{info: infos[1], dirInfo: infos[0], racy: racy}
	h.Sum(st.sum[:0])
	if old != nil && old.err == nil && old.sum == st.sum {
		st.val, st.lineErrs = old.val, old.lineErrs
		return st, false
	}
	db, err := ParseSDBM(data[1], data[0])
	if err != nil {
		return &fileState[T]{err: &fs.PathError{Op: "read", Path: path + ".pag", Err: err}}, false
	}
	st.val, st.lineErrs = build(path, db)
	return st, true
}

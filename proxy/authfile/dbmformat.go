package authfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// A dbmFormat is what the first bytes of a file say it is.
type dbmFormat int

const (
	formatUnknown dbmFormat = iota
	formatEmpty
	formatBerkeleyDB
	formatGDBM
)

// sniffDBM returns the format of a file that begins with head, and a
// description of it for messages.
//
// Berkeley DB 2 and later keep the magic number of the access method at
// offset 12 of the metadata page (db_page.h: DBMETA), DB 1.85 at offset 0
// of its header; GDBM keeps its at offset 0 (gdbmconst.h: GDBM_OMAGIC,
// GDBM_MAGIC32, GDBM_MAGIC64 and the numsync variants). Each is written
// in the byte order of the machine, so both orders are tried.
func sniffDBM(head []byte) (dbmFormat, string) {
	if len(head) == 0 {
		return formatEmpty, "an empty file"
	}
	u32 := func(off int) (le, be uint32, ok bool) {
		if len(head) < off+4 {
			return 0, 0, false
		}
		return binary.LittleEndian.Uint32(head[off:]), binary.BigEndian.Uint32(head[off:]), true
	}
	if le, be, ok := u32(0); ok {
		for _, m := range []uint32{le, be} {
			switch m {
			case 0x13579ace, 0x13579acd, 0x13579acf, 0x13579ad0, 0x13579ad1:
				return formatGDBM, "a GDBM database"
			}
		}
	}
	bdb := map[uint32]string{0x061561: "hash", 0x053162: "btree", 0x042253: "queue", 0x074582: "heap"}
	for _, off := range []int{12, 0} {
		if le, be, ok := u32(off); ok {
			for _, m := range []uint32{le, be} {
				if am, ok := bdb[m]; ok {
					return formatBerkeleyDB, "a Berkeley DB " + am + " database"
				}
			}
		}
	}
	return formatUnknown, "neither a Berkeley DB nor a GDBM database"
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// convertCommand returns a shell command that writes the records of the
// file src, of format f, into the SDBM database dst (dst.pag and
// dst.dir), with the tools of Debian's packages, and the packages.
//
// httxt2dbm (apache2-utils) reads "key value" lines, the value being the
// word after the key: a value with white space in it, such as the hash
// and comment of htdbm -t "a comment", is cut at its first white space.
// The hash and the groups of a record of httxt2dbm or htdbm without
// white space come through whole.
func convertCommand(f dbmFormat, src, dst string) (cmd, pkgs string) {
	out := "httxt2dbm -f SDBM -i - -o " + shellQuote(dst)
	switch f {
	case formatBerkeleyDB:
		// db_dump -p prints each key and each value on a line of its
		// own, after a space, between HEADER=END and DATA=END.
		return "db_dump -p " + shellQuote(src) + ` | sed -n '/^HEADER=END$/,/^DATA=END$/{/=END$/d;s/^ //;p}' | paste -d' ' - - | ` + out, "db-util and apache2-utils"
	case formatGDBM:
		// gdbmtool's list prints "key value" lines.
		return "gdbmtool -r " + shellQuote(src) + " list | " + out, "gdbmtool and apache2-utils"
	}
	return "sed 's/:/ /' users.txt | " + out + " (from a text file of user:hash lines)", "apache2-utils"
}

// refuseDBM returns the error for a DBM file of kind k, which orderly does
// not read: the error of opening it, or one wrapping ErrDBMUnsupported
// that says what the file is and how to convert it to SDBM.
func refuseDBM(s *Store, path string, k dbmKind) error {
	// apr-util's DB and GDBM drivers open the path itself; NDBM (dbm_open)
	// adds .pag and .dir (the gdbm compatibility library, whose .pag is a
	// GDBM database) or .db (Berkeley DB's).
	file := path
	if k == dbmNDBM {
		file = path + ".pag"
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Stat(path + ".db"); err == nil {
				file = path + ".db"
			}
		}
	}
	fh, err := openFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w%s", err, hintAt(path))
		}
		return err
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: file, Err: errNotRegular}
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(fh, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return err
	}
	f, what := sniffDBM(head[:n])
	if k == dbmNDBM && f != formatBerkeleyDB && f != formatGDBM && file == path+".pag" && isSDBM(path) {
		return &dbmError{msg: fmt.Sprintf("%s: %v: AuthDBMType NDBM: %s.pag and %s.dir are an SDBM database: set AuthDBMType SDBM (AuthzDBMType SDBM for a group file)", path, ErrDBMUnsupported, path, path)}
	}
	typ := "AuthDBMType " + k.String()
	if d, _ := s.dbmKindOf(""); d == k {
		typ += " (or default, which is " + k.String() + " here)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v: %s: the file is %s; orderly reads only SDBM DBM files", file, ErrDBMUnsupported, typ, what)
	switch {
	case k == dbmNDBM:
		b.WriteString(" (and apr-util as Debian builds it has no NDBM driver, so Apache can't open it either)")
	case k == dbmDB && f == formatGDBM, k == dbmGDBM && f == formatBerkeleyDB:
		fmt.Fprintf(&b, " (and not of type %v, so Apache can't open it either)", k)
	}
	dst := path
	if k == dbmNDBM {
		dst = path + ".sdbm" // the NDBM .pag is the file being read
	}
	cmd, pkgs := convertCommand(f, file, dst)
	fmt.Fprintf(&b, ". Convert it to SDBM (with %s): %s; then set AuthDBMType SDBM (AuthzDBMType SDBM for a group file)", pkgs, cmd)
	if dst != path {
		fmt.Fprintf(&b, " and name %s in the directive", shellQuote(dst))
	}
	return &dbmError{msg: b.String()}
}

// hintAt returns what a missing DBM file at path may be instead: an SDBM
// database where another type was expected, or the reverse, as text to
// append to the error of opening it ("" if nothing is there).
func hintAt(path string) string {
	if _, err := os.Stat(path + ".pag"); err == nil {
		return fmt.Sprintf(" (%s.pag exists: an SDBM database needs AuthDBMType SDBM)", path)
	}
	fh, err := openFile(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	if info, err := fh.Stat(); err != nil || !info.Mode().IsRegular() {
		return ""
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(fh, head)
	_, what := sniffDBM(head[:n])
	return fmt.Sprintf(" (%s exists: %s, not SDBM)", path, what)
}

// A dbmError is an error wrapping ErrDBMUnsupported with a message of
// its own.
type dbmError struct{ msg string }

func (e *dbmError) Error() string { return e.msg }
func (e *dbmError) Unwrap() error { return ErrDBMUnsupported }

// isSDBM reports whether path.pag and path.dir are an SDBM database.
func isSDBM(path string) bool {
	pag, err := os.ReadFile(path + ".pag")
	if err != nil {
		return false
	}
	dir, err := os.ReadFile(path + ".dir")
	if err != nil {
		return false
	}
	_, err = ParseSDBM(pag, dir)
	return err == nil
}

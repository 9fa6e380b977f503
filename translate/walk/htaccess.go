package walk

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orderly-proxy/orderly/translate"
)

// htEntry is a parsed .htaccess file, kept while the file is unchanged.
type htEntry struct {
	mod  int64
	size int64
	ino  uint64
	sec  *translate.Section
	err  error
	// broken stands for the file when it does not load.
	broken *brokenFile
}

// htaccess reads the .htaccess file of a directory (prefix ends in "/") as
// ap_parse_htaccess does: the first AccessFileName that exists is parsed
// with the AllowOverride categories in force; an error in it answers 500
// for everything below, a file that exists but cannot be read 403. It is
// looked at on every request, as Apache does, and parsed again when it
// changes, so edits take effect without a restart.
func (e *Engine) htaccess(prefix string, allow translate.HtaccessAllow) (*translate.Section, int, *brokenFile) {
	for _, name := range e.cfg.AccessFileNames {
		fi, err := e.stat(prefix, name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			return nil, 403, nil // AH00529: unable to check htaccess file
		}
		if !fi.regular {
			return nil, 403, nil
		}
		p := prefix + name
		key := htKey(p, allow)
		mod, size, ino := fi.mod, fi.size, fi.ino
		if v, ok := e.ht.Load(key); ok {
			h := v.(*htEntry)
			// A file changed within the clock's resolution may look the
			// same: only trust entries older than two seconds.
			if h.mod == mod && h.size == size && h.ino == ino && time.Since(time.Unix(0, mod)) > 2*time.Second {
				return h.sec, htStatus(h.err), h.broken
			}
		}
		data, err := e.fs.ReadFile(p)
		if err != nil {
			return nil, 403, nil
		}
		sec, err := e.cfg.ParseHtaccessWith(p, data, allow, e.cfg.BaseDir)
		if err == nil {
			// orderly serve's refusal of a DBM file it cannot read.
			err = e.htaccessDBM(sec)
		}
		if sec != nil && e.rawSeen != nil && translate.SectionWantsRaw(sec) {
			e.rawSeen.Store(true)
		}
		if sec != nil {
			// Counters of rules that did not change survive the edit,
			// and a reload.
			if v, ok := e.ht.Load(key); ok && v.(*htEntry).sec != nil {
				adopt(sec.Rules, v.(*htEntry).sec.Rules)
			} else if e.prior != nil {
				for _, r := range sec.Rules {
					if o := e.prior[r.ID]; o != nil {
						r.Adopt(o)
					}
				}
			}
		}
		h := &htEntry{mod: mod, size: size, ino: ino, sec: sec, err: err}
		if err != nil {
			h.broken = newBrokenFile(p, err, e.cfg.BaseDir)
			if v, ok := e.ht.Load(key); ok && v.(*htEntry).broken != nil {
				h.broken.rule.Adopt(v.(*htEntry).broken.rule)
			} else if o := e.prior[h.broken.rule.ID]; o != nil {
				h.broken.rule.Adopt(o)
			}
		}
		e.ht.Store(key, h)
		return sec, htStatus(err), h.broken
	}
	return nil, 0, nil
}

// fileFacts is what the directory walk reads of a file's stat.
type fileFacts struct {
	regular bool  // fs.FileMode.IsRegular
	dir     bool  // fs.FileMode.IsDir
	mod     int64 // the modification time, unix nanoseconds
	size    int64
	ino     uint64
}

// stat stats dir+name with the one stat call e.fs.Stat(dir+name) makes.
// On the real file system it allocates nothing (statJoined): each
// request stats the whole path, and looks for .htaccess in every
// directory it walks, where most have none.
func (e *Engine) stat(dir, name string) (fileFacts, error) {
	if _, ok := e.fs.(osFS); ok {
		if f, handled, err := statJoined(dir, name); handled {
			return f, err
		}
	}
	fi, err := e.fs.Stat(dir + name)
	if err != nil {
		return fileFacts{}, err
	}
	return fileFacts{regular: fi.Mode().IsRegular(), dir: fi.IsDir(), mod: fi.ModTime().UnixNano(), size: fi.Size(), ino: inode(fi)}, nil
}

// htKey keys a path read under what allow allows, for the engine's cache
// of .htaccess files and a request's memo of them.
func htKey(path string, allow translate.HtaccessAllow) string {
	return path + "\x00" + strconv.Itoa(int(allow.Override)) + "\x00" + strconv.Itoa(int(allow.NonFatal)) + "\x00" + strconv.Itoa(int(allow.Opts)) + "\x00" + strings.Join(allow.List, " ")
}

// htMemo holds the .htaccess files one request (and its subrequests)
// read, by the key of the engine's cache.
type htMemo struct {
	files map[string]htRead
}

type htRead struct {
	sec    *translate.Section
	st     int
	broken *brokenFile
}

// htaccessMemo is htaccess, read once per request: a subrequest given the
// main request's memo (shareWalk) sees what the main request saw.
func (e *Engine) htaccessMemo(res *Result, prefix string, allow translate.HtaccessAllow) (*translate.Section, int, *brokenFile) {
	// The key is made only when there is a memo to look in or a file to
	// keep: most directories have no .htaccess, and a request without
	// one makes no key at all.
	if res.ht != nil {
		if r, ok := res.ht.files[htKey(prefix, allow)]; ok {
			return r.sec, r.st, r.broken
		}
	}
	sec, st, broken := e.htaccess(prefix, allow)
	if sec == nil && st == 0 && broken == nil {
		return nil, 0, nil // no file: nothing to share
	}
	if res.ht == nil {
		res.ht = &htMemo{files: map[string]htRead{}}
	}
	res.ht.files[htKey(prefix, allow)] = htRead{sec, st, broken}
	return sec, st, broken
}

func htStatus(err error) int {
	if err != nil {
		return 500
	}
	return 0
}

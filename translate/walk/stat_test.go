//go:build unix

package walk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// TestStat: the directory walk's stat of the real file system
// (statJoined where it has one) tells the walk what os.Stat told it, for
// each kind of file and each error it tells apart: absent (ENOENT, and
// ENOTDIR under a file), another error (ELOOP, ENAMETOOLONG), a file that
// is not regular (a directory, a FIFO, a symlink to either), and a path
// too long for the buffer or with a NUL byte, which os.Stat answers.
func TestStat(t *testing.T) {
	dir := t.TempDir() + "/"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(dir+"file", []byte("Deny from all\n"), 0o644))
	must(os.WriteFile(dir+"empty", nil, 0o600))
	must(os.Mkdir(dir+"sub", 0o755))
	must(syscall.Mkfifo(dir+"fifo", 0o644))
	must(os.Symlink("file", dir+"tofile"))
	must(os.Symlink("sub", dir+"todir"))
	must(os.Symlink("missing", dir+"dangling"))
	must(os.Symlink("loop", dir+"loop"))
	deep := dir + strings.Repeat("d/", 600) // over the buffer
	must(os.MkdirAll(deep, 0o755))
	must(os.WriteFile(deep+"file", []byte("x"), 0o644))

	real := &Engine{fs: OS}
	plain := &Engine{fs: struct{ FS }{OS}} // not osFS: e.fs.Stat itself
	for _, tc := range []struct {
		dir, name string
		want      string // "file", "irregular", "absent" or "error"
	}{
		{dir, "file", "file"},
		{dir, "empty", "file"},
		{dir, "tofile", "file"},
		{dir, "sub", "irregular"},
		{dir, "todir", "irregular"},
		{dir, "fifo", "irregular"},
		{dir, "missing", "absent"},
		{dir + "sub", "", "irregular"},
		{dir + "sub/", "", "irregular"},
		{dir + "file", "", "file"},
		{dir + "file/", "", "absent"},
		{dir, "dangling", "absent"},
		{dir + "file/", ".htaccess", "absent"},
		{dir + "missing/", ".htaccess", "absent"},
		{dir, "loop", "error"},
		{dir, strings.Repeat("n", 300), "error"},
		{deep, "file", "file"},
		{deep, "missing", "absent"},
		{dir, "fi\x00le", "error"},
		{dir, "\x00file", "error"},
		{"\x00" + dir, "file", "error"},
		{dir + "\x00/", "file", "error"},
		{dir, strings.Repeat("n", 1023-len(dir)), "error"}, // the buffer's size with the NUL
		{dir, strings.Repeat("n", 1024-len(dir)), "error"}, // one more
	} {
		name := tc.dir + tc.name
		if len(name) > 60 {
			name = name[:30] + "..." + name[len(name)-20:]
		}
		got, gerr := real.stat(tc.dir, tc.name)
		want, werr := plain.stat(tc.dir, tc.name)
		if kind := probeKind(got, gerr); kind != tc.want || kind != probeKind(want, werr) {
			t.Errorf("%q: %s (%v), e.fs.Stat %s (%v), want %s", name, kind, gerr, probeKind(want, werr), werr, tc.want)
		}
		if got != want {
			t.Errorf("%q: %+v, e.fs.Stat %+v", name, got, want)
		}
		var errno syscall.Errno
		if werr != nil && errors.As(werr, &errno) && !errors.Is(gerr, errno) {
			t.Errorf("%q: error %v, e.fs.Stat %v", name, gerr, werr)
		}
	}
	fi, err := os.Stat(dir + "file")
	must(err)
	if got, _ := real.stat(dir, "file"); got.size != 14 || got.mod != fi.ModTime().UnixNano() || got.ino == 0 && inode(fi) != 0 {
		t.Errorf("file: %+v, os.Stat size %d, modified %d", got, fi.Size(), fi.ModTime().UnixNano())
	}
}

// probeKind is what htaccess makes of a stat.
func probeKind(f fileFacts, err error) string {
	switch {
	case err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)):
		return "absent"
	case err != nil:
		return "error"
	case !f.regular:
		return "irregular"
	}
	return "file"
}

// TestHtaccessProbeDoesNotAllocate: a directory without an .htaccess
// file costs its walk no allocation on the real file system, where the
// probe stats without one, and nor does the stat of the whole path.
func TestHtaccessProbeDoesNotAllocate(t *testing.T) {
	if _, handled, _ := statJoined("/", "x"); !handled {
		t.Skip("no allocation-free stat on this platform")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	e, _ := engine(t, "")
	e.fs = OS
	if len(e.cfg.AccessFileNames) == 0 {
		t.Fatal("no AccessFileName to look for")
	}
	prefix := filepath.Join(dir, "a", "b") + "/"
	allow := translate.HtaccessAllow{Override: translate.OrAll}
	if n := testing.AllocsPerRun(100, func() {
		if sec, st, broken := e.htaccess(prefix, allow); sec != nil || st != 0 || broken != nil {
			t.Fatal(sec, st, broken)
		}
	}); n != 0 {
		t.Errorf("%v allocations a probe of an absent file, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if f, err := e.stat(prefix, ""); err != nil || !f.dir {
			t.Fatal(f, err)
		}
	}); n != 0 {
		t.Errorf("%v allocations a stat of a directory, want 0", n)
	}
}

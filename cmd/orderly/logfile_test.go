package main

import (
	"os"
	"path/filepath"
	"testing"
)

// After logrotate moves the log away, Reopen makes orderly write to a new
// file at the configured path; the moved file keeps what came before.
func TestLogFileReopen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "access.log")
	l, err := openLog(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Write([]byte("one\n"))
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("two\n"))
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("three\n"))
	for name, want := range map[string]string{p + ".1": "one\ntwo\n", p: "three\n"} {
		if b, _ := os.ReadFile(name); string(b) != want {
			t.Errorf("%s: %q, want %q", filepath.Base(name), b, want)
		}
	}
	// A path that cannot be opened again: the old file stays in use.
	os.Rename(dir, dir+".gone")
	defer os.Rename(dir+".gone", dir)
	if err := l.Reopen(); err == nil {
		t.Error("reopen in a missing directory succeeded")
	}
	if _, err := l.Write([]byte("four\n")); err != nil {
		t.Errorf("write after a failed reopen: %v", err)
	}
}

//go:build unix

package authfile

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStoreFIFO checks that a FIFO in place of a file is an error, not a
// hang.
func TestStoreFIFO(t *testing.T) {
	s := NewStore()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Groups(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Groups(fifo): no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Groups(fifo) hangs")
	}
}

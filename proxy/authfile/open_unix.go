//go:build unix

package authfile

import (
	"os"
	"syscall"
)

// openFile opens the file at path for reading. It opens it without
// blocking, so that a FIFO put in place of a file fails at the regular
// file test instead of hanging until a writer comes.
func openFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

//go:build !unix

package authfile

import "os"

// openFile opens the file at path for reading.
func openFile(path string) (*os.File, error) {
	return os.Open(path)
}

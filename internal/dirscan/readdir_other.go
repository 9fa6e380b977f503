//go:build !linux

package dirscan

import "os"

// fsKinds is used on Linux only.
type fsKinds struct{}

func (*fsKinds) close() {}

// readDir lists dir: the names of its subdirectories, and of its other
// entries those in want.
func readDir(dir string, want map[string]bool, _ *fsKinds) (dirs, files []string, ok bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, false
	}
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		} else if want[e.Name()] {
			files = append(files, e.Name())
		}
	}
	return dirs, files, true
}

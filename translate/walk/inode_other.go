//go:build !unix

package walk

import "io/fs"

func inode(fs.FileInfo) uint64 { return 0 }

// owner is unknown here: SymLinksIfOwnerMatch then allows no link.
func owner(fs.FileInfo) (uint32, bool) { return 0, false }

// group is unknown here: Require file-group denies (AH01640).
func group(fs.FileInfo) (uint32, bool) { return 0, false }

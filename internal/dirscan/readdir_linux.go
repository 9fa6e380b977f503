package dirscan

import (
	"encoding/binary"
	"strings"

	"golang.org/x/sys/unix"
)

// countingFS are the file systems whose directories have as links two
// plus one per subdirectory, the ones GNU find's leaf optimisation trusts
// too: ext2/3/4, XFS and tmpfs. (Not btrfs or an overlay's merged
// directories, which say 1, nor FUSE or network file systems, which may
// say anything.)
var countingFS = map[int64]bool{unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true, unix.TMPFS_MAGIC: true}

// fsKinds remembers, by device, whether the link counts of its
// directories count their subdirectories; and holds the parent
// directories of those listed open, for looking names up from them
// rather than from "/" (a thousand document roots are often siblings).
// Each worker has its own.
type fsKinds struct {
	counts  map[uint64]bool
	parents map[string]int // directory -> an O_PATH descriptor, or -1
}

// at returns a descriptor to look dir up from and the name to look up:
// its parent's, and its last element, or AT_FDCWD and dir itself.
func (k *fsKinds) at(dir string) (int, string) {
	i := strings.LastIndexByte(dir, '/')
	if i <= 0 || i == len(dir)-1 {
		return unix.AT_FDCWD, dir
	}
	parent, name := dir[:i], dir[i+1:]
	fd, ok := k.parents[parent]
	if !ok {
		var err error
		fd, err = unix.Open(parent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			fd = -1
		}
		if k.parents == nil {
			k.parents = map[string]int{}
		}
		k.parents[parent] = fd
	}
	if fd < 0 {
		return unix.AT_FDCWD, dir
	}
	return fd, name
}

// close closes the parents' descriptors.
func (k *fsKinds) close() {
	for _, fd := range k.parents {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

func (k *fsKinds) countsSubdirs(dir string, dev uint64) bool {
	counts, ok := k.counts[dev]
	if !ok {
		var fs unix.Statfs_t
		counts = unix.Statfs(dir, &fs) == nil && countingFS[int64(fs.Type)]
		if k.counts == nil {
			k.counts = map[uint64]bool{}
		}
		k.counts[dev] = counts
	}
	return counts
}

// readDir lists dir: the names of its subdirectories, and of its other
// entries those in want. A directory whose link count says it has no
// subdirectory, on a file system where that count is kept, is not listed:
// the names in want are looked up in it, two system calls where listing
// takes four. Otherwise it is listed with getdents64 into one buffer:
// os.ReadDir without an os.File, a DirEntry per entry, or sorting.
func readDir(dir string, want map[string]bool, kinds *fsKinds) (dirs, files []string, ok bool) {
	at, rel := kinds.at(dir)
	var st unix.Stat_t
	if err := unix.Fstatat(at, rel, &st, 0); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, nil, false
	}
	if st.Nlink == 2 && kinds.countsSubdirs(dir, st.Dev) {
		for name := range want {
			var f unix.Stat_t
			if unix.Fstatat(at, rel+"/"+name, &f, unix.AT_SYMLINK_NOFOLLOW) == nil && f.Mode&unix.S_IFMT != unix.S_IFDIR {
				files = append(files, name)
			}
		}
		return nil, files, true
	}
	fd, err := unix.Openat(at, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Openat(at, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, nil, false
	}
	defer unix.Close(fd)
	var buf [8192]byte
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, nil, false
		}
		if n <= 0 {
			return dirs, files, true
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, then the name, NUL-terminated.
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, nil, false
			}
			typ, name := b[18], b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			b = b[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			switch typ {
			case unix.DT_DIR:
				dirs = append(dirs, string(name))
			case unix.DT_UNKNOWN:
				// Some file systems do not say: ask, without following
				// a link, as os.ReadDir's IsDir would.
				var st unix.Stat_t
				if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
					dirs = append(dirs, string(name))
				} else if want[string(name)] {
					files = append(files, string(name))
				}
			default:
				if want[string(name)] {
					files = append(files, string(name))
				}
			}
		}
	}
}

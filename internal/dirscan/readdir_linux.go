package dirscan

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// readDir lists dir with getdents64 into one buffer: the names of its
// subdirectories, and of its other entries those in want. It is
// os.ReadDir without an os.File, a DirEntry per entry, or sorting.
func readDir(dir string, want map[string]bool) (dirs, files []string, ok bool) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
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

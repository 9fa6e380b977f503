//go:build linux && (amd64 || arm64)

package walk

import (
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// atFDCWD is AT_FDCWD: fstatat resolves a relative path from the
// working directory, as stat does.
const atFDCWD = -100

// statJoined stats dir+name with the one fstatat call os.Stat makes, on
// a NUL-terminated copy of the path in a buffer on the stack, and so
// allocates nothing, whether the file exists or not. The error is the
// call's errno, not wrapped: errors.Is reads it as it reads os.Stat's.
// handled is false, and nothing was called, for a path too long for the
// buffer or one with a NUL byte (which os.Stat refuses): the caller
// stats those as before.
func statJoined(dir, name string) (f fileFacts, handled bool, err error) {
	var buf [1024]byte
	n := len(dir) + len(name)
	if n >= len(buf) || strings.IndexByte(dir, 0) >= 0 || strings.IndexByte(name, 0) >= 0 {
		return fileFacts{}, false, nil
	}
	copy(buf[copy(buf[:], dir):], name)
	buf[n] = 0
	fd := atFDCWD
	var st syscall.Stat_t
	for {
		_, _, errno := syscall.Syscall6(sysFstatat, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&st)), 0, 0, 0)
		if errno == syscall.EINTR {
			continue // os.Stat's ignoringEINTR
		}
		if errno != 0 {
			return fileFacts{}, true, errno
		}
		break
	}
	// os's fillFileStatFromSys: these types set a ModeType bit; any
	// other is a regular file.
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		f.dir = true
	case syscall.S_IFBLK, syscall.S_IFCHR, syscall.S_IFIFO, syscall.S_IFLNK, syscall.S_IFSOCK:
	default:
		f.regular = true
	}
	f.mod = time.Unix(st.Mtim.Unix()).UnixNano()
	f.size = st.Size
	f.ino = uint64(st.Ino)
	return f, true, nil
}

//go:build unix

package proxy

import (
	"net"
	"syscall"
)

// alive reports whether the idle connection c is still open: nothing to
// read (the backend has neither closed it nor sent anything unasked). It
// costs one recvfrom with MSG_PEEK, which takes nothing off the socket.
func alive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true // never wait
	})
	return err == nil && ok
}

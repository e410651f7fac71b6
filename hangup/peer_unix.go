//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package hangup

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the peer of conn has closed the connection
// (an end of stream or a reset waits to be read). It peeks without
// blocking, so any bytes waiting (a pipelined request) stay for the
// server to read.
func peerClosed(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var buf [1]byte
	_ = raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil || errors.Is(err, syscall.ECONNRESET)
		return true // never wait for the socket to become readable
	})
	return closed
}

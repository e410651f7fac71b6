//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path (created if missing), so two
// processes never append to the same database file. A separate lock file
// survives the file swaps of compaction; the kernel drops the lock when the
// process dies, so a crash never leaves the database locked.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	if err := lockOpenFile(f, path); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// lockOpenFile takes an exclusive flock on f without waiting. Locking the
// database file itself, not only a lock file named after it, is what stops a
// hard link: both names reach one inode, and flock belongs to the inode.
func lockOpenFile(f *os.File, name string) error {
	var err error
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("%w: %s is locked by another process or adapter", ErrLocked, name)
	}
	if err != nil {
		return fmt.Errorf("store: lock %s: %w", name, err)
	}
	return nil
}

// linkCount is the number of names a file has (0 once its last name is
// removed).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import (
	"fmt"
	"os"
)

// lockFile creates path but takes no lock: this platform has no flock, so
// running two processes on one database file is not detected.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return f, nil
}

// lockOpenFile takes no lock on this platform (see lockFile).
func lockOpenFile(*os.File, string) error { return nil }

// linkCount reports no other names: without locks there is nothing to keep.
func linkCount(os.FileInfo) uint64 { return 0 }

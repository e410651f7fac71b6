package transfer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/quarrydata/quarry/store"
)

// ErrExists is returned by Snapshot and Restore rather than overwrite data.
var ErrExists = errors.New("transfer: the destination already holds data")

// SnapshotInfo describes a snapshot or a restore.
type SnapshotInfo struct {
	Records int64 // records in the copy
	Bytes   int64 // size of the data file copied
	Files   int   // uploaded files copied (the <db>.files directory)
}

// Snapshot copies the data file src into dst while a server may go on
// writing src. The store only ever appends to its file (compaction writes
// a new file and renames it over the old one, which an open descriptor
// keeps reading), and a commit of several records is framed by a journal,
// so every prefix of the file is what a crash at that moment would have
// left: the copy is opened as the store opens a file after a crash
// (a torn last command dropped, a journal replayed), which makes it a
// consistent snapshot of some moment during the copy. Every write
// acknowledged before Snapshot started is in it.
//
// Uploaded files kept beside the database (<src>.files) are copied to
// <dst>.files. dst must not exist.
func Snapshot(src, dst string) (*SnapshotInfo, error) {
	info, err := SnapshotData(src, dst)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, err
	}
	if info.Files, err = copyTree(real+".files", dst+".files"); err != nil {
		return nil, err
	}
	return info, nil
}

// SnapshotData is Snapshot of the data file alone, without uploaded files.
func SnapshotData(src, dst string) (*SnapshotInfo, error) {
	if _, err := os.Stat(dst); err == nil {
		return nil, fmt.Errorf("%w: %s exists", ErrExists, dst)
	}
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, err
	}
	return copyRecovered(real, dst)
}

// Restore copies a snapshot into dst, a data file that does not exist yet
// or is empty, and which no server has open.
func Restore(snapshot, dst string) (*SnapshotInfo, error) {
	if fi, err := os.Stat(dst); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("%w: %s is not empty; restore into a new data file", ErrExists, dst)
	} else if err == nil {
		// An empty file: make sure no server holds it.
		a, err := store.Open(dst)
		if err != nil {
			return nil, err
		}
		if err := a.Close(); err != nil {
			return nil, err
		}
	}
	info, err := copyRecovered(snapshot, dst)
	if err != nil {
		return nil, err
	}
	if info.Files, err = copyTree(snapshot+".files", dst+".files"); err != nil {
		return nil, err
	}
	return info, nil
}

// copyRecovered copies src to dst through a temporary file that the store
// opens once (finishing any torn or journalled commit) and reads whole.
func copyRecovered(src, dst string) (*SnapshotInfo, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	in, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	tmp := dst + ".partial"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	defer os.Remove(tmp + ".lock")
	n, err := io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if err = errors.Join(err, out.Close()); err != nil {
		return nil, err
	}
	a, err := store.Open(tmp)
	if err != nil {
		return nil, fmt.Errorf("transfer: the copy of %s does not open: %w", src, err)
	}
	info := &SnapshotInfo{Bytes: n}
	err = a.Load(func(store.Record) error {
		info.Records++
		return nil
	})
	if err = errors.Join(err, a.Close()); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return nil, err
	}
	return info, syncDir(filepath.Dir(dst))
}

// copyTree copies the regular files under src (if it exists) to dst.
func copyTree(src, dst string) (int, error) {
	if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	n := 0
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		n++
		return copyFile(path, target)
	})
	return n, err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

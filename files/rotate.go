package files

import (
	"crypto/cipher"
	"fmt"
	"os"
	"path/filepath"
)

// RotateKey re-seals the files of a Local directory: files encrypted with
// oldKey (or stored in plaintext) are rewritten encrypted with newKey, or
// in plaintext when newKey is empty. names limits it to those files; none
// means every file. It returns the names rewritten. A file that does not
// open with oldKey stops the rotation with an error naming it; files done
// so far stay rotated (each rewrite is atomic), so running it again with
// the same keys finishes the job.
func RotateKey(dir, oldKey, newKey string, names []string) ([]string, error) {
	l, err := NewLocal(dir, "")
	if err != nil {
		return nil, err
	}
	var from, to cipher.AEAD
	if oldKey != "" {
		if from, err = newAEAD(oldKey); err != nil {
			return nil, err
		}
	}
	if newKey != "" {
		if to, err = newAEAD(newKey); err != nil {
			return nil, err
		}
	}
	if len(names) == 0 {
		if names, err = l.list(); err != nil {
			return nil, err
		}
	}
	var done []string
	for _, name := range names {
		if err := l.reseal(name, from, to); err != nil {
			return done, fmt.Errorf("files: rotating %s: %w", name, err)
		}
		done = append(done, name)
	}
	return done, nil
}

// reseal rewrites one file sealed with to (plaintext when nil); a file
// stored in plaintext is read as such whatever from is.
func (l *Local) reseal(name string, from, to cipher.AEAD) error {
	if err := ValidName(name); err != nil {
		return err
	}
	side, err := l.sidecar(name)
	if err != nil {
		return err
	}
	var data []byte
	if side.Encrypted {
		data, err = l.decrypt(name, from)
	} else {
		data, err = os.ReadFile(filepath.Join(l.dir, name))
	}
	if err != nil {
		return err
	}
	side.Size = int64(len(data))
	return l.write(name, data, side.Info, to)
}

// list names every file in the directory.
func (l *Local) list() ([]string, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && ValidName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

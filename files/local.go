package files

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Layout of a Local directory. Valid names never start with ".", so the
// two hidden subdirectories can never collide with a file.
const (
	metaDir = ".meta" // <name>.json: content type, size, metadata, tags
	tmpDir  = ".tmp"  // files being written, renamed into place when whole
	// keyInfo separates this use of the encryptionKey option from any other.
	keyInfo = "quarry files AES-256-GCM v1"
)

// Local keeps files in one directory of the local filesystem: the bytes
// in <dir>/<name>, the description in <dir>/.meta/<name>.json. Files are
// written to a temporary file and renamed into place, so a crash never
// leaves half a file. With a key, contents are sealed with AES-256-GCM
// (a random nonce per file, the name as additional data): a changed byte,
// a file moved to another name or a wrong key is detected on read.
type Local struct {
	dir  string
	aead cipher.AEAD // nil: plaintext
}

// sidecar is the JSON kept beside each file.
type sidecar struct {
	Info
	Encrypted bool `json:"encrypted,omitempty"`
}

// NewLocal opens (creating it if needed) a directory of files. A non-empty
// key encrypts every file written from now on; files written without a
// key stay readable (RotateKey encrypts them).
func NewLocal(dir, key string) (*Local, error) {
	for _, d := range []string{dir, filepath.Join(dir, metaDir), filepath.Join(dir, tmpDir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
	}
	l := &Local{dir: dir}
	if key != "" {
		aead, err := newAEAD(key)
		if err != nil {
			return nil, err
		}
		l.aead = aead
	}
	return l, nil
}

// newAEAD derives a 256-bit key from the option with HKDF-SHA256.
func newAEAD(key string) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, []byte(key), nil, keyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("files: deriving the key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	return cipher.NewGCM(block)
}

// Dir is the directory the files live in.
func (l *Local) Dir() string { return l.dir }

// Create implements Adapter.
func (l *Local) Create(_ context.Context, name string, r io.Reader, size int64, info Info) error {
	if err := ValidName(name); err != nil {
		return err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("files: reading the upload: %w", err)
	}
	info.Size = int64(len(data))
	return l.write(name, data, info, l.aead)
}

// write stores data and its sidecar, sealing data with aead when set.
func (l *Local) write(name string, data []byte, info Info, aead cipher.AEAD) error {
	side := sidecar{Info: info, Encrypted: aead != nil}
	if aead != nil {
		nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(data)+aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return fmt.Errorf("files: %w", err)
		}
		data = aead.Seal(nonce, nonce, data, []byte(name))
	}
	meta, err := json.Marshal(side)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	// The sidecar goes first: a file never appears without its description.
	if err := l.atomicWrite(filepath.Join(l.dir, metaDir, name+".json"), meta); err != nil {
		return err
	}
	return l.atomicWrite(filepath.Join(l.dir, name), data)
}

// atomicWrite writes a temporary file, syncs it and renames it to dst.
func (l *Local) atomicWrite(dst string, data []byte) error {
	f, err := os.CreateTemp(filepath.Join(l.dir, tmpDir), "upload-*")
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("files: writing %s: %w", filepath.Base(dst), err)
	}
	return nil
}

// Open implements Adapter. An encrypted file is read and authenticated
// whole before a byte of it is returned.
func (l *Local) Open(_ context.Context, name string) (ReadSeekCloser, Info, error) {
	if ValidName(name) != nil {
		return nil, Info{}, ErrNotFound
	}
	side, err := l.sidecar(name)
	if err != nil {
		return nil, Info{}, err
	}
	if !side.Encrypted {
		f, err := os.Open(filepath.Join(l.dir, name))
		if err != nil {
			return nil, Info{}, notFound(err)
		}
		if st, err := f.Stat(); err == nil {
			side.Size = st.Size()
		}
		return f, side.Info, nil
	}
	data, err := l.decrypt(name, l.aead)
	if err != nil {
		return nil, Info{}, err
	}
	side.Size = int64(len(data))
	return nopCloser{bytes.NewReader(data)}, side.Info, nil
}

// sidecar reads a file's description; a missing one (a file put there by
// hand) describes a plaintext file by its name alone.
func (l *Local) sidecar(name string) (sidecar, error) {
	side := sidecar{Info: Info{Name: name}}
	raw, err := os.ReadFile(filepath.Join(l.dir, metaDir, name+".json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat(filepath.Join(l.dir, name)); err != nil {
			return side, notFound(err)
		}
	case err != nil:
		return side, fmt.Errorf("files: %w", err)
	default:
		if err := json.Unmarshal(raw, &side); err != nil {
			return side, fmt.Errorf("files: description of %s: %w", name, err)
		}
	}
	side.Name = name
	side.ContentType = ContentType(name, side.ContentType)
	return side, nil
}

// decrypt reads and opens a sealed file.
func (l *Local) decrypt(name string, aead cipher.AEAD) ([]byte, error) {
	sealed, err := os.ReadFile(filepath.Join(l.dir, name))
	if err != nil {
		return nil, notFound(err)
	}
	if aead == nil || len(sealed) < aead.NonceSize() {
		return nil, ErrTampered
	}
	n := aead.NonceSize()
	data, err := aead.Open(nil, sealed[:n], sealed[n:], []byte(name))
	if err != nil {
		return nil, ErrTampered
	}
	return data, nil
}

// Delete implements Adapter.
func (l *Local) Delete(_ context.Context, name string) error {
	if ValidName(name) != nil {
		return ErrNotFound
	}
	if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
		return notFound(err)
	}
	if err := os.Remove(filepath.Join(l.dir, metaDir, name+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("files: %w", err)
	}
	return nil
}

func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	return fmt.Errorf("files: %w", err)
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

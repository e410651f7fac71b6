package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// MemoryURI opens a buntdb adapter that keeps everything in memory and
// persists nothing (tests, throw-away servers).
const MemoryURI = ":memory:"

// ErrUnsupportedURI is returned by Open for a database URI it cannot serve:
// an empty URI, a scheme it does not know (mongodb://, ...) or a backend
// whose package the program did not import (postgres://). The wrapping message names the
// scheme but never repeats the URI, which may carry a password.
var ErrUnsupportedURI = errors.New("store: unsupported database URI")

// ErrInvalidRecord is returned by Commit when a record cannot be stored: an
// unknown Kind, or a Class containing a NUL byte. Nothing of that Commit is
// applied.
var ErrInvalidRecord = errors.New("store: invalid record")

// ErrDamaged is returned (wrapped, with what is wrong) when a data file
// holds something that is not a record Quarry wrote: Open refuses to start
// rather than drop anything.
var ErrDamaged = errors.New("the data file is damaged")

// ErrLocked is returned by Open when another process (or another Adapter in
// this process) already has the database file open.
var ErrLocked = errors.New("store: database file is in use")

// Open picks a backend from a database URI:
//
//	:memory:                      buntdb in memory, nothing persisted
//	data/quarry.db, /var/q.db     buntdb on disk (parent directories are created)
//	file:data/quarry.db           the same; file:///abs/path is accepted too
//	postgres://, postgresql://    the opener registered for the scheme (package
//	                              store/postgres registers itself when imported)
//	any other scheme://           ErrUnsupportedURI
//
// File paths are taken literally: no percent-decoding, no query parameters.
// Open resolves symbolic links, then locks both the database file itself
// and "<file>.lock" beside it while the adapter is open (ErrLocked for a
// second opener under any name, hard links included), and buntdb uses
// "<file>.tmp" while it compacts. Opening a file finishes any commit group a
// crash interrupted.
func Open(uri string) (Adapter, error) {
	if scheme, ok := uriScheme(uri); ok {
		if open := registered(scheme); open != nil {
			return open(uri)
		}
	}
	path, err := parseURI(uri)
	if err != nil {
		return nil, err
	}
	if path == MemoryURI {
		return openMemory()
	}
	return openBunt(path, defaultBuntOptions())
}

// parseURI returns the file path behind uri, MemoryURI, or an error wrapping
// ErrUnsupportedURI.
func parseURI(uri string) (string, error) {
	if uri == "" {
		return "", fmt.Errorf("%w: the database URI is empty", ErrUnsupportedURI)
	}
	if uri == MemoryURI {
		return MemoryURI, nil
	}
	if scheme, ok := uriScheme(uri); ok {
		switch strings.ToLower(scheme) {
		case "postgres", "postgresql":
			return "", fmt.Errorf("%w: this program was built without the PostgreSQL adapter (store/postgres); use a file path or %s", ErrUnsupportedURI, MemoryURI)
		case "file":
			// file:///abs/path or file://localhost/abs/path
			rest := uri[len("file://"):]
			switch {
			case strings.HasPrefix(rest, "/"):
				return rest, nil
			case strings.HasPrefix(strings.ToLower(rest), "localhost/"):
				return rest[len("localhost"):], nil
			default:
				return "", fmt.Errorf("%w: file:// URIs must name a local absolute path (file:///path)", ErrUnsupportedURI)
			}
		default:
			return "", fmt.Errorf("%w: scheme %q is not supported; use a file path, file:path or %s", ErrUnsupportedURI, scheme, MemoryURI)
		}
	}
	if rest, ok := strings.CutPrefix(uri, "file:"); ok {
		if rest == "" {
			return "", fmt.Errorf("%w: file: URI without a path", ErrUnsupportedURI)
		}
		return rest, nil
	}
	return uri, nil
}

// uriScheme reports the scheme of a "scheme://..." URI (RFC 3986 scheme
// characters). Anything else, such as a plain or Windows path, is not a URI.
func uriScheme(uri string) (string, bool) {
	i := strings.Index(uri, "://")
	if i <= 0 {
		return "", false
	}
	s := uri[:i]
	for j := 0; j < len(s); j++ {
		c := s[j]
		letter := c|0x20 >= 'a' && c|0x20 <= 'z'
		if letter || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			continue
		}
		return "", false
	}
	return s, len(s) > 1 // a one-letter "scheme" is a Windows drive (C://x)
}

var (
	openersMu sync.RWMutex
	openers   = map[string]func(uri string) (Adapter, error){}
)

// Register makes Open hand URIs of scheme ("postgres") to open. Backends
// that live in their own packages (and bring their own dependencies)
// register themselves from init, so store imports none of them.
func Register(scheme string, open func(uri string) (Adapter, error)) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[strings.ToLower(scheme)] = open
}

func registered(scheme string) func(uri string) (Adapter, error) {
	openersMu.RLock()
	defer openersMu.RUnlock()
	return openers[strings.ToLower(scheme)]
}

// Package files keeps the bytes of uploaded files behind one Adapter: the
// local filesystem (optionally AES-256-GCM encrypted, see Local) and
// S3-compatible object storage (S3). It owns file names (ValidName,
// StoredName) but knows nothing of HTTP, callers or objects: it never
// imports service or transport, and never touches the object store.
package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"regexp"
	"strings"
)

// Limits and sentinel errors of file names and contents.
const (
	// MaxNameLength is the longest file name accepted, in bytes.
	MaxNameLength = 128
	// prefixLength is the number of hex digits StoredName puts before a name.
	prefixLength = 32
)

var (
	// ErrNotFound: no file has that name.
	ErrNotFound = errors.New("files: file not found")
	// ErrTampered: an encrypted file failed authentication (changed on
	// disk, or read with the wrong key).
	ErrTampered = errors.New("files: file failed authentication (tampered or wrong key)")
	// ErrNameTooLong and ErrNameInvalid refuse names (see ValidName).
	ErrNameTooLong = errors.New("files: name too long")
	ErrNameInvalid = errors.New("files: name contains invalid characters")
)

// Info describes a stored file.
type Info struct {
	Name        string            `json:"-"`
	ContentType string            `json:"contentType"`
	Size        int64             `json:"size"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
}

// ReadSeekCloser is an open file: it seeks (for byte ranges) and must be
// closed.
type ReadSeekCloser interface {
	io.ReadSeeker
	io.Closer
}

// Adapter stores files by name. Names reaching an adapter are valid
// (ValidName). Implementations are safe for concurrent use.
type Adapter interface {
	// Create stores size bytes from r under name with info's content type,
	// metadata and tags, replacing any file of that name. A failed Create
	// leaves no partial file behind.
	Create(ctx context.Context, name string, r io.Reader, size int64, info Info) error
	// Open returns the file's contents and description, or ErrNotFound.
	Open(ctx context.Context, name string) (ReadSeekCloser, Info, error)
	// Delete removes the file; deleting a missing file is ErrNotFound.
	Delete(ctx context.Context, name string) error
}

// ValidName checks a file name: 1 to MaxNameLength bytes of letters,
// digits and "_ . - @ ~" or space, starting with a letter, a digit or "_"
// (so never "." or ".."), with no ".." anywhere. Names can never hold a
// path separator, so a name never leaves its adapter's directory.
func ValidName(name string) error {
	if len(name) > MaxNameLength {
		return ErrNameTooLong
	}
	if name == "" || strings.Contains(name, "..") {
		return ErrNameInvalid
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if alnum || c == '_' || i > 0 && strings.IndexByte(".-@~ ", c) >= 0 {
			continue
		}
		return ErrNameInvalid
	}
	return nil
}

// ValidSpecName is the specification's rule for a client's file name: 1
// to MaxNameLength characters of letters, digits, "_" and "." (with
// ValidName's other rules). ValidName's wider set (Parse Server's) is what
// a stored name may hold, so files saved under either rule are served.
func ValidSpecName(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '-' || c == '@' || c == '~' || c == ' ' {
			return ErrNameInvalid
		}
	}
	return nil
}

// StoredName is the name a file is kept under: unless preserve is set,
// 32 random hex digits and "_" before name, so same-named uploads never
// collide.
func StoredName(name string, preserve bool) string {
	if preserve {
		return name
	}
	var b [prefixLength / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:]) + "_" + name
}

// Extension is the text after the name's last ".", or else the subtype of
// contentType ("image/png" gives "png"), lower-cased.
func Extension(name, contentType string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i < len(name)-1 {
		return strings.ToLower(name[i+1:])
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if _, sub, ok := strings.Cut(mt, "/"); ok {
		sub, _, _ = strings.Cut(sub, "+")
		return strings.ToLower(sub)
	}
	return ""
}

// ContentType is the type to store and serve a file with: the given one,
// or else the one its name's extension suggests, or else
// application/octet-stream.
func ContentType(name, given string) string {
	if given = strings.TrimSpace(given); given != "" {
		return given
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// activeExtensions are the extensions of content a browser runs or
// renders as a page: served as attachments, refused from non-master
// uploads unless fileExtensions allows them.
var activeExtensions = map[string]bool{
	"html": true, "htm": true, "shtml": true, "xhtml": true, "xht": true, "mht": true, "mhtml": true,
	"svg": true, "svgz": true, "js": true, "mjs": true, "xml": true, "xsl": true, "xslt": true,
	"php": true, "swf": true,
}

// activeTypes are the media types a browser runs or renders as a page.
var activeTypes = map[string]bool{
	"text/html": true, "application/xhtml+xml": true, "image/svg+xml": true, "text/javascript": true,
	"application/javascript": true, "application/ecmascript": true, "text/xml": true, "application/xml": true,
	"application/x-shockwave-flash": true, "text/xsl": true,
}

// Active reports whether a file with this name or content type is
// content a browser would run or render as a page (HTML, SVG, script,
// XML): such files are served as attachments, never inline.
func Active(name, contentType string) bool {
	if i := strings.LastIndexByte(name, '.'); i >= 0 && activeExtensions[strings.ToLower(name[i+1:])] {
		return true
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return activeTypes[strings.ToLower(mt)]
}

// ActiveExtension reports whether ext (as Extension gives it) names
// active content.
func ActiveExtension(ext string) bool {
	return activeExtensions[ext] || ext == "javascript" || ext == "xhtml"
}

// ExtensionRule compiles the fileExtensions option into a test of an
// extension (as Extension gives it). Each pattern is a regular expression
// (Go syntax, matched against the whole extension, case-insensitively) or
// "*" for every extension. No patterns: every extension but active
// content (see Active).
func ExtensionRule(patterns []string) (func(ext string) bool, error) {
	if len(patterns) == 0 {
		return func(ext string) bool { return !ActiveExtension(ext) }, nil
	}
	var res []*regexp.Regexp
	for _, p := range patterns {
		if p == "*" {
			return func(string) bool { return true }, nil
		}
		re, err := regexp.Compile("(?i)^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("fileUpload.fileExtensions: %q is not a regular expression Go accepts: %w", p, err)
		}
		res = append(res, re)
	}
	return func(ext string) bool {
		for _, re := range res {
			if re.MatchString(ext) {
				return true
			}
		}
		return false
	}, nil
}

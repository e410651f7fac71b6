package transfer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Format is the shape of one source file.
type Format string

// Source formats.
const (
	FormatMongoLines Format = "mongoexport"       // one Extended JSON document per line
	FormatMongoArray Format = "mongoexport-array" // mongoexport --jsonArray
	FormatBSON       Format = "mongodump"         // a mongodump .bson file
	FormatDashboard  Format = "dashboard"         // Parse Dashboard's {"results": [...]}
	FormatPostgres   Format = "postgres"          // rows of a Parse Server PostgreSQL table
)

// MaxDocumentBytes bounds one source document (MongoDB's own limit is
// 16 MB; Extended JSON spells it out somewhat longer).
const MaxDocumentBytes = 64 << 20

// ErrNoSource is returned when --from names nothing importable.
var ErrNoSource = errors.New("transfer: no collection files found")

// Collection is one source file (a MongoDB collection or a Dashboard
// class) or one table of a PostgreSQL database.
type Collection struct {
	Name string // collection name: "Post", "_SCHEMA", "_Join:likes:Post"
	Path string // the file; "" for a table
	Size int64  // bytes on disk, or the table's estimated rows

	open func() (documents, error) // a table's rows; nil for a file
}

// documents yields the documents of one collection in a stable order.
type documents interface {
	// Next returns the next document's bytes, or io.EOF after the last;
	// with skip it reads past the document and returns nil.
	Next(skip bool) ([]byte, error)
	// Decode turns bytes from Next into a document; safe for concurrent use.
	Decode(raw []byte) (map[string]any, error)
	// Offset is how far the reading came, in the unit of Collection.Size.
	Offset() int64
	Format() Format
	Close() error
}

// isSchema reports whether the collection holds class schemas.
func (c Collection) isSchema() bool { return c.Name == schemaColl }

// joinOf returns the store class of a _Join:<key>:<class> collection.
func (c Collection) joinOf() (string, bool) {
	rest, ok := strings.CutPrefix(c.Name, joinPrefix)
	if !ok || !strings.Contains(rest, ":") {
		return "", false
	}
	return rest, true
}

// ListCollections finds the importable files at path (a directory, or one
// file): *.json, *.bson and their .gz forms, the collection named by the
// file name (percent-escapes decoded: _Join%3Alikes%3APost.json). mongodump's *.metadata.json, MongoDB's system.*
// collections and GridFS's fs.files and fs.chunks (file bytes, which
// --filesFrom reads) are left out. _SCHEMA comes first, relations
// (_Join:*) last.
func ListCollections(path string) ([]Collection, error) {
	all, err := listFiles(path)
	if err != nil {
		return nil, err
	}
	var out []Collection
	for _, c := range all {
		if c.Name != gridFSFiles && c.Name != gridFSChunks { // file bytes, read by --filesFrom
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		hint := "expected <Class>.json or <Class>.bson files"
		if subs, _ := filepath.Glob(filepath.Join(path, "*", "*.bson*")); len(subs) > 0 {
			hint = "a mongodump directory holds one directory per database: use " + filepath.Dir(subs[0])
		}
		return nil, fmt.Errorf("%w in %s (%s)", ErrNoSource, path, hint)
	}
	seen := map[string]string{}
	for _, c := range out {
		if other, dup := seen[c.Name]; dup {
			return nil, fmt.Errorf("transfer: %s and %s both hold collection %s; keep one", other, c.Path, c.Name)
		}
		seen[c.Name] = c.Path
	}
	sortCollections(out)
	return out, nil
}

// listFiles lists the collection files at path (a directory, or one file).
func listFiles(path string) ([]Collection, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var files []string
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	} else {
		files = []string{path}
	}
	var out []Collection
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".gz")
		if u, err := url.PathUnescape(name); err == nil {
			name = u // _Join%3Alikes%3APost.json, where a file name may not hold ':'
		}
		if strings.HasSuffix(name, ".metadata.json") || strings.HasPrefix(name, "system.") {
			continue
		}
		ext := filepath.Ext(name)
		if ext != ".json" && ext != ".bson" {
			continue
		}
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		out = append(out, Collection{Name: strings.TrimSuffix(name, ext), Path: f, Size: st.Size()})
	}
	return out, nil
}

// docReader yields the documents of one file in order.
type docReader struct {
	format Format
	f      *os.File
	count  *countingReader
	br     *bufio.Reader
	dec    *json.Decoder // array and dashboard forms
	closer io.Closer     // gzip
}

var dashboardStart = regexp.MustCompile(`^\s*\{\s*"results"\s*:\s*\[`)

// openDocs opens a collection and, for a file, detects its format.
func openDocs(c Collection) (documents, error) {
	if c.open != nil {
		return c.open()
	}
	return openFile(c)
}

func openFile(c Collection) (*docReader, error) {
	f, err := os.Open(c.Path)
	if err != nil {
		return nil, err
	}
	d := &docReader{f: f, count: &countingReader{r: f}}
	var r io.Reader = d.count
	if strings.HasSuffix(c.Path, ".gz") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
		r, d.closer = gz, gz
	}
	d.br = bufio.NewReaderSize(r, 1<<20)
	if strings.HasSuffix(strings.TrimSuffix(c.Path, ".gz"), ".bson") {
		d.format = FormatBSON
		return d, nil
	}
	head, _ := d.br.Peek(4096)
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff")
	switch {
	case dashboardStart.Match(head):
		d.format = FormatDashboard
		d.dec = json.NewDecoder(d.br)
		for range 3 { // {, "results", [
			if _, err := d.dec.Token(); err != nil {
				d.Close()
				return nil, fmt.Errorf("%s: %w", c.Path, err)
			}
		}
	case len(trimmed) > 0 && trimmed[0] == '[':
		d.format = FormatMongoArray
		d.dec = json.NewDecoder(d.br)
		if _, err := d.dec.Token(); err != nil {
			d.Close()
			return nil, fmt.Errorf("%s: %w", c.Path, err)
		}
	default:
		d.format = FormatMongoLines
	}
	return d, nil
}

// Offset is how many bytes of the file have been read so far (for progress).
func (d *docReader) Offset() int64 { return d.count.n }

// Format is the file's detected shape.
func (d *docReader) Format() Format { return d.format }

// Next returns the next document's bytes (its own copy), or io.EOF after
// the last; with skip it reads past the document and returns nil.
func (d *docReader) Next(skip bool) ([]byte, error) {
	switch d.format {
	case FormatBSON:
		raw, err := bson.ReadDocument(d.br)
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		if err != nil || skip {
			return nil, err
		}
		return raw, nil
	case FormatMongoArray, FormatDashboard:
		if !d.dec.More() {
			return nil, io.EOF
		}
		var raw json.RawMessage
		if err := d.dec.Decode(&raw); err != nil || skip {
			return nil, err
		}
		return raw, nil
	}
	for {
		line, err := d.readLine()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if skip {
			return nil, nil
		}
		return bytes.Clone(line), nil
	}
}

// Decode turns bytes from Next into a document. It is safe to call from
// several goroutines.
func (d *docReader) Decode(raw []byte) (map[string]any, error) {
	if d.format == FormatBSON {
		ext, err := bson.MarshalExtJSON(bson.Raw(raw), false, false)
		if err != nil {
			return nil, fmt.Errorf("not a BSON document")
		}
		raw = ext
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

// readLine reads one line of any length up to MaxDocumentBytes.
func (d *docReader) readLine() ([]byte, error) {
	var long []byte
	for {
		part, err := d.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, part...)
			if len(long) > MaxDocumentBytes {
				return nil, fmt.Errorf("a line is longer than %d bytes", MaxDocumentBytes)
			}
			continue
		}
		if long != nil {
			part = append(long, part...)
		}
		if err == io.EOF && len(part) > 0 {
			return part, nil
		}
		return part, err
	}
}

// Close releases the file.
func (d *docReader) Close() error {
	if d.closer != nil {
		d.closer.Close()
	}
	return d.f.Close()
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

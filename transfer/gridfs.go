package transfer

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The collections of a GridFS bucket named "fs", where Parse Server's
// default files adapter (GridFSBucketAdapter) keeps files in MongoDB.
const (
	gridFSFiles  = "fs.files"
	gridFSChunks = "fs.chunks"
)

// gridFile is one file of fs.files: the newest upload of its name.
type gridFile struct {
	id        string
	length    int64
	chunkSize int64
	uploaded  string // ISO 8601, which sorts as time
}

// gridFSSource reads files from the fs.files and fs.chunks collections of
// a MongoDB export (mongodump BSON or mongoexport JSON). Chunks come in no
// promised order, so prepare writes the chunks of the files wanted into one
// spool file each, at their offsets, in a single pass; open reads those.
type gridFSSource struct {
	files, chunks Collection
	byName        map[string]gridFile
	written       map[string]int64 // bytes spooled, by file id
	spool         string           // a temporary directory; close removes it
}

// gridFSCollections finds fs.files and fs.chunks in dir; ok is false when
// dir holds neither.
func gridFSCollections(dir string) (files, chunks Collection, ok bool, err error) {
	cols, err := listFiles(dir)
	if err != nil {
		return Collection{}, Collection{}, false, err
	}
	for _, c := range cols {
		switch c.Name {
		case gridFSFiles:
			files = c
		case gridFSChunks:
			chunks = c
		}
	}
	switch {
	case files.Path == "" && chunks.Path == "":
		return files, chunks, false, nil
	case files.Path == "" || chunks.Path == "":
		return files, chunks, false, fmt.Errorf("%w: %s holds only one of %s and %s", ErrFilesOptions, dir, gridFSFiles, gridFSChunks)
	}
	return files, chunks, true, nil
}

func newGridFSSource(files, chunks Collection) (*gridFSSource, error) {
	g := &gridFSSource{files: files, chunks: chunks, byName: map[string]gridFile{}, written: map[string]int64{}}
	err := eachDoc(files, func(doc map[string]any) error {
		name, _ := doc["filename"].(string)
		id, _ := doc["_id"].(string)
		length, _ := doc["length"].(float64)
		chunkSize, _ := doc["chunkSize"].(float64)
		uploaded, _ := doc["uploadDate"].(map[string]any)
		at, _ := uploaded["iso"].(string)
		if name == "" || id == "" || chunkSize <= 0 || length < 0 {
			return fmt.Errorf("a file without filename, _id, chunkSize or length")
		}
		if old, seen := g.byName[name]; !seen || at >= old.uploaded {
			g.byName[name] = gridFile{id: id, length: int64(length), chunkSize: int64(chunkSize), uploaded: at}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// eachDoc calls fn with every document of c, in Parse's value form.
func eachDoc(c Collection, fn func(map[string]any) error) error {
	r, err := openFile(c)
	if err != nil {
		return err
	}
	defer r.Close()
	for n := 1; ; n++ {
		raw, err := r.Next(false)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", c.Name, n, err)
		}
		doc, err := r.Decode(raw)
		if err == nil {
			var v any
			if v, err = plainValue(doc); err == nil {
				err = fn(v.(map[string]any))
			}
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", c.Name, n, err)
		}
	}
}

// prepare spools the chunks of the named files.
func (g *gridFSSource) prepare(ctx context.Context, names []string) error {
	wanted := map[string]gridFile{}
	for _, n := range names {
		if f, ok := g.byName[n]; ok {
			wanted[f.id] = f
		}
	}
	spool, err := os.MkdirTemp("", "quarry-gridfs-")
	if err != nil {
		return err
	}
	g.spool = spool
	open := map[string]*os.File{}
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	return eachDoc(g.chunks, func(doc map[string]any) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		id, _ := doc["files_id"].(string)
		f, ok := wanted[id]
		if !ok {
			return nil
		}
		n, _ := doc["n"].(float64)
		data, err := chunkData(doc["data"])
		if err != nil {
			return err
		}
		if n < 0 || int64(n)*f.chunkSize+int64(len(data)) > f.length {
			return fmt.Errorf("chunk %v of file %s lies outside its length %d", n, id, f.length)
		}
		w, ok := open[id]
		if !ok {
			if w, err = os.Create(filepath.Join(spool, id)); err != nil {
				return err
			}
			open[id] = w
		}
		_, err = w.WriteAt(data, int64(n)*f.chunkSize)
		g.written[id] += int64(len(data))
		return err
	})
}

func chunkData(v any) ([]byte, error) {
	m, _ := v.(map[string]any)
	s, ok := m["base64"].(string)
	if !ok || m["__type"] != "Bytes" {
		return nil, errors.New("a chunk without binary data")
	}
	return base64.StdEncoding.DecodeString(s)
}

func (g *gridFSSource) open(_ context.Context, name string) (io.ReadCloser, int64, string, error) {
	f, ok := g.byName[name]
	switch {
	case !ok:
		return nil, 0, "", errNoSourceFile
	case f.length == 0:
		return io.NopCloser(strings.NewReader("")), 0, "", nil
	case g.written[f.id] != f.length:
		// A chunk is missing (or there are none): the file cannot be whole.
		return nil, 0, "", fmt.Errorf("%w: %s holds %d of its %d bytes", errIncompleteSourceFile, gridFSChunks, g.written[f.id], f.length)
	}
	r, err := os.Open(filepath.Join(g.spool, f.id))
	if err != nil {
		return nil, 0, "", err
	}
	return r, f.length, "", nil
}

func (g *gridFSSource) close() {
	if g.spool != "" {
		os.RemoveAll(g.spool)
	}
}

package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/store"
)

// FilesPhase names the step that copies file bytes, in Progress and in
// the checkpoint; no collection can have this name.
const FilesPhase = "(files)"

// fileWorkers is how many files are copied at once: enough to hide one
// round trip to the old server, few enough not to flood it.
const fileWorkers = 4

// fileHeaderTimeout is how long the old server may take to start answering
// for one file.
const fileHeaderTimeout = time.Minute

// maxUnsizedFile is the most an old server's reply without a
// Content-Length may hold: such a file is read into memory first.
const maxUnsizedFile = 256 << 20

// errNoSourceFile is a file the source does not hold; errIncompleteSourceFile
// one it holds only in part.
var (
	errNoSourceFile         = errors.New("not in the source")
	errIncompleteSourceFile = errors.New("incomplete in the source")
)

// ErrFilesOptions is returned by Import when the options naming the old
// files cannot work; nothing was imported.
var ErrFilesOptions = errors.New("transfer: files options")

// fileSource reads files of the old server by name.
type fileSource interface {
	open(ctx context.Context, name string) (r io.ReadCloser, size int64, contentType string, err error)
}

// preparedSource is a fileSource that reads its source once, for the
// files named, before the first open; close releases what that made.
type preparedSource interface {
	fileSource
	prepare(ctx context.Context, names []string) error
	close()
}

// dirSource is the directory of Parse Server's filesystem adapter
// (@parse/fs-files-adapter), which keeps each file under its name
// escaped as JavaScript's encodeURIComponent does.
type dirSource string

func (d dirSource) open(_ context.Context, name string) (io.ReadCloser, int64, string, error) {
	for _, n := range []string{encodeURIComponent(name), name} {
		f, err := os.Open(filepath.Join(string(d), n))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, "", err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, "", err
		}
		return f, st.Size(), "", nil
	}
	return nil, 0, "", errNoSourceFile
}

// encodeURIComponent escapes s as JavaScript's function of that name.
func encodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// urlSource is the old server's public files address,
// <serverURL>/files/<appId>, under which each file has its name.
type urlSource struct {
	base   string
	client *http.Client
}

func (u urlSource) open(ctx context.Context, name string) (io.ReadCloser, int64, string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", u.base+"/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, 0, "", err
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return nil, 0, "", err
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return nil, 0, "", errNoSourceFile
	case resp.StatusCode != http.StatusOK:
		resp.Body.Close()
		return nil, 0, "", fmt.Errorf("GET %s: %s", req.URL.Redacted(), resp.Status)
	case resp.ContentLength >= 0:
		return resp.Body, resp.ContentLength, ct, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxUnsizedFile+1))
	if err != nil {
		return nil, 0, "", err
	}
	if len(data) > maxUnsizedFile {
		return nil, 0, "", fmt.Errorf("GET %s: over %d bytes without a Content-Length", req.URL.Redacted(), maxUnsizedFile)
	}
	return io.NopCloser(bytes.NewReader(data)), int64(len(data)), ct, nil
}

// fileSourceOf is the source the options name, or nil for none.
func fileSourceOf(opts ImportOptions) (fileSource, error) {
	switch {
	case opts.FilesFrom != "" && opts.FilesFromURL != "":
		return nil, fmt.Errorf("%w: give the old files as a directory or as a URL, not both", ErrFilesOptions)
	case opts.FilesFrom != "" || opts.FilesFromURL != "":
		if opts.Files == nil {
			return nil, fmt.Errorf("%w: copying files needs the files adapter to copy them into", ErrFilesOptions)
		}
	}
	if opts.FilesFrom != "" {
		if st, err := os.Stat(opts.FilesFrom); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFilesOptions, err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("%w: %s is not a directory", ErrFilesOptions, opts.FilesFrom)
		}
		files, chunks, isGridFS, err := gridFSCollections(opts.FilesFrom)
		if err != nil {
			return nil, err
		}
		if isGridFS {
			return newGridFSSource(files, chunks)
		}
		return dirSource(opts.FilesFrom), nil
	}
	if opts.FilesFromURL != "" {
		u, err := url.Parse(opts.FilesFromURL)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("%w: --filesFromURL must be an http(s) URL such as https://old.example.com/parse/files/<appId>", ErrFilesOptions)
		}
		// An old server that stops answering fails the import (which can
		// be resumed) instead of hanging it; a slow download is left alone.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ResponseHeaderTimeout = fileHeaderTimeout
		return urlSource{base: strings.TrimRight(opts.FilesFromURL, "/"), client: &http.Client{Transport: tr}}, nil
	}
	return nil, nil
}

// fileNames are the names of every File value the store's objects hold,
// at any depth, sorted.
func fileNames(st store.Adapter) ([]string, error) {
	seen := map[string]bool{}
	marker := []byte(`"File"`)
	err := st.Load(func(r store.Record) error {
		if r.Kind != store.KindObject || !bytes.Contains(r.Value, marker) {
			return nil
		}
		var v any
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("%s/%s: %w", r.Class, r.Key, err)
		}
		collectFiles(v, seen)
		return nil
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func collectFiles(v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		if v["__type"] == "File" {
			if n, ok := v["name"].(string); ok && n != "" {
				into[n] = true
			}
			return
		}
		for _, x := range v {
			collectFiles(x, into)
		}
	case []any:
		for _, x := range v {
			collectFiles(x, into)
		}
	}
}

// copyFiles copies the bytes of every file the imported objects name from
// src into opts.Files. A file the target already holds is left alone, so
// a resumed import copies only the rest; a file the source lacks (objects
// often outlive their files) is counted in the summary, not an error.
func (im *importer) copyFiles(src fileSource) error {
	if im.cp.Complete[FilesPhase] {
		return nil
	}
	names, err := fileNames(im.st)
	if err != nil {
		return err
	}
	if p, ok := src.(preparedSource); ok {
		if err := p.prepare(im.ctx, names); err != nil {
			return err
		}
	}
	if err := im.copyAll(src, names); err != nil {
		return err
	}
	im.cp.Complete[FilesPhase] = true
	state, err := json.Marshal(im.cp)
	if err != nil {
		return err
	}
	if err := saveCheckpoint(im.opts.Checkpoint, state); err != nil {
		return err
	}
	im.saved = state
	im.fileProgress(int64(len(names)), int64(len(names)), true)
	return nil
}

// copyAll copies names on fileWorkers goroutines, counting each in the
// summary; it stops at the first error or when the import is cancelled.
func (im *importer) copyAll(src fileSource, names []string) error {
	var (
		mu    sync.Mutex // guards done, first and the summary
		done  int64
		first error
		wg    sync.WaitGroup
		work  = make(chan string)
	)
	for range fileWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				copied, reason, err := im.copyFile(src, name)
				mu.Lock()
				done++
				switch {
				case err != nil && first == nil:
					first = fmt.Errorf("file %s: %w", name, err)
				case copied:
					im.cp.Summary.Files++
				case reason != "":
					im.cp.Summary.Skipped["files: "+reason]++
				}
				im.fileProgress(done, int64(len(names)), false)
				mu.Unlock()
			}
		}()
	}
	for _, name := range names {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed || im.ctx.Err() != nil {
			break
		}
		work <- name
	}
	close(work)
	wg.Wait()
	if first != nil {
		return first
	}
	return im.ctx.Err()
}

func (im *importer) fileProgress(done, total int64, last bool) {
	if im.opts.Progress != nil {
		im.opts.Progress(Progress{Collection: FilesPhase, Docs: done, Bytes: done, TotalBytes: total,
			Imported: im.cp.Summary.Total(), Elapsed: time.Since(im.start), Done: last})
	}
}

// copyFile copies one file unless the target has it. It returns whether
// bytes were copied, or why the file was passed over.
func (im *importer) copyFile(src fileSource, name string) (copied bool, skipped string, err error) {
	if files.ValidName(name) != nil {
		return false, "invalid name", nil
	}
	if r, _, err := im.opts.Files.Open(im.ctx, name); err == nil {
		r.Close()
		return false, "", nil // copied by an earlier, interrupted run
	} else if !errors.Is(err, files.ErrNotFound) {
		return false, "", err
	}
	r, size, ct, err := src.open(im.ctx, name)
	switch {
	case errors.Is(err, errNoSourceFile):
		return false, "not found in the old server's files", nil
	case errors.Is(err, errIncompleteSourceFile):
		return false, "incomplete in the old server's files", nil
	}
	if err != nil {
		return false, "", err
	}
	defer r.Close()
	info := files.Info{Name: name, ContentType: files.ContentType(name, ct), Size: size}
	if err := im.opts.Files.Create(im.ctx, name, r, size, info); err != nil {
		return false, "", err
	}
	return true, "", nil
}

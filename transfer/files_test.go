package transfer_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/transfer"
)

// fixtureFile is the one file testdata/mongoexport's objects name.
const fixtureFile = "tfss-3c5a1e2d-cover.png"

// TestImportCopiesFiles copies the bytes of the files the imported
// objects name, from each kind of source, into Quarry's files directory,
// where the server serves them under the same names.
func TestImportCopiesFiles(t *testing.T) {
	data := []byte("\x89PNG\r\n\x1a\nnot really a picture")
	// A Parse Server filesystem adapter directory: each file under its
	// name escaped as encodeURIComponent does (here, nothing to escape).
	parseDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(parseDir, fixtureFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	// An old server's files address, on loopback; its reply is chunked (no
	// Content-Length), as a proxy in front of Parse Server may send it.
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/parse/files/oldApp/"+fixtureFile {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(data[:4])
		w.(http.Flusher).Flush()
		w.Write(data[4:])
	}))
	defer old.Close()

	for _, tc := range []struct {
		name    string
		opts    transfer.ImportOptions
		present []byte // already in the target (an earlier, interrupted run)
		copied  int64
		skipped string
		want    []byte // what Quarry serves; nil: nothing
	}{
		{name: "directory", opts: transfer.ImportOptions{FilesFrom: parseDir}, copied: 1, want: data},
		{name: "url", opts: transfer.ImportOptions{FilesFromURL: old.URL + "/parse/files/oldApp/"}, copied: 1, want: data},
		{name: "missing from the source", opts: transfer.ImportOptions{FilesFrom: t.TempDir()},
			skipped: "files: not found in the old server's files"},
		{name: "already copied", opts: transfer.ImportOptions{FilesFrom: parseDir}, present: []byte("kept"), want: []byte("kept")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "quarry.db")
			fa, err := files.NewLocal(db+".files", "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.present != nil {
				err := fa.Create(context.Background(), fixtureFile, bytes.NewReader(tc.present), int64(len(tc.present)), files.Info{ContentType: "image/png"})
				if err != nil {
					t.Fatal(err)
				}
			}
			var last transfer.Progress
			tc.opts.Files = fa
			tc.opts.Progress = func(p transfer.Progress) { last = p }
			_, sum := importIntoFile(t, "testdata/mongoexport", db, tc.opts)
			if sum.Files != tc.copied {
				t.Errorf("%d files copied, want %d", sum.Files, tc.copied)
			}
			if tc.skipped != "" && sum.Skipped[tc.skipped] != 1 {
				t.Errorf("skipped %v, want %q", sum.Skipped, tc.skipped)
			}
			if last.Collection != transfer.FilesPhase || !last.Done || last.Docs != 1 || last.TotalBytes != 1 {
				t.Errorf("last progress %+v, want the files step done, 1 of 1", last)
			}
			s := serve(t, db)
			post := get(t, s, "/classes/Post/postHello1", servertest.Master())
			u, _ := post["cover"].(map[string]any)["url"].(string)
			r := s.Do(t, "GET", u[strings.Index(u, "/files/"):], nil, nil)
			switch {
			case tc.want == nil && r.Status != 404:
				t.Errorf("GET %s: %d, want 404", u, r.Status)
			case tc.want != nil && (r.Status != 200 || !bytes.Equal(r.Body, tc.want)):
				t.Errorf("GET %s: %d %q, want %q", u, r.Status, r.Body, tc.want)
			case tc.want != nil && r.Header.Get("Content-Type") != "image/png":
				t.Errorf("content type %q", r.Header.Get("Content-Type"))
			}
		})
	}
}

// TestImportFilesOptionsRefused: the sources are exclusive and need a
// target; an unreachable source fails the import with what was committed
// kept, and a resumed run then copies the files.
func TestImportFilesOptionsRefused(t *testing.T) {
	dir := t.TempDir()
	fa, err := files.NewLocal(filepath.Join(dir, "files"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []transfer.ImportOptions{
		{From: "testdata/mongoexport", FilesFrom: dir, FilesFromURL: "http://127.0.0.1:1/x", Files: fa},
		{From: "testdata/mongoexport", FilesFrom: dir},
		{From: "testdata/mongoexport", FilesFromURL: "ftp://127.0.0.1/x", Files: fa},
		{From: "testdata/mongoexport", FilesFrom: filepath.Join(dir, "nowhere"), Files: fa},
	} {
		db := filepath.Join(t.TempDir(), "quarry.db")
		if _, err := importOnce(db, opts); err == nil {
			t.Errorf("%+v: imported", opts)
		}
	}

	// A server that fails, then works: the second run resumes and copies.
	var fail atomic.Bool
	fail.Store(true)
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "bytes")
	}))
	defer old.Close()
	db := filepath.Join(dir, "quarry.db")
	opts := transfer.ImportOptions{From: "testdata/mongoexport", FilesFromURL: old.URL, Files: fa, Checkpoint: db + ".import.json"}
	if _, err := importOnce(db, opts); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("import with the old server down: %v", err)
	}
	fail.Store(false)
	opts.Resume = true
	sum, err := importOnce(db, opts)
	if err != nil || sum.Files != 1 || sum.Objects["Post"] != 2 {
		t.Fatalf("resumed import: %v, %+v", err, sum)
	}
}

func importOnce(db string, opts transfer.ImportOptions) (*transfer.Summary, error) {
	st, err := store.Open(db)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return transfer.Import(context.Background(), st, opts)
}

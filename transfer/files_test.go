package transfer_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

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

	// Parse Server's default adapter on MongoDB keeps files in GridFS: the
	// export's fs.files and fs.chunks, beside the classes (mongoexport
	// JSON, and the same as mongodump BSON).
	gridJSON, gridBSON := t.TempDir(), t.TempDir()
	copyDir(t, "testdata/mongoexport", gridJSON)
	filesDocs, chunkDocs := gridFS(fixtureFile, data, 8)
	writeLines(t, filepath.Join(gridJSON, "fs.files.json"), filesDocs)
	writeLines(t, filepath.Join(gridJSON, "fs.chunks.json"), chunkDocs)
	writeBSON(t, filepath.Join(gridBSON, "fs.files.bson"), filesDocs)
	writeBSON(t, filepath.Join(gridBSON, "fs.chunks.bson"), chunkDocs)
	gridHoles := t.TempDir()
	writeLines(t, filepath.Join(gridHoles, "fs.files.json"), filesDocs)
	writeLines(t, filepath.Join(gridHoles, "fs.chunks.json"), chunkDocs[1:])

	for _, tc := range []struct {
		name    string
		from    string // default testdata/mongoexport
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
		{name: "GridFS in the mongoexport imported", from: gridJSON, opts: transfer.ImportOptions{FilesFrom: gridJSON}, copied: 1, want: data},
		{name: "GridFS in a mongodump", opts: transfer.ImportOptions{FilesFrom: gridBSON}, copied: 1, want: data},
		{name: "GridFS with a chunk missing", opts: transfer.ImportOptions{FilesFrom: gridHoles},
			skipped: "files: incomplete in the old server's files"},
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
			from := cmp.Or(tc.from, "testdata/mongoexport")
			_, sum := importIntoFile(t, from, db, tc.opts)
			if tc.skipped == "" && len(sum.Skipped) != 1 { // the fixture's Post without _id
				t.Errorf("skipped %v", sum.Skipped)
			}
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
		if _, err := importOnce(db, opts); !errors.Is(err, transfer.ErrFilesOptions) {
			t.Errorf("%+v: %v, want ErrFilesOptions", opts, err)
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

// gridFS is a GridFS bucket holding data under name in chunks of
// chunkSize, as mongoexport writes fs.files and fs.chunks: the chunks out of
// order, and an older upload of the same name that must not win.
func gridFS(name string, data []byte, chunkSize int) (files, chunks []string) {
	const current, older = "65a000000000000000000001", "65a000000000000000000002"
	files = []string{
		fmt.Sprintf(`{"_id":{"$oid":"%s"},"length":{"$numberLong":"%d"},"chunkSize":%d,"uploadDate":{"$date":"2024-01-02T00:00:00Z"},"filename":%q,"metadata":{}}`,
			current, len(data), chunkSize, name),
		fmt.Sprintf(`{"_id":{"$oid":"%s"},"length":3,"chunkSize":%d,"uploadDate":{"$date":"2023-01-01T00:00:00Z"},"filename":%q}`,
			older, chunkSize, name),
	}
	chunk := func(id string, n int, b []byte) string {
		return fmt.Sprintf(`{"_id":{"$oid":"66b0000000000000000000%02d"},"files_id":{"$oid":"%s"},"n":%d,"data":{"$binary":{"base64":"%s","subType":"00"}}}`,
			len(chunks), id, n, base64.StdEncoding.EncodeToString(b))
	}
	var parts [][]byte
	for rest := data; len(rest) > 0; rest = rest[min(chunkSize, len(rest)):] {
		parts = append(parts, rest[:min(chunkSize, len(rest))])
	}
	for n := len(parts) - 1; n >= 0; n-- {
		chunks = append(chunks, chunk(current, n, parts[n]))
	}
	chunks = append(chunks, chunk(older, 0, []byte("old")))
	return files, chunks
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeBSON(t *testing.T, path string, docs []string) {
	t.Helper()
	var out bytes.Buffer
	for _, d := range docs {
		var doc bson.D
		if err := bson.UnmarshalExtJSON([]byte(d), false, &doc); err != nil {
			t.Fatal(err)
		}
		b, err := bson.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

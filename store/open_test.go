package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseURI(t *testing.T) {
	tests := []struct {
		uri     string
		want    string // path, when ok
		wantErr string // substring of the error, which must wrap ErrUnsupportedURI
	}{
		{uri: ":memory:", want: ":memory:"},
		{uri: "data/quarry.db", want: "data/quarry.db"},
		{uri: "/var/lib/quarry/q.db", want: "/var/lib/quarry/q.db"},
		{uri: "file:data/quarry.db", want: "data/quarry.db"},
		{uri: "file:/abs/q.db", want: "/abs/q.db"},
		{uri: "file:///abs/q.db", want: "/abs/q.db"},
		{uri: "file://localhost/abs/q.db", want: "/abs/q.db"},
		{uri: "file::memory:", want: ":memory:"},
		{uri: `C:\quarry\q.db`, want: `C:\quarry\q.db`},
		{uri: "weird:name.db", want: "weird:name.db"},
		{uri: "postgres://user:secret@db:5432/quarry", wantErr: "built without the PostgreSQL adapter"},
		{uri: "postgresql://user:secret@db/quarry", wantErr: "built without the PostgreSQL adapter"},
		{uri: "POSTGRES://db/quarry", wantErr: "PostgreSQL"},
		{uri: "mongodb://user:secret@localhost:27017/parse", wantErr: `scheme "mongodb" is not supported`},
		{uri: "mongodb+srv://cluster0.example.net/parse", wantErr: `scheme "mongodb+srv"`},
		{uri: "file://otherhost/q.db", wantErr: "local absolute path"},
		{uri: "file:", wantErr: "without a path"},
		{uri: "", wantErr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			got, err := parseURI(tt.uri)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("parseURI(%q) = %q, %v; want %q", tt.uri, got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrUnsupportedURI) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseURI(%q) error = %v; want ErrUnsupportedURI containing %q", tt.uri, err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error leaks the URI's password: %v", err)
			}
		})
	}
}

func TestOpenUnsupported(t *testing.T) {
	for _, uri := range []string{"postgres://localhost/quarry", "mongodb://localhost/parse"} {
		a, err := Open(uri)
		if a != nil || !errors.Is(err, ErrUnsupportedURI) {
			t.Fatalf("Open(%q) = %v, %v; want ErrUnsupportedURI", uri, a, err)
		}
	}
}

// TestOpenFileForms opens each accepted spelling of a file path, including
// relative ones below directories that do not exist yet.
func TestOpenFileForms(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	tests := []struct {
		uri  string
		file string // where the database must appear
	}{
		{"plain.db", filepath.Join(dir, "plain.db")},
		{"nested/a/b/rel.db", filepath.Join(dir, "nested/a/b/rel.db")},
		{"file:viafile/q.db", filepath.Join(dir, "viafile/q.db")},
		{"file:" + filepath.Join(dir, "abs/q.db"), filepath.Join(dir, "abs/q.db")},
		{"file://" + filepath.Join(dir, "url/q.db"), filepath.Join(dir, "url/q.db")},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			a, err := Open(tt.uri)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Commit([]Record{{Kind: KindMeta, Key: "k", Value: []byte("v")}}); err != nil {
				t.Fatal(err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() == 0 {
				t.Fatalf("%s is empty", tt.file)
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Fatalf("%s has mode %v, want 0600 (it holds the master key)", tt.file, perm)
			}
		})
	}
}

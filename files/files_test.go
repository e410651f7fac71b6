package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

func TestValidName(t *testing.T) {
	long := strings.Repeat("a", MaxNameLength)
	for _, tc := range []struct {
		name string
		want error
	}{
		{"a.txt", nil}, {"My photo-1@2~x.png", nil}, {"_x", nil}, {long, nil},
		{long + "a", ErrNameTooLong}, {"", ErrNameInvalid}, {".hidden", ErrNameInvalid},
		{"..", ErrNameInvalid}, {"../x", ErrNameInvalid}, {"a/b", ErrNameInvalid}, {`a\b`, ErrNameInvalid},
		{"a..b", ErrNameInvalid}, {"%2e%2e", ErrNameInvalid}, {"-a", ErrNameInvalid}, {"a\x00b", ErrNameInvalid},
		{"é.txt", ErrNameInvalid},
	} {
		if got := ValidName(tc.name); got != tc.want {
			t.Errorf("ValidName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStoredName(t *testing.T) {
	a, b := StoredName("x.txt", false), StoredName("x.txt", false)
	if a == b || len(a) != 32+1+5 || !strings.HasSuffix(a, "_x.txt") || ValidName(a) != nil {
		t.Errorf("StoredName: %q, %q", a, b)
	}
	if got := StoredName("x.txt", true); got != "x.txt" {
		t.Errorf("preserved: %q", got)
	}
}

func TestExtensionAndActive(t *testing.T) {
	for _, tc := range []struct {
		name, ct, ext string
		active        bool
	}{
		{"a.PNG", "", "png", false}, {"a", "image/png", "png", false}, {"a", "image/svg+xml", "svg", true},
		{"a.html", "text/plain", "html", true}, {"a.txt", "text/html; charset=utf-8", "txt", true},
		{"a.js", "", "js", true}, {"a", "", "", false},
	} {
		if got := Extension(tc.name, tc.ct); got != tc.ext {
			t.Errorf("Extension(%q, %q) = %q, want %q", tc.name, tc.ct, got, tc.ext)
		}
		if got := Active(tc.name, tc.ct); got != tc.active {
			t.Errorf("Active(%q, %q) = %v, want %v", tc.name, tc.ct, got, tc.active)
		}
	}
}

// adapters returns each adapter under test: local plaintext, local
// encrypted, S3 against an in-process S3 server on 127.0.0.1, and
// PostgreSQL large objects in a database of the test's own.
func adapters(t *testing.T) map[string]Adapter {
	plain, err := NewLocal(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := NewLocal(t.TempDir(), "correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Adapter{"local": plain, "encrypted": sealed, "s3": newTestS3(t), "postgres": newTestPostgres(t)}
}

func newTestS3(t *testing.T) *S3 {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("quarry"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	s, err := NewS3(S3Options{Bucket: "quarry", Prefix: "app/", Region: "us-east-1",
		Endpoint: strings.TrimPrefix(srv.URL, "http://"), Insecure: true, AccessKey: "key", SecretKey: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAdapterRoundTrip(t *testing.T) {
	ctx := context.Background()
	body := []byte("hello, files: the quick brown fox")
	for name, a := range adapters(t) {
		t.Run(name, func(t *testing.T) {
			err := a.Create(ctx, "a b.txt", bytes.NewReader(body), int64(len(body)),
				Info{ContentType: "text/plain", Metadata: map[string]string{"owner": "ann"}})
			if err != nil {
				t.Fatal(err)
			}
			r, info, err := a.Open(ctx, "a b.txt")
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != int64(len(body)) || info.ContentType != "text/plain" {
				t.Errorf("info = %+v", info)
			}
			if _, err := r.Seek(7, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			part := make([]byte, 5)
			if _, err := io.ReadFull(r, part); err != nil || string(part) != "files" {
				t.Errorf("range read %q, %v", part, err)
			}
			r.Close()
			if err := a.Delete(ctx, "a b.txt"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := a.Open(ctx, "a b.txt"); !errors.Is(err, ErrNotFound) {
				t.Errorf("open after delete: %v", err)
			}
			if err := a.Delete(ctx, "a b.txt"); !errors.Is(err, ErrNotFound) {
				t.Errorf("second delete: %v", err)
			}
			if _, _, err := a.Open(ctx, "../etc/passwd"); !errors.Is(err, ErrNotFound) {
				t.Errorf("open of an invalid name: %v", err)
			}
		})
	}
}

func TestLocalEncryption(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := NewLocal(dir, "k1")
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("top secret plaintext that must not reach the disk")
	if err := l.Create(ctx, "s.txt", bytes.NewReader(secret), -1, Info{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, "s.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(onDisk, []byte("secret")) {
		t.Fatal("the plaintext is on disk")
	}
	entries, _ := os.ReadDir(filepath.Join(dir, tmpDir))
	if len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
	for _, tc := range []struct {
		name   string
		key    string
		mutate func([]byte) []byte
	}{
		{"flipped byte", "k1", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }},
		{"truncated", "k1", func(b []byte) []byte { return b[:len(b)-1] }},
		{"wrong key", "k2", func(b []byte) []byte { return b }},
		{"no key", "", func(b []byte) []byte { return b }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.mutate(append([]byte(nil), onDisk...))
			if err := os.WriteFile(filepath.Join(dir, "s.txt"), bad, 0o600); err != nil {
				t.Fatal(err)
			}
			reader, err := NewLocal(dir, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := reader.Open(ctx, "s.txt"); !errors.Is(err, ErrTampered) {
				t.Errorf("open = %v, want ErrTampered", err)
			}
		})
	}
	// A file moved to another name fails too: the name is authenticated.
	if err := os.WriteFile(filepath.Join(dir, "s.txt"), onDisk, 0o600); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(dir, "s.txt"), filepath.Join(dir, "t.txt"))
	copyFile(t, filepath.Join(dir, metaDir, "s.txt.json"), filepath.Join(dir, metaDir, "t.txt.json"))
	if _, _, err := l.Open(ctx, "t.txt"); !errors.Is(err, ErrTampered) {
		t.Errorf("moved file: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRotateKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	plain, _ := NewLocal(dir, "")
	for _, n := range []string{"a.txt", "b.txt"} {
		if err := plain.Create(ctx, n, strings.NewReader("content of "+n), -1, Info{ContentType: "text/plain"}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(key, name string) (string, error) {
		l, _ := NewLocal(dir, key)
		r, _, err := l.Open(ctx, name)
		if err != nil {
			return "", err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		return string(b), err
	}
	steps := []struct {
		old, new string
		names    []string
		check    map[string]string // name -> key that must open it
	}{
		{"", "k1", nil, map[string]string{"a.txt": "k1", "b.txt": "k1"}},
		{"k1", "k2", []string{"a.txt"}, map[string]string{"a.txt": "k2", "b.txt": "k1"}},
		{"k1", "k2", []string{"b.txt"}, map[string]string{"a.txt": "k2", "b.txt": "k2"}},
		{"k2", "", nil, map[string]string{"a.txt": "", "b.txt": ""}},
	}
	for i, st := range steps {
		done, err := RotateKey(dir, st.old, st.new, st.names)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if st.names == nil && len(done) != 2 {
			t.Errorf("step %d rotated %v", i, done)
		}
		for name, key := range st.check {
			if got, err := read(key, name); err != nil || got != "content of "+name {
				t.Errorf("step %d: %s with key %q: %q, %v", i, name, key, got, err)
			}
		}
	}
	if _, err := RotateKey(dir, "", "k1", []string{"missing.txt"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("rotating a missing file: %v", err)
	}
}

// TestS3DirectAccess: with direct access, a file's URL is the bucket's own
// (or a CDN's, or presigned) and fetching it returns the file, without
// Quarry in the path.
func TestS3DirectAccess(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket("quarry"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	open := func(o S3Options) *S3 {
		o.Bucket, o.Prefix, o.Region, o.Endpoint, o.Insecure = "quarry", "app/", "us-east-1", strings.TrimPrefix(srv.URL, "http://"), true
		o.AccessKey, o.SecretKey = "key", "secret"
		s, err := NewS3(o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	body := []byte("direct bytes")
	ctx := context.Background()
	if err := open(S3Options{}).Create(ctx, "a b.txt", bytes.NewReader(body), int64(len(body)), Info{ContentType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := open(S3Options{}).DirectURL("a b.txt"); ok {
		t.Error("without directAccess Quarry serves the file")
	}
	cases := []struct {
		name  string
		opts  S3Options
		want  string // prefix of the URL
		fetch bool
	}{
		{"bucket", S3Options{DirectAccess: true}, srv.URL + "/quarry/app/a%20b.txt", true},
		{"cdn", S3Options{DirectAccess: true, BaseURL: "https://cdn.example.com/"}, "https://cdn.example.com/app/a%20b.txt", false},
		{"presigned", S3Options{DirectAccess: true, PresignExpiry: 10 * time.Minute}, srv.URL + "/quarry/app/a%20b.txt?", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, ok, err := open(c.opts).DirectURL("a b.txt")
			if err != nil || !ok || !strings.HasPrefix(u, c.want) {
				t.Fatalf("url %q (%v, %v), want prefix %q", u, ok, err, c.want)
			}
			if c.name == "presigned" && !strings.Contains(u, "X-Amz-Signature=") {
				t.Errorf("presigned url without a signature: %s", u)
			}
			if !c.fetch {
				return
			}
			res, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || string(got) != string(body) {
				t.Errorf("GET %s: %d %q", u, res.StatusCode, got)
			}
		})
	}
}

func newTestPostgres(t *testing.T) *Postgres {
	t.Helper()
	p, err := NewPostgres(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// TestPostgresReplaceAndFailedUpload: replacing a file leaves one large
// object (the old one is unlinked with the row's change), and an upload
// cut short leaves neither a row nor an object.
func TestPostgresReplaceAndFailedUpload(t *testing.T) {
	ctx := context.Background()
	p := newTestPostgres(t)
	objects := func() (n int) {
		if err := p.pool.QueryRow(ctx, "SELECT count(*) FROM pg_largeobject_metadata").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, body := range []string{"first version", "second, longer version"} {
		if err := p.Create(ctx, "doc.txt", strings.NewReader(body), int64(len(body)), Info{ContentType: "text/plain"}); err != nil {
			t.Fatal(err)
		}
	}
	r, info, err := p.Open(ctx, "doc.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "second, longer version" || info.Size != int64(len(got)) || objects() != 1 {
		t.Errorf("after a replace: %q, %+v, %d large objects", got, info, objects())
	}
	if err := p.Create(ctx, "short.txt", strings.NewReader("abc"), 10, Info{}); err == nil {
		t.Error("an upload shorter than its size was accepted")
	}
	if _, _, err := p.Open(ctx, "short.txt"); !errors.Is(err, ErrNotFound) || objects() != 1 {
		t.Errorf("a failed upload left something: %v, %d large objects", err, objects())
	}
	if err := p.Delete(ctx, "doc.txt"); err != nil || objects() != 0 {
		t.Errorf("delete: %v, %d large objects left", err, objects())
	}
}

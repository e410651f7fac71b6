package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// uploadAndRead uploads a file with the master key and reads it back
// without keys, returning its stored name.
func uploadAndRead(t *testing.T, srv *servertest.Server, body string) string {
	t.Helper()
	res := srv.Do(t, "POST", "/files/note.txt", body, map[string]string{"X-Parse-Application-Id": servertest.AppID,
		"X-Parse-Master-Key": servertest.MasterKey, "Content-Type": "text/plain"})
	name, _ := res.Map()["name"].(string)
	if res.Status != 201 || name == "" {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	if got := srv.Do(t, "GET", "/files/"+servertest.AppID+"/"+name, nil, nil); got.Status != 200 || string(got.Body) != body {
		t.Fatalf("download: %d %q", got.Status, got.Body)
	}
	return name
}

// TestFilesEncryptedAtRest: with encryptionKey the file beside the
// database holds no plaintext, reads give the plaintext back, and a
// changed byte is refused with a Parse error, never served.
func TestFilesEncryptedAtRest(t *testing.T) {
	dir := t.TempDir()
	srv := servertest.Start(t, func(o *config.Options) {
		o.DatabaseURI = filepath.Join(dir, "app.db")
		o.Files.EncryptionKey = "a long operator secret"
	})
	secret := "the launch code is 0000"
	name := uploadAndRead(t, srv, secret)
	path := filepath.Join(dir, "app.db.files", name)
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the file is not beside the database: %v", err)
	}
	if bytes.Contains(onDisk, []byte("launch code")) {
		t.Fatal("plaintext on disk")
	}
	onDisk[len(onDisk)-1] ^= 0x40
	if err := os.WriteFile(path, onDisk, 0o600); err != nil {
		t.Fatal(err)
	}
	res := srv.Do(t, "GET", "/files/"+servertest.AppID+"/"+name, nil, nil)
	if res.Status != 500 || res.Map()["code"] != float64(1) || strings.Contains(string(res.Body), "launch") {
		t.Errorf("tampered file: %d %s", res.Status, res.Body)
	}
	// Rotation: the file is re-sealed under a new key, which the
	// restarted server reads with; the old key no longer opens it.
	onDisk[len(onDisk)-1] ^= 0x40
	if err := os.WriteFile(path, onDisk, 0o600); err != nil {
		t.Fatal(err)
	}
	done, err := files.RotateKey(filepath.Join(dir, "app.db.files"), "a long operator secret", "the next secret", nil)
	if err != nil || len(done) != 1 {
		t.Fatalf("rotate: %v, %v", done, err)
	}
	if res := srv.Do(t, "GET", "/files/"+servertest.AppID+"/"+name, nil, nil); res.Status != 500 {
		t.Errorf("read with the old key after rotation: %d %s", res.Status, res.Body)
	}
	srv.Opts.Files.EncryptionKey = "the next secret"
	srv.Restart(t)
	if res := srv.Do(t, "GET", "/files/"+servertest.AppID+"/"+name, nil, nil); res.Status != 200 || string(res.Body) != secret {
		t.Errorf("read with the new key: %d %s", res.Status, res.Body)
	}
}

// s3FilesServer starts an in-process S3 server on 127.0.0.1 with the
// bucket "uploads", and a Quarry storing its files there under "app/".
func s3FilesServer(t *testing.T, directAccess bool) (*s3mem.Backend, *httptest.Server, *servertest.Server) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("uploads"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(s3.Close)
	srv := servertest.Start(t, func(o *config.Options) {
		o.Files.Adapter = config.FilesAdapterS3
		o.Files.S3 = config.S3Options{Bucket: "uploads", Prefix: "app/", Region: "us-east-1",
			Endpoint: s3.URL, AccessKey: "key", SecretKey: "secret", DirectAccess: directAccess}
	})
	return backend, s3, srv
}

// TestFilesS3Adapter: filesAdapter "s3" stores through the S3 protocol,
// here an in-process S3 server on 127.0.0.1.
func TestFilesS3Adapter(t *testing.T) {
	backend, _, srv := s3FilesServer(t, false)
	name := uploadAndRead(t, srv, "stored in a bucket")
	obj, err := backend.HeadObject("uploads", "app/"+name)
	if err != nil || obj.Size != int64(len("stored in a bucket")) {
		t.Fatalf("object in the bucket: %v, %v", obj, err)
	}
	res := srv.Do(t, "DELETE", "/files/"+name, nil, servertest.Master())
	if res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if res := srv.Do(t, "GET", "/files/"+servertest.AppID+"/"+name, nil, nil); res.Status != 404 {
		t.Errorf("after delete: %d %s", res.Status, res.Body)
	}
}

// TestFilesS3DirectAccess: with s3DirectAccess the url a client gets
// for an upload, and for the File field of an object, is the bucket's own,
// and fetching it returns the bytes without Quarry.
func TestFilesS3DirectAccess(t *testing.T) {
	_, s3, srv := s3FilesServer(t, true)
	res := srv.Do(t, "POST", "/files/direct.txt", "straight from the bucket", map[string]string{
		"X-Parse-Application-Id": servertest.AppID, "X-Parse-Master-Key": servertest.MasterKey, "Content-Type": "text/plain"})
	if res.Status != 201 {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	up := res.Map()
	url, _ := up["url"].(string)
	if !strings.HasPrefix(url, s3.URL+"/uploads/app/") {
		t.Fatalf("upload url %q is not the bucket's", url)
	}
	obj := srv.Do(t, "POST", "/classes/Doc", map[string]any{"file": map[string]any{"__type": "File", "name": up["name"]}}, servertest.Master()).Map()
	got := srv.Do(t, "GET", "/classes/Doc/"+obj["objectId"].(string), nil, servertest.Master()).Map()
	if f, _ := got["file"].(map[string]any); f["url"] != url {
		t.Errorf("the File field's url %v, want %s", got["file"], url)
	}
	direct, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(direct.Body)
	direct.Body.Close()
	if string(body) != "straight from the bucket" {
		t.Errorf("GET %s: %d %q", url, direct.StatusCode, body)
	}
}

// TestFilesMemoryDatabase: a database in memory keeps its files in a
// temporary directory for the server's lifetime.
func TestFilesMemoryDatabase(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = ":memory:" })
	uploadAndRead(t, srv, "kept while the server runs")
}

// TestFilesOnPostgresDefaultToTheDatabase: with a PostgreSQL database and
// no files option, uploads become large objects there, not files in a
// temporary directory that shutdown would remove.
func TestFilesOnPostgresDefaultToTheDatabase(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = pgtest.NewDatabase(t) })
	uploadAndRead(t, srv, "no temporary directory")
	var n int
	if err := pgPool(t, srv.Opts.DatabaseURI).QueryRow(context.Background(), `SELECT count(*) FROM "_Files"`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("_Files holds %d rows (%v), want the upload", n, err)
	}
}

func pgPool(t *testing.T, uri string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestFilesPostgresAdapter: filesAdapter "postgres" keeps uploads as
// large objects in the PostgreSQL database the data lives in, so every
// instance on it serves them; with a file database it refuses to start.
func TestFilesPostgresAdapter(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.DatabaseURI = pgtest.NewDatabase(t)
		o.Files.Adapter = config.FilesAdapterPostgres
	})
	name := uploadAndRead(t, srv, "kept in the database")
	var n int
	if err := pgPool(t, srv.Opts.DatabaseURI).QueryRow(context.Background(), `SELECT count(*) FROM "_Files"`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("_Files holds %d rows (%v), want the upload", n, err)
	}
	if res := srv.Do(t, "DELETE", "/files/"+name, nil, servertest.Master()); res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if res := srv.Do(t, "GET", "/files/"+servertest.AppID+"/"+name, nil, nil); res.Status != 404 {
		t.Errorf("after delete: %d %s", res.Status, res.Body)
	}

	opts, _, err := config.Load([]string{"--appId", "app", "--masterKey", "mk", "--filesAdapter", "postgres",
		"--databaseURI", filepath.Join(t.TempDir(), "data.db")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Open(opts, nil); err == nil || !strings.Contains(err.Error(), `filesAdapter "postgres"`) {
		t.Errorf("a file database with filesAdapter postgres: %v", err)
	}
}

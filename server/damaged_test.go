package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openAt opens a server on the data file at path.
func openAt(t *testing.T, path string) (*server.Server, error) {
	t.Helper()
	opts, _, err := config.Load([]string{"--appId", "app", "--masterKey", "mk", "--databaseURI", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return server.Open(opts, nil)
}

// goodFile writes a data file holding one object and returns its bytes.
func goodFile(t *testing.T, path string) []byte {
	t.Helper()
	a, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Commit([]store.Record{{Kind: store.KindObject, Class: "A", Key: "x1", Value: []byte(`{"objectId":"x1","n":1}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDamagedDataFileSaysWhatToDo: a data file Quarry cannot read stops the
// start with a message naming the file, what is wrong and what to do; it
// is never repaired by dropping data.
func TestDamagedDataFileSaysWhatToDo(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
		says   []string
	}{
		{"garbage in the file", func(t *testing.T, path string) {
			good := goodFile(t, path)
			os.WriteFile(path, append(good, []byte("garbage\x00\x01 that is no record\n")...), 0o600)
		}, []string{"damaged", "not a record Quarry wrote", "restore the file from a backup"}},
		{"an object that is not JSON", func(t *testing.T, path string) {
			a, err := store.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			a.Commit([]store.Record{{Kind: store.KindObject, Class: "A", Key: "x2", Value: []byte(`{not json`)}})
			a.Close()
		}, []string{"damaged", "object A/x2 is not valid JSON", "restore the file from a backup"}},
		{"a directory in the file's place", func(t *testing.T, path string) {
			os.Mkdir(path, 0o700)
		}, []string{"is a directory, not a data file", "point databaseURI at a file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "quarry.db")
			c.damage(t, path)
			before, _ := os.ReadFile(path)
			srv, err := openAt(t, path)
			if err == nil {
				srv.Close()
				t.Fatal("a damaged data file was opened")
			}
			msg := err.Error()
			for _, want := range append(c.says, path) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("opening changed the damaged file")
			}
		})
	}
}

// TestTornLastWriteIsDropped: a write cut short by a crash (never
// acknowledged) is dropped, and everything before it is served.
func TestTornLastWriteIsDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quarry.db")
	first := goodFile(t, path)
	a, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Commit([]store.Record{{Kind: store.KindObject, Class: "A", Key: "x2", Value: []byte(`{"objectId":"x2","n":2}`)}}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	both, _ := os.ReadFile(path)
	// Cut the second write in half, as a crash during its write(2) would.
	if err := os.WriteFile(path, both[:len(first)+(len(both)-len(first))/2], 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := openAt(t, path)
	if err != nil {
		t.Fatalf("a torn last write stopped the start: %v", err)
	}
	defer srv.Close()
	res, err := srv.Service.Find(service.Auth{Master: true}, "A", service.FindParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 || res.Results[0]["objectId"] != "x1" {
		t.Fatalf("after the torn write: %v, want x1 alone", res.Results)
	}
}

// TestHardLinkToCompactedFileRefused: a hard link made to a running
// server's data file names the old file once the server compacted it; a
// second server opened on that link is refused while the first runs (it
// would serve stale data and its writes would be lost).
func TestHardLinkToCompactedFileRefused(t *testing.T) {
	if os.Getenv("QUARRY_TEST_DATABASE_URI") != "" {
		t.Skip("the embedded store's file lock: not a PostgreSQL test")
	}
	path := filepath.Join(t.TempDir(), "quarry.db")
	srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = path })
	master := map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Master-Key": servertest.MasterKey}
	res := srv.Do(t, "POST", "/classes/Blob", map[string]any{"n": 0}, master)
	if res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	id, _ := res.Map()["objectId"].(string)
	link := filepath.Join(t.TempDir(), "backup.db")
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	// Rewriting one object with a large value grows the file past the
	// compaction threshold (32 MiB and twice the live data): the server
	// then writes a new file and renames it over the data file's name.
	big := strings.Repeat("x", 512<<10)
	for i := 0; ; i++ {
		if cur, err := os.Stat(path); err == nil {
			if old, err := os.Stat(link); err == nil && !os.SameFile(cur, old) {
				break
			}
		}
		if i == 400 {
			t.Fatal("the server never compacted its data file")
		}
		if res := srv.Do(t, "PUT", "/classes/Blob/"+id, map[string]any{"big": big, "n": i}, master); res.Status != 200 {
			t.Fatalf("update %d: %d %s", i, res.Status, res.Body)
		}
	}
	second, err := openAt(t, link)
	if err == nil {
		second.Close()
		t.Fatal("a second server opened the stale hard link of a running server's data file")
	}
	if !errors.Is(err, store.ErrLocked) && !strings.Contains(err.Error(), "lock") {
		t.Errorf("refused with %v, want the lock error", err)
	}
}

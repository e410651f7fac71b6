package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store"
)

func call(name string, args ...string) (int, string) {
	var out bytes.Buffer
	code := transferCommands[name](args, nil, &out, &out)
	return code, out.String()
}

// storedObjects reads the objects of class from a data file no server holds.
func storedObjects(t *testing.T, db, class string) map[string]string {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string]string{}
	err = st.Load(func(r store.Record) error {
		if r.Kind == store.KindObject && r.Class == class {
			out[r.Key] = string(r.Value)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBackupWhileServing: a backup taken while clients keep writing holds
// every write acknowledged before it started and only acknowledged writes,
// and restores into a new data file that a server opens; import and
// restore refuse the file the running server holds.
func TestBackupWhileServing(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = live })
	m := servertest.Master()

	var mu sync.Mutex
	var acked []string
	var stop atomic.Bool
	var wg sync.WaitGroup
	progress := make(chan struct{}, 1) // a write was acknowledged
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				r := srv.Do(t, "POST", "/classes/Item", map[string]any{"writer": w, "n": i, "pad": strings.Repeat("x", 200)}, m)
				if r.Status != 201 {
					t.Errorf("create: %d %s", r.Status, r.Body)
					return
				}
				mu.Lock()
				acked = append(acked, r.Map()["objectId"].(string))
				mu.Unlock()
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		}()
	}
	waitFor := func(n int) {
		for range progress {
			mu.Lock()
			k := len(acked)
			mu.Unlock()
			if k >= n {
				return
			}
		}
	}
	waitFor(200)
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()
	backup := filepath.Join(dir, "backup.db")
	code, out := call("backup", "--out", backup, "--databaseURI", live)
	if code != 0 {
		t.Fatalf("backup: %d %s", code, out)
	}
	// Export works on the running server's file too.
	if code, out := call("export", "--to", filepath.Join(dir, "export"), "--format", "mongo", "--databaseURI", live); code != 0 {
		t.Errorf("export while serving: %d %s", code, out)
	}
	mu.Lock()
	n := len(acked)
	mu.Unlock()
	waitFor(n + 100) // writes went on during and after the backup
	stop.Store(true)
	wg.Wait()

	// The running server's file is refused, with a clear reason.
	for _, args := range [][]string{
		{"import", "--from", "../../transfer/testdata/mongoexport", "--databaseURI", live},
		{"restore", "--from", backup, "--databaseURI", live},
	} {
		code, out := call(args[0], args[1:]...)
		if code == 0 || !strings.Contains(out, "running server") && !strings.Contains(out, "not empty") {
			t.Errorf("%v on a live file: %d %s", args, code, out)
		}
	}
	code, out = call("import", "--from", "../../transfer/testdata/mongoexport", "--databaseURI", live)
	if code != 1 || !strings.Contains(out, "in use by a running server") {
		t.Errorf("import into the live file: %d %s", code, out)
	}

	restored := filepath.Join(dir, "fresh", "restored.db")
	if code, out := call("restore", "--from", backup, "--databaseURI", restored); code != 0 {
		t.Fatalf("restore: %d %s", code, out)
	}
	// Everything the server holds now, read from a second backup (the
	// server keeps the live file open).
	after := filepath.Join(dir, "after.db")
	if code, out := call("backup", "--out", after, "--databaseURI", live); code != 0 {
		t.Fatalf("second backup: %d %s", code, out)
	}
	got := storedObjects(t, restored, "Item")
	liveObjs := storedObjects(t, after, "Item")
	mu.Lock()
	if len(liveObjs) != len(acked) {
		t.Errorf("the server holds %d objects, %d were acknowledged", len(liveObjs), len(acked))
	}
	mu.Unlock()
	for _, id := range before {
		if _, ok := got[id]; !ok {
			t.Errorf("object %s, acknowledged before the backup, is missing from it", id)
		}
	}
	for id, v := range got {
		if liveObjs[id] != v {
			t.Errorf("object %s in the backup is %s, the server has %s", id, v, liveObjs[id])
		}
	}
	if len(got) >= len(liveObjs) {
		t.Errorf("backup holds %d of %d objects: the writes after it should be missing", len(got), len(liveObjs))
	}
	// A server starts on the restored file and serves the objects.
	srv2 := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = restored })
	r := srv2.Do(t, "GET", "/classes/Item?count=1&limit=0", nil, m)
	var body struct{ Count int }
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Count != len(got) {
		t.Errorf("restored server counts %s, want %d", r.Body, len(got))
	}
}

func TestTransferCommandsHelpAndUsage(t *testing.T) {
	for name := range transferCommands {
		code, out := call(name, "-h")
		if code != 0 || !strings.HasPrefix(out, "usage: quarry "+name) {
			t.Errorf("%s -h: %d %q", name, code, out)
		}
		code, out = call(name)
		if code != 2 || !strings.Contains(out, "is required") {
			t.Errorf("%s without arguments: %d %q", name, code, out)
		}
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "q.db")
	code, out := call("import", "--from", "../../transfer/testdata/mongoexport", "--databaseURI", db, "--progress", "plain")
	if code != 0 || !strings.Contains(out, "imported 8 objects") || !strings.Contains(out, "Post: no usable _id") ||
		!strings.Contains(out, "import: Post done") {
		t.Errorf("import: %d %s", code, out)
	}
	code, out = call("import", "--from", "../../transfer/testdata/mongoexport", "--databaseURI", db)
	if code != 2 || !strings.Contains(out, "not empty") {
		t.Errorf("second import: %d %s", code, out)
	}
	code, out = call("import", "--from", dir, "--databaseURI", filepath.Join(dir, "other.db"))
	if code != 1 || !strings.Contains(out, "no collection files") {
		t.Errorf("import from a directory without collections: %d %s", code, out)
	}
	if _, err := os.Stat(db + ".import.json"); err == nil {
		t.Errorf("a finished import left its checkpoint")
	}
}

// TestExportImportCommands: quarry export --format mongo, then quarry
// import of what it wrote, gives back every object of the first file.
func TestExportImportCommands(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.db"), filepath.Join(dir, "second.db")
	if code, out := call("import", "--from", "../../transfer/testdata/mongoexport", "--databaseURI", first, "--progress", "none"); code != 0 {
		t.Fatalf("import: %d %s", code, out)
	}
	exported := filepath.Join(dir, "exported")
	if code, out := call("export", "--to", exported, "--format", "mongo", "--databaseURI", first); code != 0 || !strings.Contains(out, "exported 8 objects of 5 classes") {
		t.Fatalf("export: %d %s", code, out)
	}
	if code, out := call("import", "--from", exported, "--databaseURI", second, "--progress", "none"); code != 0 || strings.Contains(out, "skipped") {
		t.Fatalf("import of the export: %d %s", code, out)
	}
	for _, class := range []string{"_User", "_Session", "_Role", "Post", "_GlobalConfig"} {
		a, b := storedObjects(t, first, class), storedObjects(t, second, class)
		if len(a) == 0 || !maps.Equal(a, b) {
			t.Errorf("%s: %d objects, %d after export and import, or they differ", class, len(a), len(b))
		}
	}
	if code, out := call("export", "--to", exported, "--format", "csv", "--databaseURI", first); code != 2 {
		t.Errorf("export --format csv: %d %s", code, out)
	}
}

// TestImportFilesCommand: --filesFrom copies the file bytes into the files
// adapter the server is configured with (here filesSubDirectory).
func TestImportFilesCommand(t *testing.T) {
	dir := t.TempDir()
	parseFiles := filepath.Join(dir, "parse-files")
	os.Mkdir(parseFiles, 0o700)
	if err := os.WriteFile(filepath.Join(parseFiles, "tfss-3c5a1e2d-cover.png"), []byte("cover"), 0o600); err != nil {
		t.Fatal(err)
	}
	served := filepath.Join(dir, "served-files")
	code, out := call("import", "--from", "../../transfer/testdata/mongoexport", "--filesFrom", parseFiles,
		"--databaseURI", filepath.Join(dir, "q.db"), "--filesSubDirectory", served, "--progress", "plain")
	if code != 0 || !strings.Contains(out, "copied the bytes of 1 files") || !strings.Contains(out, "import: files: 1 of 1") {
		t.Fatalf("import --filesFrom: %d %s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(served, "tfss-3c5a1e2d-cover.png")); err != nil || string(b) != "cover" {
		t.Errorf("copied file: %q %v", b, err)
	}
	code, out = call("import", "--from", "../../transfer/testdata/mongoexport", "--filesFrom", parseFiles,
		"--filesFromURL", "http://127.0.0.1:1/files/app", "--databaseURI", filepath.Join(dir, "other.db"))
	if code != 2 || !strings.Contains(out, "not both") || strings.Contains(out, "--resume") {
		t.Errorf("both sources: %d %s", code, out)
	}
}

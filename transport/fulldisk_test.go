package transport_test

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// smallDisk mounts a tmpfs of size bytes for the test's data, so a test
// can fill a real file system. It needs root; elsewhere the test skips
// loudly (CI runs as root and fails instead).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		msg := "!!! cannot mount a small tmpfs (needs root): " + strings.TrimSpace(string(out))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestFullDiskAnswers503: a write that cannot be stored because the disk
// is full is answered 503 with a Parse error naming the cause (the SDKs
// retry 5xx), reads go on, and once space is freed writes work again with
// nothing acknowledged lost.
func TestFullDiskAnswers503(t *testing.T) {
	disk := smallDisk(t, "1m")
	filler := filepath.Join(disk, "filler")
	srv := servertest.Start(t, func(o *config.Options) {
		o.DatabaseURI = filepath.Join(disk, "quarry.db")
	})
	if err := os.WriteFile(filler, make([]byte, 256<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	blob := strings.Repeat("x", 16<<10)
	var saved []string
	var full servertest.Response
	for i := 0; i < 200; i++ {
		res := srv.Do(t, "POST", "/classes/Blob", map[string]any{"n": i, "blob": blob}, servertest.Master())
		if res.Status != 201 {
			full = res
			break
		}
		saved = append(saved, res.Map()["objectId"].(string))
	}
	if full.Status == 0 {
		t.Fatal("200 writes of 16 KB fit on a 1 MB disk")
	}
	if full.Status != 503 || !strings.Contains(string(full.Body), "disk is full") || full.Header.Get("Retry-After") == "" {
		t.Errorf("write on a full disk: %d %v %s, want 503 naming the disk, with Retry-After", full.Status, full.Header, full.Body)
	}
	batch := srv.Do(t, "POST", "/batch", map[string]any{"requests": []any{
		map[string]any{"method": "POST", "path": "/parse/classes/Blob", "body": map[string]any{"n": -2, "blob": blob}}}}, servertest.Master())
	if !strings.Contains(string(batch.Body), "disk is full") {
		t.Errorf("batch write on a full disk: %d %s, want the item's error to name the disk", batch.Status, batch.Body)
	}
	if res := srv.Do(t, "GET", "/classes/Blob/"+saved[0], nil, servertest.Master()); res.Status != 200 {
		t.Errorf("read on a full disk: %d %s", res.Status, res.Body)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	res := srv.Do(t, "POST", "/classes/Blob", map[string]any{"n": -1, "blob": blob}, servertest.Master())
	if res.Status != 201 {
		t.Fatalf("write once space is free again: %d %s", res.Status, res.Body)
	}
	saved = append(saved, res.Map()["objectId"].(string))
	srv.Restart(t)
	for _, id := range saved {
		if res := srv.Do(t, "GET", "/classes/Blob/"+id, nil, servertest.Master()); res.Status != 200 {
			t.Errorf("acknowledged object %s after a restart: %d %s", id, res.Status, res.Body)
		}
	}
}

// TestFullDiskLogsOnce: writes refused on a full disk do not give one log
// line each: the condition is logged once, then counted per interval.
func TestFullDiskLogsOnce(t *testing.T) {
	disk := smallDisk(t, "1m")
	var logs syncBuffer
	srv := servertest.StartLogged(t, slog.New(slog.NewTextHandler(&logs, nil)), func(o *config.Options) {
		o.DatabaseURI = filepath.Join(disk, "quarry.db")
	})
	if err := os.WriteFile(filepath.Join(disk, "filler"), make([]byte, 256<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	blob := strings.Repeat("x", 16<<10)
	refused := 0
	for i := 0; i < 400 && refused < 40; i++ {
		if res := srv.Do(t, "POST", "/classes/Blob", map[string]any{"n": i, "blob": blob}, servertest.Master()); res.Status == 503 {
			refused++
		}
	}
	if refused < 40 {
		t.Fatalf("%d writes refused, want 40", refused)
	}
	if n := strings.Count(logs.String(), "disk is full"); n < 1 || n > refused/4 {
		t.Fatalf("%d log lines for %d refused writes, want one and a count per interval:\n%s", n, refused, logs.String())
	}
}

// TestDeletedDataFileUnready: once the data file is deleted under a
// running server, writes are answered 503 with Retry-After (not 500), the
// readiness probe /health goes unready, and reads go on.
func TestDeletedDataFileUnready(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quarry.db")
	srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = path })
	res := srv.Do(t, "POST", "/classes/Note", map[string]any{"n": 1}, servertest.Master())
	if res.Status != 201 {
		t.Fatalf("write: %d %s", res.Status, res.Body)
	}
	id := res.Map()["objectId"].(string)
	if res := srv.Do(t, "GET", "/health", nil, nil); res.Status != 200 {
		t.Fatalf("health before: %d %s", res.Status, res.Body)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if res := srv.Do(t, "GET", "/health", nil, nil); res.Status != 503 || res.Header.Get("Retry-After") == "" {
		t.Errorf("health with the data file deleted: %d %v %s, want 503 with Retry-After", res.Status, res.Header, res.Body)
	}
	for i := range 3 {
		res := srv.Do(t, "POST", "/classes/Note", map[string]any{"n": 2 + i}, servertest.Master())
		if res.Status != 503 || res.Header.Get("Retry-After") == "" || !strings.Contains(string(res.Body), "cannot write its data") {
			t.Errorf("write %d with the data file deleted: %d %v %s, want 503 with Retry-After", i, res.Status, res.Header, res.Body)
		}
		if strings.Contains(string(res.Body), path) {
			t.Errorf("the reply names the data file: %s", res.Body)
		}
	}
	if res := srv.Do(t, "GET", "/health/live", nil, nil); res.Status != 200 {
		t.Errorf("liveness: %d, want 200 (the process is alive)", res.Status)
	}
	if res := srv.Do(t, "GET", "/classes/Note/"+id, nil, servertest.Master()); res.Status != 200 {
		t.Errorf("read: %d %s", res.Status, res.Body)
	}
}

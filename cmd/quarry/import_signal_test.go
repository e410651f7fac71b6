package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportInterruptedBinaryResumes runs the real binary: Ctrl-C during
// an import stops it after a committed batch (exit 130, a hint to resume),
// and the same command with --resume finishes with every object in.
func TestImportInterruptedBinaryResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "quarry")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	const n = 60000
	f, err := os.Create(filepath.Join(src, "Item.json"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, `{"_id":"i%08d","n":{"$numberInt":"%d"},"_rperm":["*"],"_wperm":[],"_created_at":{"$date":"2023-01-01T00:00:00.000Z"},"_updated_at":{"$date":"2023-01-01T00:00:00.000Z"}}`+"\n", i, i)
	}
	w.Flush()
	f.Close()
	db := filepath.Join(dir, "q.db")
	args := []string{"import", "--from", src, "--databaseURI", db, "--batch", "200", "--progress", "plain"}

	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	checkpoint := db + ".import.json"
	for {
		if _, err := os.Stat(checkpoint); err == nil {
			break // a batch is committed
		}
		select {
		case err := <-exited:
			t.Fatalf("import ended before it could be interrupted: %v\n%s", err, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = <-exited
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 || !strings.Contains(stderr.String(), "--resume") {
		t.Fatalf("interrupted import: %v\n%s", err, stderr.String())
	}
	out, err := exec.Command(bin, append(args, "--resume")...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("Item                     %d", n)) {
		t.Fatalf("resumed import: %v\n%s", err, out)
	}
	if got := len(storedObjects(t, db, "Item")); got != n {
		t.Errorf("%d objects after the resumed import, want %d", got, n)
	}
}

package transfer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// parseServerProject is the npm project that pins Parse Server for
// bench/compare; the import test runs the same one.
const parseServerProject = "../bench/compare/parse-server"

// needParseServer skips t loudly when Node.js is missing, or fails it when
// CI=true, as every test needing an outside service does.
func needParseServer(t *testing.T, why string) {
	t.Helper()
	msg := "\n\n*** SKIPPED: %s needs Node.js and npm (Parse Server runs on them): %v ***\n"
	fail := func(err error) {
		if os.Getenv("CI") == "true" {
			t.Fatalf(msg, why, err)
		}
		t.Skipf(msg, why, err)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			fail(err)
		}
	}
	// Parse Server 8's engines field.
	check := `const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || a === 20 && b >= 18 ? 0 : 1)`
	if out, err := exec.Command("node", "-e", check).CombinedOutput(); err != nil {
		v, _ := exec.Command("node", "--version").Output()
		fail(fmt.Errorf("Parse Server 8 needs Node.js >= 20.18, found %s (%v %s)", strings.TrimSpace(string(v)), err, out))
	}
}

var installParseServer sync.Once

// parseServerBin installs the pinned Parse Server when it is missing or
// older than its lock file (once per test binary; node_modules is ignored
// by git and kept between runs) and returns its executable.
func parseServerBin(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(parseServerProject)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	installParseServer.Do(func() {
		lock, err1 := os.Stat(filepath.Join(dir, "package-lock.json"))
		installed, err2 := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
		if err1 == nil && err2 == nil && installed.ModTime().After(lock.ModTime()) {
			return
		}
		t.Logf("installing Parse Server (npm ci in %s)", dir)
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err = cmd.CombinedOutput(); err != nil {
			err = fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "node_modules", "parse-server", "bin", "parse-server")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Parse Server is not installed: %v (an earlier npm ci failed?)", err)
	}
	return bin
}

// parseServer is a real Parse Server started by a test.
type parseServer struct {
	URL   string // up to the mount path, e.g. http://127.0.0.1:4321/parse
	DB    string // its PostgreSQL database
	Files string // the directory of its filesystem files adapter
}

// startParseServer runs the pinned Parse Server on the PostgreSQL database
// at dbURI with the filesystem files adapter (a PostgreSQL Parse Server has
// no files store of its own), the application id and master key of
// servertest, and stops it when t ends.
func startParseServer(t *testing.T, dbURI string) *parseServer {
	t.Helper()
	needParseServer(t, t.Name())
	bin := parseServerBin(t)
	work := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	base := fmt.Sprintf("http://127.0.0.1:%d/parse", port)
	cfg, _ := json.Marshal(map[string]any{
		"appId": servertest.AppID, "masterKey": servertest.MasterKey, "databaseURI": dbURI,
		"host": "127.0.0.1", "port": port, "mountPath": "/parse", "serverURL": base,
		"logLevel": "error", "logsFolder": filepath.Join(work, "logs"), "verbose": false,
		// The adapter keeps files under <cwd>/files/<filesSubDirectory>.
		"filesAdapter": map[string]any{"module": "@parse/fs-files-adapter", "options": map[string]any{}},
		"masterKeyIps": []string{"127.0.0.1", "::1"},
	})
	cfgPath := filepath.Join(work, "config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command("node", bin, cfgPath)
	cmd.Dir = work
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("Parse Server output:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("Parse Server exited: %v\n%s", err, logs.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("Parse Server did not answer at %s within 60 s:\n%s", base, logs.String())
		}
	}
	return &parseServer{URL: base, DB: dbURI, Files: filepath.Join(work, "files")}
}

// parseReply is a decoded reply of either server.
type parseReply struct {
	Status int
	Body   []byte
}

func (r parseReply) Map(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("reply %d %s: %v", r.Status, r.Body, err)
	}
	return m
}

// call sends one request to a server at base; body is JSON unless it is
// []byte (sent raw with the Content-Type header given).
func call(t *testing.T, base, method, path string, body any, headers map[string]string) parseReply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if _, raw := body.([]byte); body != nil && !raw {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parseReply{Status: resp.StatusCode, Body: data}
}

// newPostGISDatabase is a fresh database on the local PostgreSQL with
// PostGIS, which Parse Server's adapter needs.
func newPostGISDatabase(t *testing.T) string {
	t.Helper()
	uri := pgtest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS postgis"); err != nil {
		msg := fmt.Sprintf("\n\n*** SKIPPED: Parse Server on PostgreSQL needs PostGIS (apt-get install postgresql-<major>-postgis-3): %v ***\n", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return uri
}

func mustStatus(t *testing.T, what string, r parseReply, want int) parseReply {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%s: %d %s", what, r.Status, strings.TrimSpace(string(r.Body)))
	}
	return r
}

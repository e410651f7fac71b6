package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// database is one run's PostgreSQL database, made on the admin URI's
// server and dropped by drop.
type database struct{ admin, name, uri string }

func createDatabase(ctx context.Context, admin string) (*database, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at the admin URI: %w", err)
	}
	defer conn.Close(ctx)
	var b [4]byte
	rand.Read(b[:])
	name := fmt.Sprintf("quarry_livescale_%d_%s", os.Getpid(), hex.EncodeToString(b[:]))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	return &database{admin: admin, name: name, uri: u.String()}, nil
}

func (d *database) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, d.admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.name}.Sanitize()+" WITH (FORCE)")
	return err
}

// instance is one quarry process this tool started.
type instance struct {
	cmd   *exec.Cmd
	base  string // REST base, mount path included
	pprof string // pprofAddress: the heap after a collection is read there
	log   *os.File
}

func startInstance(bin, dir string, i int, db *database, extra []string) (*instance, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	pport, err := freePort()
	if err != nil {
		return nil, err
	}
	pprof := "127.0.0.1:" + strconv.Itoa(pport)
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("quarry-%d.log", i)))
	if err != nil {
		return nil, err
	}
	args := append([]string{"--appId", appID, "--masterKey", masterKey, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--databaseURI", db.uri, "--logLevel", "error", "--pprofAddress", pprof}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	return &instance{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d/parse", port), pprof: pprof, log: logf}, nil
}

func (in *instance) waitHealthy(within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := http.Get(in.base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond) // a process starting: nothing tells us when it listens
	}
	return fmt.Errorf("the server at %s is not healthy within %s: see %s", in.base, within, in.log.Name())
}

// stop ends the process by its PID: SIGTERM, then SIGKILL after 10 s.
func (in *instance) stop() {
	in.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { in.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		in.cmd.Process.Kill()
		<-done
	}
	in.log.Close()
}

// cpu is the process's user+system CPU time so far (Linux, 100 ticks/s).
func (in *instance) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", in.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// rss is the process's resident size in bytes.
func (in *instance) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", in.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Package cluster runs the quarry processes of a multi-instance benchmark
// (bench/scaleout, bench/livescale) on a PostgreSQL database of the run's
// own: it makes and drops the database, starts instances on free ports
// of 127.0.0.1, waits for their health, reads their CPU time and resident
// size from /proc (Linux), and stops them by PID.
package cluster

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

// Database is one run's PostgreSQL database, made on the admin URI's
// server and dropped by Drop.
type Database struct{ Admin, Name, URI string }

// CreateDatabase makes a database named prefix, the process id and a
// random suffix, so concurrent runs never share one.
func CreateDatabase(ctx context.Context, admin, prefix string) (*Database, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at the admin URI: %w", err)
	}
	defer conn.Close(ctx)
	var b [4]byte
	rand.Read(b[:])
	name := fmt.Sprintf("%s_%d_%s", prefix, os.Getpid(), hex.EncodeToString(b[:]))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	return &Database{Admin: admin, Name: name, URI: u.String()}, nil
}

// Drop removes the database, ending the sessions still connected to it.
func (d *Database) Drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, d.Admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.Name}.Sanitize()+" WITH (FORCE)")
	return err
}

// Instance is one running quarry process.
type Instance struct {
	Cmd *exec.Cmd
	URL string // REST base, mount path included
	Log *os.File
}

// Start runs bin with args on a free port of 127.0.0.1, its output in
// dir/quarry-<i>.log.
func Start(bin, dir string, i int, args []string) (*Instance, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("quarry-%d.log", i)))
	if err != nil {
		return nil, err
	}
	args = append([]string{"--host", "127.0.0.1", "--port", strconv.Itoa(port)}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	return &Instance{Cmd: cmd, URL: fmt.Sprintf("http://127.0.0.1:%d/parse", port), Log: logf}, nil
}

// WaitHealthy polls /health until it answers 200, the process exits, or
// the deadline passes.
func (in *Instance) WaitHealthy(client *http.Client, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := client.Get(in.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if in.Cmd.ProcessState != nil {
			return fmt.Errorf("quarry exited: see %s", in.Log.Name())
		}
		time.Sleep(50 * time.Millisecond) // a process starting: nothing tells us when it listens
	}
	tail, _ := os.ReadFile(in.Log.Name())
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	return fmt.Errorf("the server at %s is not healthy within %s; the end of its log:\n%s", in.URL, within, tail)
}

// Stop ends the process by its PID: SIGTERM, then SIGKILL after 10 s.
func (in *Instance) Stop() {
	in.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { in.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		in.Cmd.Process.Kill()
		<-done
	}
	in.Log.Close()
}

// CPU is the process's user+system CPU time so far (100 ticks/s).
func (in *Instance) CPU() time.Duration { return ProcessCPU(in.Cmd.Process.Pid) }

// ProcessCPU is a process's user+system CPU time so far, 0 when it
// cannot be read.
func ProcessCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return 0
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// RSS is the process's resident size in bytes.
func (in *Instance) RSS() int64 { return ProcessRSS(in.Cmd.Process.Pid) }

// ProcessRSS is a process's resident size in bytes, 0 when it cannot be
// read.
func ProcessRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
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

// FreePort is a port of 127.0.0.1 free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

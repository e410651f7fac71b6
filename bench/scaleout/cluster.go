package main

import (
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
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// database is one run's PostgreSQL database, made on the admin URI's
// server and dropped by drop.
type database struct {
	admin, name, uri string
}

func createDatabase(ctx context.Context, admin string) (*database, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at the admin URI: %w", err)
	}
	defer conn.Close(ctx)
	var b [4]byte
	rand.Read(b[:])
	name := fmt.Sprintf("quarry_scaleout_%d_%s", os.Getpid(), hex.EncodeToString(b[:]))
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
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
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
	cmd *exec.Cmd
	url string // REST base, mount path included
	log *os.File
}

// startInstance runs bin on a free port against the database.
func startInstance(bin, dir string, i int, db *database, extra []string) (*instance, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("quarry-%d.log", i)))
	if err != nil {
		return nil, err
	}
	args := append([]string{"--appId", appID, "--masterKey", masterKey, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--databaseURI", db.uri, "--indexes", "Item.category", "--logLevel", "error"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	return &instance{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d/parse", port), log: logf}, nil
}

// waitHealthy polls /health until it answers 200, the process exits, or
// the deadline passes.
func (in *instance) waitHealthy(client *http.Client, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := client.Get(in.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if in.cmd.ProcessState != nil {
			return fmt.Errorf("quarry exited: see %s", in.log.Name())
		}
		time.Sleep(50 * time.Millisecond) // a process starting: nothing tells us when it listens
	}
	tail, _ := os.ReadFile(in.log.Name())
	if len(tail) > 2000 {
		tail = tail[len(tail)-2000:]
	}
	return fmt.Errorf("the server at %s is not healthy within %s; the end of its log:\n%s", in.url, within, tail)
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

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

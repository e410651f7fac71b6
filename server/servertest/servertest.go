// Package servertest starts a real Quarry server in-process on a free
// loopback port for tests and benchmarks, with its data in a temporary
// directory, and offers a small JSON client for it.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// Fixed credentials of test servers.
const (
	AppID     = "test-app"
	MasterKey = "test-master"
)

// Server is a running test server.
type Server struct {
	*server.Server
	URL string // base URL including the mount path

	opts  *config.Options
	log   *slog.Logger
	cloud *cloud.Registry
	stop  func() error // stops serving and closes the server
}

// Start runs a server until the test ends. edit may change the options
// (defaults: on-disk buntdb in t.TempDir(), 127.0.0.1, free port). With env
// QUARRY_TEST_DATABASE_URI set to a PostgreSQL admin URI (pgtest.AdminURI),
// each server gets a fresh database on that server instead.
func Start(tb testing.TB, edit func(*config.Options)) *Server {
	tb.Helper()
	return StartLogged(tb, nil, edit)
}

// StartLogged is Start with the server's log going to log.
func StartLogged(tb testing.TB, log *slog.Logger, edit func(*config.Options)) *Server {
	tb.Helper()
	return StartCloud(tb, log, nil, edit)
}

// StartCloud is StartLogged with cloud code defined in Go (reg may be nil).
func StartCloud(tb testing.TB, log *slog.Logger, reg *cloud.Registry, edit func(*config.Options)) *Server {
	tb.Helper()
	opts, _, err := config.Load([]string{"--appId", AppID, "--masterKey", MasterKey, "--host", "127.0.0.1", "--port", "0",
		"--databaseURI", filepath.Join(tb.TempDir(), "quarry.db"),
		// The cheapest bcrypt cost keeps sign-up-heavy tests fast.
		"--passwordHashCost", "4"}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if admin := os.Getenv(pgtest.EnvServer); admin != "" {
		// The whole suite on PostgreSQL: a fresh database per server.
		opts.DatabaseURI = pgtest.NewDatabaseOn(tb, admin)
	}
	if edit != nil {
		edit(opts)
	}
	s := &Server{opts: opts, log: log, cloud: reg}
	s.serve(tb)
	tb.Cleanup(func() {
		if s.stop == nil {
			return
		}
		if err := s.stop(); err != nil {
			tb.Errorf("server shutdown: %v", err)
		}
	})
	return s
}

func (s *Server) serve(tb testing.TB) {
	tb.Helper()
	srv, err := server.OpenWithCloud(s.opts, s.log, s.cloud)
	if err != nil {
		tb.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	s.Server, s.URL = srv, "http://"+addr.String()+s.opts.MountPath
	s.stop = func() error {
		cancel()
		return <-done
	}
}

// Restart stops the server and starts it again on the same data (on a new
// port: URL changes), as a restart of the process would.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	stop := s.stop
	s.stop = nil
	if err := stop(); err != nil {
		tb.Fatalf("server shutdown: %v", err)
	}
	s.serve(tb)
}

// Response is a decoded reply.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r Response) JSON() any {
	var v any
	_ = json.Unmarshal(r.Body, &v)
	return v
}

// Map decodes the body as an object (nil if it is not one).
func (r Response) Map() map[string]any {
	m, _ := r.JSON().(map[string]any)
	return m
}

var client = &http.Client{Timeout: 30 * time.Second}

// OnPostgres reports whether the server runs on PostgreSQL (the suite run
// with QUARRY_TEST_DATABASE_URI), for the few checks of the embedded
// store's own behaviour.
func (s *Server) OnPostgres() bool {
	return strings.HasPrefix(s.opts.DatabaseURI, "postgres://") || strings.HasPrefix(s.opts.DatabaseURI, "postgresql://")
}

// Do sends a request to path (relative to the mount path) with the given
// headers; body may be nil, a string/[]byte (sent raw) or any value (JSON).
func (s *Server) Do(tb testing.TB, method, path string, body any, headers map[string]string) Response {
	tb.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			tb.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// App returns headers carrying the application id; Master adds the master key.
func App() map[string]string { return map[string]string{"X-Parse-Application-Id": AppID} }

// Master returns headers carrying the application id and the master key.
func Master() map[string]string {
	return map[string]string{"X-Parse-Application-Id": AppID, "X-Parse-Master-Key": MasterKey}
}

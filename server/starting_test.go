package server_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
)

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// TestHealthWhileLoading: the port answers before the data is loaded:
// /health 503 initialized, /health/live 200, data requests 503 with a
// retry hint; once the server is ready the same port serves it.
func TestHealthWhileLoading(t *testing.T) {
	opts, _, err := config.Load([]string{"--appId", "app", "--masterKey", "mk", "--host", "127.0.0.1", "--port", "0",
		"--databaseURI", filepath.Join(t.TempDir(), "q.db")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := server.ListenEarly(opts)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + st.Addr().String()
	if code, body, _ := get(t, base+"/parse/health"); code != 503 || body != `{"status":"initialized"}` {
		t.Errorf("health while loading: %d %s", code, body)
	}
	if code, body, _ := get(t, base+"/health/live"); code != 200 || body != `{"status":"ok"}` {
		t.Errorf("liveness while loading: %d %s", code, body)
	}
	if code, body, h := get(t, base+"/parse/classes/A"); code != 503 || h.Get("Retry-After") == "" || !strings.Contains(body, `"code":1`) {
		t.Errorf("a data request while loading: %d %v %s", code, h, body)
	}
	srv, err := server.Open(opts, nil)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	if err := st.Ready(srv); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if code, body, _ := get(t, base+"/parse/health"); code != 200 || body != `{"status":"ok"}` {
		t.Errorf("health once ready: %d %s", code, body)
	}
	if code, body, _ := get(t, base+"/health/live"); code != 200 {
		t.Errorf("liveness once ready: %d %s", code, body)
	}
}

// TestReadyAtOnce: a server ready before the starting answers even began
// (a small data file on a busy machine) still gets its port, with nothing
// left hanging.
func TestReadyAtOnce(t *testing.T) {
	for i := range 50 {
		opts, _, err := config.Load([]string{"--appId", "app", "--masterKey", "mk", "--host", "127.0.0.1", "--port", "0",
			"--databaseURI", filepath.Join(t.TempDir(), "q.db")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := server.Open(opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Ready straight after ListenEarly: the starting server's goroutine
		// has most likely not begun to accept yet.
		st, err := server.ListenEarly(opts)
		if err != nil {
			t.Fatal(err)
		}
		ready := make(chan error, 1)
		go func() { ready <- st.Ready(srv) }()
		select {
		case err := <-ready:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Ready hung", i)
		}
		srv.Close()
	}
}

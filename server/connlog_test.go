package server_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// lockedBuffer is a log sink the server writes from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

const secretMasterKey = "master-key-that-must-never-be-logged"

func startLogged(t *testing.T) (addr string, logs *lockedBuffer) {
	t.Helper()
	logs = &lockedBuffer{}
	srv := servertest.StartLogged(t, slog.New(slog.NewTextHandler(logs, nil)), func(o *config.Options) {
		o.AppID, o.MasterKey = "app", secretMasterKey
	})
	return strings.TrimSuffix(strings.TrimPrefix(srv.URL, "http://"), srv.Opts.MountPath), logs
}

// sendRaw writes raw bytes on a new connection and reads until the server
// answers or closes.
func sendRaw(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var reply bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		reply.Write(buf[:n])
		if err != nil {
			return reply.String()
		}
	}
}

// TestBrokenRequestsLogNoSecrets: a request the HTTP layer cannot parse
// is logged to the server's log without its bytes, so the keys and session
// tokens it carries never reach the log.
func TestBrokenRequestsLogNoSecrets(t *testing.T) {
	addr, logs := startLogged(t)
	broken := []string{
		"GET /parse/classes/Thing HTTP/1.1\r\nHost: x\r\nX-Parse-Master-Key: " + secretMasterKey + "\r\n x-Folded: bad\r\n\r\n",
		"POST /parse/classes/Thing HTTP/1.1\r\nHost: x\r\nX-Parse-Master-Key: " + secretMasterKey + "\r\nContent-Length: nope\r\n\r\n{}",
		"GARBAGE " + secretMasterKey + "\r\n\r\n",
		"GET /parse/users/me HTTP/1.1\r\nHost: x\r\nX-Parse-Session-Token: r:" + secretMasterKey + "\r\nTransfer-Encoding: bogus\r\n\r\n",
	}
	for _, raw := range broken {
		reply := sendRaw(t, addr, raw)
		if !strings.Contains(reply, "400") {
			t.Errorf("reply to a broken request: %q, want a 400", reply)
		}
	}
	// fasthttp logs a connection's error before it closes the connection,
	// and sendRaw reads until the close: everything is in the log now.
	out := logs.String()
	if n := strings.Count(out, "connection error"); n < len(broken) {
		t.Errorf("%d of %d broken requests reached the server's log:\n%s", n, len(broken), out)
	}
	if strings.Contains(out, secretMasterKey) {
		t.Fatalf("the log holds a secret from a broken request:\n%s", out)
	}
}

// TestConnectionErrorsAreRateLimited: thousands of aborted requests add a
// bounded number of log lines, and the count of the rest is reported.
func TestConnectionErrorsAreRateLimited(t *testing.T) {
	addr, logs := startLogged(t)
	const aborted = 2000
	for i := range aborted {
		sendRaw(t, addr, fmt.Sprintf("POST /parse/x%d HTTP/1.1\r\nHost: x\r\nContent-Length: %d-broken\r\n\r\n", i, i))
	}
	out := logs.String()
	if !strings.Contains(out, "Content-Length") {
		t.Fatalf("no connection error was logged at all:\n%s", out)
	}
	lines := strings.Count(out, "\n")
	if lines > 100 {
		t.Fatalf("%d aborted requests wrote %d log lines; want a bounded few", aborted, lines)
	}
}

package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live/redistest"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/server/servertest"
)

// ambiguousRequests are heads a proxy could read differently from the
// server; every listener of the process refuses them.
var ambiguousRequests = []struct{ name, request string }{
	{"content-length and chunked", "POST /parse/classes/A HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
	{"bare LF in a header line", "GET /parse/health HTTP/1.1\r\nHost: 127.0.0.1\nX-Other: 1\r\n\r\n"},
	{"bare LF ending the request line", "GET /parse/health HTTP/1.1\nHost: 127.0.0.1\r\n\r\n"},
	{"dot-dot segment", "GET /parse/x/../health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
}

// exchangeRaw sends request as bytes on a new connection to addr and
// reads the status and whether the server closes the connection.
func exchangeRaw(t *testing.T, addr, request string) (int, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Close
}

func checkRefusesAmbiguous(t *testing.T, addr string) {
	t.Helper()
	for _, tc := range ambiguousRequests {
		if status, closed := exchangeRaw(t, addr, tc.request); status != 400 || !closed {
			t.Errorf("%s: status %d (closed %v), want 400 and the connection closed", tc.name, status, closed)
		}
	}
	if status, _ := exchangeRaw(t, addr, "GET /parse/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); status == 400 {
		t.Errorf("a well-framed request is refused too")
	}
}

// TestStartingListenerRefusesAmbiguousFraming: the answers given while
// the data loads come from a listener of their own; it makes the API's
// framing checks too.
func TestStartingListenerRefusesAmbiguousFraming(t *testing.T) {
	opts, _, err := config.Load([]string{"--appId", "app", "--masterKey", "mk", "--host", "127.0.0.1", "--port", "0",
		"--databaseURI", filepath.Join(t.TempDir(), "q.db")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := server.ListenEarly(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkRefusesAmbiguous(t, st.Addr().String())
}

// TestLiveQueryListenerRefusesAmbiguousFraming: the standalone LiveQuery
// server's port makes the API's framing checks too.
func TestLiveQueryListenerRefusesAmbiguousFraming(t *testing.T) {
	redistest.Require(t, "the standalone LiveQuery framing test")
	t.Cleanup(func() { redistest.DropKeys(t, "framing"+servertest.AppID) })
	rest := servertest.Start(t, nil)
	ws := startLiveQuery(t, rest.URL, "framing"+servertest.AppID)
	checkRefusesAmbiguous(t, strings.TrimPrefix(ws, "ws://"))
}

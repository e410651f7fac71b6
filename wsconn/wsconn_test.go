package wsconn_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/wsconn"
)

// echoConfig is a protocol that answers each message with "echo:" and
// the message, panics on "panic", and ends on "bye".
func echoConfig(conn **wsconn.Conn[[]byte]) wsconn.Config[[]byte] {
	return wsconn.Config[[]byte]{
		ReadLimit:    1 << 16,
		MessageLimit: 64,
		Oversize:     func() { (*conn).Offer([]byte("too large")) },
		PingInterval: time.Hour,
		WriteTimeout: time.Second,
		Queue:        16,
		Handle: func(data []byte) bool {
			switch string(data) {
			case "panic":
				panic("a bug while handling")
			case "bye":
				return false
			}
			return (*conn).Send(append([]byte("echo:"), data...))
		},
		Write: func(ws *websocket.Conn, msg []byte, _ <-chan []byte) (bool, error) {
			return false, ws.WriteMessage(websocket.TextMessage, msg)
		},
		InternalErrorCode:   websocket.CloseInternalServerErr,
		InternalErrorReason: "internal error",
	}
}

// serve runs a WebSocket server whose connections live by the config
// made for each, and returns its ws:// address.
func serve(t *testing.T, config func(conn **wsconn.Conn[[]byte]) wsconn.Config[[]byte]) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := websocket.FastHTTPUpgrader{CheckOrigin: func(*fasthttp.RequestCtx) bool { return true }}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		_ = up.Upgrade(ctx, func(ws *websocket.Conn) {
			var conn *wsconn.Conn[[]byte]
			conn = wsconn.New(ws, config(&conn))
			conn.Run()
		})
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return "ws://" + ln.Addr().String() + "/"
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	return ws
}

// TestConnLife: messages are handled in order and answered, an oversize
// message is reported without ending the connection, a panic closes that
// connection with the internal-error code and never the server, and a
// handler's false ends the connection with a normal close.
func TestConnLife(t *testing.T) {
	url := serve(t, echoConfig)
	ws := dial(t, url)
	steps := []struct{ send, want string }{
		{"one", "echo:one"},
		{"two", "echo:two"},
		{strings.Repeat("x", 65), "too large"},
		{"three", "echo:three"},
	}
	for _, step := range steps {
		if err := ws.WriteMessage(websocket.TextMessage, []byte(step.send)); err != nil {
			t.Fatal(err)
		}
		_, got, err := ws.ReadMessage()
		if err != nil || string(got) != step.want {
			t.Fatalf("after %.10q: got %q (%v), want %q", step.send, got, err, step.want)
		}
	}

	for _, tc := range []struct {
		send   string
		code   int
		reason string
	}{
		{"panic", websocket.CloseInternalServerErr, "internal error"},
		{"bye", websocket.CloseNormalClosure, ""},
	} {
		ws := dial(t, url)
		if err := ws.WriteMessage(websocket.TextMessage, []byte(tc.send)); err != nil {
			t.Fatal(err)
		}
		_, _, err := ws.ReadMessage()
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != tc.code || ce.Text != tc.reason {
			t.Errorf("after %q: %v, want close %d %q", tc.send, err, tc.code, tc.reason)
		}
	}
}

// TestNoPongCloses: a peer that answers no ping is closed with the
// configured code once the next ping is due.
func TestNoPongCloses(t *testing.T) {
	url := serve(t, func(conn **wsconn.Conn[[]byte]) wsconn.Config[[]byte] {
		cfg := echoConfig(conn)
		cfg.PingInterval, cfg.NoPongCode = 20*time.Millisecond, 4000
		return cfg
	})
	ws := dial(t, url)
	ws.SetPingHandler(func(string) error { return nil }) // never answers
	_, _, err := ws.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4000 || ce.Text != "no pong" {
		t.Fatalf("%v, want close 4000 \"no pong\"", err)
	}
}

// TestOfferNeverWaits: Offer refuses at once when the queue is full and
// after the close; Send after the close returns.
func TestOfferNeverWaits(t *testing.T) {
	conn := wsconn.New[[]byte](nil, wsconn.Config[[]byte]{Queue: 1})
	if !conn.Offer([]byte("a")) || conn.Offer([]byte("b")) {
		t.Fatal("a queue of one takes one")
	}
	if conn.Queued() != 1 {
		t.Fatalf("queued %d, want 1", conn.Queued())
	}
	<-conn.Pending()
	conn.Close(websocket.CloseNormalClosure, "")
	if conn.Offer([]byte("c")) || conn.Send([]byte("d")) {
		t.Fatal("a closed connection takes no more")
	}
	select {
	case <-conn.Done():
	default:
		t.Fatal("Done not closed by Close")
	}
}

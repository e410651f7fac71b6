package live_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/server/servertest"
)

// wsClient is a raw LiveQuery client: it speaks the protocol message by
// message so tests can check every reply.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn
	msgs chan map[string]any
	errc chan error // the read error that ended the connection
}

const waitFor = 5 * time.Second

// dial opens a WebSocket to url (any path works).
func dial(t testing.TB, url string) *wsClient {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (HTTP %d)", url, err, status)
	}
	c := &wsClient{t: t, conn: conn, msgs: make(chan map[string]any, 1024), errc: make(chan error, 1)}
	go func() {
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				c.errc <- err
				close(c.msgs)
				return
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				m = map[string]any{"op": "<not json>", "raw": string(data)}
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() { conn.Close() })
	return c
}

// wsURL is the WebSocket address of a test server, on its mount path as
// the JS SDK derives it.
func wsURL(s *servertest.Server) string { return "ws" + strings.TrimPrefix(s.URL, "http") }

func (c *wsClient) send(v any) {
	c.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(string(data))
}

func (c *wsClient) sendRaw(s string) {
	c.t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next returns the next message, failing after waitFor.
func (c *wsClient) next() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatalf("connection closed: %v", <-c.errc)
		}
		return m
	case <-time.After(waitFor):
		c.t.Fatalf("no message within %v", waitFor)
	}
	return nil
}

// expect returns the next message and checks its op.
func (c *wsClient) expect(op string) map[string]any {
	c.t.Helper()
	m := c.next()
	if m["op"] != op {
		c.t.Fatalf("got %v, want op %q", m, op)
	}
	return m
}

// expectError checks the next message is an error with code.
func (c *wsClient) expectError(code int, contains string) map[string]any {
	c.t.Helper()
	m := c.expect("error")
	if m["code"] != float64(code) || !strings.Contains(fmt.Sprint(m["error"]), contains) {
		c.t.Fatalf("got %v, want error code %d containing %q", m, code, contains)
	}
	return m
}

// expectEvents reads len(want) messages and checks that they are these
// events in some order; each want is "op requestId", e.g. "create 1". It
// returns the messages as they came.
//
// It is how these tests prove that a write sent nothing, without waiting
// for a while: the changes of one object reach a connection in the order
// they were made, so a later write to the same object is a sentinel. When
// its events are among want, an event the earlier write should not have
// caused arrives before them and takes a place in the count.
func (c *wsClient) expectEvents(want ...string) []map[string]any {
	c.t.Helper()
	msgs := make([]map[string]any, len(want))
	got := make([]string, len(want))
	for i := range want {
		msgs[i] = c.next()
		got[i] = fmt.Sprintf("%v %v", msgs[i]["op"], msgs[i]["requestId"])
	}
	if g, w := sorted(got), sorted(want); !slices.Equal(g, w) {
		c.t.Fatalf("got events %v, want %v (in any order); messages: %v", got, want, msgs)
	}
	return msgs
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// closed waits for the connection to end and returns the close error.
func (c *wsClient) closed() error {
	c.t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case _, ok := <-c.msgs:
			if !ok {
				return <-c.errc
			}
		case <-deadline:
			c.t.Fatalf("connection still open after %v", waitFor)
		}
	}
}

func (c *wsClient) connect(fields map[string]any) map[string]any {
	c.t.Helper()
	msg := map[string]any{"op": "connect", "applicationId": servertest.AppID}
	for k, v := range fields {
		msg[k] = v
	}
	c.send(msg)
	return c.expect("connected")
}

func (c *wsClient) subscribe(requestID int, class string, where map[string]any, extra map[string]any) {
	c.t.Helper()
	query := map[string]any{"className": class, "where": where}
	msg := map[string]any{"op": "subscribe", "requestId": requestID, "query": query}
	for k, v := range extra {
		if k == "keys" || k == "watch" || k == "fields" {
			query[k] = v
		} else {
			msg[k] = v
		}
	}
	c.send(msg)
	m := c.expect("subscribed")
	if m["requestId"] != float64(requestID) {
		c.t.Fatalf("subscribed %v, want requestId %d", m, requestID)
	}
}

// event expects an event op for requestID and returns its object and
// original.
func (c *wsClient) event(op string, requestID int) (object, original map[string]any) {
	c.t.Helper()
	m := c.expect(op)
	if m["requestId"] != float64(requestID) {
		c.t.Fatalf("%s for requestId %v, want %d: %v", op, m["requestId"], requestID, m)
	}
	object, _ = m["object"].(map[string]any)
	original, _ = m["original"].(map[string]any)
	if object == nil {
		c.t.Fatalf("%s without object: %v", op, m)
	}
	return object, original
}

package live_test

import (
	"io"
	"strings"
	"testing"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestEveryClassLive: the development start's LiveQuery serves any class
// without a classNames list.
func TestEveryClassLive(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.LiveQuery.AllClasses = true })
	c := dial(t, wsURL(srv))
	c.connect(nil)
	c.subscribe(1, "AnyClassAtAll", map[string]any{"x": 1}, nil)
	if res := srv.Do(t, "POST", "/classes/AnyClassAtAll", map[string]any{"x": 1}, servertest.App()); res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	obj, _ := c.event("create", 1)
	if obj["x"] != float64(1) {
		t.Errorf("event object %v", obj)
	}
}

// TestUpgradeRefusedSaysWhy: with LiveQuery off, a WebSocket upgrade is
// answered with a reason the developer can act on.
func TestUpgradeRefusedSaysWhy(t *testing.T) {
	srv := servertest.Start(t, nil)
	conn, resp, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err == nil {
		conn.Close()
		t.Fatal("the upgrade succeeded with LiveQuery off")
	}
	if resp == nil {
		t.Fatalf("no HTTP reply: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.Contains(string(body), "liveQuery.classNames") {
		t.Errorf("refused upgrade: %d %s", resp.StatusCode, body)
	}
}

// TestWrongApplicationIDIsRefused: a connect naming another application
// gets an error frame without a reconnect request, then the socket closes.
func TestWrongApplicationIDIsRefused(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.LiveQuery.ClassNames = []string{"Msg"} })
	c := dial(t, wsURL(srv))
	c.send(map[string]any{"op": "connect", "applicationId": "someone-else"})
	m := c.expectError(live.CodeKeyNotValid, "application id")
	if m["reconnect"] != false {
		t.Errorf("error frame %v asks for a reconnect", m)
	}
	c.closed()
}

// TestUnknownPropertiesFailTheSubscription: a subscribe with properties
// the protocol does not have is refused for that request (its requestId,
// no reconnect), and the connection and its other subscriptions go on.
func TestUnknownPropertiesFailTheSubscription(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.LiveQuery.ClassNames = []string{"Msg"} })
	c := dial(t, wsURL(srv))
	c.connect(nil)
	c.subscribe(1, "Msg", map[string]any{}, nil)
	for _, bad := range []map[string]any{
		{"op": "subscribe", "requestId": 2, "query": map[string]any{"className": "Msg", "where": map[string]any{}}, "extra": true},
		{"op": "subscribe", "requestId": 3, "query": map[string]any{"className": "Msg", "where": map[string]any{}, "limit": 5}},
	} {
		c.send(bad)
		m := c.expectError(1, "Additional properties not allowed")
		if m["requestId"] != bad["requestId"].(int) && m["requestId"] != float64(bad["requestId"].(int)) || m["reconnect"] != false {
			t.Errorf("error frame %v for request %v", m, bad["requestId"])
		}
	}
	if res := srv.Do(t, "POST", "/classes/Msg", map[string]any{"a": 1}, servertest.App()); res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	c.event("create", 1)
}

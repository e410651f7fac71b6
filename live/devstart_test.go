package live_test

import (
	"io"
	"strings"
	"testing"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/config"
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

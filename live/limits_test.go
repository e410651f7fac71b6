package live

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestSubscriptionLimits: a connection and the whole server hold a bounded
// number of subscriptions; past them a subscribe fails (155, its
// requestId) and the connection goes on; an unsubscribe makes room.
func TestSubscriptionLimits(t *testing.T) {
	s, url := serveBare(t, Options{MaxSubscriptionsPerClient: 3, MaxSubscriptions: 5})
	a, b := rawDial(t, url), rawDial(t, url)
	for _, c := range []*websocket.Conn{a, b} {
		rawRoundTrip(t, c, `{"op":"connect","applicationId":"x"}`, "connected")
	}
	sub := func(c *websocket.Conn, id int) string {
		t.Helper()
		msg := fmt.Sprintf(`{"op":"subscribe","requestId":%d,"query":{"className":"C","where":{"n":%d}}}`, id, id)
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for id := 1; id <= 3; id++ {
		if r := sub(a, id); !strings.Contains(r, `"subscribed"`) {
			t.Fatalf("subscription %d: %s", id, r)
		}
	}
	if r := sub(a, 4); !strings.Contains(r, `"code":155`) || !strings.Contains(r, `"requestId":4`) || !strings.Contains(r, "connection holds 3") {
		t.Fatalf("a fourth subscription on one connection: %s", r)
	}
	rawRoundTrip(t, a, `{"op":"unsubscribe","requestId":1}`, "unsubscribed")
	if r := sub(a, 5); !strings.Contains(r, `"subscribed"`) {
		t.Fatalf("after an unsubscribe: %s", r)
	}
	for id := 1; id <= 2; id++ {
		if r := sub(b, id); !strings.Contains(r, `"subscribed"`) {
			t.Fatalf("b's subscription %d: %s", id, r)
		}
	}
	if r := sub(b, 3); !strings.Contains(r, `"code":155`) || !strings.Contains(r, "server holds 5") {
		t.Fatalf("a subscription past the server's limit: %s", r)
	}
	if n := s.subscriptions.Load(); n != 5 {
		t.Errorf("%d subscriptions counted, want 5", n)
	}
}

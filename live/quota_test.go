package live_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// The subscription quotas, configured through the server's options: per
// connection, per user over all their connections, and per app. A
// subscribe past one is answered with Parse's LiveQuery error frame, code
// 155, its requestId and reconnect false, and the connection goes on.
func TestSubscriptionQuotas(t *testing.T) {
	s := servertest.Start(t, func(o *config.Options) {
		o.LiveQuery.ClassNames = []string{"Message"}
		o.LiveQueryServer.MaxSubscriptionsPerClient = 3
		o.LiveQueryServer.MaxSubscriptionsPerUser = 4
		o.LiveQueryServer.MaxSubscriptions = 8
	})
	_, alice := signUp(t, s, "alice")
	_, bob := signUp(t, s, "bob")
	where := func(n int) map[string]any { return map[string]any{"n": n} }
	refused := func(c *wsClient, id int, contains string) {
		t.Helper()
		c.send(map[string]any{"op": "subscribe", "requestId": id, "query": map[string]any{"className": "Message", "where": where(id)}})
		m := c.expectError(155, contains)
		keys := []string{}
		for k := range m {
			keys = append(keys, k)
		}
		if want := []string{"code", "error", "op", "reconnect", "requestId"}; !reflect.DeepEqual(sorted(keys), want) || m["reconnect"] != false || m["requestId"] != float64(id) {
			t.Fatalf("error frame %v, want the fields %v, reconnect false, requestId %d", m, want, id)
		}
	}
	a1, a2 := dial(t, wsURL(s)), dial(t, wsURL(s))
	for _, c := range []*wsClient{a1, a2} {
		c.connect(map[string]any{"sessionToken": alice})
	}
	for id := 1; id <= 3; id++ {
		a1.subscribe(id, "Message", where(id), nil)
	}
	refused(a1, 4, "this connection holds 3")
	a2.subscribe(1, "Message", where(1), nil)
	refused(a2, 2, "this user holds 4") // alice's fifth, on another connection
	// Another user is not held by alice's quota, the app's is shared.
	b := dial(t, wsURL(s))
	b.connect(map[string]any{"sessionToken": bob})
	for id := 1; id <= 3; id++ {
		b.subscribe(id, "Message", where(id), nil)
	}
	public := dial(t, wsURL(s))
	public.connect(nil)
	public.subscribe(1, "Message", where(1), nil)
	refused(public, 2, "app's LiveQuery server holds 8")
	// An unsubscribe gives back to every quota it counted against.
	a1.send(map[string]any{"op": "unsubscribe", "requestId": 1})
	a1.expect("unsubscribed")
	a2.subscribe(2, "Message", where(2), nil)
	// A closed connection gives back its subscriptions too.
	// The server notices the close on its own time: ask until it has.
	b.conn.Close()
	for id := 3; ; id++ {
		public.send(map[string]any{"op": "subscribe", "requestId": id, "query": map[string]any{"className": "Message", "where": where(id)}})
		if m := public.next(); m["op"] == "subscribed" {
			break
		} else if m["code"] != float64(155) || id > 200 {
			t.Fatalf("after bob's connection closed: %v", m)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package live_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/server/servertest"
)

// BenchmarkLiveJoin_10000Subs_InnerChange is the cost of one change of an
// inner object (a room opening or closing) that makes k outer objects
// (its messages) enter or leave one live-join subscription, among 10,000
// live-join subscriptions (each on its own room) over 10,000 messages.
// The change is applied on the benchmark's goroutine (live.JoinChange):
// the index of inner queries, the set update, the lookup of the k
// messages through the Message.room index, and k decisions and encodings.
func BenchmarkLiveJoin_10000Subs_InnerChange(b *testing.B) {
	const subs, perConn, messages = 10_000, 1000, 10_000
	s := servertest.Start(b, func(o *config.Options) {
		o.LiveQuery.ClassNames = []string{"Message", "Room"}
		o.Indexes = []string{"Message.room", "Room.name"}
	})
	master := servertest.Master()
	var roomIDs []string
	for i := 0; i < subs; i += 20 {
		var reqs []any
		for j := i; j < i+20; j++ {
			reqs = append(reqs, map[string]any{"method": "POST", "path": "/parse/classes/Room", "body": map[string]any{"name": fmt.Sprintf("room-%d", j), "open": false}})
		}
		res := s.Do(b, "POST", "/batch", map[string]any{"requests": reqs}, master)
		list, ok := res.JSON().([]any)
		if !ok {
			b.Fatalf("batch: %d %s", res.Status, res.Body)
		}
		for _, r := range list {
			roomIDs = append(roomIDs, r.(map[string]any)["success"].(map[string]any)["objectId"].(string))
		}
	}
	// Messages: k in each of the hot rooms 0 (k=1), 1 (k=10), 2 (k=100),
	// 3 (k=1000), the rest spread over the other rooms.
	hot := []int{1, 10, 100, 1000}
	var placed []int
	for r, k := range hot {
		for j := 0; j < k; j++ {
			placed = append(placed, r)
		}
	}
	for len(placed) < messages {
		placed = append(placed, len(hot)+len(placed)%(subs-len(hot)))
	}
	for i := 0; i < len(placed); i += 20 {
		var reqs []any
		for _, r := range placed[i:min(i+20, len(placed))] {
			reqs = append(reqs, map[string]any{"method": "POST", "path": "/parse/classes/Message", "body": map[string]any{"room": ptr("Room", roomIDs[r])}})
		}
		s.Do(b, "POST", "/batch", map[string]any{"requests": reqs}, master)
	}
	live.SetSendQueue(s.Live, 1<<17)
	for c := 0; c < subs/perConn; c++ {
		conn, _, err := websocket.DefaultDialer.Dial(wsURL(s), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		conn.WriteJSON(map[string]any{"op": "connect", "applicationId": servertest.AppID, "masterKey": servertest.MasterKey})
		for i := c * perConn; i < (c+1)*perConn; i++ {
			conn.WriteJSON(map[string]any{"op": "subscribe", "requestId": i + 1, "query": map[string]any{"className": "Message",
				"where": map[string]any{"room": map[string]any{"$inQuery": map[string]any{"className": "Room",
					"where": map[string]any{"name": fmt.Sprintf("room-%d", i), "open": true}}}}}})
		}
		for n := 0; n < perConn+1; n++ { // connected, then every subscribed
			var m map[string]any
			if err := conn.ReadJSON(&m); err != nil || m["op"] == "error" {
				b.Fatalf("subscribe: %v %v", m, err)
			}
		}
		go func() { // events are read and dropped, so no queue fills
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					return
				}
			}
		}()
	}
	if st := s.Live.Stats(); st.Subscriptions != subs {
		b.Fatalf("%d subscriptions", st.Subscriptions)
	}
	isOpen := make([]bool, len(hot))
	for r, k := range hot {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			closed := schema.Object{"__type": "Object", "className": "Room", "objectId": roomIDs[r], "name": fmt.Sprintf("room-%d", r), "open": false}
			open := schema.Object{"__type": "Object", "className": "Room", "objectId": roomIDs[r], "name": fmt.Sprintf("room-%d", r), "open": true}
			before, cpu := s.Live.Stats().Delivered, cputime.Used()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if isOpen[r] = !isOpen[r]; isOpen[r] {
					live.JoinChange(s.Live, live.Change{Class: "Room", Original: closed, Object: open})
				} else {
					live.JoinChange(s.Live, live.Change{Class: "Room", Original: open, Object: closed})
				}
			}
			b.StopTimer()
			// The process's CPU: deciding, encoding, and the server's
			// writers and the reader putting the events on the sockets.
			b.ReportMetric(float64(cputime.Used()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
			if got := s.Live.Stats().Delivered - before; got != uint64(b.N*k) {
				b.Fatalf("%d events for %d changes of a room with %d messages", got, b.N, k)
			}
			b.ReportMetric(float64(k), "events/op")
		})
	}
}

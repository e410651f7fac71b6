package live

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/wsconn"
)

// benchObject is a stored object of 16 fields, as a write keeps it.
func benchObject(version int) schema.Object {
	return schema.Object{
		"objectId": "xWMyZ4YEGZ", "createdAt": "2026-11-25T10:00:00.000Z", "updatedAt": fmt.Sprintf("2026-11-25T10:00:%02d.000Z", version%60),
		"ACL":  map[string]any{"*": map[string]any{"read": true}, "u1": map[string]any{"read": true, "write": true}},
		"room": "r17", "title": "A note about the quarterly numbers", "body": "Some text that is neither short nor long, as notes go.",
		"n": float64(version), "score": 4.25, "done": version%2 == 0, "tags": []any{"red", "green", "blue"},
		"owner": schema.Pointer("_User", "u1"), "loc": map[string]any{"__type": "GeoPoint", "latitude": 48.85, "longitude": 2.35},
		"due":  map[string]any{"__type": "Date", "iso": "2026-12-01T00:00:00.000Z"},
		"meta": map[string]any{"source": "web", "rev": float64(version)},
		"lang": "en",
	}
}

// BenchmarkEventFrame_Update_10Subscribers is the LiveQuery side of one
// update delivered to 10 subscribers who see the whole object (one
// projection, encoded once per change either way): the frames built from
// the stored bytes the writer hands over (the publisher's splice of
// className and __type included), or from the maps encoded as before;
// and for a change received from Redis (its decoding included), from the
// bytes as received, or from the decoded maps encoded again.
// The clients' send queues are drained apart; no socket is written.
func BenchmarkEventFrame_Update_10Subscribers(b *testing.B) {
	const subscribers = 10
	for _, mode := range []string{"stored", "encoded", "redis", "redis-encoded"} {
		b.Run(mode, func(b *testing.B) {
			s, err := New(Options{Authority: openAuthority{}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			q, err := match.Compile("Note", map[string]any{"room": "r17"}, match.Options{})
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan struct{})
			defer close(done)
			for i := range subscribers {
				cl := &client{srv: s, conn: wsconn.New[[]byte](nil, wsconn.Config[[]byte]{Queue: 1024})}
				go func() {
					for {
						select {
						case <-cl.conn.Pending():
						case <-done:
							return
						}
					}
				}()
				sub := &subscription{client: cl, requestID: fmt.Sprint(i + 1), query: q, master: true, prefix: []byte(`"clientId":"c"`)}
				sub.group = s.index.Add(q, sub)
			}
			published := func(o schema.Object) schema.Object {
				o["className"], o["__type"] = "Note", "Object"
				return o
			}
			before, after := benchObject(1), benchObject(2)
			storedBefore, _ := json.Marshal(before)
			storedAfter, _ := json.Marshal(after)
			c := Change{Class: "Note", Original: published(before), Object: published(after)}
			_, payload, err := encodeRedis(redisOut{change: &c})
			if err != nil {
				b.Fatal(err)
			}
			var buf []*match.Group[*subscription]
			b.ReportAllocs()
			cpu0 := int64(cputime.Used())
			for b.Loop() {
				switch mode {
				case "stored":
					c.OriginalJSON, c.ObjectJSON = spliceFull("Note", storedBefore), spliceFull("Note", storedAfter)
				case "redis", "redis-encoded":
					// As received from another instance: decoded, with the
					// bytes as received, or without them (as before).
					if c, err = decodeRedis(payload, false); err != nil {
						b.Fatal(err)
					}
					if mode == "redis-encoded" {
						c.ObjectJSON, c.OriginalJSON = nil, nil
					}
				}
				buf = s.dispatch(c, buf[:0])
			}
			// CPU time, the drains included: wall time is noisy on a shared machine.
			b.ReportMetric(float64(int64(cputime.Used())-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

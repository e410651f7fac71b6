package live_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/server/servertest"
)

// BenchmarkLiveRelatedTo_1000Subs_RelationEdit is the cost of one
// relation edit (a photo added to, then removed from, an album of m
// members) that makes one photo enter or leave a $relatedTo
// subscription, among 1,000 $relatedTo subscriptions (one per album).
// One op is the whole path: the REST update with AddRelation or
// RemoveRelation, its commit, the owner's change reaching the live joins,
// the relation's members read again and compared, the one photo looked
// up, decided, encoded and read by the client.
func BenchmarkLiveRelatedTo_1000Subs_RelationEdit(b *testing.B) {
	const albums = 1000
	s := startLive(b, "Photo", "Album")
	master := servertest.Master()
	batch := func(reqs []any) []any {
		res := s.Do(b, "POST", "/batch", map[string]any{"requests": reqs}, master)
		list, ok := res.JSON().([]any)
		if !ok {
			b.Fatalf("batch: %d %s", res.Status, res.Body)
		}
		return list
	}
	create := func(class string, n int) []string {
		var ids []string
		for i := 0; i < n; i += 20 {
			var reqs []any
			for j := i; j < min(i+20, n); j++ {
				reqs = append(reqs, map[string]any{"method": "POST", "path": "/parse/classes/" + class, "body": map[string]any{"n": j}})
			}
			for _, r := range batch(reqs) {
				ids = append(ids, r.(map[string]any)["success"].(map[string]any)["objectId"].(string))
			}
		}
		return ids
	}
	albumIDs := create("Album", albums)
	sizes := []int{10, 1000, 10_000} // the members of albums 0, 1, 2
	photos := create("Photo", sizes[len(sizes)-1]+1)
	extra := photos[len(photos)-1] // the photo the ops add and remove
	for a, m := range sizes {
		for i := 0; i < m; i += 500 {
			call(b, s, "PUT", "/classes/Album/"+albumIDs[a], relationOp("AddRelation", photos[i:min(i+500, m)]...), master)
		}
	}
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(s), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	conn.WriteJSON(map[string]any{"op": "connect", "applicationId": servertest.AppID, "masterKey": servertest.MasterKey})
	for i := 0; i < albums; i++ {
		conn.WriteJSON(map[string]any{"op": "subscribe", "requestId": i + 1, "query": map[string]any{"className": "Photo", "where": inAlbum(albumIDs[i])}})
	}
	for n := 0; n < albums+1; n++ { // connected, then every subscribed
		var m map[string]any
		if err := conn.ReadJSON(&m); err != nil || m["op"] == "error" {
			b.Fatalf("subscribe: %v %v", m, err)
		}
	}
	for a, m := range sizes {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			cpu := cputime.Used()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				op, want := "AddRelation", "enter"
				if i%2 == 1 {
					op, want = "RemoveRelation", "leave"
				}
				call(b, s, "PUT", "/classes/Album/"+albumIDs[a], relationOp(op, extra), master)
				var ev map[string]any
				if err := conn.ReadJSON(&ev); err != nil || ev["op"] != want || ev["requestId"] != float64(a+1) {
					b.Fatalf("after %s: %v %v", op, ev, err)
				}
			}
			b.StopTimer()
			if b.N%2 == 1 { // leave the album as it was for the next run
				call(b, s, "PUT", "/classes/Album/"+albumIDs[a], relationOp("RemoveRelation", extra), master)
				conn.ReadJSON(new(map[string]any))
			}
			b.ReportMetric(float64(cputime.Used()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		})
	}
}

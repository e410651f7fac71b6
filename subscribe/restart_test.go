package subscribe_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quarrydata/quarry/live/redistest"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/subscribe"
)

// TestUndeliveredEventsSurviveRestart: events a down target never
// accepted are sent after a restart, with the ids they had, before the
// events of later writes: the subscription resumes from its saved
// position in the change log.
func TestUndeliveredEventsSurviveRestart(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	tried := make(chan string, 100)
	recv := newReceiver(t, func(e subscribe.Event, attempt int) int {
		if down.Load() {
			tried <- e.ID
			return 503
		}
		return 0
	})
	srv := servertest.Start(t, subscriptions(5))
	mustDo(t, srv, "POST", "/hooks/subscriptions", webhook("orders", "Order", nil, recv.URL), 201)
	for i := range 3 {
		mustDo(t, srv, "POST", "/classes/Order", map[string]any{"total": i}, 201)
	}
	firstID := <-tried // the target refused the first event at least once
	srv.Restart(t)
	down.Store(false)
	mustDo(t, srv, "POST", "/classes/Order", map[string]any{"total": 3}, 201)
	var ids []string
	for i := range 4 {
		e := recv.await(t)
		if e.Op != "create" || e.Object["total"] != float64(i) {
			t.Fatalf("event %d after restart: %+v", i, e)
		}
		ids = append(ids, e.ID)
	}
	if ids[0] != firstID {
		t.Errorf("the first event came back as %s, it was %s before the restart", ids[0], firstID)
	}
	if !slices.IsSortedFunc(ids, func(a, b string) int { return cmp.Compare(changeOf(t, a), changeOf(t, b)) }) || len(slices.Compact(slices.Clone(ids))) != 4 {
		t.Errorf("ids %v: one per change, in log order", ids)
	}
}

// changeOf is the change id an event id names ("<change>-<record>").
func changeOf(t *testing.T, id string) int64 {
	t.Helper()
	c, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseInt(c, 10, 64)
	if err != nil {
		t.Fatalf("event id %q names no change", id)
	}
	return n
}

// TestRedisStreamConsumerGroup: a redis target appends each event to its
// stream (XADD, MAXLEN ~), where a consumer group reads them in order,
// including those appended while no consumer was reading.
func TestRedisStreamConsumerGroup(t *testing.T) {
	redistest.Require(t, "the server-side subscription stream test")
	prefix := fmt.Sprintf("quarrytest:subs:%d:", time.Now().UnixNano())
	defer redistest.DropKeys(t, prefix)
	stream := prefix + "orders"
	opts, err := redis.ParseURL(redistest.URL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.XGroupCreateMkStream(ctx, stream, "billing", "$").Err(); err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, subscriptions(5))
	mustDo(t, srv, "POST", "/hooks/subscriptions", map[string]any{"name": "orders", "className": "Order",
		"where": map[string]any{"total": map[string]any{"$gte": 0}}, "events": []string{"create", "update"},
		"target": map[string]any{"type": "redis", "url": redistest.URL, "stream": stream, "maxLen": 1000}}, 201)
	const n = 10
	var id string
	for i := range n {
		id, _ = mustDo(t, srv, "POST", "/classes/Order", map[string]any{"total": i}, 201)["objectId"].(string)
	}
	mustDo(t, srv, "PUT", "/classes/Order/"+id, map[string]any{"total": 100}, 200)
	mustDo(t, srv, "DELETE", "/classes/Order/"+id, nil, 200) // not among the events
	mustDo(t, srv, "POST", "/classes/Order", map[string]any{"total": 200}, 201)

	var got []subscribe.Event
	seen := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < n+2 && time.Now().Before(deadline) {
		res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "c1", Streams: []string{stream, ">"}, Count: 5, Block: 2 * time.Second}).Result()
		if err == redis.Nil {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range res[0].Messages {
			var e subscribe.Event
			if err := json.Unmarshal([]byte(msg.Values["event"].(string)), &e); err != nil {
				t.Fatal(err)
			}
			if e.ID != msg.Values["id"] || seen[e.ID] {
				t.Fatalf("entry %v: id field %v, event id %s (seen before: %v)", msg.ID, msg.Values["id"], e.ID, seen[e.ID])
			}
			seen[e.ID] = true
			got = append(got, e)
			if err := rdb.XAck(ctx, stream, "billing", msg.ID).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != n+2 {
		t.Fatalf("read %d events, want %d", len(got), n+2)
	}
	for i := range n {
		if got[i].Op != "create" || got[i].Object["total"] != float64(i) {
			t.Errorf("event %d: %+v", i, got[i])
		}
	}
	if got[n].Op != "update" || got[n].Object["total"] != 100.0 || got[n+1].Object["total"] != 200.0 {
		t.Errorf("last events: %+v, %+v", got[n], got[n+1])
	}
}

package subscribe

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openManager is a manager over a service on a buntdb file, with
// subscriptions whose deliveries are not started: their queues only fill.
func openManager(tb testing.TB, queue int, wheres ...map[string]any) (*Manager, []*sub) {
	tb.Helper()
	adapter, err := store.Open(filepath.Join(tb.TempDir(), "quarry.db"))
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := service.Open(adapter, service.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { adapter.Close() })
	m, err := Open(svc, Options{Max: len(wheres), QueueSize: queue})
	if err != nil {
		tb.Fatal(err)
	}
	var subs []*sub
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, w := range wheres {
		d := Definition{Name: fmt.Sprint("s", i), ClassName: "Order", Where: w, Events: allEvents,
			Target: Target{Type: TargetWebhook, URL: "http://127.0.0.1:9/", Secret: "x"}}
		q, err := d.compile()
		if err != nil {
			tb.Fatal(err)
		}
		s := m.newSub(fmt.Sprint("id", i), d, q)
		m.subs[d.Name] = s
		subs = append(subs, s)
	}
	m.publish()
	return m, subs
}

func order(id string, total float64) schema.Object {
	return schema.Object{"objectId": id, "total": total, "createdAt": "2026-11-28T00:00:00.000Z", "updatedAt": "2026-11-28T00:00:00.000Z"}
}

// TestQueueOverflowIsTold: a full queue drops new events and the next
// event queued is preceded by a "lost" notice with their number; a loss
// of the change ring is told the same way.
func TestQueueOverflowIsTold(t *testing.T) {
	m, subs := openManager(t, 2, map[string]any{})
	s := subs[0]
	for i := range 5 {
		m.Deliver([]service.Change{{Class: "Order", Object: order(fmt.Sprint("o", i), 1)}})
	}
	s.mu.Lock()
	if len(s.queue) != 2 || s.lostNow != 3 {
		t.Fatalf("queue %d, lost %d; want 2 and 3", len(s.queue), s.lostNow)
	}
	s.queue = nil // delivered
	s.mu.Unlock()
	m.Deliver([]service.Change{{Class: "Order", Object: order("o5", 1)}})
	m.Lost([]string{"Order"}, 7)
	want := []struct {
		op   string
		lost int
	}{{"lost", 3}, {"create", 0}, {"lost", 7}}
	if len(s.queue) != len(want) {
		t.Fatalf("queue %+v", s.queue)
	}
	for i, w := range want {
		if e := s.queue[i]; e.Op != w.op || e.Lost != w.lost || e.ID == "" {
			t.Errorf("event %d: %+v, want %s lost %d", i, e, w.op, w.lost)
		}
	}
	if st := s.stats(); st.Lost != 10 {
		t.Errorf("lost counter %d, want 10", st.Lost)
	}
}

// BenchmarkRoute_Subs_* is the consumer's cost for one change of a class
// with n subscriptions (range wheres), a tenth of which match: matching,
// the REST form made once, the projection and the queueing.
func BenchmarkRoute_Subs_10(b *testing.B)   { benchRoute(b, 10) }
func BenchmarkRoute_Subs_100(b *testing.B)  { benchRoute(b, 100) }
func BenchmarkRoute_Subs_1000(b *testing.B) { benchRoute(b, 1000) }

func benchRoute(b *testing.B, n int) {
	wheres := make([]map[string]any, n)
	for i := range wheres {
		wheres[i] = map[string]any{"total": map[string]any{"$gte": float64(i), "$lt": float64(i + n/10)}}
	}
	m, subs := openManager(b, 1<<30, wheres...)
	before, after := order("o1", 0), order("o1", 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		after["total"] = float64(i % n)
		m.Deliver([]service.Change{{Class: "Order", Original: before, Object: after}})
		if i%1024 == 0 {
			for _, s := range subs {
				s.mu.Lock()
				s.queue = s.queue[:0]
				s.mu.Unlock()
			}
		}
	}
}

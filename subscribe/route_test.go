package subscribe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydata/quarry/outbound"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openManager is a manager over a service on a buntdb file that keeps
// its change log, with subscriptions whose deliveries are not started.
func openManager(tb testing.TB, changes store.ChangeLog, wheres ...map[string]any) (*Manager, []*sub) {
	tb.Helper()
	adapter, err := store.Open(filepath.Join(tb.TempDir(), "quarry.db"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := adapter.(store.ChangeLog).KeepChanges(0); err != nil {
		tb.Fatal(err)
	}
	svc, err := service.Open(adapter, service.Options{RecordPrevious: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { adapter.Close() })
	if changes == nil {
		changes = adapter.(store.ChangeLog)
	}
	m, err := Open(svc, Options{Max: len(wheres), Changes: changes, RetryBase: time.Millisecond, Policy: outbound.Policy{AllowPrivate: true}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
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
		subs = append(subs, m.newSub(fmt.Sprint("id", i), 0, d, q))
	}
	return m, subs
}

func orderJSON(id string, total float64) []byte {
	return fmt.Appendf(nil, `{"objectId":%q,"total":%v,"createdAt":"2026-11-28T00:00:00.000Z","updatedAt":"2026-11-28T00:00:00.000Z"}`, id, total)
}

// TestEventsOfChange: the event a logged record means is decided from
// its previous version and the new one, as LiveQuery decides it.
func TestEventsOfChange(t *testing.T) {
	_, subs := openManager(t, nil, map[string]any{"total": map[string]any{"$gt": 10.0}})
	s := subs[0]
	cases := []struct {
		name            string
		value, previous []byte
		op              string // "" when none
	}{
		{"create matching", orderJSON("a", 20), []byte{}, "create"},
		{"create not matching", orderJSON("a", 5), []byte{}, ""},
		{"update", orderJSON("a", 30), orderJSON("a", 20), "update"},
		{"leave", orderJSON("a", 1), orderJSON("a", 30), "leave"},
		{"enter", orderJSON("a", 50), orderJSON("a", 1), "enter"},
		{"delete", nil, orderJSON("a", 50), "delete"},
		{"delete not matching", nil, orderJSON("a", 5), ""},
		{"previous not carried, matching", orderJSON("a", 50), nil, "update"},
		{"previous not carried, deleted", nil, nil, ""},
	}
	for i, c := range cases {
		ch := store.LoggedChange{ID: int64(i + 1), At: time.Now(), Records: []store.Record{
			{Kind: store.KindObject, Class: "Other", Key: "x", Value: orderJSON("x", 99), Previous: []byte{}},
			{Kind: store.KindObject, Class: "Order", Key: "a", Value: c.value, Previous: c.previous}}}
		evs := s.eventsOf(ch)
		if c.op == "" {
			if len(evs) != 0 {
				t.Errorf("%s: %+v, want no event", c.name, evs)
			}
			continue
		}
		if len(evs) != 1 || evs[0].Op != c.op || evs[0].ID != fmt.Sprintf("%d-1", i+1) {
			t.Errorf("%s: %+v, want one %s with id %d-1", c.name, evs, c.op, i+1)
		}
	}
}

// fakeLog is a change log whose oldest changes were pruned: the reader
// at 0 skips 5 of them, then reads change 6.
type fakeLog struct {
	mu     sync.Mutex
	cursor int64
}

func (f *fakeLog) KeepChanges(time.Duration) error                     { return nil }
func (f *fakeLog) ChangesHead(context.Context) (int64, error)          { return 6, nil }
func (f *fakeLog) Cursor(context.Context, string) (int64, bool, error) { return 0, false, nil }
func (f *fakeLog) SaveCursor(_ context.Context, _ string, pos int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cursor = pos
	return nil
}
func (f *fakeLog) ReadChanges(_ context.Context, after int64, _ int, fn func(store.LoggedChange) error) (int64, error) {
	var skipped int64
	if after < 5 {
		skipped, after = 5-after, 5
	}
	if after < 6 {
		return skipped, fn(store.LoggedChange{ID: 6, At: time.Now(), Records: []store.Record{
			{Kind: store.KindObject, Class: "Order", Key: "a", Value: orderJSON("a", 1), Previous: []byte{}}}})
	}
	return skipped, nil
}

// TestPrunedChangesAreTold: changes the log's retention removed before
// the subscription read them are told with one "lost" event counting
// them, before the next change's event; the position then moves past.
func TestPrunedChangesAreTold(t *testing.T) {
	got := make(chan Event, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e Event
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &e); err != nil {
			t.Error(err)
		}
		got <- e
	}))
	defer recv.Close()
	log := &fakeLog{}
	m, subs := openManager(t, log, map[string]any{})
	s := subs[0]
	s.d.Target.URL = recv.URL
	m.mu.Lock()
	m.subs[s.d.Name] = s
	m.mu.Unlock()
	go s.run()
	first, second := <-got, <-got
	if first.Op != "lost" || first.Lost != 5 || first.ID != "lost-0" {
		t.Errorf("first event %+v, want lost 5", first)
	}
	if second.Op != "create" || second.ID != "6-0" {
		t.Errorf("second event %+v, want the create of change 6", second)
	}
	waitFor(t, "the create accepted", func() bool { return s.stats().Delivered == 1 })
	s.stop()
	if log.cursor != 6 || s.stats().Lost != 5 {
		t.Errorf("saved position %d, lost %d; want 6 and 5", log.cursor, s.stats().Lost)
	}
}

// BenchmarkEventsOf_Subs_* is the cost of one logged change (an update)
// for a class with n subscriptions (range wheres), a tenth of which
// match: each subscription decodes and matches it (they read the log
// independently), and the matching ones present and project it.
func BenchmarkEventsOf_Subs_10(b *testing.B)   { benchEventsOf(b, 10) }
func BenchmarkEventsOf_Subs_100(b *testing.B)  { benchEventsOf(b, 100) }
func BenchmarkEventsOf_Subs_1000(b *testing.B) { benchEventsOf(b, 1000) }

func benchEventsOf(b *testing.B, n int) {
	wheres := make([]map[string]any, n)
	for i := range wheres {
		wheres[i] = map[string]any{"total": map[string]any{"$gte": float64(i), "$lt": float64(i + n/10)}}
	}
	_, subs := openManager(b, nil, wheres...)
	changes := make([]store.LoggedChange, n)
	for i := range changes {
		changes[i] = store.LoggedChange{ID: int64(i + 1), At: time.Now(), Records: []store.Record{
			{Kind: store.KindObject, Class: "Order", Key: "o1", Value: orderJSON("o1", float64(i)), Previous: orderJSON("o1", 0)}}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for i := range b.N {
		c := changes[i%n]
		for _, s := range subs {
			events += len(s.eventsOf(c))
		}
	}
	if events == 0 {
		b.Fatal("no event")
	}
}

// waitFor polls cond until it holds (20s at most: then the test fails).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkDeliver_Webhook_Backlog is one subscription catching up on a
// backlog of b.N logged creates to a webhook on 127.0.0.1 that accepts at
// once: per event, the log read, the decision, the signed POST and the
// share of the position saves. The writes are made before the timer.
func BenchmarkDeliver_Webhook_Backlog(b *testing.B) {
	var got atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer recv.Close()
	m, subs := openManager(b, nil, map[string]any{})
	for i := range b.N {
		if _, err := m.svc.Create(m.master, "Order", map[string]any{"total": float64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	s := subs[0]
	s.d.Target.URL = recv.URL
	b.ReportAllocs()
	b.ResetTimer()
	go s.run()
	for got.Load() < int64(b.N) {
		time.Sleep(100 * time.Microsecond) // the deliveries run on their own goroutine
	}
	b.StopTimer()
	s.stop()
}

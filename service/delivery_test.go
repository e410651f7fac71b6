package service_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/service"
)

// changeLog records what one consumer received: "Class/id n" per change,
// "lost [classes]" per loss notice.
type changeLog struct {
	mu   sync.Mutex
	seen []string
	each chan struct{} // a token per change
}

func newChangeLog(n int) *changeLog { return &changeLog{each: make(chan struct{}, n)} }

func (l *changeLog) consumer(name string, size int) service.ChangeConsumer {
	return service.ChangeConsumer{Name: name, Size: size,
		Deliver: func(b []service.Change) {
			l.mu.Lock()
			for _, c := range b {
				obj := c.Object
				if obj == nil {
					obj = c.Original
				}
				l.seen = append(l.seen, fmt.Sprint(c.Class, "/", obj["objectId"], " ", obj["n"]))
			}
			l.mu.Unlock()
			for range b {
				l.each <- struct{}{}
			}
		},
		Lost: func(classes []string, _ int) {
			l.mu.Lock()
			l.seen = append(l.seen, fmt.Sprint("lost ", classes))
			l.mu.Unlock()
		}}
}

func (l *changeLog) history() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// blockForever is a consumer stuck in its first delivery until release
// (deferred by the test, so before the service's CloseChanges); entered is
// closed when it got there.
func blockForever() (c service.ChangeConsumer, entered <-chan struct{}, release func()) {
	stop, in := make(chan struct{}), make(chan struct{})
	var once sync.Once
	return service.ChangeConsumer{Name: "stuck", Size: 8, Deliver: func([]service.Change) {
		once.Do(func() { close(in) })
		<-stop
	}}, in, func() { close(stop) }
}

// TestStuckChangeConsumer: with one consumer blocked forever, concurrent
// writes all return, and the other consumers receive every change.
func TestStuckChangeConsumer(t *testing.T) {
	const writers, each = 4, 50
	stuck, entered, release := blockForever()
	defer release()
	a, b := newChangeLog(writers*each+1), newChangeLog(writers*each+1)
	s := openTestService(t, service.Options{AllowClientClassCreation: true,
		ChangeConsumers: []service.ChangeConsumer{a.consumer("a", 0), stuck, b.consumer("b", 0)}})
	if _, err := s.Create(service.Auth{}, "First", map[string]any{"n": 0.0}); err != nil {
		t.Fatal(err)
	}
	<-entered
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Create(service.Auth{}, fmt.Sprint("W", w), map[string]any{"n": float64(i)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait() // every write returned while "stuck" holds its first change
	for range writers*each + 1 {
		<-a.each
		<-b.each
	}
	stats := s.ChangeStats()
	if len(stats) != 3 || stats[1].Name != "stuck" || stats[1].Lost != writers*each-8 {
		t.Errorf("stats %+v: want the stuck consumer to have lost %d", stats, writers*each-8)
	}
	if !slices.Equal(a.history(), b.history()) {
		t.Error("the two live consumers received different sequences")
	}
}

// TestOverflowingChangeConsumerIsToldClasses: a consumer that falls a
// whole ring behind is told which classes it lost, where the gap is.
func TestOverflowingChangeConsumerIsToldClasses(t *testing.T) {
	gate, entered := make(chan struct{}), make(chan struct{})
	l := newChangeLog(16)
	c := l.consumer("slow", 2)
	deliver, first := c.Deliver, true
	c.Deliver = func(b []service.Change) {
		if first {
			first = false
			close(entered)
			<-gate
		}
		deliver(b)
	}
	told := make(chan struct{})
	lost := c.Lost
	c.Lost = func(classes []string, n int) { lost(classes, n); close(told) }
	s := openTestService(t, service.Options{AllowClientClassCreation: true, ChangeConsumers: []service.ChangeConsumer{c}})
	for _, class := range []string{"A", "B", "C", "D", "E", "D"} {
		if _, err := s.Create(service.Auth{}, class, map[string]any{"n": 1.0}); err != nil {
			t.Fatal(err)
		}
		if class == "A" {
			<-entered // A is being delivered: the ring is empty
		}
	}
	close(gate)
	<-told
	var classes []string
	for _, h := range l.history() {
		classes = append(classes, h[:1])
	}
	if h := l.history(); len(h) != 4 || h[3] != "lost [D E]" || !slices.Equal(classes[:3], []string{"A", "B", "C"}) {
		t.Errorf("history %q, want A, B, C then lost [D E]", h)
	}
	if st := s.ChangeStats()[0]; st.Lost != 3 {
		t.Errorf("stats %+v, want 3 lost", st)
	}
}

// TestChangeOrderUnderConcurrentWriters: writers increment a few objects
// concurrently; each consumer receives every object's counts as 1, 2, 3…
// (the commit order the increments' results show), and all consumers the
// same sequence.
func TestChangeOrderUnderConcurrentWriters(t *testing.T) {
	const objects, writers, each = 3, 4, 25
	logs := []*changeLog{newChangeLog(1024), newChangeLog(1024)}
	var got []int
	var gotMu sync.Mutex
	s := openTestService(t, service.Options{AllowClientClassCreation: true,
		ChangeConsumers: []service.ChangeConsumer{logs[0].consumer("a", 0), logs[1].consumer("b", 0)}})
	var ids []string
	for range objects {
		res, err := s.Create(service.Auth{}, "Counter", map[string]any{"n": 0.0})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ObjectID)
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := ids[(w+i)%objects]
				res, err := s.Update(service.Auth{}, "Counter", id, map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1.0}})
				if err != nil {
					t.Error(err)
					return
				}
				gotMu.Lock()
				got = append(got, int(res.Echo["n"].(float64)))
				gotMu.Unlock()
			}
		})
	}
	wg.Wait()
	s.CloseChanges(0) // delivers what the rings hold
	h := logs[0].history()
	if len(h) != objects+writers*each {
		t.Fatalf("%d changes delivered, want %d", len(h), objects+writers*each)
	}
	next := map[string]int{}
	for _, line := range h {
		var id string
		var n int
		if _, err := fmt.Sscanf(line, "Counter/%s %d", &id, &n); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if n != next[id] {
			t.Fatalf("object %s: count %d delivered when %d was due (history %q)", id, n, next[id], h)
		}
		next[id]++
	}
	if !slices.Equal(logs[1].history(), h) {
		t.Error("the two consumers received different sequences")
	}
	if len(got) != writers*each {
		t.Errorf("%d writes answered", len(got))
	}
}

// BenchmarkCreate_ChangeConsumer: a write's cost with no change consumer,
// a fast one, a slow one (200µs a change: Redis across a network) and one
// stuck forever (its ring full after 8 changes).
func BenchmarkCreate_ChangeConsumer(b *testing.B) {
	for _, shape := range []string{"none", "fast", "slow", "stuck"} {
		b.Run(shape, func(b *testing.B) {
			var cs []service.ChangeConsumer
			switch shape {
			case "fast":
				cs = append(cs, service.ChangeConsumer{Name: "fast", Deliver: func([]service.Change) {}})
			case "slow":
				cs = append(cs, service.ChangeConsumer{Name: "slow", Deliver: func(batch []service.Change) {
					time.Sleep(time.Duration(len(batch)) * 200 * time.Microsecond)
				}})
			case "stuck":
				c, _, release := blockForever()
				defer release()
				cs = append(cs, c)
			}
			s := openTestService(b, service.Options{AllowClientClassCreation: true, ChangeConsumers: cs})
			if _, err := s.Create(service.Auth{}, "Bench", map[string]any{"n": 0.0}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := s.Create(service.Auth{}, "Bench", map[string]any{"n": float64(i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

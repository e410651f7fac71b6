package fanout_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/fanout"
)

type item struct {
	key string
	seq int
}

func keyOf(it item) string { return it.key }

// recorder keeps what a consumer received, as text: "K1" per item and
// "lost [K…] n" per notice.
type recorder struct {
	mu  sync.Mutex
	got []string
	n   chan struct{} // a token per item received
}

func newRecorder(size int) *recorder { return &recorder{n: make(chan struct{}, size)} }

func (r *recorder) consumer(name string, size int) fanout.Consumer[item] {
	return fanout.Consumer[item]{Name: name, Size: size,
		Deliver: func(batch []item) {
			r.mu.Lock()
			for _, it := range batch {
				r.got = append(r.got, fmt.Sprint(it.key, it.seq))
			}
			r.mu.Unlock()
			for range batch {
				r.n <- struct{}{}
			}
		},
		Lost: func(keys []string, count int) {
			r.mu.Lock()
			r.got = append(r.got, fmt.Sprint("lost ", keys, " ", count))
			r.mu.Unlock()
		}}
}

func (r *recorder) history() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// stuck is a consumer that blocks forever on its first batch (until the
// test ends), and says when it got there.
func stuck(t *testing.T, size int) (fanout.Consumer[item], <-chan struct{}) {
	release, entered := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	var once sync.Once
	return fanout.Consumer[item]{Name: "stuck", Size: size, Deliver: func([]item) {
		once.Do(func() { close(entered) })
		<-release
	}}, entered
}

// TestStuckConsumerBlocksNoPush: with one consumer blocked forever,
// concurrent pushes all return, the other consumer receives every item,
// and the stuck one counts what it lost.
func TestStuckConsumerBlocksNoPush(t *testing.T) {
	const writers, each = 8, 500
	blocked, entered := stuck(t, 4)
	rec := newRecorder(writers * each)
	f := fanout.New(keyOf, nil, blocked, rec.consumer("fast", writers*each))
	f.Push(item{"A", -1})
	<-entered
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				f.Push(item{fmt.Sprint("K", w), i})
			}
		})
	}
	wg.Wait() // every push returned while "stuck" blocks
	for range writers*each + 1 {
		<-rec.n
	}
	stats := f.Stats()
	if stats[0].Lost != writers*each-4 || stats[0].Queued != 4 {
		t.Errorf("the stuck consumer's stats %+v, want %d lost and 4 queued", stats[0], writers*each-4)
	}
	if stats[1].Lost != 0 || stats[1].Delivered != writers*each+1 {
		t.Errorf("the other consumer's stats %+v", stats[1])
	}
	// A deadline already past: Close returns at once, naming the stuck
	// consumer (the other may or may not have ended yet).
	if late := f.Close(time.Now()); len(late) == 0 || late[0].Name != "stuck" {
		t.Errorf("Close reports %+v as unfinished, want the stuck consumer", late)
	}
}

// TestOverflowNotice: a consumer whose ring overflowed is told which
// keys it lost and how many, exactly where the gap is in its sequence.
func TestOverflowNotice(t *testing.T) {
	gate, entered := make(chan struct{}), make(chan struct{})
	lost := make(chan struct{})
	rec := newRecorder(16)
	c := rec.consumer("slow", 2)
	deliver, tell := c.Deliver, c.Lost
	first := true
	c.Deliver = func(b []item) {
		if first {
			first = false
			close(entered)
			<-gate
		}
		deliver(b)
	}
	c.Lost = func(keys []string, n int) { tell(keys, n); close(lost) }
	f := fanout.New(keyOf, nil, c)
	f.Push(item{"A", 1})
	<-entered // A1 is being delivered: the ring is empty
	f.Push(item{"B", 2}, item{"C", 3}, item{"D", 4}, item{"E", 5}, item{"D", 6})
	close(gate)
	<-lost
	f.Push(item{"F", 7})
	if late := f.Close(time.Now().Add(time.Hour)); late != nil {
		t.Fatalf("unfinished: %+v", late)
	}
	want := []string{"A1", "B2", "C3", "lost [D E] 3", "F7"}
	if got := rec.history(); !slices.Equal(got, want) {
		t.Errorf("history %q, want %q", got, want)
	}
	if s := f.Stats()[0]; s.Lost != 3 || s.Delivered != 4 {
		t.Errorf("stats %+v", s)
	}
}

// TestOrderUnderConcurrentPushes: every consumer receives the same
// sequence, which keeps each pusher's order, and Close delivers all of it.
func TestOrderUnderConcurrentPushes(t *testing.T) {
	const writers, each = 6, 400
	recs := []*recorder{newRecorder(writers * each), newRecorder(writers * each), newRecorder(writers * each)}
	var cs []fanout.Consumer[item]
	for i, r := range recs {
		cs = append(cs, r.consumer(fmt.Sprint("c", i), writers*each))
	}
	f := fanout.New(keyOf, nil, cs...)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				f.Push(item{fmt.Sprint("K", w, ":"), i})
			}
		})
	}
	wg.Wait()
	if late := f.Close(time.Now().Add(time.Hour)); late != nil {
		t.Fatalf("unfinished: %+v", late)
	}
	first := recs[0].history()
	if len(first) != writers*each {
		t.Fatalf("%d items delivered, want %d", len(first), writers*each)
	}
	next := map[string]int{}
	for _, s := range first {
		var w, i int
		fmt.Sscanf(s, "K%d:%d", &w, &i)
		k := fmt.Sprint(w)
		if i != next[k] {
			t.Fatalf("writer %d's item %d arrived when %d was due", w, i, next[k])
		}
		next[k]++
	}
	for i, r := range recs[1:] {
		if !slices.Equal(r.history(), first) {
			t.Errorf("consumer c%d received another sequence than c0", i+1)
		}
	}
}

// TestCloseDeliversPending: Close waits for what the rings hold.
func TestCloseDeliversPending(t *testing.T) {
	gate, entered := make(chan struct{}), make(chan struct{})
	rec := newRecorder(64)
	c := rec.consumer("gated", 64)
	deliver := c.Deliver
	var once sync.Once
	c.Deliver = func(b []item) {
		once.Do(func() { close(entered); <-gate })
		deliver(b)
	}
	f := fanout.New(keyOf, nil, c)
	for i := range 20 {
		f.Push(item{"A", i})
	}
	<-entered
	closed := make(chan []fanout.Stats)
	go func() { closed <- f.Close(time.Now().Add(time.Hour)) }()
	close(gate)
	if late := <-closed; late != nil {
		t.Fatalf("unfinished: %+v", late)
	}
	if got := rec.history(); len(got) != 20 {
		t.Errorf("%d items delivered before Close returned, want 20", len(got))
	}
	f.Push(item{"A", 99}) // after Close: dropped, no panic
}

// TestPanickingConsumer loses the batch, is reported, and goes on.
func TestPanickingConsumer(t *testing.T) {
	var warnings []string
	var mu sync.Mutex
	rec := newRecorder(8)
	c := rec.consumer("flaky", 8)
	deliver := c.Deliver
	c.Deliver = func(b []item) {
		if b[0].key == "boom" {
			panic("boom")
		}
		deliver(b)
	}
	f := fanout.New(keyOf, func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }, c)
	f.Push(item{"boom", 1})
	f.Close(time.Now().Add(time.Hour))
	f2 := fanout.New(keyOf, nil, c)
	f2.Push(item{"ok", 2})
	f2.Close(time.Now().Add(time.Hour))
	if len(warnings) != 1 || !strings.Contains(warnings[0], "flaky panicked") {
		t.Errorf("warnings %q", warnings)
	}
	if got := rec.history(); !slices.Equal(got, []string{"ok2"}) {
		t.Errorf("history %q", got)
	}
}

// TestLossWarnedOnce: many overflows make one warning per WarnEvery.
func TestLossWarnedOnce(t *testing.T) {
	var warnings []string
	blocked, entered := stuck(t, 1)
	f := fanout.New(keyOf, func(s string) { warnings = append(warnings, s) }, blocked)
	f.Push(item{"A", 0})
	<-entered
	for i := range 100 {
		f.Push(item{"B", i})
		f.Report()
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "stuck falls behind; 1 changes dropped ([B])") {
		t.Errorf("warnings %q", warnings)
	}
}

// TestWants: an item the consumer does not want takes no room.
func TestWants(t *testing.T) {
	rec := newRecorder(8)
	c := rec.consumer("picky", 1)
	c.Wants = func(it item) bool { return it.key == "S" }
	f := fanout.New(keyOf, nil, c)
	f.Push(item{"X", 1}, item{"S", 2}, item{"X", 3})
	f.Close(time.Now().Add(time.Hour))
	if got := rec.history(); !slices.Equal(got, []string{"S2"}) {
		t.Errorf("history %q", got)
	}
}

// BenchmarkPush: the pusher's cost with a consumer
// that never returns, a fast one, and none.
func BenchmarkPush(b *testing.B) {
	for _, shape := range []string{"none", "fast", "stuck"} {
		b.Run(shape, func(b *testing.B) {
			var cs []fanout.Consumer[item]
			switch shape {
			case "fast":
				cs = append(cs, fanout.Consumer[item]{Name: "fast", Deliver: func([]item) {}})
			case "stuck":
				release := make(chan struct{})
				defer close(release)
				cs = append(cs, fanout.Consumer[item]{Name: "stuck", Deliver: func([]item) { <-release }})
			}
			f := fanout.New(keyOf, nil, cs...)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				f.Push(item{"K", i})
			}
			b.StopTimer()
			f.Close(time.Now())
		})
	}
}

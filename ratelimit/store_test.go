package ratelimit

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent requests are counted exactly: of many requests racing from
// one address exactly Count pass, and each of several addresses racing
// at once gets its own exact Count.
func TestCountExactUnderConcurrency(t *testing.T) {
	cases := []struct {
		name       string
		addresses  int
		goroutines int
		perG       int
		count      int
	}{
		{"one address", 1, 16, 200, 1000},
		{"many addresses", 200, 16, 100, 3},
		{"more requests than the count", 7, 8, 500, 250},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := New([]Rule{{Path: "*", Window: time.Hour, Count: c.count}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			passed := make([]atomic.Int64, c.addresses)
			var wg sync.WaitGroup
			for g := range c.goroutines {
				wg.Go(func() {
					for i := range c.perG {
						a := (g + i) % c.addresses
						if l.Check(Request{Method: "GET", Path: "/x", IP: fmt.Sprintf("10.0.%d.%d", a/256, a%256)}) == nil {
							passed[a].Add(1)
						}
					}
				})
			}
			wg.Wait()
			sent := make([]int, c.addresses)
			for g := range c.goroutines {
				for i := range c.perG {
					sent[(g+i)%c.addresses]++
				}
			}
			for a := range passed {
				if got, want := passed[a].Load(), int64(min(sent[a], c.count)); got != want {
					t.Errorf("address %d: %d of %d requests passed, want %d", a, got, sent[a], want)
				}
			}
		})
	}
}

// Ended windows are dropped by a shard's sweep: addresses seen once do
// not accumulate, and a window ends exactly at its end.
func TestEndedWindowsExpire(t *testing.T) {
	now := time.Unix(1000, 0)
	m := newMemory(func() time.Time { return now })
	for i := range 5000 {
		m.incr(fmt.Sprintf("once-%d", i), time.Second)
	}
	m.incr("long", time.Hour)
	if n := m.size(); n != 5001 {
		t.Fatalf("%d windows, want 5001", n)
	}
	now = now.Add(time.Second) // every short window has ended, not "long"
	// Count new keys until every shard has swept since the clock moved.
	var counted [shards]int
	left, fresh := shards, 0
	for i := 0; left > 0; i++ {
		k := fmt.Sprintf("new-%d", i)
		if s := m.shardOf(k); counted[s] < sweepEvery {
			if counted[s]++; counted[s] == sweepEvery {
				left--
			}
		}
		if got := m.incr(k, time.Second); got != 1 {
			t.Fatalf("new key %s counted %d", k, got)
		}
		fresh++
	}
	if n := m.size(); n != fresh+1 {
		t.Fatalf("%d windows after the short ones ended and every shard swept, want the %d live ones", n, fresh+1)
	}
	if got := m.incr("long", time.Hour); got != 2 {
		t.Fatalf("the long window counted %d, want 2", got)
	}
	steps := []struct {
		advance time.Duration
		want    int64
	}{
		{0, 1}, {time.Second - 1, 2}, {1, 1}, {0, 2},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if got := m.incr("edge", time.Second); got != s.want {
			t.Fatalf("edge step %d: count %d, want %d", i, got, s.want)
		}
	}
}

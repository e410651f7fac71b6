package postgres_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// TestReplicationDelay measures how long a commit on one adapter takes to
// reach another's follower (the figures in docs/scaling.md come from its
// log), and the commit rate of concurrent writers.
func TestReplicationDelay(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	loadAll(t, b)
	const n = 300
	var mu sync.Mutex
	committed := map[string]time.Time{}
	var delays []time.Duration
	all := make(chan struct{})
	stop, err := b.Follow(b.Position(), func(fc store.ForeignCommit) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		for _, r := range fc.Records {
			delays = append(delays, now.Sub(committed[r.Key]))
		}
		if len(delays) == n {
			close(all)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var commits []time.Duration
	for i := range n {
		key := fmt.Sprint("k", i)
		start := time.Now()
		mu.Lock()
		committed[key] = start // from the start of Commit: the delay includes the commit itself
		mu.Unlock()
		commit(t, a, obj("Delay", key, fmt.Sprintf(`{"objectId":%q,"i":%d}`, key, i)))
		commits = append(commits, time.Since(start))
	}
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatalf("followed %d of %d commits", len(delays), n)
	}
	mu.Lock()
	d := slices.Clone(delays)
	mu.Unlock()
	t.Logf("commit on A: p50 %v p99 %v; commit start to B's follower: p50 %v p99 %v (%d commits, one writer)",
		pct(commits, 50), pct(commits, 99), pct(d, 50), pct(d, 99), n)
	if p := pct(d, 99); p > 2*time.Second {
		t.Errorf("p99 replication delay %v", p)
	}

	// Concurrent writers share the commit lock.
	const writers, each = 8, 50
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("w%d-%d", w, i)
				if err := a.Commit([]store.Record{obj("Rate", key, `{"x":1}`)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d writers: %d commits in %v (%.0f commits/s)", writers, writers*each, took, float64(writers*each)/took.Seconds())
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

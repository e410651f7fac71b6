package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// Paced load of the follow-lag benchmark: commits per second on A, and
// for how long.
const (
	lagRate     = 500
	lagDuration = 4 * time.Second
)

// BenchmarkFollowLag_500PerSecond commits lagRate single-object commits a
// second on A (paced, at most 64 in flight) and measures, on B: the follow
// lag, from A's Commit returning (the write answered) to B's follower
// handing the change over, which is how long a query on B may miss an
// answered write; and the time of B.CatchUp, what a read by id adds
// (docs/scaling.md). Then, without the reader, it paces the same commits
// for lagDuration/2 and reports the CPU time the process used per commit
// (cpu-µs/commit: A committing and B following it), the figure to compare
// on a shared machine. Run with -benchtime=1x.
func BenchmarkFollowLag_500PerSecond(b *testing.B) {
	uri := pgtest.NewDatabase(b)
	a, f := open(b, uri), open(b, uri)
	loadAll(b, f)
	var mu sync.Mutex
	answered := map[string]time.Time{}
	followed := map[string]time.Time{}
	stop, err := f.Follow(f.Position(), func(fc store.ForeignCommit) {
		now := time.Now()
		mu.Lock()
		for _, r := range fc.Records {
			followed[r.Key] = now
		}
		mu.Unlock()
	})
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		var catchUps []time.Duration
		done := make(chan struct{})
		go func() { // one reader catching up in a loop, as reads by id do
			defer close(done)
			for ctx.Err() == nil {
				start := time.Now()
				if err := f.CatchUp(ctx); err != nil {
					return
				}
				catchUps = append(catchUps, time.Since(start))
			}
		}()
		pace(b, a, "k", lagDuration, func(key string, at time.Time) {
			mu.Lock()
			answered[key] = at
			mu.Unlock()
		})
		if err := f.CatchUp(context.Background()); err != nil {
			b.Fatal(err)
		}
		cancel()
		<-done
		mu.Lock()
		var lags []time.Duration
		for k, at := range answered {
			lag := followed[k].Sub(at)
			if lag < 0 {
				lag = 0 // followed before A's Commit returned
			}
			lags = append(lags, lag)
		}
		mu.Unlock()
		rate := float64(len(lags)) / lagDuration.Seconds()
		b.ReportMetric(rate, "commits/s")
		b.ReportMetric(ms(pct(lags, 50)), "lag-p50-ms")
		b.ReportMetric(ms(pct(lags, 99)), "lag-p99-ms")
		b.ReportMetric(ms(pct(catchUps, 50)), "catchup-p50-ms")
		b.ReportMetric(ms(pct(catchUps, 99)), "catchup-p99-ms")

		cpu := cputime.Used()
		n := pace(b, a, "c", lagDuration/2, func(string, time.Time) {})
		if err := f.CatchUp(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(cputime.Used()-cpu)/float64(time.Microsecond)/float64(max(1, n)), "cpu-µs/commit")
	}
}

// pace commits lagRate single-object commits a second on a (at most 64
// in flight) for d, keys prefix0, prefix1, …, telling answered each key
// and when its Commit returned; it returns how many it committed.
func pace(b *testing.B, a store.Adapter, prefix string, d time.Duration, answered func(key string, at time.Time)) int {
	tick := time.NewTicker(time.Second / lagRate)
	defer tick.Stop()
	var wg sync.WaitGroup
	slots := make(chan struct{}, 64)
	deadline := time.Now().Add(d)
	n := 0
	for ; time.Now().Before(deadline); n++ {
		<-tick.C
		slots <- struct{}{}
		wg.Add(1)
		key := fmt.Sprint(prefix, n)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := a.Commit([]store.Record{obj("Lag", key, fmt.Sprintf(`{"objectId":%q}`, key))}); err != nil {
				b.Error(err)
				return
			}
			answered(key, time.Now())
		}()
	}
	wg.Wait()
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
// (docs/scaling.md). Run with -benchtime=1x.
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
		tick := time.NewTicker(time.Second / lagRate)
		var wg sync.WaitGroup
		slots := make(chan struct{}, 64)
		deadline := time.Now().Add(lagDuration)
		for i := 0; time.Now().Before(deadline); i++ {
			<-tick.C
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-slots; wg.Done() }()
				key := fmt.Sprint("k", i)
				if err := a.Commit([]store.Record{obj("Lag", key, fmt.Sprintf(`{"objectId":%q}`, key))}); err != nil {
					b.Error(err)
					return
				}
				now := time.Now()
				mu.Lock()
				answered[key] = now
				mu.Unlock()
			}()
		}
		tick.Stop()
		wg.Wait()
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
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

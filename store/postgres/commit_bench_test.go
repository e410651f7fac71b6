package postgres_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// benchSchema types the benchmark class's fields, as a real class is.
const benchSchema = `{"className":"Bench","fields":{"n":{"type":"Number"},"s":{"type":"String"}}}`

// Benchmark_Commit_OneObject commits one object per Commit, one writer at
// a time: each commit pays its transaction's round trips in full (no
// group commit shares them), which is what this measures.
func Benchmark_Commit_OneObject(b *testing.B) {
	benchOneObject(b, "")
}

// Benchmark_Commit_OneObject_NoFlush is Benchmark_Commit_OneObject with
// the WAL flush taken out of the commit (synchronous_commit=off for the
// adapter's sessions): what is left is the round trips and the work.
func Benchmark_Commit_OneObject_NoFlush(b *testing.B) {
	benchOneObject(b, "&synchronous_commit=off")
}

func benchOneObject(b *testing.B, params string) {
	a := open(b, pgtest.NewDatabase(b)+params)
	loadAll(b, a)
	commit(b, a, sch("Bench", benchSchema))
	b.ResetTimer()
	for i := range b.N {
		commit(b, a, obj("Bench", fmt.Sprint("k", i%100), fmt.Sprintf(`{"n":%d,"s":"v"}`, i)))
	}
}

// Benchmark_Commit_OneObject_Parallel is the same with concurrent writers
// (b.RunParallel), whose commits group.
func Benchmark_Commit_OneObject_Parallel(b *testing.B) {
	a := open(b, pgtest.NewDatabase(b))
	loadAll(b, a)
	commit(b, a, sch("Bench", benchSchema))
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			if err := a.Commit([]store.Record{obj("Bench", fmt.Sprint("k", i%100), fmt.Sprintf(`{"n":%d,"s":"v"}`, i))}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// Benchmark_CommitGuarded_OneObject is Benchmark_Commit_OneObject through
// CommitGuarded, one guard per commit, as a write decided by the service
// commits: the fast path of several instances (no lock held anywhere).
func Benchmark_CommitGuarded_OneObject(b *testing.B) {
	a := open(b, pgtest.NewDatabase(b)+"&synchronous_commit=off")
	loadAll(b, a)
	commit(b, a, sch("Bench", benchSchema))
	b.ResetTimer()
	cpu := cputime.Used()
	defer func() {
		b.ReportMetric(float64(cputime.Used()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	}()
	for i := range b.N {
		k := fmt.Sprint("k", i%100)
		err := a.CommitGuarded([]store.Record{obj("Bench", k, fmt.Sprintf(`{"n":%d,"s":"v"}`, i))},
			[]store.Guard{{Key: store.ObjectKey("Bench", k), Base: a.Applied()}})
		if err != nil {
			b.Fatal(err)
		}
	}
}

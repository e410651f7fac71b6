package engine

import (
	"runtime"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/service"
)

// queryCold is query with a full collection before each Find, outside the
// timer: no decoded object survives from an earlier iteration, so the
// figure includes decoding the objects a query reads from their stored
// JSON (index records keep no decoded map, #14 item 0). It also reports
// the process's CPU time per Find (cpu-ns/op), the figure to compare when
// other work shares the machine.
func queryCold(b *testing.B, p service.FindParams, wantResults int) {
	f := load(b)
	b.ReportAllocs()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		start := cputime.Used()
		b.StartTimer()
		res, err := f.svc.Find(service.Auth{}, "Item", p)
		b.StopTimer()
		cpu += cputime.Used() - start
		b.StartTimer()
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Results) != wantResults {
			b.Fatalf("got %d results, want %d", len(res.Results), wantResults)
		}
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// Benchmark_Find_OrRange_100k_Limit20_Warm is the query of
// Benchmark_Find_OrRange_100k_Limit20_Cold without a collection between
// Finds, with the CPU time figure.
func Benchmark_Find_OrRange_100k_Limit20_Warm(b *testing.B) {
	f := load(b)
	p := service.FindParams{Where: map[string]any{"$or": []any{
		map[string]any{"category": "c9"}, map[string]any{"score": map[string]any{"$gte": 5.0, "$lt": 6.0}}}}, Limit: 20}
	b.ReportAllocs()
	start := cputime.Used()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.svc.Find(service.Auth{}, "Item", p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cputime.Used()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func Benchmark_Find_IndexedEquality_100k_Limit20_Cold(b *testing.B) {
	queryCold(b, service.FindParams{Where: map[string]any{"category": "c7"}, Limit: 20}, 20)
}

// Benchmark_Find_OrRange_100k_Limit20_Cold reads 2,100 candidates for a
// top-k of 20: the worst case of decoding on demand among these shapes.
func Benchmark_Find_OrRange_100k_Limit20_Cold(b *testing.B) {
	queryCold(b, service.FindParams{Where: map[string]any{"$or": []any{
		map[string]any{"category": "c9"}, map[string]any{"score": map[string]any{"$gte": 5.0, "$lt": 6.0}}}}, Limit: 20}, 20)
}

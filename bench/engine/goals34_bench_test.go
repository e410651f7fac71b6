package engine

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/service"
)

// Issue #34's read goals still under target, as the server does them
// after parsing a request: service.Find with FindParams.ReplyOnly (as the
// REST layer asks), then the reply's results appended as JSON. The
// fixture is the load-suite shapes' (100,000 LItems, 1,000 LOwners).
//
//   - Include: n $in 10 values, include=owner (bench/load query-include).
//   - Count: count=1&limit=0 of an indexed equality (category, ~50).
//   - OrUnindexed: in shapes_bench_test.go.
//
// Each reports cpu-µs/op (getrusage: the machine is shared, so CPU per
// op is the figure to compare); _Public runs as a caller without the
// master key, _Cold collects garbage before each op (not counted), so no
// map decoded by an earlier op survives. Numbers: ../RESULTS.md.

func goal34Queries(shape string) []service.FindParams {
	r := rand.New(rand.NewSource(34))
	out := make([]service.FindParams, 16)
	for i := range out {
		switch shape {
		case "Include":
			ns := make([]any, 10)
			for k := range ns {
				ns[k] = float64(r.Intn(shapeItems))
			}
			out[i] = service.FindParams{Where: map[string]any{"n": map[string]any{"$in": ns}}, Limit: 100,
				Read: service.ReadOptions{Include: []string{"owner"}}}
		case "Count":
			out[i] = service.FindParams{Where: map[string]any{"category": fmt.Sprintf("c%d", r.Intn(shapeCategories))},
				Count: true, Limit: 0}
		}
		out[i].ReplyOnly = true
	}
	return out
}

func runGoal34(b *testing.B, shape string, auth service.Auth, cold bool) {
	f := loadShapes(b)
	qs := goal34Queries(shape)
	var buf []byte
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	start := cputime.Used()
	for i := 0; i < b.N; i++ {
		if cold {
			b.StopTimer()
			runtime.GC()
			b.StartTimer()
			start = cputime.Used()
		}
		p := qs[i%len(qs)]
		res, err := f.svc.Find(auth, "LItem", p)
		if err != nil {
			b.Fatal(err)
		}
		switch {
		case shape == "Include" && len(res.Results) != 10:
			b.Fatalf("include: %d results", len(res.Results))
		case shape == "Count" && (len(res.Results) != 0 || res.Count < 10 || res.Count > 150):
			b.Fatalf("count: %d results, count %d", len(res.Results), res.Count)
		}
		if buf, err = res.AppendResults(buf[:0]); err != nil {
			b.Fatal(err)
		}
		if cold {
			cpu += cputime.Used() - start
		}
	}
	if !cold {
		cpu = cputime.Used() - start
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

func Benchmark_Goal34_Include_100k(b *testing.B) {
	runGoal34(b, "Include", service.Auth{Master: true}, false)
}
func Benchmark_Goal34_Include_100k_Public(b *testing.B) {
	runGoal34(b, "Include", service.Auth{}, false)
}
func Benchmark_Goal34_Include_100k_Cold(b *testing.B) {
	runGoal34(b, "Include", service.Auth{Master: true}, true)
}
func Benchmark_Goal34_Count_100k(b *testing.B) {
	runGoal34(b, "Count", service.Auth{Master: true}, false)
}
func Benchmark_Goal34_Count_100k_Public(b *testing.B) { runGoal34(b, "Count", service.Auth{}, false) }

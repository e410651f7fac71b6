package engine

import (
	"fmt"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/service"
)

// A count of an indexed equality by a caller whose view depends on ACLs:
// 20,000 FItems in 200 categories, one in ten readable by u1 only, so the
// class has flagged objects and a non-master count must not take the
// index's count as it is. The public and u1 see different counts.

const (
	flaggedItems      = 20_000
	flaggedCategories = 200
)

var (
	flaggedOnce sync.Once
	flaggedSvc  *service.Service
)

func loadFlagged(b *testing.B) *service.Service {
	flaggedOnce.Do(func() {
		svc := openIndexed(b, [2]string{"FItem", "category"})
		var ops []service.WriteOp
		for i := 0; i < flaggedItems; i++ {
			body := map[string]any{"category": fmt.Sprintf("c%d", i%flaggedCategories), "n": float64(i)}
			if i%10 == 0 {
				body["ACL"] = map[string]any{"u1": map[string]any{"read": true}}
			}
			ops = append(ops, service.WriteOp{Method: service.MethodCreate, Class: "FItem", Body: body})
			if len(ops) == 1000 {
				if _, err := svc.WriteAll(service.Auth{Master: true}, ops); err != nil {
					b.Fatal(err)
				}
				ops = ops[:0]
			}
		}
		flaggedSvc = svc
	})
	if flaggedSvc == nil {
		b.Fatal("flagged fixture failed to load")
	}
	return flaggedSvc
}

func runCountFlagged(b *testing.B, auth service.Auth, want int) {
	svc := loadFlagged(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := cputime.Used()
	for i := 0; i < b.N; i++ {
		c := (i * 7) % flaggedCategories
		if c%10 == 0 {
			c++ // categories 0, 10, ... hold only u1's objects
		}
		res, err := svc.Find(auth, "FItem", service.FindParams{Where: map[string]any{"category": fmt.Sprintf("c%d", c)},
			Count: true, ReplyOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if res.Count != want {
			b.Fatalf("count %d, want %d", res.Count, want)
		}
	}
	b.ReportMetric(float64((cputime.Used()-start).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}

// Each category not a multiple of ten holds 100 objects, all public.
func Benchmark_Goal34_CountFlagged_20k_Public(b *testing.B) {
	runCountFlagged(b, service.Auth{}, flaggedItems/flaggedCategories)
}

package engine

import (
	"sync"
	"testing"

	"github.com/quarrydata/quarry/service"
)

// bigItems is the size of the class the 1M plan benchmarks query: items
// numbered n = 0 … bigItems-1 in creation order (so createdAt follows n,
// as in the load suite), indexes on n and tag.
const bigItems = 1_000_000

var (
	bigOnce sync.Once
	bigSvc  *service.Service
)

func loadBig(b *testing.B) *service.Service {
	bigOnce.Do(func() {
		svc := openIndexed(b, [2]string{"Big", "n"}, [2]string{"Big", "tag"})
		ops := make([]service.WriteOp, 1000)
		for first := 0; first < bigItems; first += len(ops) {
			for i := range ops {
				n := first + i
				ops[i] = service.WriteOp{Method: service.MethodCreate, Class: "Big",
					Body: map[string]any{"n": float64(n), "tag": float64(n % 100)}}
			}
			if _, err := svc.WriteAll(service.Auth{Master: true}, ops); err != nil {
				b.Fatal(err)
			}
		}
		bigSvc = svc
	})
	if bigSvc == nil {
		b.Fatal("1M fixture failed to load")
	}
	return bigSvc
}

// bigQuery runs one Find on the 1M class per iteration, checking the
// result size (and the count when asked).
func bigQuery(b *testing.B, p service.FindParams, wantResults, wantCount int) {
	svc := loadBig(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := svc.Find(service.Auth{}, "Big", p)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Results) != wantResults || p.Count && res.Count != wantCount {
			b.Fatalf("got %d results (count %d), want %d (count %d)", len(res.Results), res.Count, wantResults, wantCount)
		}
	}
}

// Benchmark_Find_RangeOrderCreatedAt_1M_Limit10: n >= 900000 (100,000
// matches) ordered by createdAt, the first 10: an order the range's index
// does not give.
func Benchmark_Find_RangeOrderCreatedAt_1M_Limit10(b *testing.B) {
	bigQuery(b, service.FindParams{Where: map[string]any{"n": map[string]any{"$gte": 900_000.0}},
		Order: []service.SortKey{{Path: "createdAt"}}, Limit: 10}, 10, 0)
}

// Benchmark_Find_CountRange_1M: the count of n >= 500000 (500,000
// matches), limit 0.
func Benchmark_Find_CountRange_1M(b *testing.B) {
	bigQuery(b, service.FindParams{Where: map[string]any{"n": map[string]any{"$gte": 500_000.0}}, Count: true}, 0, 500_000)
}

// Benchmark_Find_CountRangeAnd_1M: the count of 500000 <= n < 600000 and
// tag = 7 (1,000 matches): two indexed constraints.
func Benchmark_Find_CountRangeAnd_1M(b *testing.B) {
	bigQuery(b, service.FindParams{Where: map[string]any{"n": map[string]any{"$gte": 500_000.0, "$lt": 600_000.0}, "tag": 7.0},
		Count: true}, 0, 1000)
}

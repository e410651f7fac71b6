package index

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/schema"
)

// withinItems are n objects shaped as bench/load seeds its items: a tag
// of tags, an owner of owners (a Pointer), and a few other fields.
func withinItems(n, tags, owners int) []schema.Object {
	rng := rand.New(rand.NewPCG(5, 5))
	out := make([]schema.Object, n)
	for i := range out {
		out[i] = schema.Object{
			"objectId":  fmt.Sprintf("%010x", rng.Uint64()>>24),
			"createdAt": "2024-01-01T00:00:00.000Z",
			"updatedAt": "2024-01-01T00:00:00.000Z",
			"n":         float64(i),
			"category":  fmt.Sprintf("c%d", rng.IntN(n/50)),
			"score":     float64(rng.IntN(n)),
			"tag":       float64(rng.IntN(tags)),
			"owner":     schema.Pointer("Owner", fmt.Sprintf("o%05d", rng.IntN(owners))),
			"location":  map[string]any{"__type": "GeoPoint", "latitude": 10 + rng.Float64(), "longitude": 20 + rng.Float64()},
		}
	}
	return out
}

// benchWithin runs the load suite's $inQuery intersection on 100,000
// items (200 tags, 1,000 owners): a tag (about 500 items) within the
// owners of one tenth of the owners (about 10,000 items), by strategy,
// owners every tiers-th: the ~50 matches are handed over as records.
func benchWithin(b *testing.B, strategy, tiers int) {
	const n, tags, owners = 100_000, 200, 1000
	c := loaded(b, withinItems(n, tags, owners), "tag", "owner")
	var among [][]any
	for t := range tiers {
		var ids []string
		for o := t; o < owners; o += tiers {
			ids = append(ids, fmt.Sprintf("o%05d", o))
		}
		among = append(among, PointerKeys("Owner", ids))
	}
	deadline := time.Now().Add(time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	start := cputime.Used()
	for i := 0; i < b.N; i++ {
		err := c.scanEqualWithin("tag", []any{float64(i % tags)}, "owner", among[i%tiers], deadline, strategy, func(*record) bool { return true })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cputime.Used()-start).Nanoseconds())/float64(b.N)/1000, "cpu-µs/op")
}

func Benchmark_ScanEqualWithin_100k_HashScan(b *testing.B)   { benchWithin(b, joinHashScan, 10) }
func Benchmark_ScanEqualWithin_100k_HashFilter(b *testing.B) { benchWithin(b, joinHashFilter, 10) }
func Benchmark_ScanEqualWithin_100k_ByBytes(b *testing.B)    { benchWithin(b, joinByBytes, 10) }
func Benchmark_ScanEqualWithin_100k_Chosen(b *testing.B)     { benchWithin(b, joinChosen, 10) }

// A hundredth of the owners: the filter side (about 1,000 items) twice
// the scan side.
func Benchmark_ScanEqualWithin_100k_Small_HashScan(b *testing.B) { benchWithin(b, joinHashScan, 100) }
func Benchmark_ScanEqualWithin_100k_Small_HashFilter(b *testing.B) {
	benchWithin(b, joinHashFilter, 100)
}

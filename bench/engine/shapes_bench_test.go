package engine

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// The load-suite shapes: the queries of bench/load's query-or,
// query-inquery, geo-box, geo-polygon and geo-near workloads, on 100,000
// items shaped as the load suite seeds them at -size 100000 (2,000
// categories, 200 tags, 1,000 owners in ten tiers, points uniform over a
// one-degree square), each answering about 50 objects. One op is what the
// server does for one request after parsing it: service.Find as the
// master key, then the reply's results appended as JSON. The numbers are
// in ../README.md ("Load-suite shapes").

const (
	shapeItems      = 100_000
	shapeOwners     = shapeItems / 100
	shapeTiers      = 10
	shapeCategories = shapeItems / 50
	shapeTags       = shapeItems / shapeTiers / 50
	shapeLat0       = 10.0
	shapeLng0       = 20.0
)

type shapeFixture struct {
	svc  *service.Service
	lats []float64
	lngs []float64
}

var (
	shapeOnce sync.Once
	shapeFx   shapeFixture
)

func loadShapes(b *testing.B) *shapeFixture {
	shapeOnce.Do(func() {
		svc := openIndexed(b, [2]string{"LItem", "n"}, [2]string{"LItem", "category"}, [2]string{"LItem", "tag"},
			[2]string{"LItem", "owner"}, [2]string{"LOwner", "tier"})
		master := service.Auth{Master: true}
		writeAll := func(ops []service.WriteOp) []service.WriteResult {
			res, err := svc.WriteAll(master, ops)
			if err != nil {
				b.Fatal(err)
			}
			return res
		}
		var ownerIDs []string
		var ops []service.WriteOp
		for o := 0; o < shapeOwners; o++ {
			ops = append(ops, service.WriteOp{Method: service.MethodCreate, Class: "LOwner",
				Body: map[string]any{"name": fmt.Sprintf("owner-%d", o), "tier": float64(o % shapeTiers)}})
		}
		for _, r := range writeAll(ops) {
			ownerIDs = append(ownerIDs, r.Create.ObjectID)
		}
		r := rand.New(rand.NewSource(2))
		fx := shapeFixture{svc: svc, lats: make([]float64, shapeItems), lngs: make([]float64, shapeItems)}
		for i := 0; i < shapeItems; i += 1000 {
			ops = ops[:0]
			for n := i; n < i+1000; n++ {
				fx.lats[n], fx.lngs[n] = shapeLat0+r.Float64(), shapeLng0+r.Float64()
				ops = append(ops, service.WriteOp{Method: service.MethodCreate, Class: "LItem", Body: map[string]any{
					"n":        float64(n),
					"category": fmt.Sprintf("c%d", r.Intn(shapeCategories)),
					"score":    float64(r.Intn(shapeItems)),
					"tag":      float64(r.Intn(shapeTags)),
					"owner":    schema.Pointer("LOwner", ownerIDs[r.Intn(shapeOwners)]),
					"location": gp(fx.lats[n], fx.lngs[n]),
				}})
			}
			writeAll(ops)
		}
		shapeFx = fx
	})
	if shapeFx.svc == nil {
		b.Fatal("shape fixture failed to load")
	}
	return &shapeFx
}

// shapeQueries are 16 queries of one shape, so an op is not always the
// same cached path; each returns 20 to 120 objects.
func shapeQueries(shape string) []service.FindParams {
	r := rand.New(rand.NewSource(7))
	out := make([]service.FindParams, 16)
	for i := range out {
		var w map[string]any
		switch shape {
		case "Or":
			lo := float64(r.Intn(shapeItems - 50))
			w = map[string]any{"$or": []any{
				map[string]any{"category": fmt.Sprintf("c%d", r.Intn(shapeCategories))},
				map[string]any{"n": map[string]any{"$gte": lo, "$lt": lo + 50}},
			}}
		case "OrUnindexed":
			// The issue's $or: one branch indexed (category), one not
			// (score has no index), limit 20: one scan by objectId with
			// the whole $or as residual, stopped at the 20th match.
			lo := float64(r.Intn(shapeItems - 50))
			w = map[string]any{"$or": []any{
				map[string]any{"category": fmt.Sprintf("c%d", r.Intn(shapeCategories))},
				map[string]any{"score": map[string]any{"$gte": lo, "$lt": lo + 50}},
			}}
			out[i] = service.FindParams{Where: w, Limit: 20}
			continue
		case "InQuery":
			w = map[string]any{
				"owner": map[string]any{"$inQuery": map[string]any{"className": "LOwner",
					"where": map[string]any{"tier": float64(r.Intn(shapeTiers))}}},
				"tag": float64(r.Intn(shapeTags)),
			}
		case "Box":
			side := math.Sqrt(50.0 / shapeItems)
			s, west := shapeLat0+r.Float64()*(1-side), shapeLng0+r.Float64()*(1-side)
			w = map[string]any{"location": map[string]any{"$within": map[string]any{
				"$box": []any{gp(s, west), gp(s+side, west+side)}}}}
		case "Polygon":
			rad := math.Sqrt(2 * 50.0 / shapeItems / (3 * math.Sqrt(3)))
			lat, lng := shapeLat0+rad+r.Float64()*(1-2*rad), shapeLng0+rad+r.Float64()*(1-2*rad)
			turn := r.Float64() * math.Pi / 3
			var poly []any
			for k := 0; k < 6; k++ {
				a := turn + float64(k)*math.Pi/3
				poly = append(poly, gp(lat+rad*math.Sin(a), lng+rad*math.Cos(a)))
			}
			w = map[string]any{"location": map[string]any{"$geoWithin": map[string]any{"$polygon": poly}}}
		case "Near":
			areaKm2 := 111.19 * 111.19 * math.Cos((shapeLat0+0.5)*math.Pi/180)
			radiusKm := math.Sqrt(50 * areaKm2 / shapeItems / math.Pi)
			m := radiusKm / 111.19 * 1.5
			lat, lng := shapeLat0+m+r.Float64()*(1-2*m), shapeLng0+m+r.Float64()*(1-2*m)
			w = map[string]any{"location": map[string]any{"$nearSphere": gp(lat, lng), "$maxDistance": radiusKm / 6371.0}}
		}
		out[i] = service.FindParams{Where: w, Limit: 1000}
	}
	return out
}

// findShape runs the shape's queries in turn and appends each reply's
// results; a reply outside [10, 200] results (or over its limit) fails the
// benchmark.
func findShape(b *testing.B, shape string) { runShape(b, shape, false) }

// findShapeCold is findShape with a garbage collection before each op,
// not counted in its CPU: the maps decoded for earlier queries, cached
// weakly (index.Ref.Object), are gone but for the last few thousand, as
// in a server whose requests allocate enough to collect between most
// queries. A warm run keeps every map a scan ever decoded (the benchmark
// allocates too little to collect), which a server rarely does.
func findShapeCold(b *testing.B, shape string) { runShape(b, shape, true) }

func runShape(b *testing.B, shape string, cold bool) {
	f := loadShapes(b)
	qs := shapeQueries(shape)
	master := service.Auth{Master: true}
	for i := range qs {
		qs[i].ReplyOnly = true // as the REST layer asks: the reply is all it reads
	}
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
		res, err := f.svc.Find(master, "LItem", qs[i%len(qs)])
		if err != nil {
			b.Fatal(err)
		}
		if n := len(res.Results); n < 10 || n > 200 || n > qs[i%len(qs)].Limit {
			b.Fatalf("%s: %d results", shape, n)
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
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

func Benchmark_Shape_Or_100k(b *testing.B)          { findShape(b, "Or") }
func Benchmark_Shape_OrUnindexed_100k(b *testing.B) { findShape(b, "OrUnindexed") }
func Benchmark_Shape_InQuery_100k(b *testing.B)     { findShape(b, "InQuery") }
func Benchmark_Shape_Box_100k(b *testing.B)         { findShape(b, "Box") }
func Benchmark_Shape_Polygon_100k(b *testing.B)     { findShape(b, "Polygon") }
func Benchmark_Shape_Near_100k(b *testing.B)        { findShape(b, "Near") }

// The issue #34 read shapes with the decoded-map cache cold (findShapeCold).
func Benchmark_Shape_OrUnindexed_100k_Cold(b *testing.B) { findShapeCold(b, "OrUnindexed") }
func Benchmark_Shape_Box_100k_Cold(b *testing.B)         { findShapeCold(b, "Box") }
func Benchmark_Shape_Polygon_100k_Cold(b *testing.B)     { findShapeCold(b, "Polygon") }

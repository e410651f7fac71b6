package index

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/schema"
)

const benchN = 100_000

// smallObjects returns n objects shaped like a typical small Parse row:
// the three reserved keys, a number, a short string and a boolean.
func smallObjects(n int, seed uint64) []schema.Object {
	rng := rand.New(rand.NewPCG(seed, 3))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]schema.Object, n)
	for i := range out {
		ts := schema.FormatTime(base.Add(time.Duration(i) * time.Second))
		out[i] = schema.Object{
			"objectId":  fmt.Sprintf("%05x%05d", rng.IntN(1<<20), i),
			"createdAt": ts,
			"updatedAt": ts,
			"score":     float64(rng.IntN(1_000_000)),
			"name":      fmt.Sprintf("user%d", rng.IntN(5000)),
			"active":    rng.IntN(2) == 0,
		}
	}
	return out
}

func loaded(b *testing.B, objs []schema.Object, paths ...string) *Collection {
	b.Helper()
	c := New().Collection("B", true)
	for _, p := range paths {
		if err := c.EnsureIndex(p); err != nil {
			b.Fatal(err)
		}
	}
	for _, o := range objs {
		c.Put(o)
	}
	return c
}

func Benchmark_ScanRange_100k_Limit20(b *testing.B) {
	c := loaded(b, smallObjects(benchN, 1), "score")
	rng := rand.New(rand.NewPCG(9, 9))
	deadline := time.Now().Add(time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := Range{Lo: float64(rng.IntN(990_000)), HasLo: true, LoInclusive: true, Hi: "", HasHi: true}
		n := 0
		if err := c.ScanRange("score", r, false, deadline, func(Ref) bool { n++; return n < 20 }); err != nil || n != 20 {
			b.Fatal(n, err)
		}
	}
}

// replacements are new versions of objs: same ids, new scores and updatedAt.
func replacements(objs []schema.Object) []schema.Object {
	repl := smallObjects(len(objs), 2)
	for i := range repl {
		repl[i]["objectId"] = objs[i]["objectId"]
		repl[i]["createdAt"] = objs[i]["createdAt"]
	}
	return repl
}

func Benchmark_Put_100k(b *testing.B) {
	objs := smallObjects(benchN, 1)
	c := loaded(b, objs, "score")
	repl := replacements(objs)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		c.Put(repl[i%benchN])
		i++
	}
}

// Benchmark_Put_100k_Create: the index work of a create, the new object's
// createdAt and updatedAt later than every other (the objectId random), in
// a collection of 100k with the built-in indexes and one declared index.
// Past 100k operations the puts replace the first ones again.
func Benchmark_Put_100k_Create(b *testing.B) {
	c := loaded(b, smallObjects(benchN, 1), "score")
	fresh := smallObjects(benchN, 3)
	later := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, o := range fresh {
		ts := schema.FormatTime(later.Add(time.Duration(i) * time.Millisecond))
		o["createdAt"], o["updatedAt"] = ts, ts
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cputime.Used()
	i := 0
	for b.Loop() {
		c.Put(fresh[i%len(fresh)])
		i++
	}
	b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
}

// Benchmark_Put_100k_ScanInterleaved shows the copy-on-write price a write
// pays after a scan took a snapshot.
func Benchmark_Put_100k_ScanInterleaved(b *testing.B) {
	objs := smallObjects(benchN, 1)
	c := loaded(b, objs, "score")
	repl := replacements(objs)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		c.Put(repl[i%benchN])
		_ = c.ScanRange("score", Equal(0.0), false, time.Time{}, func(Ref) bool { return false })
		i++
	}
}

func Benchmark_EstimateRange_100k(b *testing.B) {
	c := loaded(b, smallObjects(benchN, 1), "score")
	rng := rand.New(rand.NewPCG(9, 9))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		lo := float64(rng.IntN(900_000))
		c.EstimateRange("score", Range{Lo: lo, Hi: lo + 100_000, HasLo: true, HasHi: true, LoInclusive: true}, 0)
	}
}

// Benchmark_Memory_100k reports the heap the collection adds on top of the
// objects themselves: "bytes/obj" with the three built-in indexes, and
// "bytes/obj/index" for one further index on a number field, both built by
// Put in a random objectId order.
func Benchmark_Memory_100k(b *testing.B) {
	objs := smallObjects(benchN, 1)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var base, extra float64
	for b.Loop() {
		before := heap()
		c := loaded(b, objs)
		mid := heap()
		c2 := loaded(b, objs, "score")
		after := heap()
		base = float64(mid-before) / benchN
		extra = float64(after-mid)/benchN - base
		runtime.KeepAlive(c)
		runtime.KeepAlive(c2)
	}
	b.ReportMetric(base, "bytes/obj")
	b.ReportMetric(extra, "bytes/obj/index")
}

// Benchmark_EstimateRun_100k estimates ranges holding a given number of
// entries on a 100k-entry index: below countDirect entries are counted one
// by one, above it two rank searches answer. (The ranges are not points,
// which a declared index answers from its key stats.)
func Benchmark_EstimateRun_100k(b *testing.B) {
	objs := smallObjects(benchN, 1)
	for _, run := range []int{32, 64, 128, 256, 512, 1024} {
		for i, o := range objs {
			o["run"] = float64(i / run)
		}
		c := loaded(b, objs, "run")
		b.Run(fmt.Sprint("run", run), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := float64(i % (benchN / run))
				r := Range{Lo: k, Hi: k + 0.5, HasLo: true, HasHi: true, LoInclusive: true, HiInclusive: true}
				if n := c.EstimateRange("run", r, 0); n != run {
					b.Fatalf("estimate %d, want %d", n, run)
				}
				i++
			}
		})
	}
}

// Benchmark_ScanEqual50_100k merges the point runs of 50 pointer keys
// (100 entries each) on a 100k-entry index and stops after 20 objects: the
// shape of an $inQuery. It costs one seek per key.
func Benchmark_ScanEqual50_100k(b *testing.B) {
	objs := smallObjects(benchN, 1)
	for i, o := range objs {
		o["owner"] = schema.Pointer("Owner", fmt.Sprintf("o%04d", i%1000))
	}
	c := loaded(b, objs, "owner")
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = fmt.Sprintf("o%04d", i*20)
	}
	keys := PointerKeys("Owner", ids)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := c.ScanEqual("owner", keys, time.Time{}, func(Ref) bool { n++; return n < 20 }); err != nil || n != 20 {
			b.Fatalf("n %d err %v", n, err)
		}
	}
}

// Benchmark_Build_100k declares an index on 100k existing objects, the
// work a start does once per index: a number, a string with 5,000
// distinct values and a boolean (the generic sort).
func Benchmark_Build_100k(b *testing.B) {
	c := loaded(b, smallObjects(benchN, 9))
	for _, path := range []string{"score", "name", "active"} {
		b.Run(path, func(b *testing.B) {
			start := cputime.Used()
			for range b.N {
				c.DropIndex(path)
				if err := c.EnsureIndex(path); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time is steadier than wall-clock when other work shares
			// the machine.
			b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

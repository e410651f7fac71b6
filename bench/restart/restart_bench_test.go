package restart

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/memtune"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// objects is the size of the class the benchmark loads; the figure
// is for -objects 1000000 (a file of about 300 MB).
var objects = flag.Int("objects", 100_000, "objects in the loaded class")

// file keeps the seeded data file between runs: seeded when missing, loaded
// as is when present (it must hold -objects objects).
var file = flag.String("file", "", "data file to reuse across runs (seeded when missing)")

// oneTime seeds every object with the same createdAt and updatedAt, as a
// bulk import does.
var oneTime = flag.Bool("onetime", false, "seed one shared timestamp instead of distinct ones")

// gcHeadroom runs the server's GC headroom policy (package memtune, the
// gcHeadroomPercent option) with this percent during the benchmark; 0
// leaves Go's default, as an embedded use of the service has.
var gcHeadroom = flag.Int("gcheadroom", 0, "run the GC headroom policy with this percent (0: off)")

// seed writes n small objects (a number, two strings, a GeoPoint, distinct
// timestamps unless -onetime) straight through the store in large commits.
func seed(b *testing.B, path string, n int) {
	a, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	s, err := service.Open(a, service.Options{AllowClientClassCreation: true})
	if err != nil {
		b.Fatal(err)
	}
	// One write through the service fixes the class and its field types.
	if _, err := s.Create(service.Auth{Master: true}, "Item", map[string]any{"n": 1.0, "tag": "t", "cat": "c",
		"loc": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 2.0}}); err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []store.Record
	for i := range n {
		at := start.Format("2006-01-02T15:04:05.000Z")
		if !*oneTime {
			at = start.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		}
		obj := map[string]any{"objectId": fmt.Sprintf("o%09d", i), "n": float64(i), "tag": fmt.Sprintf("t%d", i%1000),
			"cat": fmt.Sprintf("c%d", i%50), "createdAt": at, "updatedAt": at,
			"loc": map[string]any{"__type": "GeoPoint", "latitude": float64(i%170)/2 - 42, "longitude": float64(i%350)/2 - 87}}
		v, err := json.Marshal(obj)
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, store.Record{Kind: store.KindObject, Class: "Item", Key: obj["objectId"].(string), Value: v})
		if len(recs) == 5000 || i == n-1 {
			if err := a.Commit(recs); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpen_Persisted loads a class of -objects objects with two
// declared indexes and a geo index, as a restart does. It reports seconds
// per million objects, the CPU seconds they took (the figure to compare
// when other work shares the machine), and per object: the heap the
// loaded data holds, the same after every object was read once (its
// reply encoding made), and the process's resident memory then and once
// the runtime has returned what it holds beyond the heap's goal.
func BenchmarkOpen_Persisted(b *testing.B) {
	path := *file
	if path == "" {
		path = filepath.Join(b.TempDir(), "q.db")
	}
	if _, err := os.Stat(path); err != nil {
		seed(b, path, *objects)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	n := float64(*objects)
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		cpuStart := cputime.Used()
		a, err := store.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		s, err := service.Open(a, service.Options{Indexes: []string{"Item.n", "Item.tag"}})
		if err != nil {
			b.Fatal(err)
		}
		cpu += cputime.Used() - cpuStart
		b.StopTimer()
		// As the server does, the policy starts on the loaded data.
		stopMemtune, running := memtune.Start(*gcHeadroom)
		if *gcHeadroom > 0 && !running {
			b.Logf("GC headroom policy off: %s is set", memtune.Explicit())
		}
		b.ReportMetric(heapInUse()/n, "heap-B/object")
		coll := s.Data().Collection("Item", false)
		coll.Scan(func(obj schema.Object) bool {
			if _, err := coll.Encoding(obj); err != nil {
				b.Fatal(err)
			}
			return true
		})
		b.ReportMetric(heapInUse()/n, "read-heap-B/object")
		b.ReportMetric(residentBytes(b)/n, "rss-B/object")
		b.ReportMetric(settledResidentBytes(b)/n, "settled-rss-B/object")
		b.ReportMetric(float64(fi.Size())/n, "file-B/object")
		runtime.KeepAlive(s)
		stopMemtune()
		if err := a.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/n*1e6, "s/Mobjects")
	b.ReportMetric(cpu.Seconds()/float64(b.N)/n*1e6, "cpu-s/Mobjects")
}

// heapInUse is the live heap after a collection.
func heapInUse() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}

// settledResidentBytes is the resident size once the runtime has given
// back what it keeps beyond the heap's goal (its scavenger works in the
// background, a little at a time): the least of readings a second apart
// until one is no lower, at most 30 of them. A load's own peak is thus
// left out; the heap's headroom for garbage is not.
func settledResidentBytes(b *testing.B) float64 {
	least := residentBytes(b)
	for range 30 {
		time.Sleep(time.Second)
		r := residentBytes(b)
		if r >= least*0.995 {
			break
		}
		least = r
	}
	return least
}

// residentBytes is the process's resident set size (Linux).
func residentBytes(b *testing.B) float64 {
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skip("no /proc/self/statm: resident size unknown")
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(statm), &size, &resident); err != nil {
		b.Fatal(err)
	}
	return float64(resident * int64(os.Getpagesize()))
}

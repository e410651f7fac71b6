package store

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// benchValue is a typical small Parse object.
var benchValue = []byte(`{"objectId":"xWMyZ4YEGZ","name":"Caf\u00e9 de Flore","category":"cafe","location":{"__type":"GeoPoint","latitude":48.854,"longitude":2.333},"rating":4.5,"createdAt":"2024-01-01T00:00:00.000Z","updatedAt":"2024-01-01T00:00:00.000Z"}`)

// benchCommit commits one object per op with b.RunParallel, plus joins
// join rows in the same Commit.
func benchCommit(b *testing.B, a Adapter, parallelism, joins int) {
	var seq atomic.Int64
	b.SetBytes(int64(len(benchValue)))
	b.ReportAllocs()
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		recs := []Record{{Kind: KindObject, Class: "Place", Value: benchValue}}
		for range joins {
			recs = append(recs, Record{Kind: KindJoin, Class: "tags:Place", Value: []byte{}})
		}
		for pb.Next() {
			recs[0].Key = fmt.Sprintf("%010d", seq.Add(1))
			for j := 1; j < len(recs); j++ {
				recs[j].Key = fmt.Sprintf("%s:t%d", recs[0].Key, j)
			}
			if err := a.Commit(recs); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
}

// Benchmark_Commit_Persist_Parallel: 16 writers per CPU, each Commit
// fsynced; fsyncs/op shows how many writers share one fsync.
func Benchmark_Commit_Persist_Parallel(b *testing.B) {
	a, err := openBunt(filepath.Join(b.TempDir(), "q.db"), defaultBuntOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	benchCommit(b, a, 16, 0)
	b.ReportMetric(float64(a.groups.Load())/float64(b.N), "fsyncs/op")
}

// Benchmark_Commit_Persist_Parallel_Joins_2: as above with an object and two
// join rows per Commit, so every group also writes its journal.
func Benchmark_Commit_Persist_Parallel_Joins_2(b *testing.B) {
	a, err := openBunt(filepath.Join(b.TempDir(), "q.db"), defaultBuntOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	benchCommit(b, a, 16, 2)
	b.ReportMetric(float64(a.groups.Load())/float64(b.N), "fsyncs/op")
}

// Benchmark_Commit_Persist_Serial: one writer, so one fsync per Commit.
func Benchmark_Commit_Persist_Serial(b *testing.B) {
	a, err := openBunt(filepath.Join(b.TempDir(), "q.db"), defaultBuntOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	var seq int
	recs := []Record{{Kind: KindObject, Class: "Place", Value: benchValue}}
	b.SetBytes(int64(len(benchValue)))
	b.ReportAllocs()
	for b.Loop() {
		seq++
		recs[0].Key = fmt.Sprintf("%010d", seq)
		if err := a.Commit(recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(a.groups.Load())/float64(b.N), "fsyncs/op")
}

// Benchmark_Commit_Memory: the in-memory adapter, parallel writers.
func Benchmark_Commit_Memory(b *testing.B) {
	a, err := Open(MemoryURI)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	benchCommit(b, a, 1, 0)
}

package index

import (
	"encoding/json"
	"runtime"
	"testing"
)

// storedCollection holds benchN small objects as loaded from a store:
// bytes only, no map kept alive by the caller.
func storedCollection(b *testing.B) (*Collection, []string) {
	b.Helper()
	c := New().Collection("B", true)
	objs := smallObjects(benchN, 1)
	ids := make([]string, len(objs))
	for i, o := range objs {
		enc, err := json.Marshal(o)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.PutLoaded(enc); err != nil {
			b.Fatal(err)
		}
		ids[i] = o["objectId"].(string)
	}
	runtime.GC()
	return c, ids
}

// Benchmark_Get_Hot20: a page of 20 objects read again and again, each
// read asking for the reply bytes of the map it got (Encoding's identity
// test): the decoded-map cache answers all but the first reads.
func Benchmark_Get_Hot20(b *testing.B) {
	c, ids := storedCollection(b)
	page := ids[:20]
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, id := range page {
			obj, ok := c.Get(id)
			if !ok {
				b.Fatal(id)
			}
			if _, err := c.Encoding(obj); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Benchmark_Get_Cold: every read is of an object not read lately, so it
// is decoded and enters the cache.
func Benchmark_Get_Cold(b *testing.B) {
	c, ids := storedCollection(b)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		id := ids[i%len(ids)]
		i++
		if _, ok := c.Get(id); !ok {
			b.Fatal(id)
		}
	}
}

package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
)

// benchReplies are replies of the read workloads' shapes over a
// 10,000-item dataset (the load suite's default size), each with the check
// the workload runs on it, before (gjson) and after (fastjson).
func benchReplies(b *testing.B) []struct {
	name          string
	body          []byte
	legacy, check func(w *worker, body []byte) error
} {
	d := testData(10_000)
	equal := d.matching(func(it *item) bool { return it.Category == 3 })
	or := d.matching(func(it *item) bool { return it.Category == 3 || it.N >= 500 && it.N < 500+resultsPerQuery })
	in := randomNs(newRNG(1), len(d.items), inValues)
	var seq []int
	for s := 4000 + rangeWidth - 1; len(seq) < rangePage; s-- {
		seq = append(seq, d.byScore[s])
	}
	shuffled := slices.Clone(equal)
	newRNG(2).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var batch []any
	for i := range batchLimit {
		batch = append(batch, map[string]any{"success": map[string]any{"objectId": fmt.Sprintf("w%09d", i), "createdAt": testDate}})
	}
	set := func(want []int) (func(w *worker, b []byte) error, func(w *worker, b []byte) error) {
		return func(_ *worker, b []byte) error { return legacyCheckSet(b, want) },
			func(w *worker, b []byte) error { return checkSet(w, b, want) }
	}
	type reply = struct {
		name          string
		body          []byte
		legacy, check func(w *worker, body []byte) error
	}
	var out []reply
	add := func(name string, body []byte, legacy, check func(w *worker, b []byte) error) {
		if err := legacy(&worker{}, body); err != nil {
			b.Fatalf("%s: the legacy check fails its own reply: %v", name, err)
		}
		if err := check(&worker{}, body); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		out = append(out, reply{name, body, legacy, check})
	}
	l, c := set(equal)
	add(fmt.Sprintf("Set_%d", len(equal)), findReply(d, shuffled, false), l, c)
	l, c = set(or)
	add(fmt.Sprintf("Set_%d", len(or)), findReply(d, or, false), l, c)
	l, c = set(in)
	add(fmt.Sprintf("Set_%d", len(in)), findReply(d, in, false), l, c)
	add(fmt.Sprintf("Seq_%d", len(seq)), findReply(d, seq, false),
		func(_ *worker, b []byte) error { return legacyCheckSeq(b, seq) },
		func(w *worker, b []byte) error { return checkSeq(w, b, seq) })
	add(fmt.Sprintf("Band_%d", len(equal)), findReply(d, shuffled, false),
		func(_ *worker, b []byte) error { return legacyCheckBand(b, equal, nil) },
		func(w *worker, b []byte) error { return checkBand(w, b, equal, nil) })
	add(fmt.Sprintf("Include_%d", len(in)), findReply(d, in, true),
		func(_ *worker, b []byte) error { return legacyCheckInclude(d, b, in) },
		func(w *worker, b []byte) error { return checkInclude(w, d, b, in) })
	add("Count", mustJSON(map[string]any{"results": []any{}, "count": len(equal)}),
		func(_ *worker, b []byte) error { return legacyCheckCount(b, len(equal)) },
		func(w *worker, b []byte) error { return checkCount(w, b, len(equal)) })
	add("Get", mustJSON(storedItem(d, 4321, false)),
		func(_ *worker, b []byte) error { return legacyCheckGot(b, d.itemIDs[4321], 4321) },
		func(w *worker, b []byte) error { return checkGot(w, b, d.itemIDs[4321], 4321) })
	add("Created", mustJSON(map[string]any{"objectId": "w000000001", "createdAt": testDate}),
		func(_ *worker, b []byte) error { return legacyCheckCreated(b) },
		func(w *worker, b []byte) error { return checkCreated(w, b) })
	add("Counter", mustJSON(map[string]any{"count": 17, "updatedAt": testDate}),
		func(_ *worker, b []byte) error { return legacyCheckCounter(b) },
		func(w *worker, b []byte) error { return checkCounter(w, b) })
	add(fmt.Sprintf("Batch_%d", batchLimit), mustJSON(batch),
		func(_ *worker, b []byte) error { return legacyCheckBatchCreated(b, batchLimit) },
		func(w *worker, b []byte) error { return checkBatchCreated(w, b, batchLimit) })
	return out
}

// BenchmarkCheck: CPU per reply of each check, gjson before and fastjson
// after (compare with benchstat or by eye: -benchmem).
func BenchmarkCheck(b *testing.B) {
	for _, r := range benchReplies(b) {
		b.Run(r.name+"/gjson", func(b *testing.B) {
			w := &worker{}
			b.SetBytes(int64(len(r.body)))
			b.ReportAllocs()
			start := cputime.Used()
			for b.Loop() {
				if err := r.legacy(w, r.body); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
		b.Run(r.name+"/fastjson", func(b *testing.B) {
			w := &worker{}
			b.SetBytes(int64(len(r.body)))
			b.ReportAllocs()
			start := cputime.Used()
			for b.Loop() {
				if err := r.check(w, r.body); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}

// reportCPU reports the CPU time per op since start: on a machine shared
// with other work, wall time per op mostly measures the wait for a core.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cputime.Used()-start)/float64(b.N), "cpu-ns/op")
}

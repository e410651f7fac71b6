package planner

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// FuzzPlanVersusScan is the differential test driven by a fuzzer: the fuzz
// input only seeds a deterministic generator, which builds a small random
// class, random indexes and a few random queries (the generators of
// property_test.go), and every planned result must equal the brute-force
// scan. Each input costs a few milliseconds:
//
//	go test ./planner -run '^$' -fuzz FuzzPlanVersusScan -fuzztime 1m -fuzzminimizetime 2s
//
// Any change to an input changes the whole generated case, so minimizing
// gains little; the short -fuzzminimizetime keeps the default minute of
// minimizing per new input from stalling the run.
func FuzzPlanVersusScan(f *testing.F) {
	for _, seed := range []string{"", "a", "quarry", "\x00\x00\x00\x07", "or-union", "top-k heap", "154"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(planVersusScan)
}

// planVersusScan is one fuzz execution.
func planVersusScan(t *testing.T, data []byte) {
	h := fnv.New64a()
	h.Write(data)
	r := rand.New(rand.NewSource(int64(h.Sum64())))
	// The first bytes, when present, also pick the shape directly, so
	// the fuzzer's mutations have an effect it can steer.
	knob := func(i int, n int) int {
		if i < len(data) {
			return int(data[i]) % n
		}
		return r.Intn(n)
	}
	src := newMemSource()
	objs, brute := populate(r, src, 200)
	coll := src.db.Collection("Thing", false)
	mask := knob(0, 256)
	for i, field := range []string{"n", "s", "d", "arr", "p", "ps", "o.x", "b"} {
		if mask&(1<<i) != 0 {
			if err := coll.EnsureIndex(field); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 8; i++ {
		q := Query{Class: "Thing", Where: randomWhere(r, 0), Order: randomOrder(r),
			Skip: r.Intn(5) * r.Intn(3), Limit: []int{0, 1, 5, 20, 1000}[knob(1+i, 5)], Count: r.Intn(2) == 0}
		// A budget must never change an answer, only refuse or warn.
		opts := Options{}
		if knob(9+i, 4) == 0 {
			opts.MaxScan, opts.WarnOnly = 50, r.Intn(2) == 0
		}
		plan, err := Compile(src, q, opts)
		if err != nil {
			pe, ok := schema.AsError(err)
			if !ok || pe.Code == schema.CodeInternalServerError {
				t.Fatalf("compile %s: %v", js(q.Where), err)
			}
			if pe.Code == schema.CodeInefficientQuery && (opts.MaxScan == 0 || opts.WarnOnly) {
				t.Fatalf("refused without a refusing budget: %s: %v", js(q.Where), err)
			}
			continue // an invalid where, or refused by the budget
		}
		res, err := plan.Run()
		if err != nil {
			t.Fatalf("run %s: %v", js(q.Where), err)
		}
		want, total := bruteForce(t, objs, q, src, brute)
		if got := ids(res.Objects); fmt.Sprint(got) != fmt.Sprint(ids(want)) {
			t.Fatalf("input %x query %d\nwhere %s order %v skip %d limit %d\nplan %v\ngot  %v\nwant %v",
				data, i, js(q.Where), q.Order, q.Skip, q.Limit, plan.Explain(res), got, ids(want))
		}
		if q.Count && res.Count != total {
			t.Fatalf("input %x where %s: count %d, want %d (plan %v)", data, js(q.Where), res.Count, total, plan.Explain(res))
		}
	}
}

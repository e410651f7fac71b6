package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/tidwall/gjson"
)

// The checks as they were written with gjson. They stay here as the
// reference: the fastjson checks must reject every reply these reject
// (TestChecks_RejectWhatGjsonRejected), and the benchmarks compare the two
// on the same replies.

func legacyResultNs(ns []int, body []byte) ([]int, error) {
	res := gjson.GetBytes(body, "results")
	if !res.IsArray() {
		return nil, fmt.Errorf("no results array in %s", clip(string(body), 120))
	}
	ns = ns[:0]
	var bad error
	res.ForEach(func(_, r gjson.Result) bool {
		n := r.Get("n")
		if n.Type != gjson.Number {
			bad = fmt.Errorf("result without a number n: %s", clip(r.Raw, 120))
			return false
		}
		ns = append(ns, int(n.Int()))
		return true
	})
	return ns, bad
}

func legacyCheckSet(body []byte, want []int) error {
	ns, err := legacyResultNs(nil, body)
	if err != nil {
		return err
	}
	if len(ns) != len(want) {
		return fmt.Errorf("%d results, want %d", len(ns), len(want))
	}
	slices.Sort(ns)
	if !slices.Equal(ns, want) {
		return fmt.Errorf("wrong objects")
	}
	return nil
}

func legacyCheckSeq(body []byte, want []int) error {
	ns, err := legacyResultNs(nil, body)
	if err != nil {
		return err
	}
	if !slices.Equal(ns, want) {
		return fmt.Errorf("wrong order")
	}
	return nil
}

func legacyCheckBand(body []byte, must, may []int) error {
	ns, err := legacyResultNs(nil, body)
	if err != nil {
		return err
	}
	sorted := slices.Clone(ns)
	slices.Sort(sorted)
	found := 0
	for i, n := range sorted {
		if i > 0 && sorted[i-1] == n {
			return fmt.Errorf("n=%d returned twice", n)
		}
		if _, ok := slices.BinarySearch(must, n); ok {
			found++
		} else if _, ok := slices.BinarySearch(may, n); !ok {
			return fmt.Errorf("n=%d does not match", n)
		}
	}
	if found != len(must) {
		return fmt.Errorf("missing %d", len(must)-found)
	}
	return nil
}

func legacyCheckInclude(d *dataset, body []byte, want []int) error {
	if err := legacyCheckSet(body, want); err != nil {
		return err
	}
	var bad error
	gjson.GetBytes(body, "results").ForEach(func(_, r gjson.Result) bool {
		it := d.items[int(r.Get("n").Int())]
		o := r.Get("owner")
		if o.Get("__type").String() != "Object" || o.Get("objectId").String() != d.ownerIDs[it.Owner] || o.Get("name").String() != ownerName(it.Owner) {
			bad = fmt.Errorf("n=%d: owner not included", it.N)
			return false
		}
		return true
	})
	return bad
}

func legacyCheckCount(body []byte, want int) error {
	r := gjson.ParseBytes(body)
	if c := r.Get("count"); c.Type != gjson.Number || c.Int() != int64(want) {
		return fmt.Errorf("count %s, want %d", c.Raw, want)
	}
	if n := len(r.Get("results").Array()); n != 0 || !r.Get("results").IsArray() {
		return fmt.Errorf("limit 0 returned %d results", n)
	}
	return nil
}

func legacyCheckGot(body []byte, objectID string, n int) error {
	r := gjson.ParseBytes(body)
	if r.Get("objectId").String() != objectID || r.Get("n").Int() != int64(n) {
		return fmt.Errorf("got objectId %q n %v", r.Get("objectId").String(), r.Get("n").Raw)
	}
	return nil
}

func legacyCheckCreatedResult(r gjson.Result) error {
	if r.Get("objectId").String() == "" || r.Get("createdAt").String() == "" {
		return fmt.Errorf("create reply without objectId and createdAt")
	}
	return nil
}

func legacyCheckCreated(body []byte) error { return legacyCheckCreatedResult(gjson.ParseBytes(body)) }

func legacyCheckBatchCreated(body []byte, want int) error {
	res := gjson.ParseBytes(body).Array()
	if len(res) != want {
		return fmt.Errorf("%d results for %d requests", len(res), want)
	}
	for _, r := range res {
		if err := legacyCheckCreatedResult(r.Get("success")); err != nil {
			return err
		}
	}
	return nil
}

func legacyCheckCounter(body []byte) error {
	if c := gjson.GetBytes(body, "count"); c.Type != gjson.Number || c.Int() < 1 {
		return fmt.Errorf("Increment reply without the new count")
	}
	return nil
}

func legacyCheckLogin(body []byte, username string) error {
	r := gjson.ParseBytes(body)
	if r.Get("sessionToken").String() == "" || r.Get("username").String() != username {
		return fmt.Errorf("login reply without the session of %s", username)
	}
	return nil
}

// testData is a seeded dataset with made-up ids and replies shaped like
// Quarry's: keys in order, dates, GeoPoint and Pointer members before or
// around n, as a real find reply has them.
func testData(size int) *dataset {
	d := newDataset("Bench", size, 1)
	d.itemIDs = make([]string, size)
	for n := range d.itemIDs {
		d.itemIDs[n] = fmt.Sprintf("it%08d", n)
	}
	d.ownerIDs = make([]string, d.owners)
	for o := range d.ownerIDs {
		d.ownerIDs[o] = fmt.Sprintf("ow%08d", o)
	}
	return d
}

const testDate = "2026-11-25T21:29:34.448Z"

// storedItem is item n as a server returns it; include embeds its owner.
func storedItem(d *dataset, n int, include bool) map[string]any {
	obj := d.itemBody(n)
	obj["objectId"] = d.itemIDs[n]
	obj["createdAt"] = testDate
	obj["updatedAt"] = testDate
	if include {
		o := d.items[n].Owner
		obj["owner"] = map[string]any{
			"__type": "Object", "className": d.ownerClass(), "objectId": d.ownerIDs[o],
			"name": ownerName(o), "tier": ownerTier(o), "createdAt": testDate, "updatedAt": testDate,
			"favorites": map[string]any{"__type": "Relation", "className": d.itemClass()},
		}
	}
	return obj
}

// findReply is {"results": [...]} of items ns in that order.
func findReply(d *dataset, ns []int, include bool) []byte {
	results := make([]any, len(ns))
	for i, n := range ns {
		results[i] = storedItem(d, n, include)
	}
	b, err := json.Marshal(map[string]any{"results": results})
	if err != nil {
		panic(err)
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

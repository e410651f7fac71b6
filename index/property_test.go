package index

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
)

var isos = []string{
	"2023-12-31T23:59:59.999Z", "2024-01-01T00:00:00.000Z",
	"2024-01-01T00:00:00.001Z", "2024-06-30T12:00:00.000Z",
}

// randScalar returns a value of a random kind from small pools, so that
// equal keys and cross-rank neighbours are common.
func randScalar(rng *rand.Rand) any {
	switch rng.IntN(9) {
	case 0:
		return nil
	case 1, 2:
		return float64(rng.IntN(7)-2) / 2
	case 3, 4:
		return []string{"", "a", "ab", "b", "ba", "c"}[rng.IntN(6)]
	case 5:
		return schema.Date(isos[rng.IntN(len(isos))])
	case 6:
		return rng.IntN(2) == 0
	case 7:
		p := map[string]any{"__type": "Pointer", "className": "P", "objectId": []string{"p1", "p2"}[rng.IntN(2)]}
		if rng.IntN(4) == 0 {
			p["name"] = "included" // members beside the pointer's: still that pointer
		}
		return p
	}
	return map[string]any{"x": float64(rng.IntN(3))}
}

// randValue adds arrays (mixed, empty, nested) to randScalar.
func randValue(rng *rand.Rand) any {
	if rng.IntN(4) > 0 {
		return randScalar(rng)
	}
	arr := make([]any, rng.IntN(4))
	for i := range arr {
		if rng.IntN(8) == 0 {
			arr[i] = []any{randScalar(rng)}
		} else {
			arr[i] = randScalar(rng)
		}
	}
	return arr
}

func randObject(rng *rand.Rand, id string) schema.Object {
	o := schema.Object{
		"objectId":  id,
		"createdAt": isos[rng.IntN(len(isos))],
		"updatedAt": isos[rng.IntN(len(isos))],
	}
	for _, k := range []string{"v", "arr"} {
		if rng.IntN(6) > 0 { // else missing
			o[k] = randValue(rng)
		}
	}
	switch rng.IntN(4) {
	case 0: // missing
	case 1:
		o["nest"] = randScalar(rng) // the dot path crosses a non-object
	default:
		inner := map[string]any{}
		if rng.IntN(5) > 0 {
			inner["x"] = randValue(rng)
		}
		o["nest"] = inner
	}
	return o
}

func randRange(rng *rand.Rand) Range {
	switch rng.IntN(6) {
	case 0:
		return RankRange(schema.Rank(rng.IntN(int(schema.RankDate) + 1)))
	case 1:
		return Equal(randValue(rng))
	}
	r := Range{HasLo: rng.IntN(4) > 0, HasHi: rng.IntN(4) > 0, LoInclusive: rng.IntN(2) == 0, HiInclusive: rng.IntN(2) == 0}
	r.Lo, r.Hi = randValue(rng), randValue(rng)
	if rng.IntN(3) > 0 && schema.Compare(r.Lo, r.Hi) > 0 {
		r.Lo, r.Hi = r.Hi, r.Lo
	}
	return r
}

// bruteKeys is the definition of an object's keys, written independently of
// appendKeys: schema.Get, arrays by element, missing as nil.
func bruteKeys(o schema.Object, path string) []any {
	v, _ := schema.Get(o, path)
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return []any{v}
	}
	var out []any
	for _, e := range arr {
		if !slices.ContainsFunc(out, func(x any) bool { return schema.Compare(x, e) == 0 }) {
			out = append(out, e)
		}
	}
	return out
}

func bruteIn(r Range, k any) bool {
	if r.HasLo {
		if c := schema.Compare(k, r.Lo); c < 0 || c == 0 && !r.LoInclusive {
			return false
		}
	}
	if r.HasHi {
		if c := schema.Compare(k, r.Hi); c > 0 || c == 0 && !r.HiInclusive {
			return false
		}
	}
	return true
}

// brute returns the ids a scan must deliver, in order, and the number of
// entries in the range.
func brute(model map[string]schema.Object, path string, r Range, desc bool) ([]string, int) {
	type ent struct {
		key any
		id  string
	}
	var ents []ent
	for id, o := range model {
		for _, k := range bruteKeys(o, path) {
			if bruteIn(r, k) {
				ents = append(ents, ent{k, id})
			}
		}
	}
	slices.SortFunc(ents, func(a, b ent) int {
		if c := schema.Compare(a.key, b.key); c != 0 {
			return c
		}
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	if desc {
		slices.Reverse(ents)
	}
	out := []string{}
	seen := map[string]bool{}
	for _, e := range ents {
		if !seen[e.id] {
			seen[e.id] = true
			out = append(out, e.id)
		}
	}
	return out, len(ents)
}

// randomWrites makes n random writes to c among 150 objectIds, one in
// deleteOneIn a delete and the rest puts of random objects, and keeps model
// (objectId → object) the same.
func randomWrites(rng *rand.Rand, c *Collection, model map[string]schema.Object, n, deleteOneIn int) {
	for range n {
		id := fmt.Sprintf("o%03d", rng.IntN(150))
		if rng.IntN(deleteOneIn) == 0 {
			c.Delete(id)
			delete(model, id)
			continue
		}
		o := randObject(rng, id)
		c.Put(o)
		model[id] = o
	}
}

var propPaths = []string{"v", "arr", "nest.x", "createdAt", "updatedAt", "objectId"}

func TestPropertyScanRangeMatchesBruteForce(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			c := New().Collection("P", true)
			model := map[string]schema.Object{}
			// "v" is indexed before any object, the others are built later.
			if err := c.EnsureIndex("v"); err != nil {
				t.Fatal(err)
			}
			for round := range 8 {
				randomWrites(rng, c, model, 60, 5)
				if round == 1 {
					_ = c.EnsureIndex("arr")
					_ = c.EnsureIndex("nest.x")
				}
				if round == 4 { // drop and rebuild from the current objects
					c.DropIndex("arr")
					_ = c.EnsureIndex("arr")
				}
				if round < 1 {
					continue
				}
				if c.Len() != len(model) {
					t.Fatalf("Len %d, model %d", c.Len(), len(model))
				}
				for _, path := range propPaths {
					for range 40 {
						r := randRange(rng)
						desc := rng.IntN(2) == 0
						want, entries := brute(model, path, r, desc)
						got := ids(t, c, path, r, desc)
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("round %d %s %+v desc=%v:\n got %v\nwant %v", round, path, r, desc, got, want)
						}
						if n := c.EstimateRange(path, r, 0); n != entries {
							t.Fatalf("round %d %s %+v: EstimateRange %d, want %d", round, path, r, n, entries)
						}
						limit := 1 + rng.IntN(10)
						if n := c.EstimateRange(path, r, limit); n != min(entries, limit) {
							t.Fatalf("EstimateRange limit %d = %d, entries %d", limit, n, entries)
						}
					}
					for range 20 {
						checkScanEqual(t, rng, c, model, path)
					}
					checkKeyStats(t, c, path)
					var anyArray bool
					for _, o := range model {
						v, _ := schema.Get(o, path)
						_, isArr := v.([]any)
						anyArray = anyArray || isArr
					}
					if c.Multikey(path) != anyArray {
						t.Fatalf("Multikey(%s) = %v, want %v", path, c.Multikey(path), anyArray)
					}
				}
			}
		})
	}
}

// checkKeyStats checks a declared index's per-key counts and first
// entries against a walk of its tree.
func checkKeyStats(t *testing.T, c *Collection, path string) {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexes[path]
	if ix.keys == nil {
		return
	}
	want := map[any]keyStats{}
	ix.tree.Scan(func(e entry) bool {
		if countable(e.key) {
			st := want[e.key]
			switch st.n { // entries of a key ascend by objectId
			case 0:
				st.first = e.rec
			case 1:
				st.second = e.rec
			}
			st.n++
			want[e.key] = st
		}
		return true
	})
	for k, st := range want {
		if st.n < 2 {
			delete(want, k) // a key with one entry is not tracked
		}
	}
	if len(ix.keys) != len(want) {
		t.Fatalf("%s: stats for %d keys, want %d", path, len(ix.keys), len(want))
	}
	for k, w := range want {
		if got := ix.keys[k]; got.n != w.n || got.first != w.first || got.second != w.second { // the same records, not equal ones
			t.Fatalf("%s key %v: %d entries from %v, %v; want %d from %v, %v", path, k, got.n, got.first, got.second, w.n, w.first, w.second)
		}
	}
}

// checkScanEqual compares ScanEqual over random keys (repeats, misses and
// PointerKey forms included), stopped after a random number of objects,
// with the brute-force union of their point ranges in objectId order.
func checkScanEqual(t *testing.T, rng *rand.Rand, c *Collection, model map[string]schema.Object, path string) {
	t.Helper()
	keys := make([]any, 1+rng.IntN(4))
	for i := range keys {
		keys[i] = randScalar(rng)
		if p, ok := keys[i].(map[string]any); ok && p["__type"] == "Pointer" && rng.IntN(2) == 0 {
			keys[i] = PointerKey("P", p["objectId"].(string))
		}
	}
	var want []string
	for id, o := range model {
		if slices.ContainsFunc(keys, func(k any) bool {
			return slices.ContainsFunc(bruteKeys(o, path), func(x any) bool { return compareKeys(compactKey(x), compactKey(k)) == 0 })
		}) {
			want = append(want, id)
		}
	}
	slices.Sort(want)
	stop := len(want) + 1
	if rng.IntN(2) == 0 {
		stop = 1 + rng.IntN(len(want)+1)
	}
	got := []string{}
	err := c.ScanEqual(path, keys, time.Time{}, func(ref Ref) bool {
		o := ref.Object()
		got = append(got, o["objectId"].(string))
		return len(got) < stop
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) > stop {
		want = want[:stop]
	}
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("ScanEqual(%s, %v) stop %d:\n got %v\nwant %v", path, keys, stop, got, want)
	}
}

// TestCompareKeysMatchesSchema checks that compareKeys is schema.Compare:
// on its fast paths, and with the compact createdAt/updatedAt key standing
// for the Date map schema.Get returns.
func TestCompareKeysMatchesSchema(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 5000 {
		iso := isos[rng.IntN(len(isos))]
		w := randValue(rng)
		d := schema.Date(iso)
		if got, want := compareKeys(isoDate(iso), w), schema.Compare(d, w); got != want {
			t.Fatalf("compareKeys(%q, %v) = %d, want %d", iso, w, got, want)
		}
		if got, want := compareKeys(w, isoDate(iso)), schema.Compare(w, d); got != want {
			t.Fatalf("compareKeys(%v, %q) = %d, want %d", w, iso, got, want)
		}
		v := []any{math.NaN(), math.Inf(1), math.Inf(-1), randValue(rng)}[rng.IntN(4)]
		if got, want := compareKeys(v, w), schema.Compare(v, w); got != want {
			t.Fatalf("compareKeys(%v, %v) = %d, want %d", v, w, got, want)
		}
		if got, want := compareKeys(w, v), schema.Compare(w, v); got != want {
			t.Fatalf("compareKeys(%v, %v) = %d, want %d", w, v, got, want)
		}
		iso2 := isos[rng.IntN(len(isos))]
		if got, want := compareKeys(isoDate(iso), isoDate(iso2)), schema.Compare(d, schema.Date(iso2)); got != want {
			t.Fatalf("compareKeys(%q, %q) = %d, want %d", iso, iso2, got, want)
		}
	}
}

// TestConcurrentReadersWriters runs writers, index changes and readers
// together; run it with -race. Readers check what holds under any
// interleaving: order, bounds, no object twice.
func TestConcurrentReadersWriters(t *testing.T) {
	db := New()
	c := db.Collection("C", true)
	_ = c.EnsureIndex("v")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range 3000 {
				id := fmt.Sprintf("o%03d", rng.IntN(300))
				if i%7 == 0 {
					c.Delete(id)
				} else {
					c.Put(randObject(rng, id))
				}
				db.SetRelation("C", "r", id, fmt.Sprint(i%50), i%3 != 0)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				_ = c.EnsureIndex("nest.x")
			} else {
				c.DropIndex("nest.x")
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var readers sync.WaitGroup
	for rd := range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(uint64(rd), 2))
			for range 400 {
				path := []string{"v", "createdAt", "objectId", "nest.x"}[rng.IntN(4)]
				r := randRange(rng)
				desc := rng.IntN(2) == 0
				var last any
				first := true
				seen := map[string]bool{}
				err := c.ScanRange(path, r, desc, time.Now().Add(time.Second), func(ref Ref) bool {
					o := ref.Object()
					id := o["objectId"].(string)
					if seen[id] {
						t.Errorf("%s: %s delivered twice", path, id)
					}
					seen[id] = true
					keys := bruteKeys(o, path)
					in := slices.ContainsFunc(keys, func(k any) bool { return bruteIn(r, k) })
					if !in {
						t.Errorf("%s: %s out of range", path, id)
					}
					if len(keys) == 1 {
						if !first && (schema.Compare(last, keys[0]) > 0) != desc && schema.Compare(last, keys[0]) != 0 {
							t.Errorf("%s: out of order", path)
						}
						last, first = keys[0], false
					} else {
						first = true
					}
					return true
				})
				if err != nil && !errors.Is(err, ErrNoIndex) {
					t.Error(err)
				}
				c.EstimateRange(path, r, 100)
				c.Multikey(path)
				c.Get(fmt.Sprintf("o%03d", rng.IntN(300)))
				db.Related("C", "r", "o001", func(string) bool { return true })
				db.RelatedCount("C", "r", "o002")
			}
		}()
	}
	readers.Wait()
	close(stop)
	wg.Wait()
}

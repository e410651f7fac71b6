package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/quarrydata/quarry/schema"
)

// TestBulkBuildMatchesIncremental loads the same objects into a collection
// through BeginLoad/FinishLoad (the typed sorts of build.go) and into one
// that indexes object by object, and compares every index entry for entry.
// Each case steers the keys to one of the sort paths.
func TestBulkBuildMatchesIncremental(t *testing.T) {
	words := []string{"", "\x00", "a", "ab", "ab\x00", "abc", "b", "ba", "prefix-shared-a", "prefix-shared-b", "prefix-shared-", "prefix-shared-\x00", "prefix-shared-a\x00"}
	cases := []struct {
		name  string
		value func(rng *rand.Rand) any // nil: the field is missing
	}{
		{"numbers", func(rng *rand.Rand) any { return float64(rng.IntN(20) - 5) }},
		{"numbers NaN and infinities", func(rng *rand.Rand) any {
			return []float64{math.NaN(), math.Inf(-1), math.Inf(1), 0, -1, 2.5}[rng.IntN(6)]
		}},
		{"numbers and missing", func(rng *rand.Rand) any {
			if rng.IntN(3) == 0 {
				return nil
			}
			return float64(rng.IntN(5))
		}},
		{"strings", func(rng *rand.Rand) any { return words[rng.IntN(len(words))] }},
		{"strings with a long shared prefix", func(rng *rand.Rand) any {
			return fmt.Sprintf("shared-prefix-%d", rng.IntN(30))
		}},
		{"dates", func(rng *rand.Rand) any { return schema.Date(isos[rng.IntN(len(isos))]) }},
		{"pointers and missing", func(rng *rand.Rand) any {
			if rng.IntN(4) == 0 {
				return nil
			}
			return schema.Pointer("P", words[rng.IntN(len(words))])
		}},
		{"arrays of strings", func(rng *rand.Rand) any {
			arr := make([]any, rng.IntN(4))
			for i := range arr {
				arr[i] = words[rng.IntN(3)] // repeats within an array
			}
			return arr
		}},
		{"mixed kinds", randValue},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 5))
			var objs []schema.Object
			for n := range 400 {
				o := schema.Object{"objectId": fmt.Sprintf("o%04d", n),
					"createdAt": isos[rng.IntN(len(isos))], "updatedAt": isos[n*len(isos)/400]}
				if v := tc.value(rng); v != nil {
					o["v"] = v
				}
				objs = append(objs, o)
			}
			// The sort itself (a tree's Load would hide a wrong order by
			// falling back to inserting).
			var entries []entry
			for _, o := range objs {
				rec := newRecord(o, nil, false)
				keys, _ := appendKeys(nil, rec, "v")
				for _, k := range keys {
					entries = append(entries, entry{k, rec})
				}
			}
			if sorted := sortEntries(slices.Clone(entries), true); len(sorted) != len(entries) || !slices.IsSortedFunc(sorted, compareEntries) {
				t.Fatalf("sortEntries did not sort entries in id order: %v", sorted)
			}
			shuffled := slices.Clone(entries)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if sorted := sortEntries(shuffled, false); len(sorted) != len(entries) || !slices.IsSortedFunc(sorted, compareEntries) {
				t.Fatalf("sortEntries did not sort shuffled entries: %v", sorted)
			}
			inc := New().Collection("P", true)
			if err := inc.EnsureIndex("v"); err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				inc.Put(o)
			}
			for _, order := range []string{"store order", "shuffled"} {
				db := New()
				db.BeginLoad()
				bulk := db.Collection("P", true)
				if err := bulk.EnsureIndex("v"); err != nil {
					t.Fatal(err)
				}
				if order == "shuffled" {
					rng.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
				}
				for _, o := range objs {
					bulk.Put(o)
				}
				db.FinishLoad()
				for _, path := range []string{"v", "objectId", "createdAt", "updatedAt"} {
					sameEntries(t, order+" "+path, inc.indexes[path], bulk.indexes[path])
				}
				checkKeyStats(t, bulk, "v")
			}
			// An index declared on existing objects is built the same way.
			late := New().Collection("P", true)
			for _, o := range objs {
				late.Put(o)
			}
			if err := late.EnsureIndex("v"); err != nil {
				t.Fatal(err)
			}
			sameEntries(t, "declared later", inc.indexes["v"], late.indexes["v"])
			checkKeyStats(t, late, "v")
		})
	}
}

// sameEntries fails unless two indexes hold the same keys for the same
// objects in the same order, and agree on their multikey count.
func sameEntries(t *testing.T, what string, want, got *index) {
	t.Helper()
	var w, g []entry
	want.tree.Scan(func(e entry) bool { w = append(w, e); return true })
	got.tree.Scan(func(e entry) bool { g = append(g, e); return true })
	if len(w) != len(g) {
		t.Fatalf("%s: %d entries, want %d", what, len(g), len(w))
	}
	for i := range w {
		if compareKeys(w[i].key, g[i].key) != 0 || w[i].rec.id != g[i].rec.id {
			t.Fatalf("%s: entry %d is (%v, %s), want (%v, %s)", what, i, g[i].key, g[i].rec.id, w[i].key, w[i].rec.id)
		}
	}
	if want.arrays != got.arrays {
		t.Fatalf("%s: %d arrays, want %d", what, got.arrays, want.arrays)
	}
}

// TestRecordFitsSixtyFourBytes: a record is one per object, and the
// allocator rounds 72 bytes up to 80; keep it within the 64-byte class.
func TestRecordFitsSixtyFourBytes(t *testing.T) {
	if size := unsafe.Sizeof(record{}); size > 64 {
		t.Fatalf("record takes %d bytes, want at most 64", size)
	}
}

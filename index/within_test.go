package index

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// joinStrategies are the strategies a test runs ScanEqualWithin by.
var joinStrategies = []struct {
	name     string
	strategy int
}{{"chosen", joinChosen}, {"hash-scan", joinHashScan}, {"hash-filter", joinHashFilter}, {"by-bytes", joinByBytes}}

// withinIDs runs scanEqualWithin by strategy and returns the ids yielded,
// at most stop of them (no bound when stop <= 0).
func withinIDs(t *testing.T, c *Collection, path string, keys []any, within string, among []any, strategy, stop int) []string {
	t.Helper()
	got := []string{}
	err := c.scanEqualWithin(path, keys, within, among, time.Time{}, strategy, func(rec *record) bool {
		got = append(got, rec.object()["objectId"].(string))
		return stop <= 0 || len(got) < stop
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestScanEqualWithin: the intersection of a point scan with the keys of
// another field equals what two ScanEquals agree on, for every way the
// second field can hold (or not hold) one of the keys, by every strategy.
func TestScanEqualWithin(t *testing.T) {
	a, b := schema.Pointer("Owner", "a"), schema.Pointer("Owner", "b")
	withExtra := map[string]any{"__type": "Pointer", "className": "Owner", "objectId": "a", "name": "included"}
	c := New().Collection("Item", true)
	for _, o := range []schema.Object{
		obj("i1", "tag", 1.0, "owner", a),
		obj("i2", "tag", 1.0, "owner", b),
		obj("i3", "tag", 1.0),                                        // no owner
		obj("i4", "tag", 1.0, "owner", []any{b, a}),                  // an array holding a
		obj("i5", "tag", []any{1.0, 2.0}, "owner", a),                // under both tags
		obj("i6", "tag", 1.0, "owner", "a"),                          // a string, not a pointer
		obj("i7", "tag", 2.0, "owner", a),                            // the other tag
		obj("i8", "tag", 1.0, "owner", schema.Pointer("Other", "a")), // another class
		obj("i9", "tag", 1.0, "owner", 3.0),
		obj("ia", "tag", 1.0, "owner", withExtra), // a pointer with other members
		obj("ib", "tag", 3.0, "owner", map[string]any{"x": 1.0}),
		obj("ic", "tag", 3.0, "owner", map[string]any{"x": 2.0}),
		obj("id", "tag", 1.0, "owner", []any{a, a}),
	} {
		c.Put(o)
	}
	for _, p := range []string{"tag", "owner"} {
		if err := c.EnsureIndex(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		keys  []any
		among []any
		want  []string
	}{
		{"pointer", []any{1.0}, []any{a}, []string{"i1", "i4", "i5", "ia", "id"}},
		{"pointer key", []any{1.0}, []any{PointerKey("Owner", "a")}, []string{"i1", "i4", "i5", "ia", "id"}},
		{"pointer with other members", []any{1.0}, []any{withExtra}, []string{"i1", "i4", "i5", "ia", "id"}},
		{"two pointers, two tags", []any{1.0, 2.0}, PointerKeys("Owner", []string{"a", "b"}), []string{"i1", "i2", "i4", "i5", "i7", "ia", "id"}},
		{"repeated keys", []any{2.0, 1.0, 2.0}, []any{b, b}, []string{"i2", "i4"}},
		{"string", []any{1.0}, []any{"a"}, []string{"i6"}},
		{"number", []any{1.0}, []any{3.0}, []string{"i9"}},
		{"object", []any{3.0, 1.0}, []any{map[string]any{"x": 2.0}}, []string{"ic"}},
		{"missing key", []any{1.0, 7.0}, []any{b, "zz"}, []string{"i2", "i4"}},
		{"none", []any{2.0}, []any{b}, []string{}},
		{"no keys", []any{}, []any{b}, []string{}},
	} {
		for _, js := range joinStrategies {
			t.Run(tc.name+"/"+js.name, func(t *testing.T) {
				got := withinIDs(t, c, "tag", tc.keys, "owner", tc.among, js.strategy, 0)
				// The same answer from two scans, intersected by id.
				other := map[string]bool{}
				if err := c.ScanEqual("owner", tc.among, time.Time{}, func(ref Ref) bool {
					o := ref.Object()
					other[o["objectId"].(string)] = true
					return true
				}); err != nil {
					t.Fatal(err)
				}
				both := []string{}
				if err := c.ScanEqual("tag", tc.keys, time.Time{}, func(ref Ref) bool {
					o := ref.Object()
					if id := o["objectId"].(string); other[id] {
						both = append(both, id)
					}
					return true
				}); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(both, tc.want) {
					t.Fatalf("ScanEqualWithin %v, two scans %v, want %v", got, both, tc.want)
				}
				if len(tc.want) > 1 {
					if got := withinIDs(t, c, "tag", tc.keys, "owner", tc.among, js.strategy, 2); !reflect.DeepEqual(got, tc.want[:2]) {
						t.Fatalf("stopped after two: %v, want %v", got, tc.want[:2])
					}
				}
			})
		}
	}
	t.Run("within not indexed", func(t *testing.T) {
		c.DropIndex("owner")
		if got := withinIDs(t, c, "tag", []any{1.0}, "owner", []any{a}, joinChosen, 0); !reflect.DeepEqual(got, []string{"i1", "i4", "i5", "ia", "id"}) {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("path not indexed", func(t *testing.T) {
		if err := c.ScanEqualWithin("nope", []any{1.0}, "tag", []any{1.0}, time.Time{}, func(Ref) bool { return true }); err != ErrNoIndex {
			t.Fatalf("err %v, want ErrNoIndex", err)
		}
	})
}

// TestScanEqualWithinDuringWrites: while writers replace objects, a scan
// yields an object iff it matches both sides in one version of the
// collection. Stable objects are written again and again with the same
// keys (a new record each time): two snapshots taken at two moments
// would hold two records of one of them and lose it. Moving objects go
// between (tag 1, owner a) and (tag 2, owner b) in single writes: a
// yielded one must hold both keys of its version.
func TestScanEqualWithinDuringWrites(t *testing.T) {
	a, b := schema.Pointer("Owner", "a"), schema.Pointer("Owner", "b")
	for _, js := range joinStrategies {
		t.Run(js.name, func(t *testing.T) {
			c := New().Collection("Item", true)
			for _, p := range []string{"tag", "owner"} {
				if err := c.EnsureIndex(p); err != nil {
					t.Fatal(err)
				}
			}
			const moving, stable = 200, 50
			var stableIDs []string
			for i := range stable {
				id := fmt.Sprintf("s%03d", i)
				stableIDs = append(stableIDs, id)
				c.Put(obj(id, "tag", 1.0, "owner", a))
			}
			for i := range moving {
				c.Put(obj(fmt.Sprintf("m%03d", i), "tag", 1.0, "owner", a))
			}
			for i := range moving { // other owners and tags around
				c.Put(obj(fmt.Sprintf("x%03d", i), "tag", float64(i%3), "owner", schema.Pointer("Owner", fmt.Sprint(i%4))))
			}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for round := 0; ; round++ {
						select {
						case <-stop:
							return
						default:
						}
						if w == 0 {
							c.Put(obj(stableIDs[round%stable], "tag", 1.0, "owner", a))
							continue
						}
						o := obj(fmt.Sprintf("m%03d", round%moving), "tag", 1.0, "owner", a)
						if round/moving%2 == 0 {
							o["tag"], o["owner"] = 2.0, b
						}
						c.Put(o)
					}
				}()
			}
			for range 300 {
				var got []string
				err := c.scanEqualWithin("tag", []any{1.0}, "owner", []any{a}, time.Time{}, js.strategy, func(rec *record) bool {
					o := rec.object()
					if o["tag"] != 1.0 || !reflect.DeepEqual(o["owner"], a) {
						t.Errorf("yielded %v", o)
						return false
					}
					got = append(got, o["objectId"].(string))
					return true
				})
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range stableIDs {
					if _, found := slices.BinarySearch(got, id); !found {
						t.Fatalf("%s, matching in every version, missing from %v", id, got)
					}
				}
				if !slices.IsSorted(got) {
					t.Fatalf("not in objectId order: %v", got)
				}
			}
			close(stop)
			wg.Wait()
		})
	}
}

// TestPropertyScanEqualWithinMatchesBruteForce compares every strategy,
// stopped after a random number of objects, with the brute-force
// intersection of the two point sets over random objects (arrays, every
// kind of key, missing fields, repeated keys), as writes come and go.
func TestPropertyScanEqualWithinMatchesBruteForce(t *testing.T) {
	paths := []string{"v", "arr", "nest.x", "objectId"}
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 17))
			c := New().Collection("P", true)
			model := map[string]schema.Object{}
			for _, p := range paths[:3] {
				if err := c.EnsureIndex(p); err != nil {
					t.Fatal(err)
				}
			}
			for round := range 6 {
				randomWrites(rng, c, model, 80, 6)
				for range 60 {
					path, within := paths[rng.IntN(len(paths))], paths[rng.IntN(3)]
					keys, among := randKeys(rng, model, path, false), randKeys(rng, model, within, true)
					want := []string{}
					for id, o := range model {
						if holdsOne(o, path, keys) && holdsOne(o, within, among) {
							want = append(want, id)
						}
					}
					slices.Sort(want)
					stop := 0
					if rng.IntN(3) == 0 && len(want) > 0 {
						stop = 1 + rng.IntN(len(want))
						want = want[:stop]
					}
					for _, js := range joinStrategies {
						if got := withinIDs(t, c, path, keys, within, among, js.strategy, stop); !slices.Equal(got, want) {
							t.Fatalf("round %d %s: %s %v within %s %v stop %d:\n got %v\nwant %v", round, js.name, path, keys, within, among, stop, got, want)
						}
					}
				}
			}
		})
	}
}

// randKeys are up to four keys: random values, or values some object
// holds at path (a pointer at times as its PointerKey), never null nor
// an array when forAmong.
func randKeys(rng *rand.Rand, model map[string]schema.Object, path string, forAmong bool) []any {
	var held []any
	for _, o := range model {
		held = append(held, bruteKeys(o, path)...)
	}
	keys := make([]any, 0, 4)
	for range 1 + rng.IntN(4) {
		k := randScalar(rng)
		if len(held) > 0 && rng.IntN(2) == 0 {
			k = held[rng.IntN(len(held))]
		}
		if p, ok := k.(map[string]any); ok && p["__type"] == "Pointer" && rng.IntN(2) == 0 {
			k = PointerKey(p["className"].(string), p["objectId"].(string))
		}
		if _, isArr := k.([]any); forAmong && (k == nil || isArr) {
			continue
		}
		keys = append(keys, k)
	}
	return keys
}

// holdsOne reports whether one of o's keys at path equals one of keys.
func holdsOne(o schema.Object, path string, keys []any) bool {
	if path == "objectId" {
		return slices.ContainsFunc(keys, func(k any) bool { return k == o["objectId"] })
	}
	return slices.ContainsFunc(bruteKeys(o, path), func(x any) bool {
		return slices.ContainsFunc(keys, func(k any) bool { return compareKeys(compactKey(x), compactKey(k)) == 0 })
	})
}

// TestScanEqualMembersBesideTheKey: a stored Pointer or Date with other
// members (an included object's fields) is that pointer or date, as the
// reference evaluator and schema.Compare read it; its entries are counted
// under the key's stats, so ScanEqual on one key and on several, the
// range scan and the estimate all find every entry however the key's
// entries were added.
func TestScanEqualMembersBesideTheKey(t *testing.T) {
	ptr, other := schema.Pointer("A", "x"), schema.Pointer("A", "y")
	ptrPlus := map[string]any{"__type": "Pointer", "className": "A", "objectId": "x", "extra": 1.0}
	date := schema.Date("2024-01-01T00:00:00.000Z")
	datePlus := map[string]any{"__type": "Date", "iso": "2024-01-01T00:00:00.000Z", "extra": 1.0}
	for _, tc := range []struct {
		name        string
		plain, plus any
		other       any
	}{{"pointer", ptr, ptrPlus, other}, {"date", date, datePlus, schema.Date("2025-01-01T00:00:00.000Z")}} {
		// Layouts: which objects hold the value with other members (+) or
		// without (.), in the order they are written.
		for _, layout := range []string{"+", "+.", ".+", "+.+", ".+.", "++.", "..+", "+..", "+++", "..."} {
			for _, early := range []bool{true, false} {
				c := New().Collection("Item", true)
				if early {
					_ = c.EnsureIndex("v")
				}
				for i, ch := range layout {
					v := tc.plain
					if ch == '+' {
						v = tc.plus
					}
					c.Put(obj(fmt.Sprintf("i%d", i), "v", v))
				}
				c.Put(obj("z", "v", tc.other))
				if !early {
					_ = c.EnsureIndex("v")
				}
				want := []string{}
				for i := range layout {
					want = append(want, fmt.Sprintf("i%d", i))
				}
				for _, keys := range [][]any{{tc.plain}, {tc.plus}, {tc.plain, tc.other}, {tc.plus, tc.plain}} {
					got := []string{}
					if err := c.ScanEqual("v", keys, time.Time{}, func(ref Ref) bool {
						o := ref.Object()
						if id := o["objectId"].(string); id != "z" {
							got = append(got, id)
						}
						return true
					}); err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s %s early=%v: ScanEqual(%v) = %v, want %v", tc.name, layout, early, keys, got, want)
					}
					if got := ids(t, c, "v", Equal(keys[0]), false); !slices.Equal(got, want) {
						t.Fatalf("%s %s early=%v: ScanRange(%v) = %v, want %v", tc.name, layout, early, keys[0], got, want)
					}
					if n := c.EstimateEqual("v", keys[0], 0); n != len(want) {
						t.Fatalf("%s %s early=%v: EstimateEqual(%v) = %d, want %d", tc.name, layout, early, keys[0], n, len(want))
					}
				}
			}
		}
	}
}

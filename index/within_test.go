package index

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// TestScanEqualWithin: the intersection of a point scan with the keys of
// another field equals what two ScanEquals would agree on, for every way
// the second field can hold (or not hold) one of the keys.
func TestScanEqualWithin(t *testing.T) {
	a, b := schema.Pointer("Owner", "a"), schema.Pointer("Owner", "b")
	c := New().Collection("Item", true)
	for _, o := range []schema.Object{
		obj("i1", "tag", 1.0, "owner", a),
		obj("i2", "tag", 1.0, "owner", b),
		obj("i3", "tag", 1.0),                                        // no owner
		obj("i4", "tag", 1.0, "owner", []any{b, a}),                  // an array holding a
		obj("i6", "tag", 1.0, "owner", "a"),                          // a string, not a pointer
		obj("i7", "tag", 2.0, "owner", a),                            // the other tag
		obj("i8", "tag", 1.0, "owner", schema.Pointer("Other", "a")), // another class
		obj("i9", "tag", 1.0, "owner", 3.0),
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
		{"pointer", []any{1.0}, []any{a}, []string{"i1", "i4"}},
		{"pointer key", []any{1.0}, []any{PointerKey("Owner", "a")}, []string{"i1", "i4"}},
		{"two pointers, two tags", []any{1.0, 2.0}, PointerKeys("Owner", []string{"a", "b"}), []string{"i1", "i2", "i4", "i7"}},
		{"string", []any{1.0}, []any{"a"}, []string{"i6"}},
		{"number", []any{1.0}, []any{3.0}, []string{"i9"}},
		{"none", []any{2.0}, []any{b}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{}
			err := c.ScanEqualWithin("tag", tc.keys, "owner", tc.among, time.Time{}, func(ref Ref) bool {
				o := ref.Object()
				got = append(got, o["objectId"].(string))
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
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
		})
	}
}

// TestScanEqualWithinDuringWrites: objects move between (tag 1, owner a)
// and (tag 2, owner b) in single writes while scans run; every object a
// scan for tag 1 within owner a yields must hold both, as the test reads
// the version the tag entry points to (two scans at two moments could
// pair the tag of one version with the owner of another).
func TestScanEqualWithinDuringWrites(t *testing.T) {
	a, b := schema.Pointer("Owner", "a"), schema.Pointer("Owner", "b")
	c := New().Collection("Item", true)
	for _, p := range []string{"tag", "owner"} {
		if err := c.EnsureIndex(p); err != nil {
			t.Fatal(err)
		}
	}
	const n = 200
	for i := range n {
		c.Put(obj(fmt.Sprintf("i%03d", i), "tag", 1.0, "owner", a))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 0; ; round++ {
			select {
			case <-stop:
				return
			default:
			}
			o := obj(fmt.Sprintf("i%03d", round%n), "tag", 1.0, "owner", a)
			if round/n%2 == 0 {
				o["tag"], o["owner"] = 2.0, b
			}
			c.Put(o)
		}
	}()
	for range 300 {
		err := c.ScanEqualWithin("tag", []any{1.0}, "owner", []any{a}, time.Time{}, func(ref Ref) bool {
			o := ref.Object()
			if o["tag"] != 1.0 || !reflect.DeepEqual(o["owner"], a) {
				t.Errorf("yielded %v", o)
				return false
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

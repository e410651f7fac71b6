package index

import (
	"encoding/json"
	"maps"
	"math"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// TestEncodingFollowsTheStoredVersion: the stored version's bytes are kept
// (given or made once); a copy or a replaced version is encoded anew.
func TestEncodingFollowsTheStoredVersion(t *testing.T) {
	c := New().Collection("C", true)
	v1 := schema.Object{"objectId": "a", "v": 1.0, "s": "<&>"}
	c.Put(v1)
	b1, err := c.Encoding(v1)
	want, _ := json.Marshal(v1)
	if err != nil || string(b1) != string(want) {
		t.Fatalf("Encoding = %s, %v; want %s", b1, err, want)
	}
	if again, _ := c.Encoding(v1); &again[0] != &b1[0] {
		t.Error("the stored version was encoded twice")
	}
	cp := maps.Clone(v1)
	cp["v"] = 9.0
	if b, _ := c.Encoding(cp); string(b) != `{"objectId":"a","s":"\u003c\u0026\u003e","v":9}` {
		t.Errorf("a copy's encoding: %s", b)
	}
	v2 := schema.Object{"objectId": "a", "v": 2.0}
	c.PutEncoded(v2, []byte(`{"objectId":"a","v":2}`))
	if b, _ := c.Encoding(v2); string(b) != `{"objectId":"a","v":2}` {
		t.Errorf("the given encoding was not kept: %s", b)
	}
	if b, _ := c.Encoding(v1); string(b) != string(want) {
		t.Errorf("the old version's encoding: %s", b)
	}
	c.Delete("a")
	if b, _ := c.Encoding(v2); string(b) != `{"objectId":"a","v":2}` {
		t.Errorf("a deleted object's encoding: %s", b)
	}
}

// TestStoredBytesAreCheckedThenShared: bytes loaded from the store are the
// reply encoding, the very same memory, once a first read found them equal
// to encoding/json's output; bytes that differ are replaced.
func TestStoredBytesAreCheckedThenShared(t *testing.T) {
	c := New().Collection("C", true)
	cases := []struct {
		name   string
		obj    schema.Object
		stored string
		shared bool
	}{
		{"as Marshal makes it", schema.Object{"objectId": "a", "s": "<&>", "v": 1.0}, `{"objectId":"a","s":"\u003c\u0026\u003e","v":1}`, true},
		{"keys out of order", schema.Object{"objectId": "b", "v": 1.0}, `{"v":1,"objectId":"b"}`, false},
		{"a number that lost precision", schema.Object{"objectId": "c", "v": 9007199254740992.0}, `{"objectId":"c","v":9007199254740993}`, false},
		{"spaces", schema.Object{"objectId": "d"}, `{ "objectId": "d" }`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stored := []byte(tc.stored)
			c.PutStored(tc.obj, stored)
			want, _ := json.Marshal(tc.obj)
			obj, _ := c.Get(tc.obj["objectId"].(string)) // decoded from stored
			for range 2 {
				b, err := c.Encoding(obj)
				if err != nil || string(b) != string(want) {
					t.Fatalf("Encoding = %s, %v; want %s", b, err, want)
				}
				if shared := &b[0] == &stored[0]; shared != tc.shared {
					t.Fatalf("the reply bytes are the stored ones: %v, want %v", shared, tc.shared)
				}
			}
		})
	}
}

// TestRefKeepsTheVersionItRead: a Ref from a scan or Lookup holds the
// version it found: after the object is replaced or deleted, its map and
// its bytes are still that version's, and they agree; a new Lookup finds
// the new version. Bytes loaded from the store are checked as
// Collection.Encoding checks them.
func TestRefKeepsTheVersionItRead(t *testing.T) {
	c := New().Collection("C", true)
	if err := c.EnsureIndex("tag"); err != nil {
		t.Fatal(err)
	}
	v1 := schema.Object{"objectId": "a", "tag": "t", "v": 1.0}
	c.Put(v1)
	var scanned Ref
	if err := c.ScanEqual("tag", []any{"t"}, time.Time{}, func(r Ref) bool { scanned = r; return false }); err != nil || !scanned.Valid() {
		t.Fatalf("scan: %v, found %v", err, scanned.Valid())
	}
	looked, ok := c.Lookup("a")
	if !ok || looked.ID() != "a" {
		t.Fatal("Lookup did not find a")
	}
	v2 := schema.Object{"objectId": "a", "tag": "t", "v": 2.0}
	c.PutEncoded(v2, []byte(`{"objectId":"a","tag":"t","v":2}`))
	want1, _ := json.Marshal(v1)
	for name, r := range map[string]Ref{"scan": scanned, "lookup": looked} {
		b, err := r.Encoding()
		if err != nil || string(b) != string(want1) {
			t.Errorf("%s: the old version's bytes: %s, %v; want %s", name, b, err, want1)
		}
		if obj := r.Object(); obj["v"] != 1.0 || !r.Holds(obj) || r.Holds(v2) {
			t.Errorf("%s: the old version's map: %v", name, obj)
		}
	}
	now, _ := c.Lookup("a")
	if b, _ := now.Encoding(); string(b) != `{"objectId":"a","tag":"t","v":2}` {
		t.Errorf("the new version's bytes: %s", b)
	}
	c.Delete("a")
	if _, ok := c.Lookup("a"); ok {
		t.Error("Lookup found a deleted object")
	}
	if b, _ := now.Encoding(); string(b) != `{"objectId":"a","tag":"t","v":2}` {
		t.Errorf("a deleted version's bytes: %s", b)
	}

	stored := []byte(`{"v":3,"objectId":"b"}`) // not Marshal's order
	c.PutStored(schema.Object{"objectId": "b", "v": 3.0}, stored)
	r, _ := c.Lookup("b")
	if b, err := r.Encoding(); err != nil || string(b) != `{"objectId":"b","v":3}` {
		t.Errorf("loaded bytes not checked: %s, %v", b, err)
	}
	c.Put(schema.Object{"objectId": "n", "x": math.NaN()})
	if r, _ := c.Lookup("n"); r.Valid() {
		if _, err := r.Encoding(); err == nil {
			t.Error("a NaN encoded without an error")
		}
	}
}

package index

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
)

func obj(id string, kv ...any) schema.Object {
	o := schema.Object{"objectId": id}
	for i := 0; i+1 < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

// ids runs a range scan and returns the objectIds delivered.
func ids(t *testing.T, c *Collection, path string, r Range, desc bool) []string {
	t.Helper()
	out := []string{}
	err := c.ScanRange(path, r, desc, time.Time{}, func(ref Ref) bool {
		o := ref.Object()
		out = append(out, o["objectId"].(string))
		return true
	})
	if err != nil {
		t.Fatalf("ScanRange(%q): %v", path, err)
	}
	return out
}

func gte(v any) Range { return Range{Lo: v, HasLo: true, LoInclusive: true} }
func lt(v any) Range  { return Range{Hi: v, HasHi: true} }

func TestScanRangeTable(t *testing.T) {
	c := New().Collection("T", true)
	for _, o := range []schema.Object{
		obj("a", "n", 3.0, "s", "x", "tags", []any{"red", "blue"}, "in", map[string]any{"k": 2.0}),
		obj("b", "n", 1.0, "s", "y", "tags", []any{"red", "red"}),
		obj("c", "n", 2.0, "s", nil, "tags", []any{}, "in", map[string]any{"k": 1.0}),
		obj("d", "n", "two", "tags", "green", "in", "flat"),
		obj("e", "n", 2.0, "tags", []any{1.0, "blue", nil}),
	} {
		c.Put(o)
	}
	for _, p := range []string{"n", "s", "tags", "in.k"} {
		if err := c.EnsureIndex(p); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		path string
		r    Range
		desc bool
		want []string
	}{
		{"whole index, missing first", "n", Range{}, false, []string{"b", "c", "e", "a", "d"}},
		{"whole index desc", "n", Range{}, true, []string{"d", "a", "e", "c", "b"}},
		{"numbers only", "n", RankRange(schema.RankNumber), false, []string{"b", "c", "e", "a"}},
		{"equal ties by id", "n", Equal(2.0), false, []string{"c", "e"}},
		{"equal ties desc", "n", Equal(2.0), true, []string{"e", "c"}},
		{"exclusive lo", "n", Range{Lo: 2.0, HasLo: true}, false, []string{"a", "d"}},
		{"lo only crosses ranks", "n", gte(2.5), false, []string{"a", "d"}},
		{"hi exclusive", "n", lt(2.0), false, []string{"b"}},
		{"empty range", "n", Range{Lo: 3.0, Hi: 1.0, HasLo: true, HasHi: true, LoInclusive: true, HiInclusive: true}, false, []string{}},
		{"point exclusive is empty", "n", Range{Lo: 2.0, Hi: 2.0, HasLo: true, HasHi: true, LoInclusive: true}, false, []string{}},
		{"missing and null", "s", Equal(nil), false, []string{"c", "d", "e"}},
		{"strings", "s", RankRange(schema.RankString), false, []string{"a", "b"}},
		{"multikey element", "tags", Equal("red"), false, []string{"a", "b"}},
		{"multikey once per object", "tags", RankRange(schema.RankString), false, []string{"a", "e", "d", "b"}},
		{"multikey once desc", "tags", RankRange(schema.RankString), true, []string{"b", "a", "d", "e"}},
		{"multikey null element and missing", "tags", Equal(nil), false, []string{"e"}},
		{"empty array is its own key", "tags", Equal([]any{}), false, []string{"c"}},
		{"dot path", "in.k", gte(0.0), false, []string{"c", "a"}},
		{"dot path through non-object is missing", "in.k", Equal(nil), false, []string{"b", "d", "e"}},
		{"objectId", "objectId", Range{Lo: "b", Hi: "d", HasLo: true, HasHi: true, HiInclusive: true}, false, []string{"c", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(t, c, tt.path, tt.r, tt.desc)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			// EstimateRange counts entries: for a non-multikey index that
			// is the number of objects.
			if !c.Multikey(tt.path) {
				if n := c.EstimateRange(tt.path, tt.r, 0); n != len(tt.want) {
					t.Errorf("EstimateRange = %d, want %d", n, len(tt.want))
				}
			}
		})
	}
}

func TestIndexManagement(t *testing.T) {
	c := New().Collection("T", true)
	c.Put(obj("a", "x", []any{1.0, 2.0}, "y", 1.0))
	if got, want := c.Indexes(), []string{"createdAt", "objectId", "updatedAt"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Indexes() = %v, want %v", got, want)
	}
	for _, bad := range []string{"", ".", "a..b", ".a", "a."} {
		if err := c.EnsureIndex(bad); !errors.Is(err, ErrBadPath) {
			t.Errorf("EnsureIndex(%q) = %v, want ErrBadPath", bad, err)
		}
	}
	for _, p := range []string{"x", "y", "objectId", "x"} {
		if err := c.EnsureIndex(p); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := c.Indexes(), []string{"createdAt", "objectId", "updatedAt", "x", "y"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Indexes() = %v, want %v", got, want)
	}
	if !c.HasIndex("x") || c.HasIndex("z") {
		t.Fatal("HasIndex")
	}
	if !c.Multikey("x") || c.Multikey("y") || c.Multikey("z") {
		t.Fatal("Multikey after build")
	}
	c.Put(obj("a", "x", 3.0))
	if c.Multikey("x") {
		t.Fatal("Multikey must clear when no array is left")
	}
	c.Put(obj("b", "y", []any{}))
	if !c.Multikey("y") {
		t.Fatal("an empty array makes the index multikey")
	}
	c.Delete("b")
	if c.Multikey("y") {
		t.Fatal("Multikey must clear after Delete")
	}
	if c.DropIndex("objectId") || c.DropIndex("createdAt") || c.DropIndex("nope") {
		t.Fatal("DropIndex of a built-in or unknown index must report false")
	}
	if !c.DropIndex("x") || c.HasIndex("x") {
		t.Fatal("DropIndex(x)")
	}
	if err := c.ScanRange("x", Range{}, false, time.Time{}, func(Ref) bool { return true }); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("scan of a dropped index = %v, want ErrNoIndex", err)
	}
	if n := c.EstimateRange("x", Range{}, 0); n != c.Len() {
		t.Fatalf("EstimateRange without index = %d, want Len %d", n, c.Len())
	}
}

func TestPutMovesDeleteRemoves(t *testing.T) {
	c := New().Collection("T", true)
	if err := c.EnsureIndex("n"); err != nil {
		t.Fatal(err)
	}
	c.Put(obj("a", "n", 1.0, "createdAt", "2024-01-01T00:00:00.000Z"))
	c.Put(obj("b", "n", 2.0, "createdAt", "2024-01-02T00:00:00.000Z"))
	c.Put(obj("a", "n", 5.0, "createdAt", "2024-01-01T00:00:00.000Z")) // moves
	c.Put(obj("b", "n", 2.0, "createdAt", "2024-01-02T00:00:00.000Z", "z", true))
	steps := []struct {
		r    Range
		want []string
	}{
		{Equal(1.0), []string{}},
		{Equal(5.0), []string{"a"}},
		{Range{}, []string{"b", "a"}},
	}
	for _, s := range steps {
		if got := ids(t, c, "n", s.r, false); !reflect.DeepEqual(got, s.want) {
			t.Errorf("%+v: got %v, want %v", s.r, got, s.want)
		}
	}
	// The replaced object is the one handed out.
	c.ScanOrdered("n", false, time.Time{}, func(ref Ref) bool {
		o := ref.Object()
		if o["objectId"] == "b" && o["z"] != true {
			t.Error("scan handed out a replaced object")
		}
		return true
	})
	if got := ids(t, c, "createdAt", gte(schema.Date("2024-01-02T00:00:00.000Z")), false); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("createdAt range: %v", got)
	}
	c.Delete("a")
	c.Delete("missing")
	for _, p := range []string{"n", "objectId", "createdAt", "updatedAt"} {
		if got := ids(t, c, p, Range{}, false); !reflect.DeepEqual(got, []string{"b"}) {
			t.Errorf("after Delete, %s holds %v", p, got)
		}
		if n := c.EstimateRange(p, Range{}, 0); n != 1 {
			t.Errorf("after Delete, %s counts %d", p, n)
		}
	}
	if c.Len() != 1 {
		t.Fatalf("Len = %d", c.Len())
	}
	if _, ok := c.Get("a"); ok {
		t.Fatal("Get after Delete")
	}
}

func TestScanStopsAndDeadline(t *testing.T) {
	c := New().Collection("T", true)
	for i := range 2000 {
		c.Put(obj(string(rune('a'+i%26))+string(rune('A'+i/26)), "n", float64(i)))
	}
	n := 0
	err := c.ScanOrdered("objectId", false, time.Time{}, func(Ref) bool { n++; return n < 7 })
	if err != nil || n != 7 {
		t.Fatalf("stop: n=%d err=%v", n, err)
	}

	n = 0
	err = c.ScanOrdered("objectId", false, time.Now().Add(-time.Second), func(Ref) bool { n++; return true })
	if !errors.Is(err, ErrDeadline) || n != 0 {
		t.Fatalf("past deadline: n=%d err=%v", n, err)
	}

	deadline := time.Now().Add(20 * time.Millisecond)
	n = 0
	err = c.ScanOrdered("objectId", true, deadline, func(Ref) bool {
		if n == 0 {
			time.Sleep(time.Until(deadline) + time.Millisecond)
		}
		n++
		return true
	})
	if !errors.Is(err, ErrDeadline) || n >= CheckEvery {
		t.Fatalf("deadline mid-scan: n=%d err=%v", n, err)
	}

	n = 0
	err = c.ScanOrdered("objectId", false, time.Now().Add(time.Hour), func(Ref) bool { n++; return true })
	if err != nil || n != 2000 {
		t.Fatalf("far deadline: n=%d err=%v", n, err)
	}

	// ScanEqual checks the same deadline between the objects it merges.
	if err := c.EnsureIndex("n"); err != nil {
		t.Fatal(err)
	}
	keys := make([]any, 2000)
	for i := range keys {
		keys[i] = float64(i)
	}
	deadline = time.Now().Add(20 * time.Millisecond)
	n = 0
	err = c.ScanEqual("n", keys, deadline, func(Ref) bool {
		if n == 0 {
			time.Sleep(time.Until(deadline) + time.Millisecond)
		}
		n++
		return true
	})
	if !errors.Is(err, ErrDeadline) || n >= CheckEvery {
		t.Fatalf("ScanEqual deadline mid-scan: n=%d err=%v", n, err)
	}
	if err := c.ScanEqual("n", keys, time.Now().Add(-time.Second), nil); !errors.Is(err, ErrDeadline) {
		t.Fatalf("ScanEqual past deadline: %v", err)
	}
	if err := c.ScanEqual("missing", keys, time.Time{}, nil); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("ScanEqual without an index: %v", err)
	}
}

func TestScanAndScanIDs(t *testing.T) {
	c := New().Collection("T", true)
	for _, id := range []string{"c", "a", "b"} {
		c.Put(obj(id))
	}
	var got []string
	c.Scan(func(o schema.Object) bool { got = append(got, o["objectId"].(string)); return true })
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("Scan order %v", got)
	}
	var many []string
	for range 300 {
		many = append(many, "c", "zz", "a")
	}
	got = got[:0]
	c.ScanIDs(many, func(ref Ref) bool {
		o := ref.Object()
		got = append(got, o["objectId"].(string))
		return len(got) < 401
	})
	if len(got) != 401 || got[0] != "c" || got[1] != "a" || got[400] != "c" {
		t.Fatalf("ScanIDs: %d %v", len(got), got[:4])
	}
}

func TestEstimates(t *testing.T) {
	c := New().Collection("T", true)
	_ = c.EnsureIndex("k")
	for i := range 1000 {
		c.Put(obj(string(rune(0x4e00+i)), "k", float64(i%10), "tags", []any{float64(i % 3), float64(i%3 + 10)}))
	}
	_ = c.EnsureIndex("tags")
	tests := []struct {
		name  string
		path  string
		r     Range
		limit int
		want  int
	}{
		{"equal", "k", Equal(3.0), 0, 100},
		{"equal capped", "k", Equal(3.0), 40, 40},
		{"range", "k", Range{Lo: 2.0, Hi: 5.0, HasLo: true, HasHi: true, LoInclusive: true}, 0, 300},
		{"all", "k", Range{}, 0, 1000},
		{"none", "k", Equal("x"), 0, 0},
		{"multikey counts elements", "tags", RankRange(schema.RankNumber), 0, 2000},
		{"multikey equal", "tags", Equal(11.0), 0, 333},
	}
	for _, tt := range tests {
		if got := c.EstimateRange(tt.path, tt.r, tt.limit); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := c.EstimateEqual("k", 9.0, 0); got != 100 {
		t.Errorf("EstimateEqual = %d", got)
	}
}

func TestRankRange(t *testing.T) {
	samples := []any{nil, -1e300, 0.0, 7.5, "", "z", map[string]any{}, map[string]any{"a": 1.0},
		map[string]any{"__type": "Pointer", "className": "A", "objectId": "x"}, []any{}, []any{1.0},
		map[string]any{"__type": "Bytes", "base64": ""}, map[string]any{"__type": "Bytes", "base64": "QQ=="},
		false, true, schema.Date(""), schema.Date("2024-01-01T00:00:00.000Z")}
	for rank := schema.RankNull; rank <= schema.RankDate; rank++ {
		r := RankRange(rank)
		for _, v := range samples {
			if got, want := r.Contains(v), schema.RankOf(v) == rank; got != want {
				t.Errorf("RankRange(%d).Contains(%v) = %v", rank, v, got)
			}
		}
	}
}

func TestRelations(t *testing.T) {
	db := New()
	for i := range 600 {
		db.SetRelation("Team", "members", "t1", string(rune(0x4e00+i)), true)
	}
	db.SetRelation("Team", "members", "t2", string(rune(0x4e00)), true)
	db.SetRelation("Team", "members", "t1", string(rune(0x4e00+1)), true) // again
	if n := db.RelatedCount("Team", "members", "t1"); n != 600 {
		t.Fatalf("RelatedCount = %d", n)
	}
	if n := db.OwnersCount("Team", "members", string(rune(0x4e00))); n != 2 {
		t.Fatalf("OwnersCount = %d", n)
	}
	var got []string
	db.Related("Team", "members", "t1", func(id string) bool {
		got = append(got, id)
		// fn may write relations: no lock is held.
		db.SetRelation("Team", "members", "t1", id, false)
		return true
	})
	if len(got) != 600 {
		t.Fatalf("Related delivered %d", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("Related out of order at %d", i)
		}
	}
	if n := db.RelatedCount("Team", "members", "t1"); n != 0 {
		t.Fatalf("RelatedCount after removal = %d", n)
	}
	var owners []string
	db.Owners("Team", "members", string(rune(0x4e00)), func(id string) bool { owners = append(owners, id); return true })
	if !reflect.DeepEqual(owners, []string{"t2"}) {
		t.Fatalf("Owners = %v", owners)
	}
	db.SetRelation("Team", "members", "t2", string(rune(0x4e00)), false)
	db.SetRelation("Team", "nobody", "t2", "x", false)
	if n := db.RelatedCount("Team", "members", "t2"); n != 0 || len(db.relations) != 0 {
		t.Fatalf("empty relations must be forgotten: %d %d", n, len(db.relations))
	}
}

package postgres_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

func obj(class, id, json string) store.Record {
	return store.Record{Kind: store.KindObject, Class: class, Key: id, Value: []byte(json)}
}

func del(kind store.Kind, class, key string) store.Record {
	return store.Record{Kind: kind, Class: class, Key: key}
}

func sch(class, json string) store.Record {
	return store.Record{Kind: store.KindSchema, Class: class, Value: []byte(json)}
}

func join(class, key string) store.Record {
	return store.Record{Kind: store.KindJoin, Class: class, Key: key, Value: []byte{}}
}

func meta(key string, v []byte) store.Record {
	return store.Record{Kind: store.KindMeta, Key: key, Value: v}
}

const placeSchema = `{"className":"Place","fields":{"objectId":{"type":"String"},"createdAt":{"type":"Date"},"updatedAt":{"type":"Date"},"ACL":{"type":"ACL"},
"name":{"type":"String"},"rank":{"type":"Number"},"open":{"type":"Boolean"},"when":{"type":"Date"},"owner":{"type":"Pointer","targetClass":"_User"},
"where":{"type":"GeoPoint"},"tags":{"type":"Array"},"info":{"type":"Object"},"pic":{"type":"File"},"area":{"type":"Polygon"},"blob":{"type":"Bytes"},
"fans":{"type":"Relation","targetClass":"_User"}},"classLevelPermissions":{"find":{"*":true}}}`

var long = strings.Repeat("k", 70)

// conformance are sequences of commits that every adapter (buntdb in memory
// and on disk, PostgreSQL) must load back alike: objects and schemas as
// equal JSON, everything else byte for byte.
var conformance = []struct {
	name    string
	commits [][]store.Record
}{
	{"typed values", [][]store.Record{{
		sch("Place", placeSchema),
		obj("Place", "a1", `{"objectId":"a1","createdAt":"2024-01-02T03:04:05.678Z","updatedAt":"2024-01-02T03:04:05.678Z","ACL":{"*":{"read":true}},
			"name":"Café ☕","rank":-0.5,"open":true,"when":{"__type":"Date","iso":"1999-12-31T23:59:59.999Z"},
			"owner":{"__type":"Pointer","className":"_User","objectId":"u1"},"where":{"__type":"GeoPoint","latitude":-33.8688,"longitude":151.2093},
			"tags":["a",1,null,{"x":[true]}],"info":{"nested":{"deep":1e-7}},"pic":{"__type":"File","name":"f.png","url":"http://x/f.png"},
			"area":{"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[0,0]]},"blob":{"__type":"Bytes","base64":"AAEC"},"_rperm":["*"],"_hashed_password":"$2a$10$x"}`),
		obj("Place", "a2", `{"objectId":"a2","name":7,"rank":"not a number","when":{"__type":"Date","iso":"2024-01-02T03:04:05Z"},
			"owner":{"__type":"Pointer","className":"Other","objectId":"o1"},"where":{"__type":"GeoPoint","latitude":1,"longitude":2,"extra":3},
			"createdAt":"yesterday","open":null,"unknown":{"__type":"Date","iso":"2024-01-02T03:04:05.000Z"}}`),
		obj("Place", "a3", `{"objectId":"a3","name":"nul\u0000inside"}`),
		obj("Place", "a4", `{"objectId":"someone else","name":"id differs"}`),
		obj("_GlobalConfig", "1", `{"params":{"x":1},"createdAt":"2024-01-02T03:04:05.678Z"}`),
		join("fans:Place", "a1:u1"), join("fans:Place", "a1:u2"), join("fans:Place", "a2:u1"),
		meta("masterKey", []byte("secret")), meta("bin", []byte{0, 1, 2, 255}), meta("empty", []byte{}),
	}}},
	{"updates and deletes", [][]store.Record{
		{sch("Place", placeSchema), obj("Place", "a1", `{"objectId":"a1","name":"x","rank":1}`), obj("Place", "a2", `{"objectId":"a2","name":"y"}`),
			join("fans:Place", "a1:u1"), meta("k", []byte("v"))},
		{obj("Place", "a1", `{"objectId":"a1","name":"x2","open":false}`), del(store.KindObject, "Place", "a2"),
			del(store.KindJoin, "fans:Place", "a1:u1"), join("fans:Place", "a1:u3"), del(store.KindMeta, "", "k"),
			del(store.KindObject, "Place", "never")},
	}},
	{"schema changes", [][]store.Record{
		{sch("Item", `{"className":"Item","fields":{"a":{"type":"String"},"b":{"type":"Number"}}}`),
			obj("Item", "i1", `{"objectId":"i1","a":"one","b":1}`), obj("Item", "i2", `{"objectId":"i2","a":"two"}`)},
		// a field added, b dropped (its value moves aside), a retyped
		{sch("Item", `{"className":"Item","fields":{"a":{"type":"Number"},"c":{"type":"Boolean"}}}`), obj("Item", "i3", `{"objectId":"i3","a":3,"c":true}`)},
		{obj("Item", "i2", `{"objectId":"i2","a":2,"c":false}`)},
		// a schema dropped from an empty class and from a class with objects
		{sch("Empty", `{"className":"Empty","fields":{"x":{"type":"String"}}}`)},
		{del(store.KindSchema, "Empty", ""), del(store.KindSchema, "Item", "")},
		// and the empty class created again with another type
		{sch("Empty", `{"className":"Empty","fields":{"x":{"type":"Number"}}}`), obj("Empty", "e1", `{"objectId":"e1","x":1}`)},
	}},
	{"a field dropped and added again with another type", [][]store.Record{
		{sch("Doomed", `{"className":"Doomed","fields":{"drop":{"type":"String"},"keep":{"type":"Number"}}}`), obj("Doomed", "d1", `{"objectId":"d1","drop":"x","keep":1}`)},
		{sch("Doomed", `{"className":"Doomed","fields":{"keep":{"type":"Number"}}}`), obj("Doomed", "d1", `{"objectId":"d1","keep":1}`)},
		{sch("Doomed", `{"className":"Doomed","fields":{"drop":{"type":"Number"},"keep":{"type":"Number"}}}`), obj("Doomed", "d1", `{"objectId":"d1","drop":7,"keep":1}`)},
		// a class emptied, dropped and made again with other types
		{del(store.KindObject, "Doomed", "d1")},
		{del(store.KindSchema, "Doomed", "")},
		{sch("Doomed", `{"className":"Doomed","fields":{"drop":{"type":"Boolean"}}}`), obj("Doomed", "d2", `{"objectId":"d2","drop":true}`)},
	}},
	{"objects without schema", [][]store.Record{
		{obj("Loose", "l1", `{"objectId":"l1","n":1}`), obj("Loose", "l2", `{}`)},
		{sch("Loose", `{"className":"Loose","fields":{"n":{"type":"Number"}}}`)},
		{obj("Loose", "l3", `{"objectId":"l3","n":3}`)},
	}},
	{"long names", [][]store.Record{
		{sch("C"+long, fmt.Sprintf(`{"className":"C%s","fields":{"%s":{"type":"String"},"%s2":{"type":"Number"}}}`, long, long, long)),
			obj("C"+long, "x", fmt.Sprintf(`{"objectId":"x","%s":"v","%s2":2}`, long, long)),
			join(long+":C"+long, "x:y")},
	}},
	{"many objects in key order", [][]store.Record{manyObjects()}},
}

func manyObjects() []store.Record {
	var out []store.Record
	for i := range 300 {
		id := fmt.Sprintf("%c%d", 'A'+i%50, i) // upper and lower case keys; byte order matters
		if i%3 == 0 {
			id = strings.ToLower(id)
		}
		out = append(out, obj("Many", id, fmt.Sprintf(`{"objectId":%q,"i":%d}`, id, i)))
	}
	return out
}

func TestConformance(t *testing.T) {
	for _, tc := range conformance {
		t.Run(tc.name, func(t *testing.T) {
			mem, err := store.Open(store.MemoryURI)
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			disk, err := store.Open(filepath.Join(t.TempDir(), "q.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer disk.Close()
			uri := pgtest.NewDatabase(t)
			pg, err := postgres.Open(uri, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer pg.Close()
			for i, c := range tc.commits {
				if err := mem.Commit(c); err != nil {
					t.Fatalf("bunt commit %d: %v", i, err)
				}
				if err := disk.Commit(c); err != nil {
					t.Fatalf("bunt on disk commit %d: %v", i, err)
				}
				if err := pg.Commit(c); err != nil {
					t.Fatalf("postgres commit %d: %v", i, err)
				}
			}
			want, got := loadAll(t, mem), loadAll(t, pg)
			compareLoads(t, want, loadAll(t, disk))
			compareLoads(t, want, got)
			// A second adapter on the same database loads the same.
			pg2, err := postgres.Open(uri, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer pg2.Close()
			compareLoads(t, want, loadAll(t, pg2))
		})
	}
}

func loadAll(t testing.TB, a store.Adapter) []store.Record {
	t.Helper()
	var out []store.Record
	if err := a.Load(func(r store.Record) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatalf("load: %v", err)
	}
	return out
}

func compareLoads(t *testing.T, want, got []store.Record) {
	t.Helper()
	for i := 0; i < max(len(want), len(got)); i++ {
		if i >= len(want) {
			t.Fatalf("loaded %d records, want %d; extra: %s", len(got), len(want), show(got[i]))
		}
		if i >= len(got) {
			t.Fatalf("loaded %d records, want %d; missing: %s", len(got), len(want), show(want[i]))
		}
		w, g := want[i], got[i]
		if w.Kind != g.Kind || w.Class != g.Class || w.Key != g.Key {
			t.Fatalf("record %d is %c %q %q, want %c %q %q", i, g.Kind, g.Class, g.Key, w.Kind, w.Class, w.Key)
		}
		if !sameValue(w, g) {
			t.Errorf("record %d (%c %s %s):\n got %s\nwant %s", i, w.Kind, w.Class, w.Key, g.Value, w.Value)
		}
	}
}

func show(r store.Record) string { return fmt.Sprintf("%c %q %q", r.Kind, r.Class, r.Key) }

func sameValue(w, g store.Record) bool {
	if w.Kind == store.KindObject || w.Kind == store.KindSchema {
		var a, b any
		if json.Unmarshal(w.Value, &a) != nil || json.Unmarshal(g.Value, &b) != nil {
			return bytes.Equal(w.Value, g.Value)
		}
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(w.Value, g.Value) && (w.Value == nil) == (g.Value == nil)
}

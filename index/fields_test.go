package index

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// getRaw is schema.Get without its one conversion (a top-level createdAt
// or updatedAt string read as a Date), which valueAt leaves to its callers.
func getRaw(obj schema.Object, path string) (any, bool) {
	if !strings.Contains(path, ".") {
		v, ok := obj[path]
		return v, ok
	}
	return schema.Get(obj, path)
}

// TestValueAtMatchesTheDecodedObject: a field read from the JSON is the
// value the decoded object holds at the path, for hand-picked paths
// (nested, crossing arrays or scalars, keys gjson would read as syntax,
// escapes) and for every path of random objects.
func TestValueAtMatchesTheDecodedObject(t *testing.T) {
	cases := []struct {
		js    string
		paths []string
	}{
		{`{"a":{"b":{"c":1}},"n":null,"arr":[{"b":1}],"s":"x"}`,
			[]string{"a", "a.b", "a.b.c", "a.b.c.d", "a.x", "n", "n.b", "arr", "arr.0", "arr.b", "s.b", "missing"}},
		{`{"a*b":1,"a?":2,"#":3,"@this":4,"x|y":5,"k=v":6,"":7,"é":8,"sp ace":9,"o":{"@":{"!":true}}}`,
			[]string{"a*b", "a?", "#", "@this", "x|y", "k=v", "", "é", "sp ace", "o.@.!", "a"}},
		{`{"esc":"a\"b\\c","u":"\u00e9\ud83d\ude00","bad":"\ud800","o":{"k\"q":"\n"}}`,
			[]string{"esc", "u", "bad", "o", "o.k\"q"}},
		{`{"arr":[{"b":1},[2,{"c":3}],null,"s"],"o":{"l":[0,{"k":"v"}],"0":"key"}}`,
			[]string{"arr.0.b", "arr.1.0", "arr.1.1.c", "arr.2", "arr.2.x", "arr.3", "arr.3.x", "arr.4", "arr.01", "arr.-1", "arr.+1",
				"arr.1.x", "arr.9999999999", "o.l.1.k", "o.0", "o.l.0"}},
		{`{"createdAt":"2020-01-01T00:00:00.000Z","loc":{"__type":"GeoPoint","latitude":1.5,"longitude":-2},"big":9007199254740993}`,
			[]string{"createdAt", "loc", "loc.latitude", "big"}},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 300 {
		b, _ := json.Marshal(randJSONValue(rng, 0, true))
		cases = append(cases, struct {
			js    string
			paths []string
		}{string(b), nil})
	}
	for _, tc := range cases {
		obj, err := Decode([]byte(tc.js))
		if err != nil {
			t.Fatalf("Decode(%s): %v", tc.js, err)
		}
		paths := tc.paths
		if paths == nil {
			paths = pathsOf(obj, "", nil)
		}
		for _, p := range paths {
			got, gotOK := valueAt(tc.js, p)
			want, wantOK := getRaw(obj, p)
			if gotOK != wantOK || !reflect.DeepEqual(got, want) {
				t.Fatalf("valueAt(%s, %q) = %#v, %v; the decoded object holds %#v, %v", tc.js, p, got, gotOK, want, wantOK)
			}
		}
	}
}

// pathsOf lists every dot path into obj's nested objects and arrays.
func pathsOf(obj map[string]any, prefix string, out []string) []string {
	for k, v := range obj {
		out = pathsInto(v, prefix+k, out)
	}
	return out
}

func pathsInto(v any, path string, out []string) []string {
	out = append(out, path)
	switch c := v.(type) {
	case map[string]any:
		out = pathsOf(c, path+".", out)
	case []any:
		for i, e := range c {
			out = pathsInto(e, path+"."+strconv.Itoa(i), out)
		}
	}
	return out
}

// TestHandedOutMapIsTheStoredVersion: while the map Get handed out is
// among the last cached (keepHot's ring), every read hands out that same
// map, and its encoding is the kept bytes, across collections.
func TestHandedOutMapIsTheStoredVersion(t *testing.T) {
	c := New().Collection("C", true)
	stored := []byte(`{"objectId":"a","v":1}`)
	loaded, _ := Decode(stored)
	c.PutStored(loaded, stored)
	held, _ := c.Get("a")
	runtime.GC()
	runtime.GC()
	again, _ := c.Get("a")
	if !sameMap(held, again) {
		t.Fatal("a map still held was decoded anew")
	}
	for range 2 { // the first read checks the bytes, the second serves them
		if b, err := c.Encoding(again); err != nil || &b[0] != &stored[0] {
			t.Fatalf("Encoding of the handed-out map = %s, %v; want the stored bytes", b, err)
		}
	}
	c.Scan(func(obj schema.Object) bool {
		if !sameMap(obj, held) {
			t.Error("a scan decoded a map still held anew")
		}
		return true
	})
	runtime.KeepAlive(held)
}

// TestRecentlyDecodedMapsSurviveACollection: a map decoded on a read and
// dropped is still the one handed out after a collection (keepHot), so a
// hot page is not decoded again after every collection.
func TestRecentlyDecodedMapsSurviveACollection(t *testing.T) {
	c := New().Collection("C", true)
	stored := []byte(`{"objectId":"a","v":1}`)
	loaded, _ := Decode(stored)
	c.PutStored(loaded, stored)
	first := func() uintptr { obj, _ := c.Get("a"); return uintptr(reflect.ValueOf(obj).UnsafePointer()) }()
	runtime.GC()
	runtime.GC()
	if again, _ := c.Get("a"); uintptr(reflect.ValueOf(again).UnsafePointer()) != first {
		t.Fatal("a map decoded a moment ago was decoded again after a collection")
	}
}

// TestConcurrentFirstReads: readers racing on the first read of loaded
// bytes (decoding, checking, replacing them) all get the one encoding
// Marshal makes. Run with -race.
func TestConcurrentFirstReads(t *testing.T) {
	c := New().Collection("C", true)
	objs := map[string]string{"a": `{"objectId":"a","v":1}`, "b": `{"v":1,"objectId":"b"}`}
	for _, js := range objs {
		obj, _ := Decode([]byte(js))
		c.PutStored(obj, []byte(js))
	}
	done := make(chan string, 8)
	for range 8 {
		go func() {
			for id := range objs {
				obj, _ := c.Get(id)
				b, err := c.Encoding(obj)
				want, _ := json.Marshal(obj)
				if err != nil || string(b) != string(want) {
					done <- string(b)
					return
				}
			}
			done <- ""
		}()
	}
	for range 8 {
		if bad := <-done; bad != "" {
			t.Errorf("a first read got %s", bad)
		}
	}
}

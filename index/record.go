package index

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/quarrydata/quarry/schema"
)

// record is one stored version of an object, shared by all its index
// entries. It keeps the version's JSON (encoding.go: the bytes a write
// committed or the store loaded, the store's own memory) and no decoded
// map: index keys are read from the bytes (fields.go), and the map that
// Get and the scans hand out is decoded on demand and cached weakly, so it
// lives while someone uses it and until the next collection after that.
// Records are immutable (Put makes a new one), but for enc, set once more
// when the first read checks bytes loaded from the store, and the cache.
type record struct {
	id string
	// b is the version's JSON as given (nil for a pinned object), and
	// checked says it is encoding/json's output: given by a write, or
	// found equal by the first read (encoding.go). alt, when set, takes
	// b's place: Marshal's bytes where the loaded ones differed, or the
	// map of an object Marshal refuses. Keeping b inline spares most
	// records a second allocation.
	b       []byte
	checked atomic.Bool
	// flagged: the DB's flag predicate held for the object. It sits in
	// checked's word: after the pointers the record took 72 bytes, which
	// the allocator rounds to 80; here it takes 64.
	flagged bool
	alt     atomic.Pointer[encoding]
	// decoded is the map last handed out for this version, held weakly:
	// handing out the same map while it is alive keeps Encoding's test
	// of identity working (a map still in use is always the cached one).
	decoded atomic.Pointer[weak.Pointer[mapBody]]
}

// newRecord makes the record of obj with its JSON encoding enc (nil:
// made here, with Marshal's output; checked says whether enc is that).
// obj becomes the cached map of a write's version (the writer hands it
// on, to the reply and to LiveQuery), not of stored bytes (a load's map,
// about to be dropped). An object Marshal refuses (a NaN, an infinity:
// values no request can carry, only a program's Put) keeps its map
// instead.
func newRecord(obj schema.Object, enc []byte, checked bool) *record {
	id, _ := obj["objectId"].(string)
	rec := &record{id: id}
	if enc == nil {
		var err error
		if enc, err = json.Marshal(obj); err != nil {
			rec.alt.Store(&encoding{pinned: obj})
			return rec
		}
		checked = true
	}
	rec.b = enc
	rec.checked.Store(checked)
	if checked {
		rec.cache(obj)
	}
	return rec
}

// object returns the version's decoded map: the cached one while it is
// alive, else a new decoding of the bytes, then cached. Concurrent
// decodings may both decode; the first cached is the one handed out.
func (rec *record) object() schema.Object {
	b, _, pinned := rec.json()
	if pinned != nil {
		return pinned
	}
	for {
		w := rec.decoded.Load()
		if w != nil {
			if p := w.Value(); p != nil {
				return mapOf(p)
			}
		}
		obj, err := Decode(b)
		if err != nil {
			// Not reached: the bytes were Marshal's output or decoded
			// when loaded. Hand out what identifies the object.
			return schema.Object{"objectId": rec.id}
		}
		nw := weak.Make(bodyOf(obj))
		if rec.decoded.CompareAndSwap(w, &nw) {
			keepHot(obj)
			return obj
		}
	}
}

// hotMaps is how many of the maps decoded last are kept alive across
// collections (keepHot): a weak cache alone is emptied by every
// collection, and the next query of a hot page decodes it again. About
// 3 MB for small objects.
const hotMaps = 4096

// hot holds the hotMaps maps decoded last, in a ring; hotNext counts the
// decodings. A slot holds a map's body, which keeps the map alive.
var (
	hot     [hotMaps]atomic.Pointer[mapBody]
	hotNext atomic.Uint64
)

// keepHot keeps obj alive until hotMaps more maps have been decoded.
func keepHot(obj schema.Object) {
	hot[(hotNext.Add(1)-1)%hotMaps].Store(bodyOf(obj))
}

// cache makes obj the version's cached map.
func (rec *record) cache(obj schema.Object) {
	w := weak.Make(bodyOf(obj))
	rec.decoded.Store(&w)
}

// isCached reports whether obj is the map this version hands out.
func (rec *record) isCached(obj schema.Object) bool {
	if _, _, pinned := rec.json(); pinned != nil {
		return sameMap(pinned, obj)
	}
	w := rec.decoded.Load()
	return w != nil && w.Value() == bodyOf(obj)
}

// value returns the value at a dot path, read from the bytes (valueAt).
func (rec *record) value(path string) (any, bool) {
	b, _, pinned := rec.json()
	if pinned != nil {
		if !strings.Contains(path, ".") {
			v, ok := pinned[path] // a timestamp stays a string, as in valueAt
			return v, ok
		}
		return schema.Get(pinned, path)
	}
	return valueAt(unsafe.String(unsafe.SliceData(b), len(b)), path)
}

// json returns the version's JSON and whether it is checked, or the map
// of a pinned object.
func (rec *record) json() (b []byte, checked bool, pinned schema.Object) {
	if e := rec.alt.Load(); e != nil {
		return e.b, e.checked, e.pinned
	}
	return rec.b, rec.checked.Load(), nil
}

// mapBody stands for the runtime's map object a map value points to: a
// map value is one pointer, and the weak pointer to what it points to is
// the weak reference to the map (the map package's own types are not
// ours to name). It is never dereferenced.
type mapBody struct{ _ byte }

func bodyOf(m schema.Object) *mapBody { return *(**mapBody)(unsafe.Pointer(&m)) }

func mapOf(p *mapBody) schema.Object { return *(*schema.Object)(unsafe.Pointer(&p)) }

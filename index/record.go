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
// Get and the scans hand out is decoded on demand and cached weakly (a
// weak.Pointer to a box holding it), kept alive while it is among the
// last hotMaps cached and until the next collection after that.
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
	// decoded is the map last handed out for this version, in a box held
	// weakly: handing out the same map while the box is alive keeps
	// Encoding's test of identity working. The hot ring (keepHot) keeps
	// the boxes of the maps decoded or written last alive.
	decoded atomic.Pointer[weak.Pointer[decodedMap]]
}

// decodedMap boxes a decoded map so that a weak pointer can name it: a
// map value is not a pointer weak.Make takes. The box lives while the
// ring holds it, and until the next collection after that; a caller that
// keeps the map longer keeps a map that is no longer the cached one, and
// Encoding marshals it anew (correct, not free).
type decodedMap struct{ obj schema.Object }

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
				return p.obj
			}
		}
		obj, err := Decode(b)
		if err != nil {
			// Not reached: the bytes were Marshal's output or decoded
			// when loaded. Hand out what identifies the object.
			return schema.Object{"objectId": rec.id}
		}
		box := &decodedMap{obj}
		nw := weak.Make(box)
		if rec.decoded.CompareAndSwap(w, &nw) {
			keepHot(box)
			return obj
		}
	}
}

// hotMaps is how many of the maps decoded or written last are kept alive
// across collections (keepHot): a weak cache alone is emptied by every
// collection, and the next query of a hot page decodes it again. About
// 3 MB for small objects.
const hotMaps = 4096

// hot holds the boxes of the hotMaps maps cached last, in a ring; hotNext
// counts them.
var (
	hot     [hotMaps]atomic.Pointer[decodedMap]
	hotNext atomic.Uint64
)

// keepHot keeps box alive until hotMaps more maps have been cached.
func keepHot(box *decodedMap) {
	hot[(hotNext.Add(1)-1)%hotMaps].Store(box)
}

// cache makes obj the version's cached map (a write's: the writer hands
// it on, to the reply and to LiveQuery, and KeptEncoding knows it).
func (rec *record) cache(obj schema.Object) {
	box := &decodedMap{obj}
	w := weak.Make(box)
	rec.decoded.Store(&w)
	keepHot(box)
}

// isCached reports whether obj is the map this version hands out.
func (rec *record) isCached(obj schema.Object) bool {
	if _, _, pinned := rec.json(); pinned != nil {
		return sameMap(pinned, obj)
	}
	w := rec.decoded.Load()
	if w == nil {
		return false
	}
	p := w.Value()
	return p != nil && sameMap(p.obj, obj)
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

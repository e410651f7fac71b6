package index

import (
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/quarrydata/quarry/schema"
)

// Ref is one stored version of an object as a scan or Lookup found it: a
// handle on its record, so that whoever holds it reads that very version
// (its map, its bytes) without looking the object up by id again. A later
// write replaces the record, not what a Ref holds, so the bytes of a Ref
// are always those of the map it decodes to. The zero Ref holds nothing.
type Ref struct{ rec *record }

// Valid reports whether r holds a version.
func (r Ref) Valid() bool { return r.rec != nil }

// ID is the version's objectId, read without decoding it.
func (r Ref) ID() string { return r.rec.id }

// Object returns the version's decoded map, as Get and the scans hand it
// out: the same map while it is in use, so Holds and Encoding know it.
func (r Ref) Object() schema.Object { return r.rec.object() }

// Holds reports whether obj is the very map r's version hands out (not a
// copy, not another version's), the map Encoding's bytes encode.
func (r Ref) Holds(obj schema.Object) bool { return r.rec.isCached(obj) }

// Encoding returns the version's JSON, byte for byte what encoding/json's
// Marshal makes of the map Object returns (see Collection.Encoding). The
// returned bytes must not be modified.
func (r Ref) Encoding() ([]byte, error) { return r.rec.encoding(nil) }

// Flagged reports whether the DB's flag predicate held for the version
// (NewFlagging), read without decoding it.
func (r Ref) Flagged() bool { return r.rec.flagged }

// Lookup returns the stored version of the object with id.
func (c *Collection) Lookup(id string) (Ref, bool) {
	c.mu.RLock()
	rec, ok := c.objects[id]
	c.mu.RUnlock()
	return Ref{rec}, ok
}

// Decoded returns the version's decoded map when one is cached (Object
// would return it without decoding), else nil: a test that may read the
// map or the bytes reads the map it finds and the bytes otherwise.
func (r Ref) Decoded() schema.Object {
	if _, _, pinned := r.rec.json(); pinned != nil {
		return pinned
	}
	if w := r.rec.decoded.Load(); w != nil {
		if p := w.Value(); p != nil {
			return p.obj
		}
	}
	return nil
}

// Project sets in dst, for each of keys, the top-level member of the
// version as Object's map holds it (the same value, its strings pointing
// into the bytes), and deletes the keys the version lacks: a test that
// reads only those keys gives on dst what it gives on Object(), without
// decoding the rest of the object or touching its cached map. A key is
// read at its first occurrence; only JSON encoding/json never writes (a
// key twice) reads otherwise than Decode, as in fields.go.
func (r Ref) Project(keys []string, dst map[string]any) {
	b, _, pinned := r.rec.json()
	if pinned != nil {
		for _, k := range keys {
			if v, ok := pinned[k]; ok {
				dst[k] = v
			} else {
				delete(dst, k)
			}
		}
		return
	}
	js := unsafe.String(unsafe.SliceData(b), len(b))
	for _, k := range keys {
		delete(dst, k)
	}
	left := len(keys)
	complete := eachMember(js, func(key, raw string) bool {
		for _, want := range keys {
			if key == want {
				if _, seen := dst[want]; !seen {
					dst[want] = resultValue(gjson.Parse(raw))
					left--
				}
				break
			}
		}
		return left > 0
	})
	if !complete {
		// Not the plain JSON eachMember reads (an escaped key): each key
		// by gjson.
		for _, k := range keys {
			if m, ok := member(js, k); ok {
				dst[k] = resultValue(m)
			} else {
				delete(dst, k)
			}
		}
	}
}

// RawMembers sets raw[i] to the JSON text of the version's top-level
// member keys[i], "" when the version lacks it, reading the stored bytes
// in one pass that stops once every key is found; it decodes nothing and
// allocates nothing. False when the bytes cannot be read that way (a
// version kept only as a map, an escaped key): the caller then reads the
// members otherwise (Project). len(raw) must be len(keys).
func (r Ref) RawMembers(keys []string, raw []string) bool {
	b, _, pinned := r.rec.json()
	if pinned != nil {
		return false
	}
	for i := range raw {
		raw[i] = ""
	}
	js := unsafe.String(unsafe.SliceData(b), len(b))
	left := len(keys)
	return eachMember(js, func(key, v string) bool {
		for i, want := range keys {
			if key == want {
				if raw[i] == "" {
					raw[i] = v
					left--
				}
				break
			}
		}
		return left > 0
	})
}

package index

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/quarrydata/quarry/schema"
)

// Encoding returns obj's JSON encoding, byte for byte what encoding/json's
// Marshal makes of it. When obj is the stored version of its object (the
// very map Get and the scans hand out for it, see record.object), the
// encoding is made once and kept with that version, or was given by
// PutEncoded or PutStored: a write replaces the version and its bytes
// together, so the bytes are never stale. Any other map (a copy, an older
// version) is encoded anew. The returned bytes must not be modified.
func (c *Collection) Encoding(obj schema.Object) ([]byte, error) {
	rec := c.current(obj)
	if rec == nil {
		return json.Marshal(obj)
	}
	return rec.encoding(obj)
}

// encoding is the version's JSON (Encoding): its bytes once checked, else
// Marshal's of obj, the version's map (nil: decoded here), compared with
// the bytes kept.
func (rec *record) encoding(obj schema.Object) ([]byte, error) {
	kept, checked, pinned := rec.json()
	if checked {
		return kept, nil
	}
	if obj == nil {
		obj = rec.object()
	}
	b, err := json.Marshal(obj)
	if err != nil || pinned != nil {
		return b, err
	}
	if bytes.Equal(b, kept) {
		rec.checked.Store(true) // keep the store's memory: the object is held once
		return kept, nil
	}
	// Concurrent first reads may both encode; their bytes are equal,
	// and the first stored is kept.
	rec.alt.CompareAndSwap(nil, &encoding{b: b, checked: true})
	return rec.alt.Load().b, nil
}

// KeptEncoding returns the bytes Encoding would return for obj when they
// are at hand already: obj is the version stored now and its encoding was
// made or checked. Otherwise it returns nil and encodes nothing, so a
// caller that only wants the bytes when they are free (a write keeping
// the version it replaces) pays one map lookup.
func (c *Collection) KeptEncoding(obj schema.Object) []byte {
	rec := c.current(obj)
	if rec == nil {
		return nil
	}
	if kept, checked, _ := rec.json(); checked {
		return kept
	}
	return nil
}

// encoding is what takes the place of a record's own bytes (record.alt).
// Bytes given by a write (PutEncoded) are Marshal's output and checked;
// bytes loaded from the store (PutStored) are compared with Marshal's
// output at the first read before they are served: another writer (an
// import, another adapter) or a value whose type a decode changes (an
// int64 beyond 2^53) can make them differ, and then the read's own
// encoding, checked, replaces them here.
//
// pinned is the map of an object Marshal refuses (b is nil): the one
// kind of record that keeps its decoded map.
type encoding struct {
	b       []byte
	checked bool
	pinned  schema.Object
}

// current returns obj's record when obj is the version stored now.
func (c *Collection) current(obj schema.Object) *record {
	id, _ := obj["objectId"].(string)
	if id == "" {
		return nil
	}
	c.mu.RLock()
	rec := c.objects[id]
	c.mu.RUnlock()
	if rec == nil || !rec.isCached(obj) {
		return nil
	}
	return rec
}

// sameMap reports whether a and b are the same map (not merely equal).
func sameMap(a, b schema.Object) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

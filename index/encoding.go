package index

import (
	"encoding/json"
	"reflect"

	"github.com/quarrydata/quarry/schema"
)

// Encoding returns obj's JSON encoding, byte for byte what encoding/json's
// Marshal makes of it. When obj is the stored version of its object (the
// very map this collection holds, as Get and the scans hand it out), the
// encoding is made once and kept with that version, or was given by
// PutEncoded: a write replaces the version and its bytes together, so the
// bytes are never stale. Any other map (a copy, an older version) is
// encoded anew. The returned bytes must not be modified.
func (c *Collection) Encoding(obj schema.Object) ([]byte, error) {
	if rec := c.current(obj); rec != nil {
		if enc := rec.enc.Load(); enc != nil {
			return *enc, nil
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		// Concurrent first reads may both encode; their bytes are equal,
		// and the first stored is kept.
		rec.enc.CompareAndSwap(nil, &b)
		return *rec.enc.Load(), nil
	}
	return json.Marshal(obj)
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
	if rec == nil || !sameMap(rec.obj, obj) {
		return nil
	}
	return rec
}

// sameMap reports whether a and b are the same map (not merely equal).
func sameMap(a, b schema.Object) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

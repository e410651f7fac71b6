package index

import (
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

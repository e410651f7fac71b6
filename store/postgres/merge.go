package postgres

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"

	"github.com/quarrydata/quarry/schema"
)

// Schema records are written from an instance's memory, which may not yet
// hold a schema change another instance just committed (two instances
// adding fields to one class at the same moment). Stored as they come, the
// later would silently drop the earlier's fields. So each adapter keeps the
// schema its instance's memory was built from (known: loaded, committed
// here, or followed), and a schema record whose class changed in the
// database since is merged: this instance's changes (base -> next) are
// applied to the database's schema. The merged record is what _changes
// carries, and what this instance's own follower hands back to its memory.

// noteKnown records the schema this instance's memory now holds for class
// (nil: none).
func (a *Adapter) noteKnown(class string, value []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.known == nil {
		a.known = map[string][]byte{}
	}
	a.known[class] = value
}

func (a *Adapter) knownSchema(class string) ([]byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.known[class]
	return v, ok
}

// mergeSchema returns the schema to store for a record next written from
// memory built on base, when the database holds cur; it is next itself
// unless cur moved on from base. A field both sides added with different
// types is the 111 a single instance would have given.
func mergeSchema(base, cur, next *schema.Class) (*schema.Class, error) {
	if next == nil || cur == nil || sameSchema(base, cur) {
		return next, nil
	}
	if base == nil {
		base = &schema.Class{Name: next.Name}
	}
	out := cur.Clone()
	for k, f := range next.Fields {
		if b, ok := base.Fields[k]; ok && reflect.DeepEqual(b, f) {
			continue // not ours to change
		}
		if have, ok := cur.Fields[k]; ok && (have.Type != f.Type || have.TargetClass != f.TargetClass) {
			if _, existed := base.Fields[k]; !existed {
				return nil, schema.Errorf(schema.CodeIncorrectType, "schema mismatch for %s.%s; expected %s but got %s",
					next.Name, k, typeName(have), typeName(f))
			}
		}
		out.Fields[k] = f
	}
	for k := range base.Fields {
		if _, kept := next.Fields[k]; !kept {
			delete(out.Fields, k)
		}
	}
	if !reflect.DeepEqual(base.CLP, next.CLP) {
		out.CLP = next.CLP
	}
	if !reflect.DeepEqual(base.Indexes, next.Indexes) {
		out.Indexes = maps.Clone(next.Indexes)
	}
	return out, nil
}

func sameSchema(a, b *schema.Class) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func typeName(f schema.Field) string {
	switch f.Type {
	case schema.TypePointer:
		return "*" + f.TargetClass
	case schema.TypeRelation:
		return "relation<" + f.TargetClass + ">"
	}
	return string(f.Type)
}

func parseSchema(raw []byte) *schema.Class {
	if raw == nil {
		return nil
	}
	c := &schema.Class{}
	if json.Unmarshal(raw, c) != nil {
		return nil
	}
	return c
}

package service

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// TestAppendDerived: a reply copy of a stored object encoded from the
// stored bytes is byte for byte encoding/json's output of the copy,
// whatever was removed, added or replaced, and whatever the values
// (nested objects and arrays, escapes in keys and strings).
func TestAppendDerived(t *testing.T) {
	stored := schema.Object{
		"objectId": "a1", "createdAt": "2026-01-01T00:00:00.000Z", "n": 1.5, "s": "x,\"}]<&>", "nil": nil,
		"arr": []any{1.0, "a,b", map[string]any{"k": []any{}}}, "obj": map[string]any{"a": map[string]any{"b": "}"}},
		"t\"q": true, "é": false, "ACL": map[string]any{"*": map[string]any{"read": true}},
	}
	enc, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		change func(c schema.Object)
	}{
		{"as stored", func(schema.Object) {}},
		{"keys removed", func(c schema.Object) { delete(c, "n"); delete(c, "t\"q"); delete(c, "ACL") }},
		{"all removed", func(c schema.Object) { clear(c) }},
		{"keys added first, between and last", func(c schema.Object) {
			c["__type"], c["className"], c["zz"], c["AAA"] = "Object", "Item", map[string]any{"x": 1.0}, []any{"q"}
		}},
		{"values replaced", func(c schema.Object) {
			c["obj"] = map[string]any{"a": 2.0}
			c["arr"] = []any{"new"}
			c["s"] = "changed"
			c["n"] = 2.0
		}},
		{"a nested map copied, not the same", func(c schema.Object) { c["obj"] = maps.Clone(stored["obj"].(map[string]any)) }},
		{"removed and added", func(c schema.Object) {
			delete(c, "objectId")
			c["objectIdz"] = "x"
			c["relation"] = map[string]any{"__type": "Relation"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := maps.Clone(stored)
			tc.change(c)
			var r FindResult
			got, err := r.appendDerived([]byte("prefix"), enc, stored, c)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(c)
			if string(got) != "prefix"+string(want) {
				t.Fatalf("got  %s\nwant prefix%s", got, want)
			}
		})
	}
}

package service

import (
	"encoding/json"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// TestAppendKept: a stored object's bytes filtered to the keys of a copy
// with keys removed are byte for byte encoding/json's output of the copy,
// whatever the values (nested objects and arrays, escapes in keys and
// strings); a copy holding a key the bytes lack is refused.
func TestAppendKept(t *testing.T) {
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
		name string
		keep []string
		ok   bool
	}{
		{"all", []string{"objectId", "createdAt", "n", "s", "nil", "arr", "obj", "t\"q", "é", "ACL"}, true},
		{"none", nil, true},
		{"some", []string{"objectId", "arr", "t\"q"}, true},
		{"last only", []string{"é"}, true},
		{"nested values", []string{"obj", "s", "nil"}, true},
		{"a key not stored", []string{"objectId", "missing"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kept := schema.Object{}
			for _, k := range tc.keep {
				v, ok := stored[k]
				if !ok {
					v = "added"
				}
				kept[k] = v
			}
			got, ok, err := appendKept([]byte("prefix"), enc, kept)
			if err != nil || ok != tc.ok {
				t.Fatalf("ok %v err %v, want ok %v", ok, err, tc.ok)
			}
			if !ok {
				if string(got) != "prefix" {
					t.Fatalf("refused, but appended %q", got)
				}
				return
			}
			want, _ := json.Marshal(kept)
			if string(got) != "prefix"+string(want) {
				t.Fatalf("got  %s\nwant prefix%s", got, want)
			}
		})
	}
}

package main

import (
	"encoding/json"
	"testing"
)

// The seeded bytes must be encoding/json's own encoding of the object, or
// every first read keeps a second, re-encoded copy (index/encoding.go) and
// the memory measured is not that of data written through the API.
func TestItemJSONIsMarshalOutput(t *testing.T) {
	for _, i := range []int{0, 1, 7, 169, 349, 999_999, 1_000_000, 9_999_999} {
		var obj map[string]any
		if err := json.Unmarshal(itemJSON(i), &obj); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		again, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(itemJSON(i)) {
			t.Errorf("object %d:\n seeded  %s\n marshal %s", i, itemJSON(i), again)
		}
	}
}

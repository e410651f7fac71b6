package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// Every subquery form stops at the subquery cap with 154, and works at it.
func TestSubqueryCap(t *testing.T) {
	src := newMemSource()
	for i := 0; i < 10; i++ {
		src.put("Owner", schema.Object{"objectId": fmt.Sprintf("o%02d", i), "tier": "gold", "name": fmt.Sprintf("n%d", i)})
		src.put("Item", schema.Object{"objectId": fmt.Sprintf("i%02d", i), "owner": schema.Pointer("Owner", fmt.Sprintf("o%02d", i)),
			"name": fmt.Sprintf("n%d", i)})
		src.db.SetRelation("Owner", "favorites", "o00", fmt.Sprintf("i%02d", i), true)
	}
	sub := map[string]any{"className": "Owner", "where": map[string]any{"tier": "gold"}}
	cases := []struct {
		name  string
		where map[string]any
	}{
		{"$inQuery", map[string]any{"owner": map[string]any{"$inQuery": sub}}},
		{"$notInQuery", map[string]any{"owner": map[string]any{"$notInQuery": sub}}},
		{"$select", map[string]any{"name": map[string]any{"$select": map[string]any{"key": "name", "query": sub}}}},
		{"$dontSelect", map[string]any{"name": map[string]any{"$dontSelect": map[string]any{"key": "name", "query": sub}}}},
		{"$relatedTo", map[string]any{"$relatedTo": map[string]any{"object": schema.Pointer("Owner", "o00"), "key": "favorites"}}},
	}
	for _, c := range cases {
		for _, capacity := range []int{10, 9} {
			_, err := Compile(src, Query{Class: "Item", Where: c.where, Limit: 100}, Options{SubqueryCap: capacity})
			over := capacity < 10
			pe, isParse := schema.AsError(err)
			switch {
			case !over && err != nil:
				t.Errorf("%s with cap %d: %v", c.name, capacity, err)
			case over && (!isParse || pe.Code != schema.CodeInefficientQuery || !strings.Contains(pe.Message, "more than 9")):
				t.Errorf("%s with cap %d: got %v, want 154 naming the cap", c.name, capacity, err)
			}
		}
	}
}

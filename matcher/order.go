package matcher

import (
	"github.com/quarrydata/quarry/schema"
)

// SortKey is one entry of a query's order: a key path, descending when
// Desc is set (the "-key" form).
type SortKey struct {
	Path string
	Desc bool
	// Score, when set, orders by its value, highest first whatever Desc
	// says (the "$score" of a $text query: the best matches first, as
	// Parse sorts it).
	Score func(schema.Object) float64
}

// Compare orders two objects by keys with schema.Compare (missing keys
// sort as null, first when ascending), then by objectId in the direction
// of the last key (ascending without keys), so that the order is total and
// every component agrees on it: an index scanned backwards, the planner's
// heap, aggregate's $sort and the tests. Unlike MongoDB, an array compares
// as a whole, not by its smallest or largest element.
func Compare(a, b schema.Object, keys []SortKey) int {
	desc := false
	for _, k := range keys {
		if k.Score != nil {
			if sa, sb := k.Score(a), k.Score(b); sa != sb {
				if sa > sb {
					return -1
				}
				return 1
			}
			continue
		}
		if c := schema.CompareAt(a, b, k.Path); c != 0 {
			if k.Desc {
				return -c
			}
			return c
		}
		desc = k.Desc
	}
	// schema.Compare, not a string compare: after an aggregate $group the
	// objectId holds the group key, which may be any value.
	c := schema.Compare(a["objectId"], b["objectId"])
	if desc {
		return -c
	}
	return c
}

// Less reports whether a sorts before b by keys; see Compare.
func Less(a, b schema.Object, keys []SortKey) bool { return Compare(a, b, keys) < 0 }

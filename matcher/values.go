package matcher

import (
	"strconv"
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// equalAny is MongoDB equality: the value equals q, or the value is an
// array with an element equal to q. A null q also matches a missing field
// and an array holding null.
func equalAny(v any, present bool, q any) bool {
	if q == nil {
		if !present || v == nil {
			return true
		}
		arr, _ := v.([]any)
		for _, e := range arr {
			if e == nil {
				return true
			}
		}
		return false
	}
	if !present {
		return false
	}
	if schema.Equal(v, q) {
		return true
	}
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if schema.Equal(e, q) {
				return true
			}
		}
	}
	return false
}

// rangePred compares only within q's rank (so {$gt: 5} never matches a
// string), against the value and, for arrays, each element. A missing
// field counts as null, so $lte/$gte null match it as in MongoDB.
func rangePred(code where.OpCode, q any) valuePred {
	rank := schema.RankOf(q)
	var accept func(int) bool
	switch code {
	case where.OpLt:
		accept = func(c int) bool { return c < 0 }
	case where.OpLte:
		accept = func(c int) bool { return c <= 0 }
	case where.OpGt:
		accept = func(c int) bool { return c > 0 }
	default:
		accept = func(c int) bool { return c >= 0 }
	}
	test := func(v any) bool { return schema.RankOf(v) == rank && accept(schema.Compare(v, q)) }
	// Fast paths for the common operands; same results as the generic test.
	switch x := q.(type) {
	case float64:
		test = func(v any) bool {
			f, ok := v.(float64)
			if !ok {
				return false
			}
			switch {
			case f < x:
				return accept(-1)
			case f > x:
				return accept(1)
			case f == x:
				return accept(0)
			}
			return accept(schema.Compare(f, x))
		}
	case string:
		test = func(v any) bool {
			s, ok := v.(string)
			return ok && accept(strings.Compare(s, x))
		}
	}
	return func(_ schema.Object, v any, present bool) bool {
		if !present {
			return rank == schema.RankNull && accept(0)
		}
		if test(v) {
			return true
		}
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				if test(e) {
					return true
				}
			}
		}
		return false
	}
}

// allPred is $all: every item is equal to the value or to one of its
// elements. An empty $all matches nothing, as in MongoDB.
func allPred(items []any) valuePred {
	return func(_ schema.Object, v any, present bool) bool {
		if !present || len(items) == 0 {
			return false
		}
		arr, isArr := v.([]any)
		// Many items against a long array: hash the elements once.
		if isArr && len(items) > 4 && len(arr) > 4 {
			elems := newValueSet(arr)
			for _, q := range items {
				if !elems.has(q) && !schema.Equal(v, q) {
					return false
				}
			}
			return true
		}
		for _, q := range items {
			if !equalAny(v, present, q) {
				return false
			}
		}
		return true
	}
}

// regexAny applies a regex to a string or to the strings of an array;
// other values never match.
func regexAny(v any, re *where.Regex) bool {
	switch x := v.(type) {
	case string:
		return re.MatchString(x)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && re.MatchString(s) {
				return true
			}
		}
	}
	return false
}

// valueSet answers "is v equal (schema.Equal) to one of these values" in
// constant time for strings, numbers, booleans, pointers and dates, and by
// a scan for the rest. Strings, numbers and pointers, the members of
// nearly every set, have maps of their own keyed by the value itself, so a
// lookup builds no key (HashKey allocates one): an $in of pointers from an
// $inQuery is probed once per candidate object.
type valueSet struct {
	strs   map[string]struct{}
	nums   map[float64]struct{} // -0 and +0 are one key; NaN is never stored
	ptrs   map[ptrKey]struct{}
	ptrIDs map[string]struct{} // the objectIds of ptrs, tested first
	keys   map[string]struct{} // HashKey of the other scalars (booleans, dates)
	others []any
	null   bool
}

// ptrKey is a Pointer (or an Object, which equals the Pointer to it).
type ptrKey struct{ class, id string }

func newValueSet(vals []any) *valueSet {
	s := &valueSet{}
	for _, v := range vals {
		if v == nil {
			s.null = true
			continue
		}
		if s.addFast(v) {
			continue
		}
		if k, ok := HashKey(v); ok {
			if s.keys == nil {
				s.keys = map[string]struct{}{}
			}
			s.keys[k] = struct{}{}
		} else {
			s.others = append(s.others, v)
		}
	}
	return s
}

// addFast files a string, number or pointer in its own map.
func (s *valueSet) addFast(v any) bool {
	switch x := v.(type) {
	case string:
		if s.strs == nil {
			s.strs = map[string]struct{}{}
		}
		s.strs[x] = struct{}{}
		return true
	case float64:
		if x != x {
			return false
		}
		if s.nums == nil {
			s.nums = map[float64]struct{}{}
		}
		s.nums[x] = struct{}{}
		return true
	}
	if k, ok := pointerOf(v); ok {
		if s.ptrs == nil {
			s.ptrs, s.ptrIDs = map[ptrKey]struct{}{}, map[string]struct{}{}
		}
		s.ptrs[k] = struct{}{}
		s.ptrIDs[k.id] = struct{}{}
		return true
	}
	return false
}

// pointerOf is the key of a Pointer or Object value, as HashKey makes it.
func pointerOf(v any) (ptrKey, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return ptrKey{}, false
	}
	if t := m["__type"]; t != "Pointer" && t != "Object" {
		return ptrKey{}, false
	}
	c, _ := m["className"].(string)
	id, _ := m["objectId"].(string)
	return ptrKey{c, id}, true
}

func (s *valueSet) has(v any) bool {
	switch x := v.(type) {
	case nil:
		return s.null
	case string:
		_, in := s.strs[x]
		return in
	case float64:
		if x == x {
			_, in := s.nums[x]
			return in
		}
	case map[string]any:
		if s.keys == nil && s.others == nil {
			// Only a pointer can be in the set: one whose objectId no member
			// has is not, whatever its other fields (most probes end here,
			// having read one field rather than three).
			id, _ := x["objectId"].(string)
			if _, maybe := s.ptrIDs[id]; !maybe {
				return false
			}
		}
		if k, ok := pointerOf(x); ok {
			_, in := s.ptrs[k]
			return in
		}
	}
	if k, ok := HashKey(v); ok {
		_, in := s.keys[k]
		return in
	}
	for _, o := range s.others {
		if schema.Equal(v, o) {
			return true
		}
	}
	return false
}

// in is $in: the value or one of its elements is in the set; a missing
// field is in it when the set holds null.
func (s *valueSet) in(v any, present bool) bool {
	if !present {
		return s.null
	}
	if s.has(v) {
		return true
	}
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if s.has(e) {
				return true
			}
		}
	}
	return false
}

// HashKey gives values that schema.Equal compares by one scalar (strings,
// numbers, booleans, pointers, dates) a string key with the same equality;
// ok is false for the others.
func HashKey(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return "s" + x, true
	case float64:
		if x != x {
			return "", false
		}
		if x == 0 {
			x = 0 // -0 equals 0
		}
		return "n" + strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		if x {
			return "t", true
		}
		return "f", true
	case map[string]any:
		switch x["__type"] {
		case "Pointer", "Object":
			c, _ := x["className"].(string)
			id, _ := x["objectId"].(string)
			return "p" + c + "\x00" + id, true
		case "Date":
			iso, _ := x["iso"].(string)
			return "d" + iso, true
		}
	}
	return "", false
}

package fuzz

import (
	"strconv"
	"strings"
	"time"
)

// Value kinds, in MongoDB's sort order of types (null and missing first).
const (
	kindNull = iota
	kindNumber
	kindString
	kindObject
	kindArray
	kindBool
	kindDate
	kindPointer
	kindGeoPoint
	kindOther
)

func kindOf(v any) int {
	switch x := v.(type) {
	case nil:
		return kindNull
	case float64:
		return kindNumber
	case string:
		return kindString
	case bool:
		return kindBool
	case []any:
		return kindArray
	case map[string]any:
		switch x["__type"] {
		case nil:
			return kindObject
		case "Date":
			return kindDate
		case "Pointer":
			return kindPointer
		case "GeoPoint":
			return kindGeoPoint
		}
	}
	return kindOther
}

// equal is value equality: same kind and same value; Dates by instant,
// Pointers by class and id, GeoPoints by coordinates, objects key by key
// (in any key order) and arrays element by element.
func equal(a, b any) bool {
	ka, kb := kindOf(a), kindOf(b)
	if ka != kb {
		return false
	}
	switch ka {
	case kindNull:
		return true
	case kindNumber, kindString, kindBool:
		return a == b
	case kindDate:
		ta, okA := instant(a)
		tb, okB := instant(b)
		return okA && okB && ta.Equal(tb)
	case kindPointer:
		ma, mb := a.(map[string]any), b.(map[string]any)
		return ma["className"] == mb["className"] && ma["objectId"] == mb["objectId"]
	case kindGeoPoint:
		ma, mb := a.(map[string]any), b.(map[string]any)
		return ma["latitude"] == mb["latitude"] && ma["longitude"] == mb["longitude"]
	case kindArray:
		xa, xb := a.([]any), b.([]any)
		if len(xa) != len(xb) {
			return false
		}
		for i := range xa {
			if !equal(xa[i], xb[i]) {
				return false
			}
		}
		return true
	case kindObject:
		ma, mb := a.(map[string]any), b.(map[string]any)
		if len(ma) != len(mb) {
			return false
		}
		for k, v := range ma {
			w, ok := mb[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// compare orders two values of one comparable kind (numbers, strings,
// Dates); ok is false for any other pair (MongoDB compares only within
// a type bracket).
func compare(a, b any) (c int, ok bool) {
	ka := kindOf(a)
	if ka != kindOf(b) {
		return 0, false
	}
	switch ka {
	case kindNumber:
		return compareFloat(a.(float64), b.(float64)), true
	case kindString:
		return strings.Compare(a.(string), b.(string)), true
	case kindDate:
		ta, okA := instant(a)
		tb, okB := instant(b)
		if !okA || !okB {
			return 0, false
		}
		return ta.Compare(tb), true
	}
	return 0, false
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// instant reads a Date value.
func instant(v any) (time.Time, bool) {
	m, _ := v.(map[string]any)
	s, _ := m["iso"].(string)
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// lookupSort reads a sort key of o: a dot path, missing read as null;
// createdAt and updatedAt as Dates.
func lookupSort(o map[string]any, path string) any {
	ev := evaluator{w: NewWorld()}
	v, _ := ev.lookup("", o, path)
	return v
}

// sortCompare orders values for a sort: by kind first (null and missing
// lowest), then by value within a kind. The generator sorts only on
// fields of one type (plus null and missing), so the order between
// kinds is never decisive beyond null-first.
func sortCompare(a, b any) int {
	ka, kb := kindOf(a), kindOf(b)
	if ka != kb {
		return ka - kb
	}
	if ka == kindBool {
		ba, bb := a.(bool), b.(bool)
		switch {
		case ba == bb:
			return 0
		case bb:
			return -1
		}
		return 1
	}
	c, _ := compare(a, b)
	return c
}

// relativeUnits are the $relativeTime units the generator writes; a year
// is 365 days (the generator's dates sit months away from any boundary
// this choice could move).
var relativeUnits = map[string]time.Duration{
	"years": 365 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour, "days": 24 * time.Hour, "hours": time.Hour,
}

// relativeTime reads "now", "in <n> <unit>" and "<n> <unit> ago" as a Date.
func relativeTime(s string) map[string]any {
	now := time.Now().UTC()
	f := strings.Fields(s)
	var t time.Time
	switch {
	case len(f) == 3 && f[0] == "in":
		n, _ := strconv.Atoi(f[1])
		t = now.Add(time.Duration(n) * relativeUnits[f[2]])
	case len(f) == 3 && f[2] == "ago":
		n, _ := strconv.Atoi(f[0])
		t = now.Add(-time.Duration(n) * relativeUnits[f[1]])
	default:
		t = now
	}
	return date(t.Format("2006-01-02T15:04:05.000Z"))
}

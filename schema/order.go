package schema

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Rank orders values of different kinds the way Parse (on MongoDB) sorts
// them: missing and null first, then numbers, strings, objects, arrays,
// bytes, booleans and dates. Range operators only compare within one rank.
type Rank int

// Ranks of the value kinds, in sort order.
const (
	RankNull Rank = iota
	RankNumber
	RankString
	RankObject
	RankArray
	RankBytes
	RankBoolean
	RankDate
)

// RankOf classifies a value of the REST encoding. Dates must be Date maps;
// the timestamps createdAt/updatedAt are turned into Date maps by the reader
// (see Get) so every Date compares alike.
func RankOf(v any) Rank {
	switch x := v.(type) {
	case nil:
		return RankNull
	case float64:
		return RankNumber
	case string:
		return RankString
	case bool:
		return RankBoolean
	case []any:
		return RankArray
	case map[string]any:
		switch x["__type"] {
		case "Date":
			return RankDate
		case "Bytes":
			return RankBytes
		}
		return RankObject
	}
	return RankObject
}

// Compare is a total order over values: by rank, then within the rank.
// Dates compare by their normalized iso string (the service stores every
// Date in TimeLayout, so string order is time order). Pointers compare by
// className then objectId; other objects by their sorted keys' values.
func Compare(a, b any) int {
	ra, rb := RankOf(a), RankOf(b)
	if ra != rb {
		if ra < rb {
			return -1
		}
		return 1
	}
	switch ra {
	case RankNull:
		return 0
	case RankNumber:
		// NaN never arrives from JSON; cmp.Compare keeps the order total
		// anyway (NaN first).
		return cmp.Compare(a.(float64), b.(float64))
	case RankString:
		return strings.Compare(a.(string), b.(string))
	case RankBoolean:
		return compareBool(a.(bool), b.(bool))
	case RankDate:
		return strings.Compare(isoOf(a), isoOf(b))
	case RankBytes:
		x, _ := a.(map[string]any)["base64"].(string)
		y, _ := b.(map[string]any)["base64"].(string)
		return strings.Compare(x, y)
	case RankArray:
		x, y := a.([]any), b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := Compare(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(x), len(y))
	}
	return compareObjects(a.(map[string]any), b.(map[string]any))
}

func compareObjects(x, y map[string]any) int {
	if px, ok := x["__type"].(string); ok && px == "Pointer" {
		if py, ok := y["__type"].(string); ok && py == "Pointer" {
			if c := strings.Compare(str(x["className"]), str(y["className"])); c != 0 {
				return c
			}
			return strings.Compare(str(x["objectId"]), str(y["objectId"]))
		}
	}
	kx, ky := slices.Sorted(maps.Keys(x)), slices.Sorted(maps.Keys(y))
	for i := 0; i < len(kx) && i < len(ky); i++ {
		if c := strings.Compare(kx[i], ky[i]); c != 0 {
			return c
		}
		if c := Compare(x[kx[i]], y[ky[i]]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(kx), len(ky))
}

// Equal is Parse equality: pointers by class and id (extra keys of an
// expanded pointer ignored), files by name, dates by instant, others
// structurally.
func Equal(a, b any) bool {
	if fa, ok := fileName(a); ok {
		fb, ok := fileName(b)
		return ok && fa == fb
	}
	if pa, ok := pointerKey(a); ok {
		pb, ok := pointerKey(b)
		return ok && pa == pb
	}
	return Compare(a, b) == 0
}

// fileName identifies a File by its name: its url may differ between
// servers and over time.
func fileName(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["__type"] != "File" {
		return "", false
	}
	n, _ := m["name"].(string)
	return n, true
}

func pointerKey(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	t := m["__type"]
	if t != "Pointer" && t != "Object" {
		return "", false
	}
	c, _ := m["className"].(string)
	id, _ := m["objectId"].(string)
	return c + "\x00" + id, true
}

// Get reads a top-level key or a dot path into nested objects; a segment
// of digits inside an array is a position in it ("tags.0",
// "items.2.price"), as Parse Server's queries read it. The timestamps
// createdAt and updatedAt come back as Date maps so that they compare with
// Date values from queries.
func Get(obj Object, path string) (any, bool) {
	head, rest, nested := strings.Cut(path, ".")
	v, ok := obj[head]
	if !ok {
		return nil, false
	}
	if nested {
		return getNested(v, rest)
	}
	if head == "createdAt" || head == "updatedAt" {
		if s, isStr := v.(string); isStr {
			return Date(s), true
		}
	}
	return v, true
}

func getNested(cur any, path string) (any, bool) {
	for {
		head, rest, nested := strings.Cut(path, ".")
		var v any
		var ok bool
		switch c := cur.(type) {
		case map[string]any:
			v, ok = c[head]
		case []any:
			if i, isIndex := ArrayIndex(head); isIndex && i < len(c) {
				v, ok = c[i], true
			}
		}
		if !ok || !nested {
			return v, ok
		}
		cur, path = v, rest
	}
}

// ArrayIndex reads a path segment as a position in an array: digits only
// (no sign), at most maxArrayIndexDigits of them.
func ArrayIndex(segment string) (int, bool) {
	if segment == "" || len(segment) > maxArrayIndexDigits {
		return 0, false
	}
	n := 0
	for i := 0; i < len(segment); i++ {
		c := segment[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// maxArrayIndexDigits bounds a position in a path: far above any array a
// request body can hold, and small enough never to overflow an int.
const maxArrayIndexDigits = 9

// CompareAt compares the values of a and b at path as Compare compares
// what Get returns, without building the Date maps of the timestamps
// createdAt and updatedAt: two timestamps compare as their iso strings,
// which is how Compare orders two Dates.
func CompareAt(a, b Object, path string) int {
	if path == "createdAt" || path == "updatedAt" {
		sa, aStr := a[path].(string)
		sb, bStr := b[path].(string)
		if aStr && bStr {
			return strings.Compare(sa, sb)
		}
	}
	va, _ := Get(a, path)
	vb, _ := Get(b, path)
	return Compare(va, vb)
}

// Date wraps a TimeLayout timestamp as a Date value.
func Date(iso string) map[string]any { return map[string]any{"__type": "Date", "iso": iso} }

func isoOf(v any) string {
	s, _ := v.(map[string]any)["iso"].(string)
	return s
}

func str(v any) string { s, _ := v.(string); return s }

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

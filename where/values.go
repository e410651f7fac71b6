package where

import (
	"github.com/quarrydata/quarry/schema"
)

// atom validates and normalizes an operand for the field at path. ISO
// strings on createdAt/updatedAt become Dates, because Parse accepts both
// spellings for the timestamps and objects are compared as Dates.
func (p *parser) atom(path string, v any) (any, error) {
	if s, ok := v.(string); ok && (path == "createdAt" || path == "updatedAt") {
		if t, ok := schema.ParseTime(s); ok {
			return schema.Date(schema.FormatTime(t)), nil
		}
		return s, nil
	}
	out, ok := normalize(v)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "bad atom: %s", truncated(v))
	}
	return out, nil
}

// normalize copies a value into the canonical form the matcher compares:
// Dates in TimeLayout, expanded objects as Pointers, Go numbers as float64.
// It reports false for values no Parse object can hold.
func normalize(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return x, true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var ok bool
			if out[i], ok = normalize(e); !ok {
				return nil, false
			}
		}
		return out, true
	case map[string]any:
		if t, special := x["__type"]; special {
			return normalizeSpecial(t, x)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			var ok bool
			if out[k], ok = normalize(e); !ok {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

func normalizeSpecial(t any, m map[string]any) (any, bool) {
	name, _ := t.(string)
	switch name {
	case "Date":
		s, _ := m["iso"].(string)
		tm, ok := schema.ParseTime(s)
		if !ok {
			return nil, false
		}
		return schema.Date(schema.FormatTime(tm)), true
	case "Pointer", "Object":
		// An expanded object compares as the pointer it stands for.
		ref, ok := pointerRef(m)
		if !ok {
			return nil, false
		}
		return schema.Pointer(ref.ClassName, ref.ObjectID), true
	case "GeoPoint", "Polygon", "File", "Bytes":
		if schema.ValidateSpecial(name, m) != nil {
			return nil, false
		}
		// The stored form, so that a value with extra keys compares equal
		// to what a write of it stored.
		return schema.CanonicalSpecial(name, m), true
	}
	return nil, false
}

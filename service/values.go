package service

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// MaxValueDepth bounds how deeply values may nest inside an object. The
// transport has its own (larger) bound on whole request bodies.
const MaxValueDepth = 32

// prohibitedKeys can reach JavaScript prototype chains in clients that
// merge our JSON into objects; Parse refuses them on writes.
var prohibitedKeys = map[string]bool{"__proto__": true, "constructor": true}

// normalizeValue validates a client value and returns its stored form:
// Dates in TimeLayout, expanded pointers reduced to pointers.
func normalizeValue(v any, depth int) (any, error) {
	if depth > MaxValueDepth {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "value nested deeper than %d levels", MaxValueDepth)
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalizeValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		if t, ok := x["__type"]; ok {
			return normalizeSpecial(t, x)
		}
		if _, ok := x["__op"]; ok {
			return nil, schema.Errorf(schema.CodeInvalidNestedKey, "operators are only allowed on top-level keys")
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if strings.ContainsAny(k, "$.") {
				return nil, schema.Errorf(schema.CodeInvalidNestedKey, "Nested keys should not contain the '$' or '.' characters")
			}
			n, err := normalizeValue(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	}
	return v, nil
}

func normalizeSpecial(t any, m map[string]any) (any, error) {
	name, _ := t.(string)
	switch name {
	case "Object":
		// An expanded pointer (from include) saved back: keep the reference.
		c, ok1 := m["className"].(string)
		id, ok2 := m["objectId"].(string)
		if !ok1 || !ok2 || !schema.ValidClassName(c) || id == "" {
			return nil, schema.Errorf(schema.CodeInvalidPointer, "This is not a valid Pointer")
		}
		return schema.Pointer(c, id), nil
	case "Date":
		if err := schema.ValidateSpecial(name, m); err != nil {
			return nil, err
		}
		t, _ := schema.ParseTime(m["iso"].(string))
		return schema.Date(schema.FormatTime(t)), nil
	case "Pointer":
		if err := schema.ValidateSpecial(name, m); err != nil {
			return nil, err
		}
		return schema.Pointer(m["className"].(string), m["objectId"].(string)), nil
	}
	if err := schema.ValidateSpecial(name, m); err != nil {
		return nil, err
	}
	return schema.CanonicalSpecial(name, m), nil
}

// normalizeACL validates an ACL and keeps only granted permissions.
func normalizeACL(v any) (map[string]any, error) {
	bad := schema.Errorf(schema.CodeInvalidACL, "Invalid ACL.")
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad
	}
	out := make(map[string]any, len(m))
	for who, perms := range m {
		if who == "" || who == "*unresolved" || (strings.HasPrefix(who, "role:") && len(who) == len("role:")) {
			return nil, bad
		}
		p, ok := perms.(map[string]any)
		if !ok {
			return nil, bad
		}
		granted := map[string]any{}
		for op, val := range p {
			b, isBool := val.(bool)
			if (op != "read" && op != "write") || !isBool {
				return nil, bad
			}
			if b {
				granted[op] = true
			}
		}
		if len(granted) > 0 {
			out[who] = granted
		}
	}
	return out, nil
}

// checkType enforces type lock-in for one field value against a class
// (which may be nil for a new class). It returns the field to add when
// the class does not know the key yet.
func checkType(class *schema.Class, className, key string, f schema.Field) (add bool, err error) {
	if class != nil {
		if have, ok := class.Fields[key]; ok {
			if have.Type != f.Type || (have.TargetClass != "" && f.TargetClass != "" && have.TargetClass != f.TargetClass) {
				return false, schema.Errorf(schema.CodeIncorrectType, "schema mismatch for %s.%s; expected %s but got %s",
					className, key, describe(have), describe(f))
			}
			return false, nil
		}
		if f.Type == schema.TypeGeoPoint {
			for name, other := range class.Fields {
				if other.Type == schema.TypeGeoPoint && name != key {
					return false, schema.Errorf(schema.CodeIncorrectType,
						"there can only be one geopoint field in a class")
				}
			}
		}
	}
	return true, nil
}

func describe(f schema.Field) string {
	if f.TargetClass != "" {
		return string(f.Type) + "<" + f.TargetClass + ">"
	}
	return string(f.Type)
}

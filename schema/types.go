package schema

import (
	"encoding/base64"
	"maps"
	"math"
	"time"
)

// Object is a Parse object in its REST encoding, as decoded by encoding/json:
// numbers are float64, special values are maps with "__type". The reserved keys
// objectId, createdAt and updatedAt hold strings (timestamps in TimeLayout).
// Relation memberships are not stored inside objects.
type Object = map[string]any

// CopyObject is a shallow copy of m, with room for one more key; an empty
// map when m is nil, so the caller may write to it (a copy-on-write step
// along a dot path whose maps do not exist yet).
func CopyObject(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	maps.Copy(out, m)
	return out
}

// Type names a field type exactly as Parse's schema API spells it.
type Type string

// The field types of the Parse data model.
const (
	TypeString   Type = "String"
	TypeNumber   Type = "Number"
	TypeBoolean  Type = "Boolean"
	TypeDate     Type = "Date"
	TypeObject   Type = "Object"
	TypeArray    Type = "Array"
	TypePointer  Type = "Pointer"
	TypeRelation Type = "Relation"
	TypeFile     Type = "File"
	TypeGeoPoint Type = "GeoPoint"
	TypePolygon  Type = "Polygon"
	TypeBytes    Type = "Bytes"
	TypeACL      Type = "ACL"
)

// Field is a field's locked type; TargetClass is set for Pointer and Relation.
// Required and DefaultValue are the options the schemas API may declare: a
// required field must hold a value on every save, and a field with a
// default gets it when a create leaves the field out (or sets it to null).
type Field struct {
	Type         Type   `json:"type"`
	TargetClass  string `json:"targetClass,omitempty"`
	Required     bool   `json:"required,omitempty"`
	DefaultValue any    `json:"defaultValue,omitempty"`
}

// TimeLayout is the wire format of every timestamp: UTC with milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in the wire format.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime accepts the wire format and other RFC 3339 spellings clients send.
func ParseTime(s string) (time.Time, bool) {
	if t, err := time.Parse(TimeLayout, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// IsName reports whether s is an ASCII letter followed by letters, digits
// and underscores (and dots, when dots is set): the shape of class names,
// key names and where paths. It runs on every key of every request, where
// a regular expression cost several times more.
func IsName(s string, dots bool) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !('0' <= c && c <= '9') && c != '_' && !(dots && c == '.') {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// MaxKeyLength caps key names; the specification says longer names get no
// index, Quarry refuses them outright so nothing is silently unindexed.
const MaxKeyLength = 1024

// ValidClassName reports whether a developer may use name as a class. Custom
// classes must start with a letter; the built-in underscore classes pass.
func ValidClassName(name string) bool {
	return builtinClasses[name] || (len(name) <= 255 && IsName(name, false))
}

// ClassNameError is the 103 failure for a class name.
func ClassNameError(name string) *Error {
	return Errorf(CodeInvalidClassName, "Invalid class name: %s", name)
}

// ValidKeyName reports whether a client may write key at the top level.
func ValidKeyName(key string) bool {
	return len(key) <= MaxKeyLength && IsName(key, false)
}

// ClosedRing returns a validated Polygon's coordinates with the ring
// closed: the first point repeated at the end when the client left it
// open, as Parse stores polygons. Writes and query values both pass through
// it, so an open ring in an equality matches the stored closed one.
func ClosedRing(coords []any) []any {
	first, _ := coords[0].([]any)
	last, _ := coords[len(coords)-1].([]any)
	if len(first) == 2 && len(last) == 2 && first[0] == last[0] && first[1] == last[1] {
		return coords
	}
	out := make([]any, len(coords), len(coords)+1)
	copy(out, coords)
	return append(out, []any{first[0], first[1]})
}

// TypeOf infers the field type of a JSON value. ok is false for null, which
// never fixes a type. A malformed special value gives a 111 error.
func TypeOf(v any) (f Field, ok bool, err error) {
	switch x := v.(type) {
	case nil:
		return Field{}, false, nil
	case string:
		return Field{Type: TypeString}, true, nil
	case float64:
		return Field{Type: TypeNumber}, true, nil
	case bool:
		return Field{Type: TypeBoolean}, true, nil
	case []any:
		return Field{Type: TypeArray}, true, nil
	case map[string]any:
		t, has := x["__type"]
		if !has {
			return Field{Type: TypeObject}, true, nil
		}
		name, _ := t.(string)
		if err := ValidateSpecial(name, x); err != nil {
			return Field{}, false, err
		}
		f := Field{Type: Type(name)}
		if name == "Pointer" || name == "Relation" {
			f.TargetClass, _ = x["className"].(string)
		}
		return f, true, nil
	}
	return Field{}, false, Errorf(CodeIncorrectType, "unsupported value")
}

// CanonicalSpecial is the stored form of a validated File, GeoPoint,
// Polygon, Bytes or Relation value: only the keys that define it (a File
// keeps its name and url), a Polygon's ring closed. Writes store it and
// query values are compared in it, so the two cannot drift apart.
func CanonicalSpecial(typ string, m map[string]any) map[string]any {
	out := map[string]any{"__type": typ}
	keys := []string{"latitude", "longitude", "coordinates", "base64", "className"}
	if typ == "File" {
		keys = []string{"name", "url"}
	}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if typ == "File" && k == "url" {
				if _, isString := v.(string); !isString {
					continue
				}
			}
			out[k] = v
		}
	}
	if typ == "Polygon" {
		out["coordinates"] = ClosedRing(out["coordinates"].([]any))
	}
	return out
}

// ValidateSpecial checks the shape of a value carrying __type.
func ValidateSpecial(typ string, m map[string]any) error {
	bad := func() error { return Errorf(CodeIncorrectType, "This is not a valid %s", typ) }
	switch typ {
	case "Date":
		s, ok := m["iso"].(string)
		if !ok {
			return bad()
		}
		if _, ok := ParseTime(s); !ok {
			return bad()
		}
	case "Pointer":
		c, ok1 := m["className"].(string)
		id, ok2 := m["objectId"].(string)
		if !ok1 || !ok2 || !ValidClassName(c) || id == "" {
			return Errorf(CodeInvalidPointer, "This is not a valid Pointer")
		}
	case "Relation":
		c, ok := m["className"].(string)
		if !ok || !ValidClassName(c) {
			return bad()
		}
	case "File":
		if _, ok := m["name"].(string); !ok {
			return bad()
		}
	case "GeoPoint":
		lat, ok1 := m["latitude"].(float64)
		lng, ok2 := m["longitude"].(float64)
		if !ok1 || !ok2 {
			return bad()
		}
		if err := ValidateGeoPoint(lat, lng); err != nil {
			return err
		}
	case "Polygon":
		coords, ok := m["coordinates"].([]any)
		if !ok || len(coords) < 3 {
			return Errorf(CodeInvalidJSON, "Polygon must have at least 3 values")
		}
		for _, c := range coords {
			pair, ok := c.([]any)
			if !ok || len(pair) != 2 {
				return bad()
			}
			lat, ok1 := pair[0].(float64)
			lng, ok2 := pair[1].(float64)
			if !ok1 || !ok2 {
				return bad()
			}
			if err := ValidateGeoPoint(lat, lng); err != nil {
				return err
			}
		}
	case "Bytes":
		s, ok := m["base64"].(string)
		if !ok {
			return bad()
		}
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return bad()
		}
	case "Object":
		// An expanded pointer echoed back by a client is stored as a pointer
		// by the service before it gets here; on its own it is refused.
		return bad()
	default:
		return Errorf(CodeIncorrectType, "unknown __type: %q", typ)
	}
	return nil
}

// ValidateGeoPoint applies the specification's ranges: latitude strictly
// inside (-90, 90), longitude strictly inside (-180, 180).
func ValidateGeoPoint(lat, lng float64) error {
	if math.IsNaN(lat) || math.IsNaN(lng) || lat <= -90 || lat >= 90 || lng <= -180 || lng >= 180 {
		return Errorf(CodeInvalidJSON, "GeoPoint out of range: latitude must be in (-90, 90) and longitude in (-180, 180)")
	}
	return nil
}

// Pointer builds a pointer value.
func Pointer(className, objectID string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": className, "objectId": objectID}
}

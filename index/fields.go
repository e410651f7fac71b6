package index

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Fields read from an object's JSON: index keys are extracted from the
// bytes a record keeps, not from a decoded map, so that no map need live
// as long as the record. A value is decoded alone, as Decode would decode
// it within the whole object (its strings point into the bytes).
//
// One difference is known and accepted: JSON with a key twice (never made
// by encoding/json, only possible in bytes another writer stored) is read
// here at its first occurrence, while Unmarshal keeps the last.

// valueAt returns the value at a dot path in the object js, as
// schema.Get finds it in the decoded object but for timestamps (a
// top-level createdAt or updatedAt string stays a string): false when a
// segment is missing or the path crosses a non-object.
func valueAt(js, path string) (any, bool) {
	for {
		head, rest, nested := strings.Cut(path, ".")
		r, ok := member(js, head)
		if !ok {
			return nil, false
		}
		if !nested {
			return resultValue(r), true
		}
		if !r.IsObject() {
			return nil, false
		}
		js, path = r.Raw, rest
	}
}

// member returns the value of key in the object js.
func member(js, key string) (gjson.Result, bool) {
	if plainKey(key) {
		r := gjson.Get(js, key)
		return r, r.Exists()
	}
	// A key gjson's path syntax would read as an operator: compare each.
	var found gjson.Result
	ok := false
	gjson.Parse(js).ForEach(func(k, v gjson.Result) bool {
		if k.Str == key {
			found, ok = v, true
			return false
		}
		return true
	})
	return found, ok
}

// plainKey reports whether gjson reads key as itself: letters, digits and
// underscores (Parse's field names; anything else is looked up by hand).
func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// resultValue is the value r's JSON decodes to, as Decode makes it.
func resultValue(r gjson.Result) any {
	if strings.IndexByte(r.Raw, '\\') < 0 && utf8.ValidString(r.Raw) {
		if v, ok := sharedValue(r); ok {
			return v
		}
	}
	var v any
	_ = json.Unmarshal([]byte(r.Raw), &v) // the bytes were decoded when stored
	return v
}

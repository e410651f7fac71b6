package index

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/quarrydata/quarry/schema"
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
// segment is missing or the path crosses a value that is neither an
// object nor an array (where a segment of digits is a position).
func valueAt(js, path string) (any, bool) {
	inArray := false
	for {
		head, rest, nested := strings.Cut(path, ".")
		var r gjson.Result
		ok := false
		if inArray {
			if i, isIndex := schema.ArrayIndex(head); isIndex {
				r = gjson.Get(js, strconv.Itoa(i))
				ok = r.Exists()
			}
		} else {
			r, ok = member(js, head)
		}
		if !ok {
			return nil, false
		}
		if !nested {
			return resultValue(r), true
		}
		if !r.IsObject() && !r.IsArray() {
			return nil, false
		}
		js, path, inArray = r.Raw, rest, r.IsArray()
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

// eachMember calls fn with the key and the raw value of each top-level
// member of the JSON object js, in order, until fn returns false. It
// skips values without parsing them, so that reading one or two members
// of a stored object (Ref.Project, run on every candidate of a scan) costs
// a pass over its bytes and no more; gjson.Get parses the path and squashes
// every nested value it passes, several times the cost. It returns false,
// having called fn or not, when js is not an object it reads: a key with
// an escape (compared as written it would miss), or malformed JSON.
func eachMember(js string, fn func(key, raw string) bool) bool {
	i := skipSpace(js, 0)
	if i >= len(js) || js[i] != '{' {
		return false
	}
	i = skipSpace(js, i+1)
	if i < len(js) && js[i] == '}' {
		return true
	}
	for i < len(js) {
		if js[i] != '"' {
			return false
		}
		n := strings.IndexByte(js[i+1:], '"')
		if n < 0 {
			return false
		}
		key := js[i+1 : i+1+n]
		if strings.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(js, i+n+2)
		if i >= len(js) || js[i] != ':' {
			return false
		}
		i = skipSpace(js, i+1)
		vend, ok := skipValue(js, i)
		if !ok {
			return false
		}
		if !fn(key, js[i:vend]) {
			return true
		}
		i = skipSpace(js, vend)
		if i >= len(js) {
			return false
		}
		switch js[i] {
		case ',':
			i = skipSpace(js, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// skipValue returns the end of the JSON value starting at i.
func skipValue(js string, i int) (int, bool) {
	if i >= len(js) {
		return i, false
	}
	switch js[i] {
	case '"':
		return skipString(js, i)
	case '{', '[':
		depth := 0
		for i < len(js) {
			switch js[i] {
			case '"':
				end, ok := skipString(js, i)
				if !ok {
					return i, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	start := i
	for i < len(js) {
		switch js[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i, i > start
		}
		i++
	}
	return i, i > start
}

// skipString returns the end of the JSON string starting at i (its
// opening quote), past the closing quote: the first quote after it not
// escaped by an odd run of backslashes.
func skipString(js string, i int) (int, bool) {
	for i++; ; {
		n := strings.IndexByte(js[i:], '"')
		if n < 0 {
			return len(js), false
		}
		q := i + n
		esc := 0
		for k := q - 1; k >= i && js[k] == '\\'; k-- {
			esc++
		}
		if esc%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
}

// skipSpace returns the first index from i that is not JSON whitespace.
func skipSpace(js string, i int) int {
	for i < len(js) && js[i] <= ' ' && (js[i] == ' ' || js[i] == '\t' || js[i] == '\n' || js[i] == '\r') {
		i++
	}
	return i
}

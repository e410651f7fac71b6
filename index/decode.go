package index

import (
	"bytes"
	"encoding/json"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/quarrydata/quarry/schema"
)

// Decode decodes an object record's JSON as the store keeps it into
// the map encoding/json's Unmarshal would make, but with every key and
// string value pointing into stored instead of copied out of it. A
// collection keeps stored anyway (it is the object's reply encoding and
// the only form kept for its lifetime, see Collection.PutStored), so the
// strings cost no memory of their own, and a start or a read that decodes
// allocates and collects far less. stored must never be modified
// afterwards.
//
// Only JSON whose decoding is plain copying takes this path: no escapes,
// valid UTF-8 (Unmarshal would replace invalid bytes), numbers within
// float64's range (Unmarshal refuses the others). Everything else, and
// anything that is not valid JSON, goes through encoding/json.
func Decode(stored []byte) (schema.Object, error) {
	if obj, ok := decodeShared(stored); ok {
		return obj, nil
	}
	var obj schema.Object
	err := json.Unmarshal(stored, &obj)
	return obj, err
}

func decodeShared(stored []byte) (schema.Object, bool) {
	if bytes.IndexByte(stored, '\\') >= 0 || !utf8.Valid(stored) || !gjson.ValidBytes(stored) {
		return nil, false
	}
	r := gjson.Parse(unsafe.String(unsafe.SliceData(stored), len(stored)))
	if !r.IsObject() {
		return nil, false
	}
	v, ok := sharedValue(r)
	if !ok {
		return nil, false
	}
	return v.(map[string]any), true
}

// sharedValue is the value r stands for, its strings r's own (substrings
// of the parsed text, as gjson gives strings without escapes).
func sharedValue(r gjson.Result) (any, bool) {
	switch r.Type {
	case gjson.Null:
		return nil, true
	case gjson.False:
		return false, true
	case gjson.True:
		return true, true
	case gjson.Number:
		return r.Num, !math.IsInf(r.Num, 0) // out of range: Unmarshal's error
	case gjson.String:
		return r.Str, true
	}
	ok := true
	if r.IsArray() {
		arr := []any{}
		r.ForEach(func(_, e gjson.Result) bool {
			var v any
			v, ok = sharedValue(e)
			arr = append(arr, v)
			return ok
		})
		return arr, ok
	}
	m := map[string]any{}
	r.ForEach(func(k, e gjson.Result) bool {
		var v any
		v, ok = sharedValue(e)
		m[k.Str] = v
		return ok
	})
	return m, ok
}

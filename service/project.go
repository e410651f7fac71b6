package service

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"unsafe"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

// A reply copy made from a stored object (a keys or excludeKeys
// projection, protected fields or internal keys removed, included objects
// put in place of pointers, a File's url rewritten, a relation field
// added) is encoded from the stored version's bytes: each member whose
// value the copy still holds as stored (the same map, slice or scalar:
// stored objects are never changed in place) is copied as it is, an
// included object is encoded the same way from its own stored bytes, and
// only what differs is encoded anew. encoding/json writes a map's members
// sorted by key and without spaces, so the result is byte for byte
// Marshal of the copy.

// errNotObject is a stored encoding that is not a JSON object: never
// expected, as the encodings are encoding/json's of maps.
var errNotObject = errors.New("service: a stored encoding is not a JSON object")

// derivedBy reports whether this find's results may be encoded from their
// stored objects' bytes (see noteSource): not when an afterFind trigger
// may replace them, so that a result and its noted source could be
// unrelated objects (still correct, but no cheaper).
func (s *Service) derivedBy(class string) bool {
	h := s.opts.Hooks
	return h == nil || !h.Has(AfterFind, class)
}

// noteSource records src, a stored object, as result i's source; the
// slice is allocated when first needed.
func (r *FindResult) noteSource(i int, src schema.Object) {
	if r.srcs == nil {
		r.srcs = make([]schema.Object, len(r.Results))
	}
	r.srcs[i] = src
}

// noteExpansion records that exp, an included object, is a copy of src,
// the stored object of coll, of version ref (zero: found by coll's
// lookup, or none for a class kept out of memory).
func (r *FindResult) noteExpansion(exp, src schema.Object, ref index.Ref, coll *index.Collection) {
	if r.expanded == nil {
		r.expanded = map[unsafe.Pointer]expansion{}
	}
	r.expanded[reflect.ValueOf(exp).UnsafePointer()] = expansion{src: src, ref: ref, coll: coll}
}

// noteSplice records that stub stands for the included object of class
// whose reply is ref's stored bytes with __type and className added
// (expandIncludes' splice).
func (r *FindResult) noteSplice(stub schema.Object, ref index.Ref, class string) {
	if r.expanded == nil {
		r.expanded = map[unsafe.Pointer]expansion{}
	}
	r.expanded[reflect.ValueOf(stub).UnsafePointer()] = expansion{ref: ref, class: class}
}

// expansion is an included object's stored source: src (with ref when
// known, and coll), or, for a spliced one, ref and its class alone.
type expansion struct {
	src   schema.Object
	ref   index.Ref
	coll  *index.Collection
	class string // set when the reply is ref's bytes spliced (noteSplice)
}

// sourceEncoding is the JSON of src, a stored object: the bytes of its
// version ref when known (no lookup), else those coll keeps with it, else
// a new encoding.
func sourceEncoding(src schema.Object, ref index.Ref, coll *index.Collection) ([]byte, error) {
	if ref.Valid() {
		return ref.Encoding()
	}
	return encodeObject(coll, src)
}

func sameObject(a, b schema.Object) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sameValue reports whether a copy's value is the stored one itself.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && sameObject(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}

// appendDerived appends reply's JSON to dst, from enc, the stored bytes of
// src, wherever reply holds src's values (see above).
func (r *FindResult) appendDerived(dst, enc []byte, src, reply schema.Object) ([]byte, error) {
	if len(enc) < 2 || enc[0] != '{' {
		return dst, errNotObject
	}
	// Keys the copy adds, emitted in their sorted places among the stored.
	var added []string
	if len(reply) > 0 {
		for k := range reply {
			if _, ok := src[k]; !ok {
				added = append(added, k)
			}
		}
		slices.Sort(added)
	}
	dst = append(dst, '{')
	n := 0
	var err error
	for i := 1; i < len(enc) && enc[i] != '}'; {
		keyEnd, escaped := stringEnd(enc, i)
		if keyEnd < 0 || keyEnd >= len(enc) || enc[keyEnd] != ':' {
			return dst, errNotObject
		}
		end := valueEnd(enc, keyEnd+1)
		if end < 0 {
			return dst, errNotObject
		}
		key := enc[i+1 : keyEnd-1] // looked up as string(key): no copy
		if escaped {
			var k string
			if err := json.Unmarshal(enc[i:keyEnd], &k); err != nil {
				return dst, errNotObject
			}
			key = []byte(k)
		}
		for len(added) > 0 && added[0] < string(key) {
			if dst, err = r.appendMember(dst, &n, added[0], reply[added[0]]); err != nil {
				return dst, err
			}
			added = added[1:]
		}
		if v, kept := reply[string(key)]; kept {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			if sameValue(v, src[string(key)]) {
				dst = append(dst, enc[i:end]...)
			} else if dst, err = r.appendValue(append(dst, enc[i:keyEnd+1]...), v); err != nil {
				return dst, err
			}
		}
		i = end
		if i < len(enc) && enc[i] == ',' {
			i++
		}
	}
	for _, k := range added {
		if dst, err = r.appendMember(dst, &n, k, reply[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendMember appends "key":value, after a comma unless it is the first
// (*n counts the members written).
func (r *FindResult) appendMember(dst []byte, n *int, key string, v any) ([]byte, error) {
	if *n > 0 {
		dst = append(dst, ',')
	}
	*n++
	k, err := json.Marshal(key)
	if err != nil {
		return dst, err
	}
	return r.appendValue(append(append(dst, k...), ':'), v)
}

// appendValue appends v: an included object from its stored bytes, any
// other value through encoding/json.
func (r *FindResult) appendValue(dst []byte, v any) ([]byte, error) {
	if m, ok := v.(map[string]any); ok && r.expanded != nil {
		if e, ok := r.expanded[reflect.ValueOf(m).UnsafePointer()]; ok {
			if e.class != "" {
				return appendSpliced(dst, e.ref, e.class)
			}
			enc, err := sourceEncoding(e.src, e.ref, e.coll)
			if err != nil {
				return dst, err
			}
			return r.appendDerived(dst, enc, e.src, m)
		}
	}
	if arr, ok := v.([]any); ok && r.expanded != nil {
		// An array of included objects (an include through an array of
		// pointers).
		dst = append(dst, '[')
		for i, e := range arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = r.appendValue(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// stringEnd is the index just past the JSON string starting at b[i] (a
// quote), and whether it holds an escape; -1 when it does not end.
func stringEnd(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, false
}

// valueEnd is the index just past the JSON value starting at b[i]; -1
// when it does not end.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	for j := i; j < len(b); j++ {
		if b[j] == ',' || b[j] == '}' || b[j] == ']' {
			return j
		}
	}
	return len(b)
}

// appendSpliced appends the reply of an included object shown as stored:
// its version's bytes with "__type":"Object" and "className":class put in
// their sorted places (encoding/json sorts a map's keys bytewise), a
// stored member of either name giving way to them, as the copy's keys
// replace it. Bytes whose keys it cannot compare as written (an escape)
// are encoded from the decoded object instead.
func appendSpliced(dst []byte, ref index.Ref, class string) ([]byte, error) {
	enc, err := ref.Encoding()
	if err != nil {
		return dst, err
	}
	if len(enc) < 2 || enc[0] != '{' || !plainName(class) {
		return dst, errNotObject
	}
	start := len(dst)
	adds := [2]string{"__type", "className"} // sorted
	next := 0
	dst = append(dst, '{')
	n := 0
	emit := func(which int) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		if which == 0 {
			dst = append(dst, `"__type":"Object"`...)
		} else {
			dst = append(append(append(dst, `"className":"`...), class...), '"')
		}
	}
	for i := 1; i < len(enc) && enc[i] != '}'; {
		keyEnd, escaped := stringEnd(enc, i)
		if keyEnd < 0 || keyEnd >= len(enc) || enc[keyEnd] != ':' {
			return dst[:start], errNotObject
		}
		if escaped {
			return appendSplicedDecoded(dst[:start], ref, class)
		}
		end := valueEnd(enc, keyEnd+1)
		if end < 0 {
			return dst[:start], errNotObject
		}
		key := unsafe.String(unsafe.SliceData(enc[i+1:]), keyEnd-1-(i+1)) // compared only
		for next < len(adds) && adds[next] <= key {
			emit(next)
			next++
		}
		if key != "__type" && key != "className" {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, enc[i:end]...)
		}
		i = end
		if i < len(enc) && enc[i] == ',' {
			i++
		}
	}
	for ; next < len(adds); next++ {
		emit(next)
	}
	return append(dst, '}'), nil
}

// appendSplicedDecoded is appendSpliced through a decoded copy.
func appendSplicedDecoded(dst []byte, ref index.Ref, class string) ([]byte, error) {
	obj := ref.Object()
	out := make(schema.Object, len(obj)+2)
	for k, v := range obj {
		out[k] = v
	}
	out["__type"], out["className"] = "Object", class
	b, err := json.Marshal(out)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// plainName reports whether a class name needs no escape in JSON.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

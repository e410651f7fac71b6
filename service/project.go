package service

import (
	"encoding/json"
	"errors"
	"reflect"

	"github.com/quarrydata/quarry/schema"
)

// A reply copy made from a stored object by removing top-level keys only
// (a keys or excludeKeys projection, protected fields, internal keys,
// hidden authData) is encoded from the stored version's bytes: their
// members the copy keeps, copied as they are. encoding/json writes a
// map's members sorted by key and without spaces, so the kept members in
// the stored order are byte for byte Marshal of the copy.

// errNotObject is a stored encoding that is not a JSON object: never
// expected, as the encodings are encoding/json's of maps.
var errNotObject = errors.New("service: a stored encoding is not a JSON object")

// derivedBy reports whether the copies this find makes of its class's
// objects differ from them only by removed top-level keys, so that
// AppendResult may filter the stored bytes: no include, afterFind trigger
// (they change or replace results), dotted key (it projects inside a
// value) or relation field (present adds it).
func (s *Service) derivedBy(class string, opts ReadOptions, includes bool) bool {
	if includes || dotted(opts.Keys) || len(s.relationFields(class)) > 0 {
		return false
	}
	h := s.opts.Hooks
	return h == nil || !h.Has(AfterFind, class)
}

// keptFrom reports whether result i is a copy made from the stored object
// src by removing keys (see derivedBy): not src itself, and src holds no
// File, whose url present rewrites.
func (r *FindResult) keptFrom(s *Service, class string, i int, src schema.Object) bool {
	return !sameObject(r.Results[i], src) && !s.holdsFiles(class, src)
}

// noteSource records src as result i's source when keptFrom holds; the
// slice is allocated when first needed.
func (r *FindResult) noteSource(s *Service, class string, i int, src schema.Object) {
	if !r.keptFrom(s, class, i, src) {
		return
	}
	if r.srcs == nil {
		r.srcs = make([]schema.Object, len(r.Results))
	}
	r.srcs[i] = src
}

func sameObject(a, b schema.Object) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// appendKept appends the JSON object enc with only the members whose key
// kept holds; ok is false (and dst unchanged) when kept holds a key enc
// lacks, so the caller encodes kept itself.
func appendKept(dst, enc []byte, kept schema.Object) (out []byte, ok bool, err error) {
	if len(enc) < 2 || enc[0] != '{' {
		return dst, false, errNotObject
	}
	start := len(dst)
	dst = append(dst, '{')
	copied := 0
	for i := 1; i < len(enc) && enc[i] != '}'; {
		keyEnd, escaped := stringEnd(enc, i)
		if keyEnd < 0 || keyEnd >= len(enc) || enc[keyEnd] != ':' {
			return dst[:start], false, errNotObject
		}
		end := valueEnd(enc, keyEnd+1)
		if end < 0 {
			return dst[:start], false, errNotObject
		}
		var keep bool
		if !escaped {
			_, keep = kept[string(enc[i+1:keyEnd-1])] // no copy for a lookup
		} else {
			var k string
			if err := json.Unmarshal(enc[i:keyEnd], &k); err != nil {
				return dst[:start], false, errNotObject
			}
			_, keep = kept[k]
		}
		if keep {
			if copied > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, enc[i:end]...)
			copied++
		}
		i = end
		if i < len(enc) && enc[i] == ',' {
			i++
		}
	}
	if copied != len(kept) {
		return dst[:start], false, nil
	}
	return append(dst, '}'), true, nil
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

package index

import (
	"cmp"
	"math"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// IndexesMissing documents how objects without a value at an index's path
// are indexed: every index holds every object of its collection. An object
// whose value at the path is missing (absent, or unreachable because a dot
// path crosses a non-object) or null has exactly one entry under the key nil
// (schema.RankNull), so
//   - ScanOrdered visits every object, in schema.Compare order with missing
//     and null first (last when descending) — the order Parse sorts in;
//   - the range Lo=Hi=nil (inclusive) yields exactly the objects whose value
//     is missing or null, plus, on a multikey index, those whose array holds
//     a null element. That is Parse's `equalTo(key, null)`; `$exists: false`
//     is the subset without an explicit null, so it needs a residual filter.
const IndexesMissing = true

// Range bounds the keys a scan or estimate visits, in schema.Compare order
// (across ranks: a range from 5 upward without Hi also holds strings, dates,
// ...; see RankRange to stay within one rank). Without HasLo the range starts
// at the first key, without HasHi it runs to the last. The zero Range is
// the whole index.
type Range struct {
	Lo, Hi                   any
	HasLo, HasHi             bool
	LoInclusive, HiInclusive bool
}

// Equal returns the range holding exactly the keys equal to v.
func Equal(v any) Range {
	return Range{Lo: v, Hi: v, HasLo: true, HasHi: true, LoInclusive: true, HiInclusive: true}
}

// RankRange returns the range holding exactly the values of one rank: its
// smallest value inclusive up to the smallest value of the next rank
// exclusive (unbounded above for dates, the last rank).
func RankRange(rank schema.Rank) Range {
	r := Range{Lo: rankMin(rank), HasLo: true, LoInclusive: true}
	if rank < schema.RankDate {
		r.Hi, r.HasHi = rankMin(rank+1), true
	}
	return r
}

// rankMin is the smallest value of a rank under schema.Compare.
func rankMin(rank schema.Rank) any {
	switch rank {
	case schema.RankNumber:
		return math.NaN() // Compare puts NaN below every other number.
	case schema.RankString:
		return ""
	case schema.RankObject:
		return map[string]any{}
	case schema.RankArray:
		return []any{}
	case schema.RankBytes:
		return map[string]any{"__type": "Bytes", "base64": ""}
	case schema.RankBoolean:
		return false
	case schema.RankDate:
		return schema.Date("")
	}
	return nil
}

// Contains reports whether key lies within the range.
func (r Range) Contains(key any) bool {
	return !r.below(key) && !r.above(key)
}

// below reports whether key sorts before the range's lower bound.
func (r Range) below(key any) bool {
	if !r.HasLo {
		return false
	}
	c := compareKeys(key, r.Lo)
	return c < 0 || c == 0 && !r.LoInclusive
}

// above reports whether key sorts after the range's upper bound.
func (r Range) above(key any) bool {
	if !r.HasHi {
		return false
	}
	c := compareKeys(key, r.Hi)
	return c > 0 || c == 0 && !r.HiInclusive
}

// Empty reports whether no key can lie within the range (Lo after Hi, or
// Lo equal to Hi with either end exclusive).
func (r Range) Empty() bool {
	if !r.HasLo || !r.HasHi {
		return false
	}
	c := compareKeys(r.Lo, r.Hi)
	return c > 0 || c == 0 && !(r.LoInclusive && r.HiInclusive)
}

// entry is one index item: a key and the object it came from. Entries order
// by compareKeys(key), then by objectId.
type entry struct {
	key any
	rec *record
}

// Pivot records: an entry with recFirst sorts before every entry with an
// equal key, one with recLast after them. They never enter a tree.
var recFirst, recLast = &record{}, &record{}

// compareEntries orders entries by key, then by record (the pivots
// around a key's entries, then objectId); slices.SortFunc takes it (a
// typed sort: sort.Slice's reflection swaps cost a third of a build).
func compareEntries(a, b entry) int {
	if c := compareKeys(a.key, b.key); c != 0 {
		return c
	}
	return compareRecords(a.rec, b.rec)
}

func lessEntry(a, b entry) bool { return compareEntries(a, b) < 0 }

// compareRecords orders the records of one key: recFirst before all,
// recLast after all, the rest by objectId.
func compareRecords(a, b *record) int {
	switch {
	case a == b:
		return 0
	case a == recFirst || b == recLast:
		return -1
	case a == recLast || b == recFirst:
		return 1
	}
	return strings.Compare(a.id, b.id)
}

// isoDate is the compact key of a Date (a createdAt/updatedAt timestamp or
// a Date value): the iso string without a map per entry. ptrKey is the
// compact key of a Pointer: "className\x00objectId", which orders like
// schema.Compare orders pointers (class, then id; \x00 sorts first).
// compareKeys orders both exactly as schema.Compare orders the values they
// stand for (tested).
type (
	isoDate string
	ptrKey  string
)

// compactKey turns a Date or Pointer value into its compact key; other
// values are their own key. Every Date and Pointer map is compacted, also
// one with other members (an included object's fields, say), as
// schema.Compare reads only the iso string of a Date and the class and
// objectId of a Pointer: keys that compare equal must be equal as map
// keys, or a key's stats (index.keys) would miss some of its entries.
func compactKey(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	switch m["__type"] {
	case "Date":
		iso, _ := m["iso"].(string)
		return isoDate(iso)
	case "Pointer":
		c, _ := m["className"].(string)
		id, _ := m["objectId"].(string)
		return ptrKey(c + "\x00" + id)
	}
	return v
}

// expandKey is the value a compact key stands for.
func expandKey(k any) any {
	switch x := k.(type) {
	case isoDate:
		return schema.Date(string(x))
	case ptrKey:
		c, id, _ := strings.Cut(string(x), "\x00")
		return schema.Pointer(c, id)
	}
	return k
}

// compareKeys is schema.Compare over index keys. Keys of one kind (two
// strings, numbers, dates or pointers: the common case) compare directly;
// mixed kinds fall back to schema.Compare of the values they stand for.
func compareKeys(a, b any) int {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case float64:
		if y, ok := b.(float64); ok {
			return cmp.Compare(x, y) // NaN first, as schema.Compare
		}
	case isoDate:
		if y, ok := b.(isoDate); ok {
			return strings.Compare(string(x), string(y))
		}
	case ptrKey:
		if y, ok := b.(ptrKey); ok {
			return strings.Compare(string(x), string(y))
		}
	}
	return schema.Compare(expandKey(a), expandKey(b))
}

// compact returns the range with compact bounds, so scans compare keys of
// one kind on their fast path.
func (r Range) compact() Range {
	r.Lo, r.Hi = compactKey(r.Lo), compactKey(r.Hi)
	return r
}

// appendKeys appends the index keys of rec at path: the value schema.Get
// reads in the object (nil when missing), or, for a non-empty array, each
// of its elements; an empty array is its own key. isArray reports an
// array value, which makes the index multikey.
func appendKeys(dst []any, rec *record, path string) (keys []any, isArray bool) {
	v, _ := rec.value(path)
	if path == "createdAt" || path == "updatedAt" {
		if s, ok := v.(string); ok {
			return append(dst, isoDate(s)), false
		}
	}
	arr, isArray := v.([]any)
	if !isArray || len(arr) == 0 {
		return append(dst, compactKey(v)), isArray
	}
	for _, e := range arr {
		dst = append(dst, compactKey(e))
	}
	return dst, true
}

package index

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"
)

// Index builds: every entry of an index gathered, sorted and bulk loaded
// into its tree at once (at start-up, and when an index is declared).
// Sorting is most of a start's CPU, so the common case, where every key
// is missing or of one kind (all numbers, or all strings, dates or
// pointers), sorts plain values instead of interfaces, and the records
// come in objectId order so that ties need no id comparison.

// byID returns the collection's records in objectId order. The caller
// holds c.mu.
func (c *Collection) byID() []*record {
	if !c.loadedMixed && len(c.loaded) == len(c.objects) &&
		slices.IsSortedFunc(c.loaded, compareIDs) && uniqueIDs(c.loaded) {
		// Put in store order, which is objectId order, and none was
		// replaced or removed since.
		return c.loaded
	}
	recs := make([]*record, 0, len(c.objects))
	for _, rec := range c.objects {
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, compareIDs)
	return recs
}

func compareIDs(a, b *record) int { return strings.Compare(a.id, b.id) }

// uniqueIDs reports whether sorted records have no id twice.
func uniqueIDs(recs []*record) bool {
	for i := 1; i < len(recs); i++ {
		if recs[i-1].id == recs[i].id {
			return false
		}
	}
	return true
}

// build fills an empty index from recs, which are in objectId order, in
// one sorted bulk load.
func (ix *index) build(recs []*record) {
	entries := make([]entry, 0, len(recs))
	var buf []any
	for _, rec := range recs {
		var isArr bool
		buf, isArr = appendKeys(buf[:0], rec.obj, ix.path)
		for _, k := range buf {
			entries = append(entries, entry{k, rec})
		}
		if isArr {
			ix.arrays++
		}
	}
	// entries are in objectId order, so a stable sort by key alone is the
	// order of compareEntries.
	entries = sortEntries(entries)
	var run []entry // the loaded entries of the current key
	for i, e := range entries {
		if i > 0 && e.rec == entries[i-1].rec && compareKeys(e.key, entries[i-1].key) == 0 {
			continue // a repeated array element
		}
		ix.tree.Load(e)
		if ix.keys == nil {
			continue // no per-key stats to gather
		}
		if len(run) > 0 && compareKeys(run[0].key, e.key) != 0 {
			ix.track(run)
			run = run[:0]
		}
		run = append(run, e)
	}
	ix.track(run)
}

// keyKind classifies index keys for the typed sorts.
type keyKind byte

const (
	kindNone keyKind = iota // no key seen yet
	kindNumber
	kindString
	kindDate
	kindPointer
	kindMixed // anything else, or two kinds: the generic sort
)

func kindOf(k any) keyKind {
	switch k.(type) {
	case float64:
		return kindNumber
	case string:
		return kindString
	case isoDate:
		return kindDate
	case ptrKey:
		return kindPointer
	}
	return kindMixed
}

// sortEntries sorts entries, given in objectId order, into index order
// and returns them (the same slice or a new one). Missing keys (nil) sort
// before every other kind, so when the others share one kind the nils go
// first, as they are, and the rest is sorted by a typed sort.
func sortEntries(entries []entry) []entry {
	kind := kindNone
	nils := 0
	for _, e := range entries {
		if e.key == nil {
			nils++
			continue
		}
		if k := kindOf(e.key); kind == kindNone {
			kind = k
		} else if k != kind {
			kind = kindMixed
			break
		}
	}
	switch {
	case slices.IsSortedFunc(entries, compareEntries):
		return entries // objectId, and timestamps made in id order
	case kind == kindMixed:
		slices.SortFunc(entries, compareEntries)
		return entries
	}
	out := make([]entry, 0, len(entries))
	rest := make([]entry, 0, len(entries)-nils)
	for _, e := range entries {
		if e.key == nil {
			out = append(out, e)
		} else {
			rest = append(rest, e)
		}
	}
	if kind == kindNumber {
		return append(out, sortNumbers(rest)...)
	}
	return append(out, sortStrings(rest)...)
}

// numEntry is a number key with its entry's position: sorted by key, then
// position, which is objectId order.
type numEntry struct {
	key float64
	pos uint32
}

func sortNumbers(entries []entry) []entry {
	keys := make([]numEntry, len(entries))
	for i, e := range entries {
		keys[i] = numEntry{e.key.(float64), uint32(i)}
	}
	slices.SortFunc(keys, func(a, b numEntry) int {
		if c := cmp.Compare(a.key, b.key); c != 0 { // NaN first, as compareKeys
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	out := make([]entry, len(entries))
	for i, k := range keys {
		out[i] = entries[k.pos]
	}
	return out
}

// strEntry is a string, date or pointer key with its entry's position.
// head holds the key's first eight bytes after the prefix every key
// shares, and rest the length after it, so that most comparisons, and
// all between keys no longer than that, read neither string.
type strEntry struct {
	head uint64
	key  string
	rest uint32
	pos  uint32
}

func sortStrings(entries []entry) []entry {
	keys := make([]strEntry, len(entries))
	for i, e := range entries {
		keys[i] = strEntry{key: keyString(e.key), pos: uint32(i)}
	}
	shared := sharedPrefix(keys)
	for i := range keys {
		rest := keys[i].key[shared:]
		keys[i].head, keys[i].rest = head(rest), uint32(min(len(rest), math.MaxUint32))
	}
	slices.SortFunc(keys, func(a, b strEntry) int {
		if c := cmp.Compare(a.head, b.head); c != 0 {
			return c
		}
		if a.rest <= 8 && b.rest <= 8 {
			// Both lie wholly in their heads: the shorter one is a
			// prefix of the other (zero padding made the heads equal).
			if c := cmp.Compare(a.rest, b.rest); c != 0 {
				return c
			}
		} else if c := strings.Compare(a.key[shared:], b.key[shared:]); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	out := make([]entry, len(entries))
	for i, k := range keys {
		out[i] = entries[k.pos]
	}
	return out
}

// keyString is the string a string, date or pointer key orders by
// (compareKeys compares each kind by it).
func keyString(k any) string {
	switch x := k.(type) {
	case isoDate:
		return string(x)
	case ptrKey:
		return string(x)
	}
	return k.(string)
}

// sharedPrefix is the length of the prefix every key starts with.
func sharedPrefix(keys []strEntry) int {
	if len(keys) == 0 {
		return 0
	}
	first := keys[0].key
	n := len(first)
	for _, k := range keys[1:] {
		if n > len(k.key) {
			n = len(k.key)
		}
		for i := 0; i < n; i++ {
			if k.key[i] != first[i] {
				n = i
				break
			}
		}
		if n == 0 {
			break
		}
	}
	return n
}

// head is s's first eight bytes as a big-endian number (zero-padded), so
// that numbers order as the bytes do; equal heads leave the decision to
// the whole strings.
func head(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

package index

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/tidwall/btree"
)

// Index builds: every entry of an index gathered, sorted and bulk loaded
// into its tree at once (at start-up, and when an index is declared).
// Sorting is most of a start's CPU, so the common case, where every key
// is missing or of one kind (all numbers, or all strings, dates or
// pointers), sorts plain values instead of interfaces, and the records
// come in objectId order so that ties need no id comparison.

// records returns the collection's records and whether they are in
// objectId order. After a load they are: the store loads in objectId
// order and the decoding workers Put it batch by batch, so the loaded
// records are sorted runs, cheap to sort, and then also lie in memory in
// the order the builds read them. Otherwise they come in map order, and
// the sorts break ties by id. The caller holds c.mu.
func (c *Collection) records() (recs []*record, byID bool) {
	if !c.loadedMixed && len(c.loaded) == len(c.objects) {
		// None was replaced or removed since its Put.
		slices.SortFunc(c.loaded, compareIDs)
		if uniqueIDs(c.loaded) {
			return c.loaded, true
		}
	}
	recs = make([]*record, 0, len(c.objects))
	for _, rec := range c.objects {
		recs = append(recs, rec)
	}
	return recs, false
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

// build fills an empty index from recs in one sorted bulk load; byID
// says whether recs are in objectId order.
func (ix *index) build(recs []*record, byID bool) {
	entries := make([]entry, 0, len(recs))
	var buf []any
	for _, rec := range recs {
		var isArr bool
		buf, isArr = appendKeys(buf[:0], rec, ix.path)
		for _, k := range buf {
			entries = append(entries, entry{k, rec})
		}
		if isArr {
			ix.arrays++
		}
	}
	entries = sortEntries(entries, byID)
	var run []entry // the loaded entries of the current key
	for i, e := range entries {
		if i > 0 && compareKeys(e.key, entries[i-1].key) == 0 {
			if e.rec == entries[i-1].rec {
				continue // a repeated array element
			}
			// Equal keys share the first one's interface box (16 bytes
			// an entry for a string or a date, 8 for a number). The
			// box may hold a string within another object's JSON: a
			// key's entries keep one such JSON alive, as its keyStats
			// entry does already.
			e.key = entries[i-1].key
			entries[i].key = e.key
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
	ix.tree = compacted(ix.tree)
}

// compacted returns a copy of a bulk-loaded tree whose nodes hold no
// spare room. tidwall/btree's Load appends to the last leaf and, when it
// is full, splits it in two halves that share its array: each finished
// leaf keeps 31 entries in an array of 64, so a loaded tree took about
// twice the entries' size. Copy-on-write copies a node's items at their
// capacity, which for a split's left half is its length, so touching every
// node of a copy (WalkMut) leaves each leaf's array exactly full and the
// loaded tree's arrays to the collector.
func compacted[T any](tr *btree.BTreeG[T]) *btree.BTreeG[T] {
	c := tr.Copy()
	c.WalkMut(func([]T) bool { return true })
	return c
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

// sortEntries sorts entries into index order and returns them (the same
// slice or a new one). Missing keys (nil) sort before every other kind,
// so when the others share one kind the nils go first and the rest is
// sorted by a typed sort. When entries are in objectId order (byID), the
// nils already are, and equal keys are put in objectId order by their
// positions alone.
func sortEntries(entries []entry, byID bool) []entry {
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
	// tie orders the entries at two positions that hold equal keys.
	tie := func(a, b uint32) int { return cmp.Compare(a, b) }
	if !byID {
		tie = func(a, b uint32) int {
			if c := strings.Compare(entries[a].rec.id, entries[b].rec.id); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		}
	}
	out := make([]entry, 0, len(entries))
	for _, e := range entries {
		if e.key == nil {
			out = append(out, e)
		}
	}
	if !byID {
		slices.SortFunc(out, compareEntries)
	}
	if kind == kindNumber {
		return appendSortedNumbers(out, entries, len(entries)-nils, tie)
	}
	return appendSortedStrings(out, entries, len(entries)-nils, tie)
}

// numEntry is a number key with its entry's position.
type numEntry struct {
	key float64
	pos uint32
}

// appendSortedNumbers appends the n entries of entries with a number key
// to out, sorted, equal keys by tie.
func appendSortedNumbers(out, entries []entry, n int, tie func(a, b uint32) int) []entry {
	keys := make([]numEntry, 0, n)
	for i, e := range entries {
		if f, ok := e.key.(float64); ok {
			keys = append(keys, numEntry{f, uint32(i)})
		}
	}
	slices.SortFunc(keys, func(a, b numEntry) int {
		if c := cmp.Compare(a.key, b.key); c != 0 { // NaN first, as compareKeys
			return c
		}
		return tie(a.pos, b.pos)
	})
	for _, k := range keys {
		out = append(out, entries[k.pos])
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

// appendSortedStrings appends the n entries of entries with a string,
// date or pointer key (one kind of them) to out, sorted, equal keys by tie.
func appendSortedStrings(out, entries []entry, n int, tie func(a, b uint32) int) []entry {
	keys := make([]strEntry, 0, n)
	for i, e := range entries {
		if e.key != nil {
			keys = append(keys, strEntry{key: keyString(e.key), pos: uint32(i)})
		}
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
		return tie(a.pos, b.pos)
	})
	for _, k := range keys {
		out = append(out, entries[k.pos])
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

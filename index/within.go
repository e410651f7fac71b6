package index

import (
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tidwall/btree"
	"github.com/tidwall/gjson"
)

// ScanEqualWithin is ScanEqual keeping only the objects whose key on
// within equals one of among, as ScanEqual(within, among) would yield
// them: the intersection of two point scans, in ascending objectId order,
// each object once, until fn returns false. among are values ScanEqual
// accepts (no null, no arrays).
//
// Both indexes file each version of an object under the same record, so
// the intersection is made by record, through the indexes: the records of
// one side go into a set, the entries of the other are probed against it,
// and no candidate's JSON is read. Both snapshots and their run lengths
// are taken under one read lock, so that they are the same version of the
// collection: an object is yielded iff it matches both in that version,
// however writers replace it meanwhile. When the other side is far larger
// than the scanned one, or within has no index, each candidate's key on
// within is read from its bytes instead (costs in joinCost).
func (c *Collection) ScanEqualWithin(path string, keys []any, within string, among []any, deadline time.Time, fn func(Ref) bool) error {
	return c.scanEqualWithin(path, keys, within, among, deadline, joinChosen, func(rec *record) bool { return fn(Ref{rec}) })
}

// scanEqualWithin is ScanEqualWithin handing fn the records, by strategy
// (joinChosen: the cheapest; the tests try each).
func (c *Collection) scanEqualWithin(path string, keys []any, within string, among []any, deadline time.Time, strategy int, fn func(rec *record) bool) error {
	j := joins.Get().(*join)
	defer j.release()
	c.mu.RLock()
	ix, wx := c.indexes[path], c.indexes[within]
	if ix == nil {
		c.mu.RUnlock()
		return ErrNoIndex
	}
	j.scan.start(c.snapshotLocked(ix).tree, ix, keys)
	byBytes := wx == nil
	if !byBytes {
		j.filter.start(c.snapshotLocked(wx).tree, wx, among)
		if j.strategy = strategy; strategy == joinChosen {
			j.strategy = j.choose()
		}
		byBytes = j.strategy == joinByBytes
	}
	if byBytes && !j.scan.oneKey {
		// The merge's first entries come from the key stats, read under
		// this same lock.
		j.merge = merges.Get().(*merge)
		j.merge.start(j.scan.tree, ix, keys)
	}
	c.mu.RUnlock()
	if expired(deadline) {
		return ErrDeadline
	}
	if byBytes {
		return j.byBytes(within, among, deadline, fn)
	}
	return j.intersect(deadline, fn)
}

// joinCost are the costs, in nanoseconds of CPU, that choose weighs:
// seeking a run's first entry, visiting an entry of a run with its record
// added to the set or probed against it, and testing a candidate's key
// from its JSON (a gjson read of a small object). Seeks and candidates
// are mostly cache misses: a seek compares a dozen keys boxed in
// interfaces, two dependent loads each, and a candidate's bytes are
// elsewhere than its entry. Measured by Benchmark_ScanEqualWithin* on
// 100,000 objects, on a busy machine: 8 µs a seek of a cold run, 40 ns an
// entry, 2.2 µs a candidate tested; the ratios are what matters.
const (
	costSeek  = 8000
	costAdd   = 60
	costProbe = 40
	costBytes = 2200
)

// Strategies of a join (choose).
const (
	joinChosen     = iota - 1 // by choose
	joinHashScan              // the scan side into the set, the filter side probed
	joinHashFilter            // the filter side into the set, the scan side probed
	joinByBytes               // the scan side merged, each candidate's bytes tested
)

// join is the state of one ScanEqualWithin, pooled: the set, the slices
// and the iterator keep their capacity between scans.
type join struct {
	// scan are the runs of path's keys, filter those of within's.
	scan, filter side
	strategy     int
	set          recordSet
	// recs are the records of the side in the set, in the order added;
	// marked flags those the other side holds too.
	recs   []*record
	marked []bool
	it     btree.IterG[entry]
	steps  int
	merge  *merge // joinByBytes
}

var joins = sync.Pool{New: func() any { return &join{} }}

// maxPooledRecords keeps a rare huge join from pinning its memory.
const maxPooledRecords = 1 << 16

// side is one point scan of a join: a run of entries per key.
type side struct {
	tree *btree.BTreeG[entry]
	runs []run
	// total bounds the entries of all runs: exact for tracked keys, one
	// for an untracked countable key (a tracked key has two entries or
	// more), counted for the others.
	total int
	// oneKey: every key is equal, so the side is one run, in objectId
	// order.
	oneKey bool
}

// run is one key's entries: n of them, or, when n is 0, those whose key
// compares equal (an untracked key).
type run struct {
	key any
	n   int
}

// start reads the runs of keys on ix, under the collection's read lock
// (the key stats describe the snapshot tree only while it is held).
func (s *side) start(tree *btree.BTreeG[entry], ix *index, keys []any) {
	s.tree, s.runs, s.total, s.oneKey = tree, s.runs[:0], 0, true
	for i, k := range keys {
		k = compactKey(k)
		r := run{key: k}
		switch {
		case ix.keys != nil && countable(k):
			if st, tracked := ix.keys[k]; tracked {
				r.n = st.n
				s.total += st.n
			} else {
				s.total++ // at most one entry
			}
		case countable(k):
			s.total++ // a built-in index: all but unique keys
		default:
			s.total += ix.count(Equal(k), 0)
		}
		s.runs = append(s.runs, r)
		s.oneKey = s.oneKey && (i == 0 || compareKeys(k, s.runs[0].key) == 0)
	}
	if s.oneKey && len(s.runs) > 1 {
		s.runs = s.runs[:1]
	}
}

// choose picks the cheapest strategy by joinCost. A set of the side with
// one key yields the matches in its order by marks; a probed side with
// one key yields them as they come; otherwise the matches are sorted.
func (j *join) choose() int {
	scan, filter := j.scan.total, j.filter.total
	seeks := costSeek * (len(j.scan.runs) + len(j.filter.runs))
	hashScan := seeks + costAdd*scan + costProbe*filter
	hashFilter := seeks + costAdd*filter + costProbe*scan
	byBytes := costSeek*len(j.scan.runs) + costBytes*scan
	switch {
	case byBytes < min(hashScan, hashFilter):
		return joinByBytes
	case hashFilter < hashScan:
		return joinHashFilter
	}
	return joinHashScan
}

// intersect runs a set strategy.
func (j *join) intersect(deadline time.Time, fn func(*record) bool) error {
	hashed, probed := &j.scan, &j.filter
	if j.strategy == joinHashFilter {
		hashed, probed = probed, hashed
	}
	if hashed.total == 0 || probed.total == 0 {
		return nil
	}
	j.set.reset(hashed.total)
	if !j.each(hashed, deadline, func(rec *record) bool {
		if j.set.add(rec, int32(len(j.recs))) {
			j.recs = append(j.recs, rec)
		}
		return true
	}) {
		return ErrDeadline
	}
	if len(j.recs) == 0 {
		return nil
	}
	if probed.oneKey && !hashed.oneKey {
		// The probed run is in objectId order: yield as it goes.
		stopped := false
		if !j.each(probed, deadline, func(rec *record) bool {
			if j.set.has(rec) {
				stopped = !fn(rec)
			}
			return !stopped
		}) && !stopped {
			return ErrDeadline
		}
		return nil
	}
	j.marked = slices.Grow(j.marked[:0], len(j.recs))[:len(j.recs)]
	clear(j.marked)
	if !j.each(probed, deadline, func(rec *record) bool {
		if pos, ok := j.set.find(rec); ok {
			j.marked[pos] = true
		}
		return true
	}) {
		return ErrDeadline
	}
	matches := j.recs[:0] // overwrites the records as it goes past them
	for i, rec := range j.recs {
		if j.marked[i] {
			matches = append(matches, rec)
		}
	}
	if !hashed.oneKey {
		slices.SortFunc(matches, func(a, b *record) int { return strings.Compare(a.id, b.id) })
	}
	for i, rec := range matches {
		if (i+1)%CheckEvery == 0 && expired(deadline) {
			return ErrDeadline
		}
		if !fn(rec) {
			return nil
		}
	}
	return nil
}

// each calls visit with the record of every entry of s's runs, run after
// run, until visit returns false; it returns false when the deadline
// passed (checked every CheckEvery entries of the join).
func (j *join) each(s *side, deadline time.Time, visit func(*record) bool) bool {
	j.it.Init(s.tree, false)
	for _, r := range s.runs {
		if !j.it.Seek(entry{r.key, recFirst}) {
			continue
		}
		for left := r.n; ; {
			e := j.it.Item()
			if r.n == 0 && compareKeys(e.key, r.key) != 0 {
				break
			}
			if j.steps++; j.steps%CheckEvery == 0 && expired(deadline) {
				return false
			}
			if !visit(e.rec) {
				return true
			}
			if left--; left == 0 || !j.it.Next() {
				break
			}
		}
	}
	return true
}

// byBytes tests each candidate of the scan side (its runs merged by
// objectId, or its one run) for its key on within, read from its bytes:
// the strategy when the filter side is far larger than the candidates,
// or has no index.
func (j *join) byBytes(within string, among []any, deadline time.Time, fn func(*record) bool) error {
	in := newKeySet(among)
	var buf []any
	test := func(rec *record) bool {
		if class, id, ok := pointerAt(rec, within); ok {
			// The common case ($inQuery on a pointer), read without a map.
			if _, hit := in.ptrs[class][id]; hit {
				return fn(rec)
			}
			return true
		}
		buf, _ = appendKeys(buf[:0], rec, within)
		for _, k := range buf {
			if in.has(k) {
				return fn(rec)
			}
		}
		return true
	}
	if j.merge != nil {
		return j.merge.each(deadline, test)
	}
	if !j.each(&j.scan, deadline, test) {
		return ErrDeadline
	}
	return nil
}

// release returns the join to the pool, dropping every reference to the
// trees and their records.
func (j *join) release() {
	if j.merge != nil {
		j.merge.release()
		j.merge = nil
	}
	j.it.Release()
	for _, s := range []*side{&j.scan, &j.filter} {
		clear(s.runs)
		s.tree, s.runs = nil, s.runs[:0]
	}
	clear(j.recs)
	j.recs, j.steps = j.recs[:0], 0
	j.set.release()
	if cap(j.recs) <= maxPooledRecords && cap(j.scan.runs) <= maxPooledCursors && cap(j.filter.runs) <= maxPooledCursors {
		joins.Put(j)
	}
}

// recordSet is a set of records by address, with each one's position in
// join.recs: open addressing with linear probing, at most half full. A
// Go map of pointers costs about three times as much per operation, and
// a join makes one per scan.
type recordSet struct {
	slots []recordSlot
	shift uint
	n     int
}

type recordSlot struct {
	rec *record
	pos int32
}

// reset empties the set for up to n records (it grows past them).
func (s *recordSet) reset(n int) {
	size := 16
	if n > 8 {
		size = 1 << bits.Len(uint(2*n-1))
	}
	if cap(s.slots) >= size {
		s.slots = s.slots[:size] // cleared by release
	} else {
		s.slots = make([]recordSlot, size)
	}
	s.shift = uint(64 - bits.TrailingZeros(uint(size)))
	s.n = 0
}

// slot is rec's slot, or the empty one where it would go.
func (s *recordSet) slot(rec *record) *recordSlot {
	mask := uint(len(s.slots) - 1)
	// Fibonacci hashing of the address: records are at least 8-byte
	// aligned, and the multiply spreads the higher bits down.
	for i := uint(uintptr(unsafe.Pointer(rec))*0x9E3779B97F4A7C15) >> s.shift; ; i = (i + 1) & mask {
		if sl := &s.slots[i]; sl.rec == rec || sl.rec == nil {
			return sl
		}
	}
}

// add adds rec at pos, reporting false when it was already there.
func (s *recordSet) add(rec *record, pos int32) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	sl := s.slot(rec)
	if sl.rec != nil {
		return false
	}
	sl.rec, sl.pos = rec, pos
	s.n++
	return true
}

func (s *recordSet) grow() {
	old := s.slots
	s.slots = make([]recordSlot, 2*len(old))
	s.shift--
	for _, sl := range old {
		if sl.rec != nil {
			*s.slot(sl.rec) = sl
		}
	}
}

func (s *recordSet) has(rec *record) bool { return s.slot(rec).rec != nil }

// find returns rec's position.
func (s *recordSet) find(rec *record) (int32, bool) {
	sl := s.slot(rec)
	return sl.pos, sl.rec != nil
}

// release clears the slots used, or drops them when large.
func (s *recordSet) release() {
	if len(s.slots) > 2*maxPooledRecords {
		s.slots = nil
	} else {
		clear(s.slots)
	}
	s.n = 0
}

// keySet tests compact index keys for membership: hashable keys (strings,
// numbers, booleans, pointers, dates) in a map, others by comparison.
// Pointers are also in ptrs, by class then objectId, for pointerAt's
// strings.
type keySet struct {
	hashed map[any]struct{}
	ptrs   map[string]map[string]struct{}
	other  []any
}

func newKeySet(values []any) *keySet {
	s := &keySet{hashed: make(map[any]struct{}, len(values)), ptrs: map[string]map[string]struct{}{}}
	for _, v := range values {
		k := compactKey(v)
		if p, ok := k.(ptrKey); ok {
			class, id, _ := strings.Cut(string(p), "\x00")
			if s.ptrs[class] == nil {
				s.ptrs[class] = map[string]struct{}{}
			}
			s.ptrs[class][id] = struct{}{}
		}
		if hashable(k) {
			s.hashed[k] = struct{}{}
		} else {
			s.other = append(s.other, k)
		}
	}
	return s
}

func hashable(k any) bool {
	switch k.(type) {
	case string, float64, bool, ptrKey, isoDate:
		return true
	}
	return false
}

func (s *keySet) has(k any) bool {
	if hashable(k) {
		_, ok := s.hashed[k]
		return ok
	}
	for _, o := range s.other {
		if compareKeys(k, o) == 0 {
			return true
		}
	}
	return false
}

// pointerAt reads the Pointer at a top-level field of rec's bytes, with no
// map decoded: ok is false for anything else (a missing field, another
// value, an object with other members, a pinned record), which
// appendKeys then reads as the index would.
func pointerAt(rec *record, field string) (class, id string, ok bool) {
	b, _, pinned := rec.json()
	if pinned != nil || !plainKey(field) {
		return "", "", false
	}
	r := gjson.Get(unsafe.String(unsafe.SliceData(b), len(b)), field)
	if !r.IsObject() {
		return "", "", false
	}
	var seen, members int
	isPointer := false
	r.ForEach(func(k, v gjson.Result) bool {
		members++
		if v.Type != gjson.String {
			return true
		}
		switch k.Str {
		case "__type":
			seen |= 1
			isPointer = v.Str == "Pointer"
		case "className":
			seen |= 2
			class = v.Str
		case "objectId":
			seen |= 4
			id = v.Str
		}
		return true
	})
	if members != 3 || seen != 7 || !isPointer {
		return "", "", false
	}
	return class, id, true
}

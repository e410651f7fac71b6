package index

import (
	"strings"
	"sync"
	"time"

	"github.com/tidwall/btree"
)

// PointerKey is the index key of a Pointer to class/objectID: a value that
// ScanEqual, EstimateRange and Range bounds accept in place of
// schema.Pointer(class, objectID) without building the map. Callers that
// turn many ids into lookups ($inQuery results) skip a map per id.
func PointerKey(class, objectID string) any {
	return ptrKey(class + "\x00" + objectID)
}

// PointerKeys is PointerKey for each of ids, their bytes in one string.
func PointerKeys(class string, ids []string) []any {
	size := 0
	for _, id := range ids {
		size += len(class) + 1 + len(id)
	}
	var b strings.Builder
	b.Grow(size)
	for _, id := range ids {
		b.WriteString(class)
		b.WriteByte(0)
		b.WriteString(id)
	}
	all := b.String()
	keys := make([]any, len(ids))
	at := 0
	for i, id := range ids {
		end := at + len(class) + 1 + len(id)
		keys[i] = ptrKey(all[at:end])
		at = end
	}
	return keys
}

// ScanEqual calls fn with each object whose key on the index at path
// equals one of keys, in ascending objectId order, each object once (a
// multikey object holding several of the keys too), until fn returns
// false. It is the union of the point ranges of keys merged by objectId,
// read from one snapshot. A declared index knows the first two entries of
// each key it tracks (see index.keys), so such a run is sought only when a
// third object of it is read: a caller that wants the first few objects by
// id pays for those only. Repeated keys are allowed. It holds a cursor
// (184 bytes) and a head pointer per key while it runs: 1.9 MB for the
// largest literal $in (10,000 values), 19 MB for a subquery set at its
// 100,000 cap. Errors are ScanRange's.
func (c *Collection) ScanEqual(path string, keys []any, deadline time.Time, fn func(Ref) bool) error {
	return c.scanEqual(path, keys, deadline, func(rec *record) bool { return fn(Ref{rec}) })
}

// scanEqual is ScanEqual handing fn the records, not yet decoded.
func (c *Collection) scanEqual(path string, keys []any, deadline time.Time, fn func(rec *record) bool) error {
	m := merges.Get().(*merge)
	defer m.release()
	c.mu.RLock()
	ix := c.indexes[path]
	if ix == nil {
		c.mu.RUnlock()
		return ErrNoIndex
	}
	// The snapshot and the first entries are read under one read lock, so
	// they describe the same state.
	s := c.snapshotLocked(ix)
	m.start(s.tree, ix, keys)
	c.mu.RUnlock()
	if expired(deadline) {
		return ErrDeadline
	}
	return m.each(deadline, fn)
}

// each seeks the untracked cursors (on the immutable snapshot, without
// the lock) and calls fn with the merged runs' records, each once, until
// fn returns false.
func (m *merge) each(deadline time.Time, fn func(rec *record) bool) error {
	m.seekUntracked()
	last := ""
	for steps := 1; len(m.heads) > 0; steps++ {
		if steps%CheckEvery == 0 && expired(deadline) {
			return ErrDeadline
		}
		rec := m.pop()
		if steps > 1 && rec.id == last {
			continue // a multikey object under two of the keys
		}
		last = rec.id
		if !fn(rec) {
			return nil
		}
	}
	return nil
}

// merge walks several point runs of one tree at once, smallest objectId
// first: heads is a min-heap by objectId of cursors, each on an entry of
// its key.
type merge struct {
	tree    *btree.BTreeG[entry]
	cursors []cursor
	heads   []*cursor
}

// cursor is one key's run. rec is its current entry's object; the
// iterator is positioned on it once sought is set. Before that the cursor
// walks the run's first two entries from the key stats: pos is the
// current one's place in the run of n entries, and second the next.
type cursor struct {
	it        btree.IterG[entry]
	key       any
	rec       *record
	sought    bool
	untracked bool // no key stats: sought from the start
	pos, n    int
	second    *record
}

// merges recycles merge state: a cursor is an iterator with its stack,
// about 150 bytes, and a scan of a long $in would allocate one per key.
var merges = sync.Pool{New: func() any { return &merge{} }}

// maxPooledCursors keeps a rare huge $in from pinning its cursors.
const maxPooledCursors = 1024

// start sets up a cursor per key under the collection's read lock: keys
// the index tracks start at their first entry; the others (at most one
// entry, built-in indexes, non-scalar keys) are left for seekUntracked.
func (m *merge) start(tree *btree.BTreeG[entry], ix *index, keys []any) {
	m.tree = tree
	if cap(m.cursors) < len(keys) {
		m.cursors = make([]cursor, len(keys))
		m.heads = make([]*cursor, 0, len(keys))
	}
	m.cursors, m.heads = m.cursors[:len(keys)], m.heads[:0]
	for i, k := range keys {
		cur := &m.cursors[i]
		cur.key = compactKey(k)
		if ix.keys != nil && countable(cur.key) {
			if st, tracked := ix.keys[cur.key]; tracked {
				cur.rec, cur.second, cur.pos, cur.n = st.first, st.second, 0, st.n
				m.heads = append(m.heads, cur)
				continue
			}
		}
		cur.untracked = true
	}
}

// seekUntracked positions the untracked cursors at their runs' first
// entries and orders the heads.
func (m *merge) seekUntracked() {
	for i := range m.cursors {
		if cur := &m.cursors[i]; cur.untracked {
			if cur.seek(m.tree, entry{cur.key, recFirst}); cur.rec != nil {
				m.heads = append(m.heads, cur)
			}
		}
	}
	for i := len(m.heads)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
}

// seek positions the cursor at the first entry >= pivot of its key, or
// leaves rec nil when the run has none.
func (cur *cursor) seek(tree *btree.BTreeG[entry], pivot entry) {
	// Init in place: an iterator keeps its stack in its own array, so it
	// must not be copied once initialized.
	cur.it.Init(tree, false)
	cur.sought = true
	cur.rec = nil
	if cur.it.Seek(pivot) && compareKeys(cur.it.Item().key, cur.key) == 0 {
		cur.rec = cur.it.Item().rec
	}
}

// next moves the cursor to its run's next entry: the second from the key
// stats, then by seeking to the current entry and stepping on.
func (cur *cursor) next(tree *btree.BTreeG[entry]) {
	if !cur.sought {
		if cur.pos++; cur.pos >= cur.n {
			cur.rec = nil
			return
		}
		if cur.pos == 1 {
			cur.rec = cur.second
			return
		}
		cur.seek(tree, entry{cur.key, cur.rec}) // lands on that entry itself
		if cur.rec == nil {
			return
		}
	}
	cur.rec = nil
	if cur.it.Next() && compareKeys(cur.it.Item().key, cur.key) == 0 {
		cur.rec = cur.it.Item().rec
	}
}

// pop returns the smallest head's object and advances that cursor.
func (m *merge) pop() *record {
	top := m.heads[0]
	rec := top.rec
	top.next(m.tree)
	if top.rec == nil {
		last := len(m.heads) - 1
		m.heads[0] = m.heads[last]
		m.heads = m.heads[:last]
	}
	if len(m.heads) > 0 {
		m.down(0)
	}
	return rec
}

func (m *merge) down(i int) {
	h := m.heads
	for {
		small := i
		if l := 2*i + 1; l < len(h) && h[l].rec.id < h[small].rec.id {
			small = l
		}
		if r := 2*i + 2; r < len(h) && h[r].rec.id < h[small].rec.id {
			small = r
		}
		if small == i {
			return
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
}

// release returns the state to the pool, dropping every reference to the
// tree and its objects.
func (m *merge) release() {
	for i := range m.cursors {
		m.cursors[i].it.Release()
		cur := &m.cursors[i] // reset in place: the iterator must not be copied
		cur.key, cur.rec, cur.second = nil, nil, nil
		cur.sought, cur.untracked, cur.pos, cur.n = false, false, 0, 0
	}
	clear(m.heads[:cap(m.heads)])
	m.tree = nil
	if cap(m.cursors) <= maxPooledCursors {
		merges.Put(m)
	}
}

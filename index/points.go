package index

import (
	"strings"
	"sync"
	"time"

	"github.com/tidwall/btree"

	"github.com/quarrydata/quarry/schema"
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
// false. It is the union of the point ranges of keys merged by objectId:
// one snapshot, one seek per key, and then one step per object delivered,
// so a caller that wants the first few objects by id pays for those only.
// Repeated keys are allowed. Errors are ScanRange's.
func (c *Collection) ScanEqual(path string, keys []any, deadline time.Time, fn func(obj schema.Object) bool) error {
	s, err := c.snapshotOf(path)
	if err != nil {
		return err
	}
	if expired(deadline) {
		return ErrDeadline
	}
	if len(keys) == 1 {
		return s.scan(Equal(compactKey(keys[0])), false, deadline, fn)
	}
	m := newMerge(s.tree, keys)
	defer m.release()
	var last *record
	for steps := 1; len(m.heads) > 0; steps++ {
		if steps%CheckEvery == 0 && expired(deadline) {
			return ErrDeadline
		}
		rec := m.pop()
		if rec == last {
			continue // a multikey object under two of the keys
		}
		last = rec
		if !fn(rec.obj) {
			return nil
		}
	}
	return nil
}

// merge walks several point runs of one tree at once, smallest objectId
// first: heads is a min-heap by objectId of cursors, each positioned on an
// entry of its key.
type merge struct {
	cursors []cursor
	heads   []*cursor
}

type cursor struct {
	it  btree.IterG[entry]
	key any
}

// merges recycles merge state: a cursor is an iterator with its stack,
// about 150 bytes, and a scan of a long $in would allocate one per key.
var merges = sync.Pool{New: func() any { return &merge{} }}

func newMerge(tree *btree.BTreeG[entry], keys []any) *merge {
	m := merges.Get().(*merge)
	if cap(m.cursors) < len(keys) {
		m.cursors = make([]cursor, len(keys))
		m.heads = make([]*cursor, 0, len(keys))
	}
	m.cursors, m.heads = m.cursors[:len(keys)], m.heads[:0]
	for i, k := range keys {
		cur := &m.cursors[i]
		cur.key = compactKey(k)
		// Init in place: an iterator keeps its stack in its own array, so
		// it must not be copied once initialized.
		cur.it.Init(tree, false)
		if cur.it.Seek(entry{cur.key, recFirst}) && compareKeys(cur.it.Item().key, cur.key) == 0 {
			m.heads = append(m.heads, cur)
		}
	}
	for i := len(m.heads)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m
}

// pop returns the record under the smallest head and advances that cursor.
func (m *merge) pop() *record {
	top := m.heads[0]
	rec := top.it.Item().rec
	if top.it.Next() && compareKeys(top.it.Item().key, top.key) == 0 {
		m.down(0)
		return rec
	}
	last := len(m.heads) - 1
	m.heads[0] = m.heads[last]
	m.heads = m.heads[:last]
	if last > 0 {
		m.down(0)
	}
	return rec
}

func (m *merge) down(i int) {
	h := m.heads
	for {
		small := i
		if l := 2*i + 1; l < len(h) && h[l].it.Item().rec.id < h[small].it.Item().rec.id {
			small = l
		}
		if r := 2*i + 2; r < len(h) && h[r].it.Item().rec.id < h[small].it.Item().rec.id {
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
		m.cursors[i].key = nil
	}
	clear(m.heads[:cap(m.heads)])
	if cap(m.cursors) <= maxPooledCursors {
		merges.Put(m)
	}
}

// maxPooledCursors keeps a rare huge $in from pinning its cursors.
const maxPooledCursors = 1024

package index

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidwall/btree"

	"github.com/quarrydata/quarry/geo"
)

// GeoKind is what a geo index over a path holds.
type GeoKind int

const (
	// GeoNone: the path has no geo index.
	GeoNone GeoKind = iota
	// GeoPoints indexes GeoPoint values by their S2 leaf cell, so that
	// region queries are range scans over a covering's leaf-id ranges.
	GeoPoints
	// GeoShapes indexes Polygon values by the cells of their covering,
	// so that $geoIntersects looks up the ancestors of the point's cell.
	GeoShapes
)

func (k GeoKind) String() string {
	switch k {
	case GeoPoints:
		return "GeoPoint cells"
	case GeoShapes:
		return "Polygon coverings"
	}
	return "none"
}

// geoEntry is one geo index item: a cell id, the object and, for
// GeoPoints, the point itself (so scans test candidates without reading
// the object). Entries order by cell, then objectId; a nil rec sorts
// before every object of its cell (the pivot of a scan).
type geoEntry struct {
	cell uint64
	pt   geo.Point
	rec  *record
}

func lessGeo(a, b geoEntry) bool { return compareGeo(a, b) < 0 }

// compareGeo orders geo entries by cell, then record (a nil record, the
// scan pivot, first), then objectId.
func compareGeo(a, b geoEntry) int {
	if c := cmp.Compare(a.cell, b.cell); c != 0 {
		return c
	}
	switch {
	case a.rec == b.rec:
		return 0
	case a.rec == nil:
		return -1
	case b.rec == nil:
		return 1
	}
	return strings.Compare(a.rec.id, b.rec.id)
}

// geoIndex is the geo index of one path. Objects whose value at the path
// is not a valid GeoPoint (GeoPoints) or Polygon (GeoShapes) have no entry:
// no geo constraint can match them.
type geoIndex struct {
	path string
	kind GeoKind
	// tree is the live tree, changed only under Collection.mu's write lock.
	tree *btree.BTreeG[geoEntry]
	// levels counts the shape covering cells of each level (GeoShapes).
	levels [31]int
	snap   atomic.Pointer[geoSnapshot]
}

// geoSnapshot is a read-only copy of a geo index for scans.
type geoSnapshot struct {
	tree   *btree.BTreeG[geoEntry]
	levels [31]int
}

func newGeoIndex(path string, kind GeoKind) *geoIndex {
	return &geoIndex{path: path, kind: kind, tree: btree.NewBTreeGOptions(lessGeo, btree.Options{NoLocks: true})}
}

// entries appends the index entries of rec: its point's leaf cell, or its
// polygon's covering cells.
func (gx *geoIndex) entries(dst []geoEntry, rec *record) []geoEntry {
	v, _ := rec.value(gx.path)
	if gx.kind == GeoPoints {
		if p, ok := geo.PointFromValue(v); ok {
			return append(dst, geoEntry{cell: geo.LeafCell(p), pt: p, rec: rec})
		}
		return dst
	}
	if pg, ok := geo.PolygonFromValue(v); ok {
		for _, c := range geo.CoverCells(pg, ShapeCoverCells) {
			dst = append(dst, geoEntry{cell: c, rec: rec})
		}
	}
	return dst
}

// ShapeCoverCells is the cell budget of a stored Polygon's covering: a
// point lookup tests one cell per level in use, so more cells only make
// the covering tighter (fewer polygons sent to the exact test).
const ShapeCoverCells = 16

// replace swaps old's entries for rec's; the caller holds the write lock.
func (gx *geoIndex) replace(old, rec *record) {
	var oldBuf, newBuf [1]geoEntry
	var oldEntries, newEntries []geoEntry
	if old != nil {
		oldEntries = gx.entries(oldBuf[:0], old)
	}
	if rec != nil {
		newEntries = gx.entries(newBuf[:0], rec)
	}
	if len(oldEntries) == 0 && len(newEntries) == 0 {
		return
	}
	gx.snap.Store(nil)
	if len(oldEntries) == 1 && len(newEntries) == 1 && oldEntries[0].cell == newEntries[0].cell {
		gx.tree.Set(newEntries[0])
		return
	}
	for _, e := range oldEntries {
		if _, ok := gx.tree.Delete(e); ok && gx.kind == GeoShapes {
			gx.levels[geo.CellLevel(e.cell)]--
		}
	}
	for _, e := range newEntries {
		if _, replaced := gx.tree.Set(e); !replaced && gx.kind == GeoShapes {
			gx.levels[geo.CellLevel(e.cell)]++
		}
	}
}

// build fills an empty index in one sorted bulk load.
func (gx *geoIndex) build(recs []*record) {
	entries := make([]geoEntry, 0, len(recs))
	for _, rec := range recs {
		entries = gx.entries(entries, rec)
	}
	if gx.kind == GeoShapes {
		for _, e := range entries {
			gx.levels[geo.CellLevel(e.cell)]++
		}
	}
	slices.SortFunc(entries, compareGeo)
	for _, e := range entries {
		gx.tree.Load(e)
	}
	gx.tree = compacted(gx.tree)
}

// EnsureGeoIndex declares a geo index of kind (GeoPoints or GeoShapes) on
// a path and builds it from the current objects. Declaring it again does
// nothing (while it is built, waits for the build); a path holds one geo
// index, so another kind is ErrBadPath. Like EnsureIndex, the build holds
// no lock and the index is published with the writes made meanwhile.
func (c *Collection) EnsureGeoIndex(path string, kind GeoKind) error {
	if path == "" || (kind != GeoPoints && kind != GeoShapes) {
		return ErrBadPath
	}
	c.mu.Lock()
	if gx := c.geo[path]; gx != nil {
		c.mu.Unlock()
		if gx.kind != kind {
			return ErrBadPath
		}
		return nil
	}
	key := geoBuildKey(path)
	if b := c.building[key]; b != nil {
		c.mu.Unlock()
		if b.kind != kind {
			return ErrBadPath
		}
		<-b.done
		return nil
	}
	gx := newGeoIndex(path, kind)
	if c.deferred {
		c.publishGeoLocked(gx)
		c.mu.Unlock()
		return nil
	}
	b, recs := c.startBuildLocked(key, kind)
	c.mu.Unlock()
	defer close(b.done)
	gx.build(recs)
	c.buildHook(path)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.building[key] != b {
		return nil // dropped (DropGeoIndex) while it was built
	}
	delete(c.building, key)
	for id, old := range b.touched {
		gx.replace(old, c.objects[id])
	}
	c.publishGeoLocked(gx)
	return nil
}

// geoBuildKey keys a geo build in Collection.building apart from a
// B-tree's on the same path.
func geoBuildKey(path string) string { return "\x00geo\x00" + path }

// publishGeoLocked lists a built geo index; the caller holds the write
// lock.
func (c *Collection) publishGeoLocked(gx *geoIndex) {
	if c.geo == nil {
		c.geo = map[string]*geoIndex{}
	}
	c.geo[gx.path] = gx
	c.geoList = append(c.geoList, gx)
}

// DropGeoIndex removes a geo index and reports whether there was one.
func (c *Collection) DropGeoIndex(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if key := geoBuildKey(path); c.building[key] != nil {
		delete(c.building, key) // the build ends without publishing
		return true
	}
	gx := c.geo[path]
	if gx == nil {
		return false
	}
	delete(c.geo, path)
	list := make([]*geoIndex, 0, len(c.geoList))
	for _, x := range c.geoList {
		if x != gx {
			list = append(list, x)
		}
	}
	c.geoList = list
	return true
}

// GeoIndex reports the kind of geo index on path (GeoNone without one).
func (c *Collection) GeoIndex(path string) GeoKind {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if gx := c.geo[path]; gx != nil {
		return gx.kind
	}
	return GeoNone
}

// GeoIndexes lists the paths with a geo index, sorted.
func (c *Collection) GeoIndexes() []string {
	c.mu.RLock()
	out := make([]string, 0, len(c.geoList))
	for _, gx := range c.geoList {
		out = append(out, gx.path)
	}
	c.mu.RUnlock()
	sort.Strings(out)
	return out
}

// geoSnapshotOf returns the current snapshot of the geo index on path.
func (c *Collection) geoSnapshotOf(path string, kind GeoKind) (*geoSnapshot, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	gx := c.geo[path]
	if gx == nil || gx.kind != kind {
		return nil, ErrNoIndex
	}
	if s := gx.snap.Load(); s != nil {
		return s, nil
	}
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	if s := gx.snap.Load(); s != nil {
		return s, nil
	}
	s := &geoSnapshot{tree: gx.tree.Copy(), levels: gx.levels}
	gx.snap.Store(s)
	return s, nil
}

// ScanGeo calls fn with each object whose GeoPoint at path has its leaf
// cell in one of ranges (ascending, disjoint), in cell order, with that
// GeoPoint (as geo.PointFromValue reads it) and the range's Interior flag,
// until fn returns false. It is a superset scan: the caller applies the
// exact test except where interior is set. The scan sees the collection as
// it was when it started and holds no lock while fn runs.
//
// It returns ErrNoIndex when path has no GeoPoints index and ErrDeadline
// when a non-zero deadline passes (checked at the start and every
// CheckEvery entries).
func (c *Collection) ScanGeo(path string, ranges []geo.CellRange, deadline time.Time, fn func(ref Ref, p geo.Point, interior bool) bool) error {
	s, err := c.geoSnapshotOf(path, GeoPoints)
	if err != nil {
		return err
	}
	if expired(deadline) {
		return ErrDeadline
	}
	steps, stopped := 0, false
	for _, r := range ranges {
		s.tree.Ascend(geoEntry{cell: r.Lo}, func(e geoEntry) bool {
			if e.cell > r.Hi {
				return false
			}
			steps++
			if steps%CheckEvery == 0 && expired(deadline) {
				err = ErrDeadline
			} else if !fn(Ref{e.rec}, e.pt, r.Interior) {
				stopped = true
			}
			return err == nil && !stopped
		})
		if err != nil || stopped {
			return err
		}
	}
	return nil
}

// EstimateGeo returns the number of GeoPoints at path with a leaf cell in
// ranges, at most limit (no bound when limit <= 0): exact, with the work of
// each range bounded as EstimateRange's is. Without a GeoPoints index it
// returns Len().
func (c *Collection) EstimateGeo(path string, ranges []geo.CellRange, limit int) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	gx := c.geo[path]
	if gx == nil || gx.kind != GeoPoints {
		n := len(c.objects)
		if limit > 0 && n > limit {
			n = limit
		}
		return n
	}
	n := 0
	for _, r := range ranges {
		left := 0
		if limit > 0 {
			left = limit - n
		}
		n += gx.count(r, left)
		if limit > 0 && n >= limit {
			return limit
		}
	}
	return n
}

// geoCountDirect is how many entries of a range a count visits one by one
// before two rank searches take over: on a million points stepping costs
// about 2 ns an entry, the two searches about 2 µs.
const geoCountDirect = 768

// count is the number of entries with a cell in r, or any number >= limit
// when that is larger; the caller holds the read lock.
func (gx *geoIndex) count(r geo.CellRange, limit int) int {
	stop := geoCountDirect
	if limit > 0 && limit < stop {
		stop = limit
	}
	n, done := 0, false
	gx.tree.Ascend(geoEntry{cell: r.Lo}, func(e geoEntry) bool {
		if e.cell > r.Hi {
			done = true
			return false
		}
		n++
		return n < stop
	})
	if done || n < stop || n == limit {
		return n
	}
	lo := rank(gx.tree, geoEntry{cell: r.Lo})
	hi := gx.tree.Len()
	if r.Hi < ^uint64(0) {
		hi = rank(gx.tree, geoEntry{cell: r.Hi + 1})
	}
	return max(hi-lo, 0)
}

// ScanGeoContaining calls fn with each object whose Polygon at path has a
// covering cell holding p, until fn returns false: a superset of the
// polygons containing p (the caller applies the exact test). Errors are
// those of ScanGeo (ErrNoIndex without a GeoShapes index).
func (c *Collection) ScanGeoContaining(path string, p geo.Point, deadline time.Time, fn func(Ref) bool) error {
	s, err := c.geoSnapshotOf(path, GeoShapes)
	if err != nil {
		return err
	}
	if expired(deadline) {
		return ErrDeadline
	}
	leaf := geo.LeafCell(p)
	steps, stopped := 0, false
	for level, n := range s.levels {
		if n == 0 {
			continue
		}
		cell := geo.CellParent(leaf, level)
		s.tree.Ascend(geoEntry{cell: cell}, func(e geoEntry) bool {
			if e.cell != cell {
				return false
			}
			steps++
			if steps%CheckEvery == 0 && expired(deadline) {
				err = ErrDeadline
			} else if !fn(Ref{e.rec}) {
				stopped = true
			}
			return err == nil && !stopped
		})
		if err != nil || stopped {
			return err
		}
	}
	return nil
}

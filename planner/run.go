package planner

// Running: Run executes a compiled plan, streaming results in order or
// collecting them through a top-k, and counts.

import (
	"cmp"
	"errors"
	"strings"
	"time"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Result is a query's page and, when counted, the total.
type Result struct {
	Objects []schema.Object
	// Refs[i] is the stored version Objects[i] was read from and is (the
	// very map it decodes to), whose bytes encode it: a reply takes them
	// with no lookup (index.Ref). Nil when Objects is empty.
	// Objects[i] is nil when the plan left it undecoded (Query.Undecoded).
	Refs     []index.Ref
	Count    int
	Examined int
}

var errStop = errors.New("stop")

// Run executes the plan.
func (pl *Plan) Run() (Result, error) {
	q := pl.q
	if pl.access.kind == accessEmpty {
		return Result{Objects: []schema.Object{}}, nil
	}
	if q.Count && q.Limit == 0 && len(pl.root.Children) == 0 && !pl.visible {
		return Result{Objects: []schema.Object{}, Count: pl.coll.Len()}, nil
	}
	if pl.access.kind == accessGeo {
		return pl.runGeo() // geo.go
	}
	need := q.Skip + q.Limit
	var res Result
	counted := false
	if q.Count && pl.tightCount() {
		res.Count, counted = pl.exactCount(), true
		if q.Limit == 0 {
			res.Objects = []schema.Object{} // the count alone: nothing to read
			return res, nil
		}
	}
	if q.Count && q.Limit == 0 && pl.visible && pl.flagDecides && pl.access.kind != accessUnion && pl.tightAccess() {
		return pl.countGuarded()
	}
	if len(q.Order) == 0 && pl.near == nil && (!q.Count || counted) && pl.idOrdered(pl.access) {
		objs, refs, examined, err := pl.collectByID(pl.access, need)
		if err != nil {
			return Result{}, err
		}
		res.Examined = examined
		if !counted {
			res.Count = len(objs) // the matches seen, for explain
		}
		res.Objects, res.Refs = page(objs, refs, q.Skip)
		return res, nil
	}
	collect := newCollector(pl, need)
	stream := pl.streaming()
	matched := 0
	err := pl.iterateIDs(pl.access, collect.byID != nil, func(id string, h hit) bool {
		res.Examined++
		if !pl.accepts(h) {
			return true
		}
		matched++
		collect.add(id, h)
		return (q.Count && !counted) || !stream || collect.len() < need
	})
	if errors.Is(err, index.ErrDeadline) {
		return Result{}, ErrTimeout
	}
	if err != nil {
		return Result{}, err
	}
	if !counted {
		res.Count = matched
	}
	objs, refs := collect.sorted()
	res.Objects, res.Refs = page(objs, refs, q.Skip)
	return res, nil
}

// page is what follows the first skip of the objects and their refs.
func page(objs []schema.Object, refs []index.Ref, skip int) ([]schema.Object, []index.Ref) {
	if skip < len(objs) {
		return objs[skip:], refs[skip:]
	}
	return []schema.Object{}, nil
}

// tightCount reports whether the count is the access's exact size: a
// single constraint whose access yields exactly its matches.
func (pl *Plan) tightCount() bool {
	return !pl.visible && pl.tightAccess()
}

// tightAccess reports whether the access yields exactly the where's
// matches: a single constraint whose access is tight.
func (pl *Plan) tightAccess() bool {
	if !pl.access.tight || len(pl.root.Children) != 1 {
		return false
	}
	c := pl.root.Children[0]
	return c.Kind == where.KindField && (len(c.Ops) == 1 || c == pl.access.node)
}

// countGuarded counts a tight access's candidates the guard lets the
// caller see: one not flagged is seen (Query.FlagDecides) without being
// read, only a flagged one is decoded and tested.
func (pl *Plan) countGuarded() (Result, error) {
	n, examined := 0, 0
	stopped := false
	err := pl.feed(pl.access, func(ref index.Ref) bool {
		examined++
		if !ref.Flagged() {
			n++
		} else if obj := ref.Object(); obj != nil && pl.guard(obj) {
			n++
		}
		return true
	}, &stopped)
	if errors.Is(err, index.ErrDeadline) {
		return Result{}, ErrTimeout
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Objects: []schema.Object{}, Count: n, Examined: examined}, nil
}

func (pl *Plan) exactCount() int {
	a := pl.access
	n := 0
	switch a.kind {
	case accessRanges:
		if a.exact {
			return a.estimate // counted while planning
		}
		for _, k := range a.points {
			n += pl.coll.EstimateRange(a.path, index.Equal(k), 0)
		}
		if a.points != nil {
			break
		}
		for _, r := range a.ranges {
			n += pl.coll.EstimateRange(a.path, r, 0)
		}
	case accessIDs:
		a.ids.each(func(id string) bool {
			if _, ok := pl.coll.Lookup(id); ok {
				n++
			}
			return true
		})
	}
	return n
}

// idOrdered reports whether an access yields candidates in objectId
// order per source: full scans, id sets, and point ranges (entries of one
// key are ordered by objectId). Unions of such sources merge cheaply.
func (pl *Plan) idOrdered(a *access) bool {
	switch a.kind {
	case accessFull, accessIDs:
		return true
	case accessRanges:
		if a.points != nil {
			return true
		}
		for _, r := range a.ranges {
			if !r.HasLo || !r.HasHi || !r.LoInclusive || !r.HiInclusive || schema.Compare(r.Lo, r.Hi) != 0 {
				return false
			}
		}
		return true
	case accessUnion:
		for _, b := range a.branches {
			if !pl.idOrdered(b) {
				return false
			}
		}
		return true
	}
	return false
}

// scanPoints scans a point access's keys merged by objectId, narrowed by
// its within access when it has one.
func (pl *Plan) scanPoints(a *access, fn func(index.Ref) bool) error {
	if w := a.within; w != nil {
		return pl.coll.ScanEqualWithin(a.path, a.points, w.path, w.points, pl.deadline, fn)
	}
	return pl.coll.ScanEqual(a.path, a.points, pl.deadline, fn)
}

// idSource scans candidates in ascending objectId order.
type idSource func(fn func(index.Ref) bool) error

// idSources splits an objectId-ordered access into its sources.
func (pl *Plan) idSources(a *access, out []idSource) []idSource {
	switch a.kind {
	case accessFull:
		out = append(out, func(fn func(index.Ref) bool) error {
			return pl.coll.ScanRange("objectId", index.Range{}, false, pl.deadline, fn)
		})
	case accessIDs:
		out = append(out, func(fn func(index.Ref) bool) error {
			return pl.lookupIDs(a, fn)
		})
	case accessRanges:
		if len(a.points) > 1 || a.within != nil {
			out = append(out, func(fn func(index.Ref) bool) error {
				return pl.scanPoints(a, fn)
			})
			break
		}
		for _, r := range a.ranges {
			out = append(out, func(fn func(index.Ref) bool) error {
				return pl.coll.ScanRange(a.path, r, false, pl.deadline, fn)
			})
		}
	case accessUnion:
		for _, b := range a.branches {
			out = pl.idSources(b, out)
		}
	}
	return out
}

// collectByID returns the first `need` matches in objectId order from
// sources that each ascend by objectId. It keeps the best `need` seen so
// far; once it has them, a source stops at its first id beyond the worst
// of them, so later sources cost only what they can contribute.
func (pl *Plan) collectByID(a *access, need int) ([]schema.Object, []index.Ref, int, error) {
	if need <= 0 {
		return nil, nil, 0, nil
	}
	var room [4]idSource
	sources := pl.idSources(a, room[:0])
	if len(sources) == 1 {
		return pl.firstByID(sources[0], need)
	}
	best := newIDTopK(need)
	var seen map[string]bool
	if len(sources) > 1 {
		seen = map[string]bool{}
	}
	examined := 0
	for _, src := range sources {
		err := src(func(ref index.Ref) bool {
			id := ref.ID()
			if best.full() && id >= best.worst().id {
				return false
			}
			examined++
			if seen != nil {
				if seen[id] {
					return true
				}
				seen[id] = true
			}
			h := pl.hitOf(ref)
			if !pl.accepts(h) {
				return true
			}
			best.add(newIDItem(id, h))
			return true
		})
		if errors.Is(err, index.ErrDeadline) {
			return nil, nil, examined, ErrTimeout
		}
		if err != nil {
			return nil, nil, examined, err
		}
	}
	objs, refs := idObjects(best.sorted())
	return objs, refs, examined, nil
}

// firstByID is collectByID for one source: its matches already come in
// objectId order, so the first `need` are the answer, kept as they come,
// with no heap and no sort.
func (pl *Plan) firstByID(src idSource, need int) ([]schema.Object, []index.Ref, int, error) {
	room := min(need, firstByIDCap)
	f := &firstMatches{pl: pl, need: need, out: make([]schema.Object, 0, room), refs: make([]index.Ref, 0, room)}
	err := src(f.add)
	if errors.Is(err, index.ErrDeadline) {
		return nil, nil, f.examined, ErrTimeout
	}
	if err != nil {
		return nil, nil, f.examined, err
	}
	return f.out, f.refs, f.examined, nil
}

// firstMatches keeps the first need matches a scan delivers (firstByID).
type firstMatches struct {
	pl       *Plan
	need     int
	examined int
	out      []schema.Object
	refs     []index.Ref
}

func (f *firstMatches) add(ref index.Ref) bool {
	f.examined++
	if h := f.pl.hitOf(ref); f.pl.accepts(h) {
		f.out = append(f.out, h.obj)
		f.refs = append(f.refs, ref)
	}
	return len(f.out) < f.need
}

// firstByIDCap bounds the room firstByID reserves before any match: a
// large limit is rarely filled.
const firstByIDCap = 128

// idItem is a result with its objectId, read once, and the id's first
// eight bytes as a number: ids of ten random characters nearly always
// differ there, so ordering them is mostly one integer compare rather
// than a string compare (the top-k's heap and its final sort).
type idItem struct {
	prefix uint64
	id     string
	hit
}

func newIDItem(id string, h hit) idItem {
	var prefix uint64
	for i := 0; i < 8; i++ {
		prefix <<= 8
		if i < len(id) {
			prefix |= uint64(id[i])
		}
	}
	return idItem{prefix, id, h}
}

// idCmp orders items by id as strings.Compare orders the ids: bytes are
// compared big-endian, and an id shorter than eight bytes is padded with
// zeros, which no byte sorts below, so unequal prefixes order as the ids.
func idCmp(a, b idItem) int {
	if a.prefix != b.prefix {
		return cmp.Compare(a.prefix, b.prefix)
	}
	return strings.Compare(a.id, b.id)
}

func idLess(a, b idItem) bool {
	if a.prefix != b.prefix {
		return a.prefix < b.prefix
	}
	return a.id < b.id
}

// newIDTopK is a top-k by objectId.
func newIDTopK(k int) *topK[idItem] {
	h := newTopK(k, idLess)
	h.cmp = idCmp
	return h
}

// idObjects are the objects of items and their refs, in their order.
func idObjects(items []idItem) ([]schema.Object, []index.Ref) {
	objs, refs := make([]schema.Object, len(items)), make([]index.Ref, len(items))
	for i, it := range items {
		objs[i], refs[i] = it.obj, it.ref
	}
	return objs, refs
}

// iterate feeds candidates from an access. Objects may come twice from a
// union; seen filters those (ScanEqual already delivers a multikey object
// once).
func (pl *Plan) iterate(a *access, fn func(schema.Object) bool) error {
	return pl.iterateIDs(a, false, func(_ string, h hit) bool {
		if h.dropped {
			return true
		}
		if h.obj == nil {
			h.obj = h.ref.Object()
		}
		return fn(h.obj)
	})
}

// iterateIDs is iterate that also hands fn each candidate's objectId when
// withID is set or the access is a union (whose duplicate filter reads it
// anyway), so that a caller ordering by id does not read it again; else
// the id is "".
func (pl *Plan) iterateIDs(a *access, withID bool, fn func(id string, h hit) bool) error {
	var seen map[string]struct{}
	if a.kind == accessUnion {
		// Sized for the estimate (the branches' sizes), so that it does
		// not grow while the scan runs.
		seen = make(map[string]struct{}, min(a.estimate, unionSeenRoom))
		withID = true
	}
	stopped := false
	emit := func(ref index.Ref) bool {
		var id string
		if withID {
			id = ref.ID()
		}
		if seen != nil {
			if _, dup := seen[id]; dup {
				return true
			}
			seen[id] = struct{}{}
		}
		if !fn(id, pl.hitOf(ref)) {
			stopped = true
			return false
		}
		return true
	}
	return pl.feed(a, emit, &stopped)
}

// unionSeenRoom bounds the room iterate reserves to find an $or's
// duplicates.
const unionSeenRoom = 4096

func (pl *Plan) feed(a *access, emit func(index.Ref) bool, stopped *bool) error {
	switch a.kind {
	case accessFull:
		path, desc := "objectId", false
		if pl.orderIndex {
			path, desc = pl.q.Order[0].Path, pl.q.Order[0].Desc
		}
		return pl.coll.ScanRange(path, index.Range{}, desc, pl.deadline, emit)
	case accessRanges:
		if len(a.points) > 1 || a.within != nil {
			return pl.scanPoints(a, emit)
		}
		desc := pl.orderIndex && pl.q.Order[0].Desc
		for _, r := range a.ranges {
			if err := pl.coll.ScanRange(a.path, r, desc, pl.deadline, emit); err != nil || *stopped {
				return err
			}
		}
	case accessIDs:
		return pl.lookupIDs(a, emit)
	case accessUnion:
		for _, b := range a.branches {
			if err := pl.feed(b, emit, stopped); err != nil || *stopped {
				return err
			}
		}
	}
	return nil
}

// lookupIDs calls fn with the stored objects of an accessIDs's ids, in
// order, until fn returns false.
func (pl *Plan) lookupIDs(a *access, fn func(index.Ref) bool) error {
	var err error
	i := 0
	a.ids.each(func(id string) bool {
		if i++; i%index.CheckEvery == 0 && time.Now().After(pl.deadline) {
			err = index.ErrDeadline
			return false
		}
		ref, ok := pl.coll.Lookup(id)
		return !ok || fn(ref)
	})
	return err
}

// collectSet returns up to max matches in no particular order, for a
// subquery: its results are a set, so it needs neither an order nor a heap.
func (pl *Plan) collectSet(max int) ([]schema.Object, error) {
	if pl.access.kind == accessEmpty {
		return nil, nil
	}
	if pl.access.kind == accessGeo {
		res, err := pl.runGeo()
		return res.Objects, err
	}
	out := make([]schema.Object, 0, min(pl.access.estimate, max, 1024))
	err := pl.iterate(pl.access, func(obj schema.Object) bool {
		if pl.match(obj) {
			out = append(out, obj)
		}
		return len(out) < max
	})
	if errors.Is(err, index.ErrDeadline) {
		return nil, ErrTimeout
	}
	return out, err
}

// collector keeps the first `need` results in final order: a slice when
// results arrive in it (streaming), else a top-k by the plan's order. With
// no order at all (and no $nearSphere) the order is objectId's: the top-k
// then holds each result with its id, read once, so that its comparisons
// are string compares rather than two object lookups each.
type collector struct {
	need   int
	stream bool
	items  []hit // streaming
	best   *topK[hit]
	byID   *topK[idItem]
}

func newCollector(pl *Plan, need int) *collector {
	c := &collector{need: need, stream: pl.streaming()}
	switch {
	case c.stream:
	case len(pl.q.Order) == 0 && pl.near == nil:
		c.byID = newIDTopK(need)
	default:
		c.best = newTopK(need, func(a, b hit) bool { return pl.less(a.obj, b.obj) })
	}
	return c
}

func (c *collector) len() int {
	switch {
	case c.stream:
		return len(c.items)
	case c.byID != nil:
		return c.byID.Len()
	}
	return c.best.Len()
}

// add keeps h if it is among the best so far; id is its objectId when
// the collector orders by id (byID), read by the caller's scan.
func (c *collector) add(id string, h hit) {
	switch {
	case c.byID != nil:
		c.byID.add(newIDItem(id, h))
	case !c.stream:
		c.best.add(h)
	case len(c.items) < c.need:
		c.items = append(c.items, h)
	}
}

// sorted returns the objects kept, in order, and their refs.
func (c *collector) sorted() ([]schema.Object, []index.Ref) {
	switch {
	case c.stream:
		return hitObjects(c.items)
	case c.byID != nil:
		return idObjects(c.byID.sorted())
	}
	return hitObjects(c.best.sorted())
}

// less is the final result order: matcher.Compare's (the order keys, then
// objectId in the direction of the last key, so an index scanned backwards
// agrees). With no order, a $nearSphere sorts by distance first.
func (pl *Plan) less(a, b schema.Object) bool {
	if len(pl.q.Order) == 0 && pl.near != nil {
		if da, db := pl.near.distance(a), pl.near.distance(b); da != db {
			return da < db
		}
	}
	return matcher.Compare(a, b, pl.sortKeys) < 0
}

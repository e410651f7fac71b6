package planner

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Geo access: GeoPoint constraints scan the leaf-id ranges of an S2
// covering of their region (index/geo.go); $nearSphere with a limit and no
// order searches outward in growing rings and stops as soon as the nearest
// are known; $geoIntersects looks up the Polygons whose covering holds the
// point. Coverings are never tight: the residual matcher runs the exact
// test on every candidate, except candidates from interior ranges (wholly
// inside the region), which skip the geo constraint and only face the
// rest of the where.

// GeoCollection is what the planner needs from a collection's geo indexes
// (index.Collection provides it).
type GeoCollection interface {
	// GeoIndex reports the kind of geo index on path.
	GeoIndex(path string) index.GeoKind
	// ScanGeo calls fn with the objects whose GeoPoint at path has its
	// leaf cell in ranges, with that point and the range's interior flag.
	ScanGeo(path string, ranges []geo.CellRange, deadline time.Time, fn func(ref index.Ref, p geo.Point, interior bool) bool) error
	// EstimateGeo counts the GeoPoints at path in ranges, at most limit.
	EstimateGeo(path string, ranges []geo.CellRange, limit int) int
	// ScanGeoContaining calls fn with the objects whose Polygon at path
	// may contain p (a superset).
	ScanGeoContaining(path string, p geo.Point, deadline time.Time, fn func(index.Ref) bool) error
}

// geoAccess is the geo part of an accessGeo.
type geoAccess struct {
	kind   index.GeoKind
	region geo.Region      // GeoPoints: what the constraint accepts (nil: every point)
	ranges []geo.CellRange // GeoPoints: the covering (the whole curve for an unlimited $nearSphere)
	point  geo.Point       // GeoShapes: the $geoIntersects point
	near   *where.Near     // set when the constraint is $nearSphere
}

// fullCurve is every leaf cell id: an unlimited $nearSphere's candidates.
var fullCurve = []geo.CellRange{{Lo: 0, Hi: math.MaxUint64}}

func (g *geoAccess) describe(path string) string {
	switch {
	case g.kind == index.GeoShapes:
		return "geo polygon index " + path + " (covering cells holding the point)"
	case g.ranges == nil:
		return "geo index " + path + " (nearest first, growing rings)"
	}
	interior := 0
	for _, r := range g.ranges {
		if r.Interior {
			interior++
		}
	}
	return fmt.Sprintf("geo index %s (%d cell range%s, %d interior)", path, len(g.ranges), plural(len(g.ranges)), interior)
}

// nearScanFactor sizes the estimate of a ring search: it examines a few
// times the objects it returns.
const nearScanFactor = 4

// geoAccessFor is the access of a geo operator, or nil when the path has
// no geo index of the right kind.
func (p *planner) geoAccessFor(path string, op *where.Op) *access {
	gc := GeoCollection(p.coll)
	kind := gc.GeoIndex(path)
	if op.Code == where.OpGeoIntersects {
		if kind != index.GeoShapes || op.Point == nil {
			return nil
		}
		g := &geoAccess{kind: kind, point: *op.Point}
		est := 0
		_ = gc.ScanGeoContaining(path, g.point, p.deadline, func(index.Ref) bool {
			est++
			return est < p.budgetCap()
		})
		return &access{kind: accessGeo, path: path, geo: g, estimate: est, op: op}
	}
	if kind != index.GeoPoints {
		return nil
	}
	g := &geoAccess{kind: kind}
	if op.Code == where.OpNearSphere {
		g.near = op.Near
	}
	region, ok := matcher.RegionOf(op)
	if !ok && g.near == nil {
		return nil
	}
	g.region = region
	var est int
	switch {
	case g.near != nil && len(p.q.Order) == 0 && !p.q.Count:
		// A ring search (ringSearch) needs no covering; it reads a few
		// times the objects it returns.
		est = nearScanFactor*(p.q.Skip+p.q.Limit) + 64
	case region != nil:
		g.ranges, est = p.cover(gc, path, region)
	default:
		g.ranges = fullCurve // $nearSphere with no maximum distance at all
		est = gc.EstimateGeo(path, g.ranges, p.budgetCap())
	}
	return &access{kind: accessGeo, path: path, geo: g, estimate: est, op: op}
}

// Covering refinement. A covering starts with about geo.CoverMaxCells
// cells of one level; each refinement replaces its boundary cells (those
// not wholly inside the region, whose points face the exact test) by
// their children that meet the region, which about halves the boundary
// area. Refining a cell costs four cell tests (0.2-0.5 µs each) and
// visiting a candidate about 40 ns (bench/README.md, "Geo"), so a level
// pays when the boundary cells hold more than geoRefinePerCell points
// each: large regions and counts get fine boundaries, a query returning
// a hundred points keeps its first covering.
const (
	geoRefinePerCell = 64
	geoMaxRefine     = 8
	// geoMaxCells stops refining a covering that has this many cells.
	geoMaxCells = 1024
)

// cover returns the covering of a region to scan and its estimate: the
// objects a scan visits, at most the budget cap. A count of the geo
// constraint alone visits only the boundary (interior ranges are counted
// from the index), so its estimate is the boundary's.
func (p *planner) cover(gc GeoCollection, path string, region geo.Region) ([]geo.CellRange, int) {
	c := geo.NewCovering(region, 0)
	var ranges, boundary, interior []geo.CellRange
	threshold := 0
	split := func() {
		ranges, boundary, interior = c.Ranges(), nil, nil
		for _, r := range ranges {
			if r.Interior {
				interior = append(interior, r)
			} else {
				boundary = append(boundary, r)
			}
		}
		threshold = geoRefinePerCell * c.Boundary()
	}
	split()
	visit := gc.EstimateGeo(path, boundary, threshold+1)
	for level := 1; visit > threshold && level <= geoMaxRefine && c.Len() <= geoMaxCells && c.Refine(); level++ {
		split()
		visit = gc.EstimateGeo(path, boundary, threshold+1)
	}
	budget := p.budgetCap()
	if visit > threshold {
		visit = gc.EstimateGeo(path, boundary, budget)
	}
	if p.q.Count && p.q.Limit == 0 {
		return ranges, visit
	}
	if len(interior) > 0 && visit < budget {
		visit += gc.EstimateGeo(path, interior, budget-visit)
	}
	return ranges, visit
}

// withoutOp copies the And-spine of a tree without one operator (geo
// operators only occur under And nodes): the residual for candidates that
// already satisfy that operator.
func withoutOp(n *where.Node, target *where.Op) *where.Node {
	switch n.Kind {
	case where.KindAnd:
		out := &where.Node{Kind: n.Kind, Children: make([]*where.Node, 0, len(n.Children))}
		for _, c := range n.Children {
			if r := withoutOp(c, target); r != nil {
				out.Children = append(out.Children, r)
			}
		}
		return out
	case where.KindField:
		for i := range n.Ops {
			if &n.Ops[i] == target {
				if len(n.Ops) == 1 {
					return nil
				}
				cp := *n
				cp.Ops = append(append([]where.Op(nil), n.Ops[:i]...), n.Ops[i+1:]...)
				return &cp
			}
		}
	}
	return n
}

// runGeo executes a plan whose access is accessGeo.
func (pl *Plan) runGeo() (Result, error) {
	a, q := pl.access, pl.q
	gc := GeoCollection(pl.coll)
	need := q.Skip + q.Limit
	if a.geo.near != nil && pl.near != nil && len(q.Order) == 0 && !q.Count {
		return pl.ringSearch(gc, need)
	}
	rest, err := pl.restOf(a.op)
	if err != nil {
		return Result{}, err
	}
	var res Result
	out := newGeoResults(pl, need)
	if a.geo.kind == index.GeoShapes {
		err = gc.ScanGeoContaining(a.path, a.geo.point, pl.deadline, func(ref index.Ref) bool {
			res.Examined++
			if h := hitOf(ref); pl.match(h.obj) {
				out.add(h, nil)
			}
			return true
		})
	} else {
		ranges, region := a.geo.ranges, a.geo.region
		if q.Count && q.Limit == 0 && len(withoutOp(pl.root, a.op).Children) == 0 && !pl.visible {
			// Counting the geo constraint alone: interior ranges are
			// counted from the index, not visited. (The counts read the
			// live index, the scan its snapshot: a write in between may
			// show in one and not the other, as it would a moment later.)
			var boundary []geo.CellRange
			for _, r := range ranges {
				if r.Interior {
					out.matched += gc.EstimateGeo(a.path, []geo.CellRange{r}, 0)
				} else {
					boundary = append(boundary, r)
				}
			}
			ranges = boundary
		}
		err = gc.ScanGeo(a.path, ranges, pl.deadline, func(ref index.Ref, p geo.Point, interior bool) bool {
			res.Examined++
			// The exact test, on the point the index read from the
			// object's bytes (none for an interior cell's): the object
			// is decoded only once inside, if at all (geoRest).
			if !interior && region != nil && !region.ContainsPoint(p) {
				return true
			}
			if h, ok := rest.hit(ref); ok {
				out.add(h, &p)
			}
			return true
		})
	}
	if errors.Is(err, index.ErrDeadline) {
		return Result{}, ErrTimeout
	}
	if err != nil {
		return Result{}, err
	}
	res.Count = out.matched
	objs, refs := out.sorted()
	res.Objects, res.Refs = page(objs, refs, q.Skip)
	return res, nil
}

// geoResults keeps the first need matches of a geo scan in the final
// order: by distance for a $nearSphere without order, by objectId without
// any order, else by the order (the plan's collector).
type geoResults struct {
	pl      *Plan
	matched int
	nearest *topK[nearItem]
	byID    *topK[idItem]
	need    int
	collect *collector
}

func newGeoResults(pl *Plan, need int) *geoResults {
	r := &geoResults{pl: pl, need: need}
	switch {
	case len(pl.q.Order) > 0:
		r.collect = newCollector(pl, need)
	case pl.near != nil:
		r.nearest = newTopK(need, nearLess)
	default:
		r.byID = newIDTopK(r.need)
	}
	return r
}

// add keeps a match; p is its point when the scan knows it.
func (r *geoResults) add(h hit, p *geo.Point) {
	r.matched++
	switch {
	case r.collect != nil:
		r.collect.add("", h) // ordered: the collector is not by id
	case r.nearest != nil:
		if p == nil || r.pl.near.path != r.pl.access.path {
			r.nearest.add(nearItemOf(r.pl.near.distance(h.obj), h))
		} else {
			r.nearest.add(nearItemOf(geo.Distance(r.pl.near.center, *p), h))
		}
	case r.need > 0:
		r.byID.add(newIDItem(h.ref.ID(), h))
	}
}

func (r *geoResults) sorted() ([]schema.Object, []index.Ref) {
	switch {
	case r.collect != nil:
		return r.collect.sorted()
	case r.nearest != nil:
		return nearObjects(r.nearest.sorted())
	}
	return idObjects(r.byID.sorted())
}

// geoRest is the test of candidates known to satisfy a geo operator
// (interior cells, or the exact test on the point the index read): the
// residual without the operator, and the visibility guard when there is
// one. The rest is tested on the candidate's bytes when it can be
// (bytes.go), and when nothing but the bytes is read a match stays
// undecoded for the reply to send as stored (Query.Undecoded).
type geoRest struct {
	match     func(schema.Object) bool
	bytes     *byteTest
	undecoded bool
}

// restOf makes the geoRest of op.
func (pl *Plan) restOf(op *where.Op) (*geoRest, error) {
	node := withoutOp(pl.root, op)
	m, err := matcher.Compile(node, nil)
	if err != nil {
		return nil, err
	}
	g := &geoRest{match: m.Match}
	if pl.visible {
		if pl.guard == nil {
			g.match = pl.match // the whole residual and the guard
		} else {
			guard := pl.guard
			g.match = func(o schema.Object) bool { return guard(o) && m.Match(o) }
		}
		return g, nil
	}
	g.bytes = newByteTest(node, m.Match)
	empty := node.Kind == where.KindAnd && len(node.Children) == 0
	g.undecoded = pl.q.Undecoded && len(pl.q.Order) == 0 && pl.near == nil && (empty || g.bytes != nil)
	return g, nil
}

// hit is ref's hit and whether it matches.
func (g *geoRest) hit(ref index.Ref) (hit, bool) {
	if g.bytes != nil {
		if !g.bytes.test(ref) {
			return hit{}, false
		}
		if g.undecoded {
			return hit{ref: ref}, true
		}
		return hitOf(ref), true // no guard: the rest is all there is to test
	}
	if g.undecoded {
		return hit{ref: ref}, true
	}
	h := hitOf(ref)
	return h, g.match(h.obj)
}

// ringSearch returns the first need objects by distance from a
// $nearSphere point. It scans caps of growing radius, each ring only the
// cells the previous ones did not cover, and stops once need matches lie
// within the radius already covered: nothing unseen can be nearer.
func (pl *Plan) ringSearch(gc GeoCollection, need int) (Result, error) {
	var res Result
	if need <= 0 {
		res.Objects = []schema.Object{}
		return res, nil
	}
	near := pl.access.geo.near
	center := pl.near.center
	maxDist := math.Pi
	if near.HasMax {
		maxDist = math.Min(near.MaxDistance, math.Pi)
	}
	// The distance test is done here, with the function the matcher uses;
	// rest decides the remainder.
	rest, err := pl.restOf(pl.access.op)
	if err != nil {
		return Result{}, err
	}
	nearest := newTopK(need, nearLess)
	rings := geo.NewRings(center, geoRingCells)
	radius := math.Min(pl.startRadius(gc, need), maxDist)
	for {
		ranges := rings.Next(radius)
		err := gc.ScanGeo(pl.access.path, ranges, pl.deadline, func(ref index.Ref, p geo.Point, _ bool) bool {
			res.Examined++
			// The distance alone rejects most candidates; only those it
			// keeps are decoded (their objectId breaks ties, rest tests
			// them).
			d := geo.Distance(center, p)
			if d > maxDist || nearest.full() && d > nearest.worst().d {
				return true
			}
			it := nearItem{d: d, id: ref.ID()}
			if !nearest.improves(it) {
				return true
			}
			var ok bool
			if it.hit, ok = rest.hit(ref); ok {
				nearest.add(it)
			}
			return true
		})
		if errors.Is(err, index.ErrDeadline) {
			return Result{}, ErrTimeout
		}
		if err != nil {
			return Result{}, err
		}
		if radius >= maxDist || nearest.Len() == need && nearest.worst().d <= radius {
			break
		}
		// Grow by the density seen so far: k matches within radius.
		k := 0
		for _, it := range nearest.items {
			if it.d <= radius {
				k++
			}
		}
		grow := math.Sqrt(float64(need)/float64(max(k, 1))) * 1.25
		radius = math.Min(radius*math.Min(math.Max(grow, 1.5), 4), maxDist)
	}
	objs, refs := nearObjects(nearest.sorted())
	res.Objects, res.Refs = page(objs, refs, pl.q.Skip)
	res.Count = len(res.Objects)
	return res, nil
}

// geoRingCells is the cell budget of each ring's covering. Measured on a
// million points (20 nearest): 16 and 32 cells choose the same level (85
// candidates, 27 µs); 64 cells read 52 candidates but take 41 µs.
const geoRingCells = 16

// startRadius guesses the radius holding about need points around the
// center from the index's density: the finest cell around the center
// holding at least need points gives a count per area.
func (pl *Plan) startRadius(gc GeoCollection, need int) float64 {
	center, path := pl.near.center, pl.access.path
	if gc.EstimateGeo(path, []geo.CellRange{geo.CellAround(center, 0)}, need) < need {
		return math.Pi // sparse: the nearest may be anywhere
	}
	lo, hi := 0, 30 // the cell at lo holds >= need points
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if gc.EstimateGeo(path, []geo.CellRange{geo.CellAround(center, mid)}, need) >= need {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	n := gc.EstimateGeo(path, []geo.CellRange{geo.CellAround(center, lo)}, 16*need)
	density := float64(n) / geo.CellArea(lo)
	// A cap of radius r has area about pi r^2; aim at twice need.
	return math.Sqrt(2 * float64(need) / (math.Pi * density))
}

// nearSort orders results by distance from a $nearSphere point when the
// query gives no explicit order.
type nearSort struct {
	path   string
	center geo.Point
}

// nearOf finds the $nearSphere of a tree: a field of the root or of an
// $and under it (geo constraints are refused inside $or and $nor).
func nearOf(root *where.Node) *nearSort {
	var found *nearSort
	root.Walk(func(n *where.Node) bool {
		if found != nil || n.Kind == where.KindOr || n.Kind == where.KindNor {
			return false
		}
		for _, op := range n.Ops {
			if n.Kind == where.KindField && op.Code == where.OpNearSphere && op.Near != nil {
				found = &nearSort{path: n.Path, center: op.Near.Point}
			}
		}
		return found == nil
	})
	return found
}

func (n *nearSort) pointOf(obj schema.Object) (geo.Point, bool) {
	v, _ := schema.Get(obj, n.path)
	return geo.PointFromValue(v)
}

// distance is the great-circle distance in radians, +Inf when the object
// has no GeoPoint at the path (those cannot match a $nearSphere anyway).
func (n *nearSort) distance(obj schema.Object) float64 {
	p, ok := n.pointOf(obj)
	if !ok {
		return math.Inf(1)
	}
	return geo.Distance(n.center, p)
}

// nearItem is an object with its distance; nearLess is the $nearSphere
// order, by distance, then objectId.
type nearItem struct {
	d  float64
	id string
	hit
}

func nearLess(a, b nearItem) bool { return a.d < b.d || a.d == b.d && a.id < b.id }

func nearItemOf(d float64, h hit) nearItem {
	return nearItem{d, h.ref.ID(), h}
}

// nearObjects are the objects of items and their refs, in their order.
func nearObjects(items []nearItem) ([]schema.Object, []index.Ref) {
	objs, refs := make([]schema.Object, len(items)), make([]index.Ref, len(items))
	for i, it := range items {
		objs[i], refs[i] = it.obj, it.ref
	}
	return objs, refs
}

// nearSphereMax is the limit LimitNearSphere applies (0: none).
func (p *planner) nearSphereMax() float64 {
	return geo.NearSphereLimit(p.opts.NearSphereMaxDistance)
}

package geo

import (
	"cmp"
	"math"
	"slices"

	"github.com/golang/geo/s2"
)

// Covering parameters, chosen by measurement (bench/README.md, "Geo").
//
// A covering is made of cells of one level: the finest level at which the
// region's latitude/longitude bound spans about CoverMaxCells average
// cells. The cells meeting the region are found by a flood fill from a
// point of it, each tested once, and consecutive cells along the Hilbert
// curve merge into one leaf-id range, so a scan seeks far fewer times than
// there are cells. s2.RegionCoverer's mixed-level coverings are tighter but
// take 20-120 µs to compute for a 1 km region, against 6-15 µs here and
// about 40 ns per point a looser covering adds to a scan; callers refine a
// covering where the index says its boundary is dense (Covering.Refine).
// With 16 cells a region returning a hundred of a million points reads
// about 250; 8 cells choose the same level for such shapes, 32 a finer one
// that costs more than it saves. Any level from 0 to 30 may be chosen, so
// a 1 m cap and a hemisphere are both covered closely.
const (
	CoverMaxCells = 16
	// coverOverflow bounds a flood fill, as a multiple of the budget,
	// before it starts again one level coarser (distorted cells near cube
	// corners can exceed the estimate).
	coverOverflow = 4
)

// Cover returns ranges of leaf cell ids holding every point of r that the
// exact test accepts, in ascending order, each marked interior when all of
// it passes the test. maxCells <= 0 means CoverMaxCells.
func Cover(r Region, maxCells int) []CellRange {
	return NewCovering(r, maxCells).Ranges()
}

// CoverRefined is Cover refined levels times (Covering.Refine).
func CoverRefined(r Region, maxCells, levels int) []CellRange {
	c := NewCovering(r, maxCells)
	for ; levels > 0; levels-- {
		c.Refine()
	}
	return c.Ranges()
}

// Covering is a covering of a region under construction: cells of one
// level to begin with, each known to be interior or on the boundary.
type Covering struct {
	classify classifier
	cells    []s2.CellID
	interior []bool
}

// classifier decides a cell against a region: meets (it may hold a point
// of it: never false when it does) and inside (every point of it is in
// the region: never true when one is not). Regions build one per covering
// so that their S2 shapes are made once.
type classifier func(c s2.Cell) (meets, inside bool)

// NewCovering covers r with about maxCells cells of one level (<= 0 means
// CoverMaxCells).
func NewCovering(r Region, maxCells int) *Covering {
	c := &Covering{classify: r.classifier()}
	c.cells, c.interior = coverCells(r, c.classify, maxCells)
	return c
}

// Len is the number of cells.
func (c *Covering) Len() int { return len(c.cells) }

// Boundary is the number of cells not wholly inside the region.
func (c *Covering) Boundary() int {
	n := 0
	for _, in := range c.interior {
		if !in {
			n++
		}
	}
	return n
}

// Refine replaces every boundary cell (not wholly inside the region) by
// its children that meet the region. Each call roughly halves the area
// outside the region and grows the interior part, for four cell tests per
// boundary cell, so callers refine when the index says many points lie in
// boundary cells. It reports false when nothing could be refined.
func (c *Covering) Refine() bool {
	cells := make([]s2.CellID, 0, 2*len(c.cells))
	interior := make([]bool, 0, 2*len(c.cells))
	refined := false
	for i, id := range c.cells {
		if c.interior[i] || id.IsLeaf() {
			cells, interior = append(cells, id), append(interior, c.interior[i])
			continue
		}
		refined = true
		for ch := id.ChildBegin(); ch != id.ChildEnd(); ch = ch.Next() {
			if meets, inside := c.classify(s2.CellFromCellID(ch)); meets {
				cells, interior = append(cells, ch), append(interior, inside)
			}
		}
	}
	c.cells, c.interior = cells, interior
	return refined
}

// Ranges returns the covering as ascending leaf-id ranges, neighbours with
// the same interior flag merged (leaf ids are odd, so the leaf after Hi is
// Hi+2).
func (c *Covering) Ranges() []CellRange {
	out := make([]CellRange, 0, len(c.cells))
	for i, id := range c.cells {
		lo, hi := uint64(id.RangeMin()), uint64(id.RangeMax())
		if n := len(out); n > 0 && out[n-1].Hi+2 == lo && out[n-1].Interior == c.interior[i] {
			out[n-1].Hi = hi
			continue
		}
		out = append(out, CellRange{Lo: lo, Hi: hi, Interior: c.interior[i]})
	}
	return out
}

// CoverAdaptive is Cover with s2.RegionCoverer's mixed-level coverings:
// tighter for long thin shapes, much slower to compute. It is kept for
// measurement and for shapes indexed once and queried often.
func CoverAdaptive(r Region, maxCells int) []CellRange {
	if maxCells <= 0 {
		maxCells = CoverMaxCells
	}
	rc := s2.RegionCoverer{MinLevel: 0, MaxLevel: s2.MaxLevel, LevelMod: 1, MaxCells: maxCells}
	return rangesOf(rc.CellUnion(r.outer()), r.containsCell)
}

// coverCells returns the sorted cells of one level meeting r, with their
// interior flags.
func coverCells(r Region, classify classifier, maxCells int) ([]s2.CellID, []bool) {
	if maxCells <= 0 {
		maxCells = CoverMaxCells
	}
	bound := r.outer().RectBound()
	if bound.IsEmpty() {
		return nil, nil
	}
	for level := coverLevel(bound, maxCells); ; level-- {
		if cells, ok := flood(classify, r.seeds(), level, coverOverflow*maxCells); ok || level == 0 {
			slices.SortFunc(cells, func(a, b floodCell) int { return cmp.Compare(a.id, b.id) })
			ids, interior := make([]s2.CellID, len(cells)), make([]bool, len(cells))
			for i, fc := range cells {
				ids[i], interior[i] = fc.id, fc.inside
			}
			return ids, interior
		}
	}
}

// coverUnion is the cells of r's covering as a normalized cell union.
func coverUnion(r Region, maxCells int) s2.CellUnion {
	ids, _ := coverCells(r, r.classifier(), maxCells)
	cu := s2.CellUnion(ids)
	cu.Normalize()
	return cu
}

// coverLevel is the finest level at which the bound spans at most
// maxCells cells of the average edge length, measured where the bound is
// widest.
func coverLevel(b s2.Rect, maxCells int) int {
	h := b.Lat.Length()
	minAbsLat := 0.0
	if !b.Lat.Contains(0) {
		minAbsLat = math.Min(math.Abs(b.Lat.Lo), math.Abs(b.Lat.Hi))
	}
	w := b.Lng.Length() * math.Cos(minAbsLat)
	best := 0
	for level := 1; level <= s2.MaxLevel; level++ {
		e := s2.AvgEdgeMetric.Value(level)
		if (w/e+1)*(h/e+1) > float64(maxCells) {
			break
		}
		best = level
	}
	return best
}

type floodCell struct {
	id     s2.CellID
	inside bool
}

// flood collects the level cells meeting the region, starting from the
// cells of the seeds and walking to neighbours (corners included) of every
// cell that meets it. It gives up (false) beyond limit cells.
func flood(classify classifier, seeds []Point, level, limit int) ([]floodCell, bool) {
	var out []floodCell
	var queue []s2.CellID
	seen := make(map[s2.CellID]struct{}, 64)
	push := func(id s2.CellID) {
		if _, ok := seen[id]; !ok {
			seen[id] = struct{}{}
			queue = append(queue, id)
		}
	}
	for _, p := range seeds {
		push(s2.CellIDFromLatLng(latLng(p)).Parent(level))
	}
	for len(queue) > 0 {
		id := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		meets, inside := classify(s2.CellFromCellID(id))
		if !meets {
			continue
		}
		if out = append(out, floodCell{id, inside}); len(out) > limit {
			return out, false
		}
		for _, nb := range id.AllNeighbors(level) {
			push(nb)
		}
	}
	return out, true
}

// rangesOf turns sorted, disjoint cells into leaf-id ranges, merging
// neighbours with the same interior flag (leaf ids are odd, so the leaf
// after Hi is Hi+2).
func rangesOf(cells []s2.CellID, interior func(s2.Cell) bool) []CellRange {
	out := make([]CellRange, 0, len(cells))
	for _, id := range cells {
		in := interior != nil && interior(s2.CellFromCellID(id))
		lo, hi := uint64(id.RangeMin()), uint64(id.RangeMax())
		if n := len(out); n > 0 && out[n-1].Hi+2 == lo && out[n-1].Interior == in {
			out[n-1].Hi = hi
			continue
		}
		out = append(out, CellRange{Lo: lo, Hi: hi, Interior: in})
	}
	return out
}

// CoverCells returns the cell ids of r's covering (all of one level), for
// indexing a shape by the cells it may touch. maxCells <= 0 means
// CoverMaxCells.
func CoverCells(r Region, maxCells int) []uint64 {
	cells, _ := coverCells(r, r.classifier(), maxCells)
	out := make([]uint64, len(cells))
	for i, id := range cells {
		out[i] = uint64(id)
	}
	return out
}

// CellParent is the ancestor of a cell at level (0 to 30, not finer than
// the cell's own level).
func CellParent(cell uint64, level int) uint64 { return uint64(s2.CellID(cell).Parent(level)) }

// CellLevel is a cell id's level, 0 (a cube face) to 30 (a leaf).
func CellLevel(cell uint64) int { return s2.CellID(cell).Level() }

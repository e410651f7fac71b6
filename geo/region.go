package geo

import (
	"math"

	"github.com/golang/geo/r1"
	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
)

// Region is the shape of one geo constraint: an exact point test (the
// operator's meaning) and what coverings need. Cap, Box and *Polygon are
// Regions.
type Region interface {
	// ContainsPoint is the exact test.
	ContainsPoint(p Point) bool
	// outer is an S2 region holding every point ContainsPoint accepts,
	// with room to spare (Margin), for coverings.
	outer() s2.Region
	// containsCell reports that every point of the cell passes
	// ContainsPoint, with room to spare; false when unsure.
	containsCell(c s2.Cell) bool
	// seeds are points of the region from which a flood fill over the
	// cells meeting outer reaches all of them (one per connected part).
	seeds() []Point
	// classifier returns the cell test of coverings (cover.go).
	classifier() classifier
}

// Margin, in radians (about 6 cm on Earth), is how far coverings reach
// beyond a region and how far inside it an interior cell must lie. It is
// far above the rounding of any of the computations involved (about 1e-15)
// and above the size of a leaf cell (about 1 cm), so a covering never misses
// a point the exact test accepts and an interior cell never holds one it
// refuses.
const Margin = 1e-8

// Cap is $nearSphere with a maximum distance and $centerSphere: the points
// within Radius (radians of a great circle, inclusive) of Center.
type Cap struct {
	Center Point
	Radius float64
}

// ContainsPoint reports Distance(Center, p) <= Radius.
func (c Cap) ContainsPoint(p Point) bool { return Distance(c.Center, p) <= c.Radius }

func (c Cap) s2Cap(radius float64) s2.Cap {
	if radius >= math.Pi {
		return s2.FullCap()
	}
	return s2.CapFromCenterAngle(s2.PointFromLatLng(latLng(c.Center)), s1.Angle(radius))
}

func (c Cap) outer() s2.Region { return c.s2Cap(c.Radius + Margin) }

func (c Cap) seeds() []Point { return []Point{c.Center} }

func (c Cap) classifier() classifier {
	outer := c.s2Cap(c.Radius + Margin)
	full := c.Radius >= math.Pi
	var inner s2.Cap
	hasInner := !full && c.Radius > Margin
	if hasInner {
		inner = c.s2Cap(c.Radius - Margin)
	}
	return func(cell s2.Cell) (bool, bool) {
		if !outer.IntersectsCell(cell) {
			return false, false
		}
		return true, full || hasInner && inner.ContainsCell(cell)
	}
}

func (c Cap) containsCell(cell s2.Cell) bool {
	if c.Radius >= math.Pi {
		return true // no two points are further apart than pi
	}
	if c.Radius <= Margin {
		return false
	}
	return c.s2Cap(c.Radius - Margin).ContainsCell(cell)
}

// Box is $within.$box: the points whose latitude is within [South, North]
// and whose longitude is within [West, East] going east from West, edges
// included. Its edges are lines of latitude and longitude (MongoDB's $box
// is flat too). When West > East the box crosses the antimeridian.
type Box struct {
	South, North, West, East float64 // degrees
}

// NewBox reads a $box [southwest, northeast]. The latitudes may come in
// either order. A northeast corner west of the southwest one means the box
// crosses the antimeridian; but when both axes are reversed (the first
// corner is north-east of the second) the corners were sent the other way
// round, as Postgres-backed Parse Server accepts, and are swapped back.
func NewBox(sw, ne Point) Box {
	if sw.Lat > ne.Lat && sw.Lng > ne.Lng {
		sw, ne = ne, sw
	}
	return Box{South: math.Min(sw.Lat, ne.Lat), North: math.Max(sw.Lat, ne.Lat), West: sw.Lng, East: ne.Lng}
}

// ContainsPoint reports whether p lies in the box, edges included.
func (b Box) ContainsPoint(p Point) bool {
	if p.Lat < b.South || p.Lat > b.North {
		return false
	}
	if b.West <= b.East {
		return p.Lng >= b.West && p.Lng <= b.East
	}
	return p.Lng >= b.West || p.Lng <= b.East
}

// rect is the box grown by margin radians on every side (shrunk when
// margin is negative; ok is false when nothing is left).
func (b Box) rect(margin float64) (s2.Rect, bool) {
	lat := r1.Interval{Lo: b.South*rad - margin, Hi: b.North*rad + margin}
	lat = lat.Intersection(r1.Interval{Lo: -math.Pi / 2, Hi: math.Pi / 2})
	width := b.East - b.West // eastward extent in degrees
	if width < 0 {
		width += 360
	}
	width = width*rad + 2*margin
	if lat.IsEmpty() || width < 0 {
		return s2.Rect{}, false
	}
	var lng s1.Interval
	if width >= 2*math.Pi {
		lng = s1.FullInterval()
	} else {
		lng = s1.IntervalFromEndpoints(remainder(b.West*rad-margin), remainder(b.East*rad+margin))
	}
	return s2.Rect{Lat: lat, Lng: lng}, true
}

// remainder maps an angle in radians into [-pi, pi].
func remainder(a float64) float64 { return math.Remainder(a, 2*math.Pi) }

func (b Box) outer() s2.Region {
	r, ok := b.rect(Margin)
	if !ok {
		return s2.EmptyRect()
	}
	return r
}

func (b Box) seeds() []Point {
	width := b.East - b.West
	if width < 0 {
		width += 360
	}
	return []Point{{Lat: (b.South + b.North) / 2, Lng: math.Remainder(b.West+width/2, 360)}}
}

func (b Box) classifier() classifier {
	outer, ok := b.rect(Margin)
	if !ok {
		return func(s2.Cell) (bool, bool) { return false, false }
	}
	inner, hasInner := b.rect(-Margin)
	return func(c s2.Cell) (bool, bool) {
		// The cell's bound holds the whole cell: meeting it is a superset.
		bound := c.RectBound()
		if !outer.Intersects(bound) {
			return false, false
		}
		return true, hasInner && inner.Contains(bound)
	}
}

func (b Box) containsCell(c s2.Cell) bool {
	r, ok := b.rect(-Margin)
	return ok && r.ContainsCell(c)
}

func latLng(p Point) s2.LatLng { return s2.LatLngFromDegrees(p.Lat, p.Lng) }

// CellRange is a run of S2 leaf cell ids, Lo to Hi inclusive: the keys of
// the GeoPoint index a scan visits. Interior means every point in it
// passes the region's exact test.
type CellRange struct {
	Lo, Hi   uint64
	Interior bool
}

// CellAround is the range of the level-level cell holding p.
func CellAround(p Point, level int) CellRange {
	id := s2.CellIDFromLatLng(latLng(p)).Parent(level)
	return CellRange{Lo: uint64(id.RangeMin()), Hi: uint64(id.RangeMax())}
}

// CellArea is the average area of a level-level cell in steradians (on
// the unit sphere; multiply by a radius squared for an area).
func CellArea(level int) float64 { return s2.AvgAreaMetric.Value(level) }

// Rings covers caps of growing radius around a center for a nearest
// search: each call to Next returns only the cells no earlier call
// returned, so no point is visited twice.
type Rings struct {
	center   Point
	maxCells int
	seen     s2.CellUnion
	radius   float64
}

// NewRings starts a ring search around center. maxCells <= 0 means
// CoverMaxCells per ring.
func NewRings(center Point, maxCells int) *Rings {
	return &Rings{center: center, maxCells: maxCells, radius: -1}
}

// Next covers the cap of the given radius (radians) minus what earlier
// rings covered. Afterwards every point within radius of the center lies in
// the ranges returned so far. The interior flags are not set.
func (r *Rings) Next(radius float64) []CellRange {
	if radius <= r.radius {
		return nil
	}
	r.radius = radius
	cells := coverUnion(Cap{Center: r.center, Radius: radius}, r.maxCells)
	fresh := cells
	if len(r.seen) > 0 {
		fresh = s2.CellUnionFromDifference(cells, r.seen)
		r.seen = s2.CellUnionFromUnion(r.seen, cells)
	} else {
		r.seen = cells
	}
	return rangesOf(fresh, nil)
}

// Radius is the largest radius covered so far (negative before Next).
func (r *Rings) Radius() float64 { return r.radius }

// BoundingCap is a cap holding the whole box with room to spare (the box
// grown by Margin, then S2's conservative cap bound of that rectangle),
// for a prefilter that a spatial index can serve (PostgreSQL's ST_DWithin
// on a GiST index). ok is false when the box is empty.
func (b Box) BoundingCap() (c Cap, ok bool) {
	r, ok := b.rect(Margin)
	if !ok {
		return Cap{}, false
	}
	bound := r.CapBound()
	center := s2.LatLngFromPoint(bound.Center())
	return Cap{Center: Point{Lat: center.Lat.Degrees(), Lng: center.Lng.Degrees()}, Radius: float64(bound.Radius())}, true
}

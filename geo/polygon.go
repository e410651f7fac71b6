package geo

import (
	"errors"
	"math"

	"github.com/golang/geo/r1"
	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
)

// Polygon is $geoWithin.$polygon and a stored Polygon value. Its edges are
// straight lines on the latitude/longitude plane (lines of latitude and
// longitude stay what they are, as in MongoDB's flat $polygon and Parse
// Server's Postgres `point <@ polygon`), with one refinement for the
// sphere: an edge whose ends are more than 180 degrees of longitude apart
// takes the short way, across the antimeridian (exactly 180 goes east).
// A path may be open or closed (a last point equal to the first is
// dropped). Points on an edge or a vertex are inside; elsewhere the
// even-odd rule decides.
//
// A ring that goes once around the globe (its longitudes turn a full
// circle) encloses the pole on the side of its mean latitude (the north
// pole when that is 0): the region between the ring and that pole.
type Polygon struct {
	pts []Point // the vertices as given, without a closing repeat
	// xs, ys are the vertices on the unwrapped plane: x is longitude made
	// continuous along the ring (it may leave [-180, 180]), y latitude.
	// For a ring around a pole, the pole's corners close the path.
	xs, ys                 []float64
	minX, maxX, minY, maxY float64
}

// ErrPolygonTooSmall is returned by NewPolygon for fewer than 3 points.
var ErrPolygonTooSmall = &Error{Code: CodeInvalidJSON, Message: "a polygon needs at least 3 points"}

// NewPolygon builds a polygon from its vertices (degrees, latitude within
// [-90, 90]). It needs at least 3 points before a closing repeat is dropped.
func NewPolygon(pts []Point) (*Polygon, error) {
	if len(pts) < 3 {
		return nil, ErrPolygonTooSmall
	}
	for _, p := range pts {
		if math.IsNaN(p.Lat) || math.IsNaN(p.Lng) || math.Abs(p.Lat) > 90 || math.IsInf(p.Lng, 0) {
			return nil, errors.New("geo: polygon vertex out of range")
		}
	}
	if len(pts) > 3 && pts[0] == pts[len(pts)-1] {
		pts = pts[:len(pts)-1]
	}
	pg := &Polygon{pts: append([]Point(nil), pts...)}
	x := pts[0].Lng
	sumLat := 0.0
	for i, p := range pts {
		if i > 0 {
			x += wrapDegrees(p.Lng - pts[i-1].Lng)
		}
		pg.xs = append(pg.xs, x)
		pg.ys = append(pg.ys, p.Lat)
		sumLat += p.Lat
	}
	closeX := x + wrapDegrees(pts[0].Lng-pts[len(pts)-1].Lng)
	if math.Abs(closeX-pg.xs[0]) > 180 {
		// Around a pole: close through the pole's corners.
		pole := 90.0
		if sumLat < 0 {
			pole = -90
		}
		pg.xs = append(pg.xs, closeX, closeX, pg.xs[0])
		pg.ys = append(pg.ys, pts[0].Lat, pole, pole)
	}
	pg.minX, pg.maxX = pg.xs[0], pg.xs[0]
	pg.minY, pg.maxY = pg.ys[0], pg.ys[0]
	for i := range pg.xs {
		pg.minX, pg.maxX = math.Min(pg.minX, pg.xs[i]), math.Max(pg.maxX, pg.xs[i])
		pg.minY, pg.maxY = math.Min(pg.minY, pg.ys[i]), math.Max(pg.maxY, pg.ys[i])
	}
	return pg, nil
}

// Points returns the vertices as given (without a closing repeat).
func (pg *Polygon) Points() []Point { return pg.pts }

// wrapDegrees maps a longitude difference into (-180, 180].
func wrapDegrees(d float64) float64 {
	d = math.Mod(d, 360)
	switch {
	case d > 180:
		d -= 360
	case d <= -180:
		d += 360
	}
	return d
}

// edgeEps, in degrees (about 0.1 mm), lets points computed to lie on an
// edge count as on it despite rounding.
const edgeEps = 1e-9

// ContainsPoint reports whether p is inside the polygon or on its edges.
func (pg *Polygon) ContainsPoint(p Point) bool {
	var buf [maxShifts]float64
	for _, x := range pg.shifts(buf[:], p.Lng, p.Lng) {
		if pg.planarContains(x, p.Lat) {
			return true
		}
	}
	return false
}

// shifts returns the copies lo+360k of a longitude span [lo, hi] (hi >= lo)
// that overlap the polygon's unwrapped longitudes, as their lo. They are
// appended to buf[:0]: a caller's array of maxShifts keeps them off the
// heap (ContainsPoint runs once per candidate point of a scan).
func (pg *Polygon) shifts(buf []float64, lo, hi float64) []float64 {
	out := buf[:0]
	k := math.Ceil((pg.minX - edgeEps - hi) / 360)
	for x := lo + 360*k; x <= pg.maxX+edgeEps; x += 360 {
		out = append(out, x)
	}
	return out
}

// maxShifts is room for the shifts of most spans: an unwrapped polygon
// spans less than two turns of longitude.
const maxShifts = 4

// planarContains is the even-odd test on the unwrapped plane, edges
// included.
func (pg *Polygon) planarContains(x, y float64) bool {
	if x < pg.minX-edgeEps || x > pg.maxX+edgeEps || y < pg.minY-edgeEps || y > pg.maxY+edgeEps {
		return false
	}
	inside := false
	n := len(pg.xs)
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		ax, ay, bx, by := pg.xs[j], pg.ys[j], pg.xs[i], pg.ys[i]
		if onSegment(x, y, ax, ay, bx, by) {
			return true
		}
		if (ay > y) != (by > y) && x < ax+(y-ay)*(bx-ax)/(by-ay) {
			inside = !inside
		}
	}
	return inside
}

func onSegment(x, y, ax, ay, bx, by float64) bool {
	if x < math.Min(ax, bx)-edgeEps || x > math.Max(ax, bx)+edgeEps || y < math.Min(ay, by)-edgeEps || y > math.Max(ay, by)+edgeEps {
		return false
	}
	// |cross| / |b-a| is the distance from the point to the edge's line.
	cross := (bx-ax)*(y-ay) - (by-ay)*(x-ax)
	return math.Abs(cross) <= edgeEps*math.Hypot(bx-ax, by-ay)
}

// The rest serves coverings: the polygon as an s2.Region, deciding cells
// by their latitude/longitude bounds, which hold the whole cell.

func (pg *Polygon) outer() s2.Region { return polygonRegion{pg} }

func (pg *Polygon) seeds() []Point { return pg.pts }

// marginDeg is Margin in degrees: cell bounds grow by it before the
// polygon is tested against them.
const marginDeg = Margin / rad

func (pg *Polygon) classifier() classifier {
	return func(c s2.Cell) (meets, inside bool) {
		x0, x1, y0, y1 := cellBounds(c)
		var buf [maxShifts]float64
		for _, x := range pg.shifts(buf[:], x0, x1) {
			if pg.containsRect(x, x+(x1-x0), y0, y1) {
				return true, true
			}
			if !meets && pg.intersectsRect(x, x+(x1-x0), y0, y1) {
				meets = true
			}
		}
		return meets, false
	}
}

func (pg *Polygon) containsCell(c s2.Cell) bool {
	x0, x1, y0, y1 := cellBounds(c)
	var buf [maxShifts]float64
	for _, x := range pg.shifts(buf[:], x0, x1) {
		if pg.containsRect(x, x+(x1-x0), y0, y1) {
			return true
		}
	}
	return false
}

func (pg *Polygon) intersectsCell(c s2.Cell) bool {
	x0, x1, y0, y1 := cellBounds(c)
	var buf [maxShifts]float64
	for _, x := range pg.shifts(buf[:], x0, x1) {
		if pg.intersectsRect(x, x+(x1-x0), y0, y1) {
			return true
		}
	}
	return false
}

// cellBounds is a cell's latitude/longitude bound in degrees grown by
// marginDeg, its longitudes as a span x0 <= x1 (x1 may pass 180).
func cellBounds(c s2.Cell) (x0, x1, y0, y1 float64) {
	b := c.RectBound()
	y0, y1 = b.Lat.Lo/rad-marginDeg, b.Lat.Hi/rad+marginDeg
	if b.Lng.IsFull() {
		return -180 - marginDeg, 180 + marginDeg, y0, y1
	}
	x0, x1 = b.Lng.Lo/rad, b.Lng.Hi/rad
	if x1 < x0 {
		x1 += 360
	}
	return x0 - marginDeg, x1 + marginDeg, y0, y1
}

// intersectsRect reports whether the polygon (edges included) meets the
// closed rectangle on the unwrapped plane.
func (pg *Polygon) intersectsRect(x0, x1, y0, y1 float64) bool {
	if x1 < pg.minX || x0 > pg.maxX || y1 < pg.minY || y0 > pg.maxY {
		return false
	}
	if pg.edgeMeetsRect(x0, x1, y0, y1) {
		return true
	}
	// No edge meets it: the rectangle is wholly inside or wholly outside.
	return pg.planarContains((x0+x1)/2, (y0+y1)/2)
}

// containsRect reports whether the closed rectangle lies inside the
// polygon, touching no edge.
func (pg *Polygon) containsRect(x0, x1, y0, y1 float64) bool {
	if x0 < pg.minX || x1 > pg.maxX || y0 < pg.minY || y1 > pg.maxY {
		return false
	}
	return !pg.edgeMeetsRect(x0, x1, y0, y1) && pg.planarContains((x0+x1)/2, (y0+y1)/2)
}

// edgeMeetsRect reports whether some edge of the polygon meets the closed
// rectangle.
func (pg *Polygon) edgeMeetsRect(x0, x1, y0, y1 float64) bool {
	n := len(pg.xs)
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		if segmentMeetsRect(pg.xs[j], pg.ys[j], pg.xs[i], pg.ys[i], x0, x1, y0, y1) {
			return true
		}
	}
	return false
}

// segmentMeetsRect clips the segment a-b to the closed rectangle
// (Liang-Barsky) and reports whether anything is left.
func segmentMeetsRect(ax, ay, bx, by, x0, x1, y0, y1 float64) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := bx-ax, by-ay
	for _, c := range [4][2]float64{{-dx, ax - x0}, {dx, x1 - ax}, {-dy, ay - y0}, {dy, y1 - ay}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return false
			}
			t0 = math.Max(t0, t)
		} else {
			if t < t0 {
				return false
			}
			t1 = math.Min(t1, t)
		}
	}
	return t0 <= t1
}

// polygonRegion adapts a Polygon to s2.Region for the RegionCoverer.
type polygonRegion struct{ pg *Polygon }

func (r polygonRegion) RectBound() s2.Rect {
	pg := r.pg
	lat := r1.Interval{Lo: (pg.minY - marginDeg) * rad, Hi: (pg.maxY + marginDeg) * rad}
	lat = lat.Intersection(r1.Interval{Lo: -math.Pi / 2, Hi: math.Pi / 2})
	var lng s1.Interval
	if pg.maxX-pg.minX+2*marginDeg >= 360 {
		lng = s1.FullInterval()
	} else {
		lng = s1.IntervalFromEndpoints(remainder((pg.minX-marginDeg)*rad), remainder((pg.maxX+marginDeg)*rad))
	}
	return s2.Rect{Lat: lat, Lng: lng}
}

func (r polygonRegion) CapBound() s2.Cap              { return r.RectBound().CapBound() }
func (r polygonRegion) ContainsCell(c s2.Cell) bool   { return r.pg.containsCell(c) }
func (r polygonRegion) IntersectsCell(c s2.Cell) bool { return r.pg.intersectsCell(c) }
func (r polygonRegion) CellUnionBound() []s2.CellID   { return r.RectBound().CellUnionBound() }
func (r polygonRegion) ContainsPoint(p s2.Point) bool {
	ll := s2.LatLngFromPoint(p)
	return r.pg.ContainsPoint(Point{Lat: ll.Lat.Degrees(), Lng: ll.Lng.Degrees()})
}

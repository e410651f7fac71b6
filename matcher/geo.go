package matcher

import (
	"errors"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/where"
)

// The geo operators are decided by package geo's exact tests, the same
// ones the planner applies to index candidates, so a LiveQuery and a find
// agree on every point, edge and pole.

// geoTest builds the test of one geo operator against a field value.
func geoTest(op *where.Op) (func(v any) bool, error) {
	if op.Code == where.OpGeoIntersects {
		if op.Point == nil {
			return nil, errors.New("geo operand missing")
		}
		pt := *op.Point
		return func(v any) bool {
			pg, ok := geo.PolygonFromValue(v)
			return ok && pg.ContainsPoint(pt)
		}, nil
	}
	region, ok := RegionOf(op)
	if !ok {
		if op.Code == where.OpNearSphere && op.Near != nil {
			// No maximum distance: every GeoPoint is near enough. Callers
			// apply the configured limit first (LimitNearSphere).
			return func(v any) bool {
				_, ok := geo.PointFromValue(v)
				return ok
			}, nil
		}
		return nil, errors.New("geo operand missing")
	}
	return func(v any) bool {
		p, ok := geo.PointFromValue(v)
		return ok && region.ContainsPoint(p)
	}, nil
}

// RegionOf is the region a GeoPoint constraint accepts: a cap for
// $nearSphere with a maximum distance and $centerSphere, a box, a polygon.
// It is false for $nearSphere without a maximum (every point), for
// $geoIntersects (a point, tested against Polygon values) and for malformed
// operands. The planner covers the same region the matcher tests.
func RegionOf(op *where.Op) (geo.Region, bool) {
	switch op.Code {
	case where.OpNearSphere:
		if op.Near != nil && op.Near.HasMax {
			return geo.Cap{Center: op.Near.Point, Radius: op.Near.MaxDistance}, true
		}
	case where.OpWithinSphere:
		if op.Sphere != nil {
			return geo.Cap{Center: op.Sphere.Center, Radius: op.Sphere.Radius}, true
		}
	case where.OpWithinBox:
		if op.Box != nil {
			return geo.NewBox(op.Box.SouthWest, op.Box.NorthEast), true
		}
	case where.OpWithinPolygon:
		if pg, err := geo.NewPolygon(op.Polygon); err == nil {
			return pg, true
		}
	}
	return nil, false
}

// LimitNearSphere gives every $nearSphere in the tree that has no maximum
// distance the maximum max (radians), the specification's 100 miles by
// default; max <= 0 leaves them unlimited. Find and LiveQuery both call it
// before Compile so that they agree.
func LimitNearSphere(n *where.Node, max float64) {
	if max <= 0 {
		return
	}
	n.Walk(func(c *where.Node) bool {
		for i := range c.Ops {
			if op := &c.Ops[i]; op.Code == where.OpNearSphere && op.Near != nil && !op.Near.HasMax {
				op.Near.MaxDistance, op.Near.HasMax = max, true
			}
		}
		return true
	})
}

// Distance is the great-circle distance between two points in radians
// (geo.Distance, the one every geo test and the $nearSphere order use).
// Multiply by geo.EarthRadiusKilometers or geo.EarthRadiusMiles for a
// length.
func Distance(a, b geo.Point) float64 { return geo.Distance(a, b) }

// GeoPointOf reads a GeoPoint value ({__type: "GeoPoint", latitude,
// longitude}); out-of-range coordinates are not a GeoPoint.
func GeoPointOf(v any) (geo.Point, bool) { return geo.PointFromValue(v) }

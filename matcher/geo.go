package matcher

import (
	"errors"
	"math"

	"github.com/quarrydata/quarry/planner/where"
)

// The geo tests here are the plain spherical and planar math Parse's
// semantics need; a geo package with S2 coverings will take over index
// scans, and these stay as the exact residual test.

// geoTest builds the test of one geo operator against a field value.
func geoTest(op *where.Op) (func(v any) bool, error) {
	switch op.Code {
	case where.OpNearSphere:
		if op.Near == nil {
			break
		}
		n := *op.Near
		return func(v any) bool {
			p, ok := geoPoint(v)
			return ok && (!n.HasMax || Distance(n.Point, p) <= n.MaxDistance)
		}, nil
	case where.OpWithinSphere:
		if op.Sphere == nil {
			break
		}
		s := *op.Sphere
		return func(v any) bool {
			p, ok := geoPoint(v)
			return ok && Distance(s.Center, p) <= s.Radius
		}, nil
	case where.OpWithinBox:
		if op.Box == nil {
			break
		}
		// Corners are normalized, so swapped corners give the same box.
		b := *op.Box
		minLat, maxLat := math.Min(b.SouthWest.Latitude, b.NorthEast.Latitude), math.Max(b.SouthWest.Latitude, b.NorthEast.Latitude)
		minLng, maxLng := math.Min(b.SouthWest.Longitude, b.NorthEast.Longitude), math.Max(b.SouthWest.Longitude, b.NorthEast.Longitude)
		return func(v any) bool {
			p, ok := geoPoint(v)
			return ok && p.Latitude >= minLat && p.Latitude <= maxLat && p.Longitude >= minLng && p.Longitude <= maxLng
		}, nil
	case where.OpWithinPolygon:
		if len(op.Polygon) < 3 {
			break
		}
		poly := op.Polygon
		return func(v any) bool {
			p, ok := geoPoint(v)
			return ok && inPolygon(p, poly)
		}, nil
	case where.OpGeoIntersects:
		if op.Point == nil {
			break
		}
		pt := *op.Point
		return func(v any) bool {
			poly, ok := polygonValue(v)
			return ok && inPolygon(pt, poly)
		}, nil
	}
	return nil, errors.New("geo operand missing")
}

// Distance is the great-circle distance between two points in radians
// (haversine). Multiply by where.EarthRadiusKilometers or
// where.EarthRadiusMiles for a length.
func Distance(a, b where.GeoPoint) float64 {
	const rad = math.Pi / 180
	lat1, lat2 := a.Latitude*rad, b.Latitude*rad
	dLat := lat2 - lat1
	dLng := (b.Longitude - a.Longitude) * rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1)*math.Cos(lat2)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * math.Asin(math.Sqrt(math.Min(1, h)))
}

// GeoPointOf reads a GeoPoint value ({__type: "GeoPoint", latitude,
// longitude}).
func GeoPointOf(v any) (where.GeoPoint, bool) { return geoPoint(v) }

func geoPoint(v any) (where.GeoPoint, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["__type"] != "GeoPoint" {
		return where.GeoPoint{}, false
	}
	lat, ok1 := m["latitude"].(float64)
	lng, ok2 := m["longitude"].(float64)
	return where.GeoPoint{Latitude: lat, Longitude: lng}, ok1 && ok2
}

// polygonValue reads a Polygon value: coordinates are [lat, lng] pairs.
func polygonValue(v any) ([]where.GeoPoint, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["__type"] != "Polygon" {
		return nil, false
	}
	coords, _ := m["coordinates"].([]any)
	if len(coords) < 3 {
		return nil, false
	}
	pts := make([]where.GeoPoint, 0, len(coords))
	for _, c := range coords {
		pair, _ := c.([]any)
		if len(pair) != 2 {
			return nil, false
		}
		lat, ok1 := pair[0].(float64)
		lng, ok2 := pair[1].(float64)
		if !ok1 || !ok2 {
			return nil, false
		}
		pts = append(pts, where.GeoPoint{Latitude: lat, Longitude: lng})
	}
	return pts, true
}

// inPolygon tests a point against a polygon drawn on the lat/lng plane
// (the path is closed implicitly). Points on an edge or vertex are inside,
// as the specification says; elsewhere the even-odd rule decides.
func inPolygon(p where.GeoPoint, poly []where.GeoPoint) bool {
	x, y := p.Longitude, p.Latitude
	inside := false
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		ax, ay := poly[j].Longitude, poly[j].Latitude
		bx, by := poly[i].Longitude, poly[i].Latitude
		if onSegment(x, y, ax, ay, bx, by) {
			return true
		}
		if (ay > y) != (by > y) && x < ax+(y-ay)*(bx-ax)/(by-ay) {
			inside = !inside
		}
	}
	return inside
}

// onSegment allows a tolerance of about 1e-9 degrees (0.1 mm), so that
// points computed as lying on an edge are not lost to rounding.
func onSegment(x, y, ax, ay, bx, by float64) bool {
	const eps = 1e-9
	if x < math.Min(ax, bx)-eps || x > math.Max(ax, bx)+eps || y < math.Min(ay, by)-eps || y > math.Max(ay, by)+eps {
		return false
	}
	cross := (bx-ax)*(y-ay) - (by-ay)*(x-ax)
	return math.Abs(cross) <= eps*math.Max(1, math.Hypot(bx-ax, by-ay))
}

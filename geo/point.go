package geo

import (
	"fmt"
	"math"

	"github.com/golang/geo/s2"
)

// Earth radii Parse uses to turn lengths into angles. The JS SDK's
// withinMiles/withinKilometers and GeoPoint.milesTo/kilometersTo divide and
// multiply by these; Parse Server divides $maxDistanceInMiles by 3959, a
// 0.005% difference Quarry does not copy, so that the SDK's own distance
// helpers agree with the server's answers.
const (
	EarthRadiusKilometers = 6371.0
	EarthRadiusMiles      = 3958.8
)

// DefaultNearSphereMaxMiles is the specification's limit on a $nearSphere
// that gives no maximum distance.
const DefaultNearSphereMaxMiles = 100.0

// CodeInvalidJSON is Parse's INVALID_JSON (107), the code of a GeoPoint out
// of range.
const CodeInvalidJSON = 107

// Error is a validation error carrying a Parse error code. Callers turn it
// into their own error type at the edge.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// Point is a location in degrees.
type Point struct {
	Lat, Lng float64
}

// ValidatePoint applies the specification's rule for stored GeoPoints:
// latitude strictly between -90 and 90, longitude strictly between -180
// and 180 (the poles and the antimeridian themselves are refused). Out of
// range, or not a number, is an *Error with CodeInvalidJSON.
func ValidatePoint(lat, lng float64) error {
	switch {
	case math.IsNaN(lat) || lat <= -90 || lat >= 90:
		return &Error{Code: CodeInvalidJSON, Message: fmt.Sprintf("GeoPoint latitude out of range: %v (must be > -90 and < 90)", lat)}
	case math.IsNaN(lng) || lng <= -180 || lng >= 180:
		return &Error{Code: CodeInvalidJSON, Message: fmt.Sprintf("GeoPoint longitude out of range: %v (must be > -180 and < 180)", lng)}
	}
	return nil
}

// Valid reports whether p could be a stored GeoPoint (ValidatePoint).
func (p Point) Valid() bool { return ValidatePoint(p.Lat, p.Lng) == nil }

const rad = math.Pi / 180

// Distance is the great-circle distance between a and b in radians
// (haversine, in its atan2 form so it stays accurate for tiny and for
// antipodal distances). Every geo test and the $nearSphere order use it.
func Distance(a, b Point) float64 {
	lat1, lat2 := a.Lat*rad, b.Lat*rad
	sLat := math.Sin((lat2 - lat1) / 2)
	sLng := math.Sin((b.Lng - a.Lng) * rad / 2)
	h := sLat*sLat + math.Cos(lat1)*math.Cos(lat2)*sLng*sLng
	h = math.Min(1, math.Max(0, h))
	return 2 * math.Atan2(math.Sqrt(h), math.Sqrt(1-h))
}

// KilometersToRadians converts a length on the Earth's surface to the
// angle it subtends.
func KilometersToRadians(km float64) float64 { return km / EarthRadiusKilometers }

// MilesToRadians converts a length on the Earth's surface to the angle it
// subtends.
func MilesToRadians(mi float64) float64 { return mi / EarthRadiusMiles }

// RadiansToKilometers converts an angle to the length it spans.
func RadiansToKilometers(r float64) float64 { return r * EarthRadiusKilometers }

// RadiansToMiles converts an angle to the length it spans.
func RadiansToMiles(r float64) float64 { return r * EarthRadiusMiles }

// DefaultNearSphereMaxDistance is DefaultNearSphereMaxMiles in radians.
const DefaultNearSphereMaxDistance = DefaultNearSphereMaxMiles / EarthRadiusMiles

// NearSphereLimit is the maximum distance a $nearSphere without one gets,
// in radians, from the configured option: 0 means the default, a negative
// value none (0 returned).
func NearSphereLimit(configured float64) float64 {
	switch {
	case configured == 0:
		return DefaultNearSphereMaxDistance
	case configured < 0:
		return 0
	default:
		return configured
	}
}

// LeafCell is the S2 leaf cell id of a point: the key of the GeoPoint
// index. Ordering by it walks the Hilbert curve.
func LeafCell(p Point) uint64 {
	return uint64(s2.CellIDFromLatLng(s2.LatLngFromDegrees(p.Lat, p.Lng)))
}

// number reads a JSON number as decoded (float64) or as Go code builds it.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// PointFromValue reads a stored GeoPoint value ({__type: "GeoPoint",
// latitude, longitude}). Values out of range are not GeoPoints: they match
// no geo constraint and are not indexed, consistently.
func PointFromValue(v any) (Point, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["__type"] != "GeoPoint" {
		return Point{}, false
	}
	lat, ok1 := number(m["latitude"])
	lng, ok2 := number(m["longitude"])
	p := Point{Lat: lat, Lng: lng}
	return p, ok1 && ok2 && p.Valid()
}

// PolygonFromValue reads a stored Polygon value ({__type: "Polygon",
// coordinates: [[lat, lng], ...]}, at least 3 valid points).
func PolygonFromValue(v any) (*Polygon, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["__type"] != "Polygon" {
		return nil, false
	}
	coords, _ := m["coordinates"].([]any)
	if len(coords) < 3 {
		return nil, false
	}
	pts := make([]Point, 0, len(coords))
	for _, c := range coords {
		pair, _ := c.([]any)
		if len(pair) != 2 {
			return nil, false
		}
		lat, ok1 := number(pair[0])
		lng, ok2 := number(pair[1])
		p := Point{Lat: lat, Lng: lng}
		if !ok1 || !ok2 || !p.Valid() {
			return nil, false
		}
		pts = append(pts, p)
	}
	pg, err := NewPolygon(pts)
	return pg, err == nil
}

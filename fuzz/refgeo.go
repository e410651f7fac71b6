package fuzz

import "math"

// Earth radii that turn miles and kilometres into radians.
const (
	earthMiles = 3958.8
	earthKm    = 6371.0
)

// defaultNearMax is the limit of a $nearSphere without a maximum: the
// specification's 100 miles.
const defaultNearMax = 100 / earthMiles

// boundaryEps is how close to a maximum distance a point must be for
// floating point to decide either way (radians; about 6 mm on Earth).
const boundaryEps = 1e-9

// latLng reads a GeoPoint value.
func latLng(v any) (lat, lng float64, ok bool) {
	m, _ := v.(map[string]any)
	if m == nil || m["__type"] != "GeoPoint" {
		return 0, 0, false
	}
	lat, okA := m["latitude"].(float64)
	lng, okB := m["longitude"].(float64)
	return lat, lng, okA && okB
}

// haversine is the great-circle distance in radians, by brute force.
func haversine(lat1, lng1, lat2, lng2 float64) float64 {
	rad := math.Pi / 180
	dLat := (lat2 - lat1) * rad
	dLng := (lng2 - lng1) * rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * math.Asin(math.Min(1, math.Sqrt(h)))
}

// within reports d <= max, noting a boundary case.
func (ev *evaluator) within(d, max float64) bool {
	if math.Abs(d-max) < boundaryEps {
		ev.ambiguous = true
	}
	return d <= max
}

// matchGeo evaluates the geo operators; a field that is not a GeoPoint
// never matches them.
func (ev *evaluator) matchGeo(v any, op string, arg any, ops map[string]any) bool {
	lat, lng, ok := latLng(v)
	if !ok {
		return false
	}
	switch op {
	case "$nearSphere":
		clat, clng, _ := latLng(arg)
		return ev.within(haversine(lat, lng, clat, clng), nearMax(ops))
	case "$within":
		box := arg.(map[string]any)["$box"].([]any)
		swLat, swLng, _ := latLng(box[0])
		neLat, neLng, _ := latLng(box[1])
		// The generator's boxes never cross the antimeridian.
		return lat >= swLat && lat <= neLat && lng >= swLng && lng <= neLng
	case "$geoWithin":
		shape := arg.(map[string]any)
		if poly, ok := shape["$polygon"].([]any); ok {
			return inPolygon(lat, lng, poly)
		}
		cs := shape["$centerSphere"].([]any)
		center := cs[0].([]any)
		d := haversine(lat, lng, center[1].(float64), center[0].(float64))
		return ev.within(d, cs[1].(float64))
	}
	panic("reference: unknown operator " + op)
}

// nearMax is the smallest maximum distance of a $nearSphere constraint,
// in radians, or the default.
func nearMax(ops map[string]any) float64 {
	max, set := math.Inf(1), false
	for k, scale := range map[string]float64{"$maxDistance": 1, "$maxDistanceInRadians": 1,
		"$maxDistanceInMiles": 1 / earthMiles, "$maxDistanceInKilometers": 1 / earthKm} {
		if d, ok := ops[k].(float64); ok {
			max, set = math.Min(max, d*scale), true
		}
	}
	if !set {
		return defaultNearMax
	}
	return max
}

// inPolygon is the even-odd rule on the flat latitude/longitude plane
// (edges are straight lines there, as MongoDB's legacy $polygon has it).
// The generator's polygons are small, far from the poles and the
// antimeridian, and no point falls on an edge.
func inPolygon(lat, lng float64, poly []any) bool {
	in := false
	n := len(poly)
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		yi, xi, _ := latLng(poly[i])
		yj, xj, _ := latLng(poly[j])
		if (yi > lat) != (yj > lat) && lng < (xj-xi)*(lat-yi)/(yj-yi)+xi {
			in = !in
		}
	}
	return in
}

// nearSort orders results by distance from a $nearSphere point.
type nearSort struct {
	path     string
	lat, lng float64
}

func (n *nearSort) distance(o map[string]any) float64 {
	lat, lng, ok := latLng(lookupSort(o, n.path))
	if !ok {
		return math.Inf(1)
	}
	return haversine(lat, lng, n.lat, n.lng)
}

// findNear returns the $nearSphere of a where's top level, if any.
func findNear(where map[string]any) *nearSort {
	for key, cond := range where {
		ops, ok := operators(cond)
		if !ok {
			continue
		}
		if p, ok := ops["$nearSphere"]; ok {
			lat, lng, _ := latLng(p)
			return &nearSort{path: key, lat: lat, lng: lng}
		}
	}
	return nil
}

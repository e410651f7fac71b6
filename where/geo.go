package where

import (
	"math"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/schema"
)

// Earth radii used to turn $maxDistanceInMiles/InKilometers into radians.
// The matcher measures great-circle distances in radians, so a point exactly
// N miles away (by this radius) is within $maxDistanceInMiles N. Parse
// Server divides miles by 3959; the 0.005% difference is below GPS noise.
const (
	EarthRadiusKilometers = 6371.0
	EarthRadiusMiles      = 3958.8
)

// DefaultNearSphereMaxDistance is the specification's 100-mile cap for a
// $nearSphere without a maximum distance, in radians. Parse
// Server does not apply it; Quarry's planner does unless configured not to.
const DefaultNearSphereMaxDistance = 100 / EarthRadiusMiles

// geo parses one geo operator k with value v; m is the whole operator
// object (for $nearSphere's $maxDistance siblings).
func (p *parser) geo(k string, v any, m map[string]any) (Op, error) {
	switch k {
	case "$nearSphere":
		p.nears++
		if p.nears > 1 {
			return Op{}, schema.Errorf(schema.CodeInvalidQuery, "only one $nearSphere is allowed per query")
		}
		pt, err := geoPointObject(v, "bad $nearSphere value; should be GeoPoint")
		if err != nil {
			return Op{}, err
		}
		near := &Near{Point: pt}
		for _, d := range [...]struct {
			key  string
			unit float64
		}{{"$maxDistance", 1}, {"$maxDistanceInRadians", 1}, {"$maxDistanceInMiles", EarthRadiusMiles}, {"$maxDistanceInKilometers", EarthRadiusKilometers}} {
			raw, has := m[d.key]
			if !has {
				continue
			}
			x, ok := number(raw)
			if !ok || x < 0 {
				return Op{}, schema.Errorf(schema.CodeInvalidJSON, "bad %s value", d.key)
			}
			// Several maxima: the tightest applies, whatever the key order.
			if r := x / d.unit; !near.HasMax || r < near.MaxDistance {
				near.MaxDistance, near.HasMax = r, true
			}
		}
		return Op{Code: OpNearSphere, Near: near}, nil

	case "$within":
		const bad = "malformatted $within arg"
		w, _ := v.(map[string]any)
		box, ok := w["$box"].([]any)
		if !ok || len(box) != 2 {
			return Op{}, invalidJSON(bad)
		}
		sw, err := geoPointObject(box[0], bad)
		if err != nil {
			return Op{}, err
		}
		ne, err := geoPointObject(box[1], bad)
		if err != nil {
			return Op{}, err
		}
		return Op{Code: OpWithinBox, Box: &Box{SouthWest: sw, NorthEast: ne}}, nil

	case "$geoWithin":
		w, _ := v.(map[string]any)
		if poly, has := w["$polygon"]; has {
			pts, err := polygon(poly)
			if err != nil {
				return Op{}, err
			}
			return Op{Code: OpWithinPolygon, Polygon: pts}, nil
		}
		if cs, has := w["$centerSphere"]; has {
			s, err := centerSphere(cs)
			if err != nil {
				return Op{}, err
			}
			return Op{Code: OpWithinSphere, Sphere: s}, nil
		}
		return Op{}, schema.Errorf(schema.CodeInvalidJSON, "bad $geoWithin value")

	default: // $geoIntersects
		w, _ := v.(map[string]any)
		pt, err := geoPointObject(w["$point"], "bad $geoIntersect value; $point should be GeoPoint")
		if err != nil {
			return Op{}, err
		}
		return Op{Code: OpGeoIntersects, Point: &pt}, nil
	}
}

// polygon reads $polygon: a Polygon value ([lat, lng] pairs, as Parse
// stores polygons) or an array of GeoPoints or [lng, lat] pairs (GeoJSON
// order, as MongoDB takes them).
func polygon(v any) ([]geo.Point, error) {
	var pts []geo.Point
	switch x := v.(type) {
	case map[string]any:
		coords, ok := x["coordinates"].([]any)
		if x["__type"] != "Polygon" || !ok || len(coords) < 3 {
			if x["__type"] == "Polygon" {
				return nil, schema.Errorf(schema.CodeInvalidJSON, "bad $geoWithin value; Polygon.coordinates should contain at least 3 lon/lat pairs")
			}
			return nil, schema.Errorf(schema.CodeInvalidJSON, "bad $geoWithin value; $polygon should be Polygon object or Array of Parse.GeoPoint's")
		}
		if len(coords) > MaxPolygonPoints {
			return nil, ErrPolygonTooLarge
		}
		for _, c := range coords {
			pair, ok := c.([]any)
			if !ok || len(pair) != 2 {
				return nil, schema.Errorf(schema.CodeInvalidJSON, "bad $geoWithin value")
			}
			pt, err := latLng(pair[0], pair[1], "bad $geoWithin value")
			if err != nil {
				return nil, err
			}
			pts = append(pts, pt)
		}
	case []any:
		if len(x) < 3 {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "bad $geoWithin value; $polygon should contain at least 3 GeoPoints")
		}
		if len(x) > MaxPolygonPoints {
			return nil, ErrPolygonTooLarge
		}
		for _, e := range x {
			pt, err := geoPointAny(e, "bad $geoWithin value")
			if err != nil {
				return nil, err
			}
			pts = append(pts, pt)
		}
	default:
		return nil, schema.Errorf(schema.CodeInvalidJSON, "bad $geoWithin value; $polygon should be Polygon object or Array of Parse.GeoPoint's")
	}
	return pts, nil
}

func centerSphere(v any) (*Sphere, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) < 2 {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "bad $geoWithin value; $centerSphere should be an array of Parse.GeoPoint and distance")
	}
	pt, err := geoPointAny(arr[0], "bad $geoWithin value; $centerSphere geo point invalid")
	if err != nil {
		return nil, err
	}
	d, ok := number(arr[1])
	if !ok || d < 0 {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "bad $geoWithin value; $centerSphere distance invalid")
	}
	return &Sphere{Center: pt, Radius: d}, nil
}

// geoPointAny reads a GeoPoint value or a [lng, lat] pair.
func geoPointAny(v any, bad string) (geo.Point, error) {
	if pair, ok := v.([]any); ok {
		if len(pair) != 2 {
			return geo.Point{}, invalidJSON(bad)
		}
		return latLng(pair[1], pair[0], bad)
	}
	return geoPointObject(v, bad)
}

// geoPointObject reads {__type: "GeoPoint", latitude, longitude}.
func geoPointObject(v any, bad string) (geo.Point, error) {
	m, ok := v.(map[string]any)
	if !ok || m["__type"] != "GeoPoint" {
		return geo.Point{}, invalidJSON(bad)
	}
	return latLng(m["latitude"], m["longitude"], bad)
}

// latLng checks coordinates with Parse's inclusive bounds: query shapes
// may touch the poles and the antimeridian even though stored GeoPoints
// may not.
func latLng(lat, lng any, bad string) (geo.Point, error) {
	la, ok1 := number(lat)
	lo, ok2 := number(lng)
	if !ok1 || !ok2 {
		return geo.Point{}, invalidJSON(bad)
	}
	if la < -90 || la > 90 {
		return geo.Point{}, schema.Errorf(schema.CodeInvalidJSON, "GeoPoint latitude out of bounds: %v", la)
	}
	if lo < -180 || lo > 180 {
		return geo.Point{}, schema.Errorf(schema.CodeInvalidJSON, "GeoPoint longitude out of bounds: %v", lo)
	}
	return geo.Point{Lat: la, Lng: lo}, nil
}

func invalidJSON(msg string) error {
	return &schema.Error{Code: schema.CodeInvalidJSON, Message: msg}
}

func number(v any) (float64, bool) {
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case int:
		x = float64(n)
	case int64:
		x = float64(n)
	default:
		return 0, false
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false
	}
	return x, true
}

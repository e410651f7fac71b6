package planner

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// The geo differential test: random points (anywhere, at the poles, on
// both sides of the antimeridian, in 1 m clusters) and random geo queries
// from 1 m to a hemisphere, combined with other constraints, order, skip,
// limit and count. The planned result (cell scans, interior ranges, ring
// search, polygon lookups) must equal a brute-force scan: the matcher on
// every object, ordered by the distance to every point.

const meterRad = 1 / 6371000.0

var geoScales = []float64{meterRad, 50 * meterRad, 2000 * meterRad, 100000 * meterRad, 0.4, math.Pi / 2}

// geoClusters are where most random points gather.
var geoClusters = []geo.Point{
	{Lat: 89.9995, Lng: 12}, {Lat: -89.99, Lng: -170}, {Lat: 10, Lng: 179.9999}, {Lat: 10, Lng: -179.9999},
	{Lat: 40.7, Lng: -73.9}, {Lat: 0, Lng: 0}, {Lat: -33.9, Lng: 151.2},
}

// offset moves p by d radians along bearing brg.
func offset(p geo.Point, d, brg float64) geo.Point {
	lat1, lng1 := p.Lat*math.Pi/180, p.Lng*math.Pi/180
	lat2 := math.Asin(math.Sin(lat1)*math.Cos(d) + math.Cos(lat1)*math.Sin(d)*math.Cos(brg))
	lng2 := lng1 + math.Atan2(math.Sin(brg)*math.Sin(d)*math.Cos(lat1), math.Cos(d)-math.Sin(lat1)*math.Sin(lat2))
	return geo.Point{Lat: lat2 * 180 / math.Pi, Lng: math.Remainder(lng2*180/math.Pi, 360)}
}

func randomGeoPoint(r *rand.Rand) geo.Point {
	for {
		var p geo.Point
		if r.Intn(4) == 0 {
			p = geo.Point{Lat: math.Asin(2*r.Float64()-1) * 180 / math.Pi, Lng: r.Float64()*360 - 180}
		} else {
			c := geoClusters[r.Intn(len(geoClusters))]
			p = offset(c, geoScales[r.Intn(len(geoScales)-1)]*r.Float64(), r.Float64()*2*math.Pi)
		}
		if p.Valid() {
			return p
		}
	}
}

func geoValue(p geo.Point) map[string]any {
	return map[string]any{"__type": "GeoPoint", "latitude": p.Lat, "longitude": p.Lng}
}

func randomGeoObject(r *rand.Rand, i int) schema.Object {
	obj := schema.Object{"objectId": fmt.Sprintf("g%05d", i), "cat": fmt.Sprintf("c%d", r.Intn(4)), "n": float64(r.Intn(10))}
	switch r.Intn(12) {
	case 0: // no location
	case 1:
		obj["loc"] = "not a point"
	default:
		obj["loc"] = geoValue(randomGeoPoint(r))
	}
	if r.Intn(3) == 0 {
		c, s := randomGeoPoint(r), geoScales[r.Intn(4)]
		coords := []any{}
		for k := 0; k < 3+r.Intn(4); k++ {
			q := offset(c, s*(0.5+r.Float64()), 2*math.Pi*(float64(k)+0.5*r.Float64())/6)
			if q.Valid() {
				coords = append(coords, []any{q.Lat, q.Lng})
			}
		}
		obj["area"] = map[string]any{"__type": "Polygon", "coordinates": coords}
	}
	return obj
}

// randomGeoConstraint returns a geo constraint on loc or area, in every
// form the parser takes.
func randomGeoConstraint(r *rand.Rand) (string, map[string]any) {
	c := randomGeoPoint(r)
	if r.Intn(3) == 0 { // sometimes exactly on a data cluster
		c = geoClusters[r.Intn(len(geoClusters))]
	}
	s := geoScales[r.Intn(len(geoScales))] * (0.3 + r.Float64())
	switch r.Intn(9) {
	case 0, 1:
		m := map[string]any{"$nearSphere": geoValue(c)}
		switch r.Intn(5) {
		case 0:
			m["$maxDistance"] = s
		case 1:
			m["$maxDistanceInRadians"] = s
		case 2:
			m["$maxDistanceInKilometers"] = s * geo.EarthRadiusKilometers
		case 3:
			m["$maxDistanceInMiles"] = s * geo.EarthRadiusMiles
		}
		return "loc", m
	case 2, 3:
		return "loc", map[string]any{"$geoWithin": map[string]any{"$centerSphere": []any{[]any{c.Lng, c.Lat}, s}}}
	case 4, 5:
		deg := math.Min(s*180/math.Pi, 80)
		sw := geo.Point{Lat: math.Max(-90, c.Lat-deg*r.Float64()), Lng: math.Remainder(c.Lng-deg*r.Float64(), 360)}
		ne := geo.Point{Lat: math.Min(90, c.Lat+deg*r.Float64()), Lng: math.Remainder(c.Lng+deg*r.Float64(), 360)}
		return "loc", map[string]any{"$within": map[string]any{"$box": []any{geoValue(sw), geoValue(ne)}}}
	case 6, 7:
		var pts []any
		n := 3 + r.Intn(6)
		for k := 0; k < n; k++ {
			q := offset(c, s*(0.3+r.Float64()), 2*math.Pi*(float64(k)+0.8*r.Float64())/float64(n))
			if r.Intn(2) == 0 {
				pts = append(pts, geoValue(q))
			} else {
				pts = append(pts, []any{q.Lng, q.Lat})
			}
		}
		if r.Intn(3) == 0 {
			pts = append(pts, pts[0]) // closed path
		}
		return "loc", map[string]any{"$geoWithin": map[string]any{"$polygon": pts}}
	}
	return "area", map[string]any{"$geoIntersects": map[string]any{"$point": geoValue(c)}}
}

func randomGeoWhere(r *rand.Rand) map[string]any {
	key, g := randomGeoConstraint(r)
	w := map[string]any{key: g}
	if r.Intn(6) == 0 { // the same constraint under $and
		w = map[string]any{"$and": []any{map[string]any{key: g}}}
	}
	switch r.Intn(6) {
	case 0:
		w["cat"] = fmt.Sprintf("c%d", r.Intn(4))
	case 1:
		w["n"] = map[string]any{"$lt": float64(r.Intn(10))}
	case 2:
		w["$or"] = []any{map[string]any{"cat": "c1"}, map[string]any{"n": map[string]any{"$gte": 8.0}}}
	case 3:
		w["objectId"] = map[string]any{"$in": []any{"g00001", "g00002", fmt.Sprintf("g%05d", r.Intn(3000))}}
	}
	return w
}

// geoBruteForce filters every object with the matcher (after the same
// $nearSphere limit) and orders them independently: the order keys, or the
// distance to the $nearSphere point, then objectId.
func geoBruteForce(t *testing.T, objs []schema.Object, q Query, src *memSource, nearMax float64) ([]schema.Object, int) {
	tree, err := where.Parse(q.Where, where.Options{FieldType: func(n string) (schema.Type, bool) { return src.FieldType(q.Class, n) }})
	if err != nil {
		t.Fatalf("where %v: %v", js(q.Where), err)
	}
	matcher.LimitNearSphere(tree, nearMax)
	m, err := matcher.Compile(tree, nil)
	if err != nil {
		t.Fatal(err)
	}
	var center *geo.Point
	tree.Walk(func(n *where.Node) bool {
		for _, op := range n.Ops {
			if op.Code == where.OpNearSphere {
				center = &op.Near.Point
			}
		}
		return true
	})
	type hit struct {
		obj schema.Object
		d   float64
	}
	var hits []hit
	for _, o := range objs {
		if m.Match(o) {
			h := hit{obj: o}
			if center != nil {
				p, _ := geo.PointFromValue(o["loc"])
				h.d = geo.Distance(*center, p)
			}
			hits = append(hits, h)
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		for _, k := range q.Order {
			va, _ := schema.Get(a.obj, k.Path)
			vb, _ := schema.Get(b.obj, k.Path)
			if c := schema.Compare(va, vb); c != 0 {
				return (c < 0) != k.Desc
			}
		}
		if len(q.Order) == 0 && a.d != b.d {
			return a.d < b.d
		}
		desc := len(q.Order) > 0 && q.Order[len(q.Order)-1].Desc
		return (a.obj["objectId"].(string) < b.obj["objectId"].(string)) != desc
	})
	out := make([]schema.Object, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.obj)
	}
	total := len(out)
	if q.Skip >= len(out) {
		return nil, total
	}
	out = out[q.Skip:]
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, total
}

func geoSource(t testing.TB, r *rand.Rand, n int) (*memSource, []schema.Object) {
	src := newMemSource()
	var objs []schema.Object
	for i := 0; i < n; i++ {
		o := randomGeoObject(r, i)
		objs = append(objs, o)
		src.put("Place", o)
	}
	src.fields["Place"]["loc"] = schema.Field{Type: schema.TypeGeoPoint}
	src.fields["Place"]["area"] = schema.Field{Type: schema.TypePolygon}
	coll := src.db.Collection("Place", false)
	for _, e := range []struct {
		path string
		kind index.GeoKind
	}{{"loc", index.GeoPoints}, {"area", index.GeoShapes}} {
		if err := coll.EnsureGeoIndex(e.path, e.kind); err != nil {
			t.Fatal(err)
		}
	}
	if err := coll.EnsureIndex("cat"); err != nil {
		t.Fatal(err)
	}
	return src, objs
}

func TestGeoPlanEqualsBruteForce(t *testing.T) {
	kinds := map[string]int{}
	queries, nonEmpty := 0, 0
	defer func() { readCachedMaps = true }()
	for seed := int64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewSource(seed))
		src, objs := geoSource(t, r, 3000)
		// Odd seeds test residuals on the bytes even where a map is cached.
		readCachedMaps = seed%2 == 0
		coll := src.db.Collection("Place", false)
		for i := 0; i < 400; i++ {
			// Objects change between queries: the indexes follow.
			if i%50 == 49 {
				k := r.Intn(len(objs))
				if r.Intn(3) == 0 {
					coll.Delete(objs[k]["objectId"].(string))
					objs = append(objs[:k], objs[k+1:]...)
				} else {
					o := randomGeoObject(r, 0)
					o["objectId"] = objs[k]["objectId"]
					objs[k] = o
					coll.Put(o)
				}
			}
			q := Query{Class: "Place", Where: randomGeoWhere(r), Skip: r.Intn(3) * r.Intn(3),
				Limit: []int{0, 1, 5, 20, 100, 5000}[r.Intn(6)], Count: r.Intn(3) == 0}
			if r.Intn(4) == 0 {
				q.Order = []SortKey{{Path: "n", Desc: r.Intn(2) == 0}}
			}
			q.Undecoded = i%2 == 0 // as the REST layer asks
			guarded := r.Intn(4) == 0
			if guarded { // objects with n = 3 are hidden from the caller
				q.Guard = func(string, map[string]any, bool) (func(schema.Object) bool, map[string]any, error) {
					return func(o schema.Object) bool { return o["n"] != 3.0 }, nil, nil
				}
			}
			nearMax := []float64{0, -1, 0.01}[r.Intn(3)]
			plan, err := Compile(src, q, Options{NearSphereMaxDistance: nearMax})
			if err != nil {
				t.Fatalf("seed %d: compile %s: %v", seed, js(q.Where), err)
			}
			res, err := plan.Run()
			if err != nil {
				t.Fatalf("run %s: %v", js(q.Where), err)
			}
			applied := map[bool]float64{true: geo.DefaultNearSphereMaxDistance, false: nearMax}[nearMax == 0]
			visible := objs
			if guarded {
				visible = nil
				for _, o := range objs {
					if o["n"] != 3.0 {
						visible = append(visible, o)
					}
				}
			}
			want, total := geoBruteForce(t, visible, q, src, applied)
			if got := resultIDs(t, res); fmt.Sprint(got) != fmt.Sprint(ids(want)) {
				t.Fatalf("seed %d query %d\nwhere %s order %v skip %d limit %d count %v nearMax %g guarded %v undecoded %v\nplan %v\ngot  %v\nwant %v",
					seed, i, js(q.Where), q.Order, q.Skip, q.Limit, q.Count, nearMax, guarded, q.Undecoded, plan.Explain(res), got, ids(want))
			}
			for _, o := range res.Objects {
				if o == nil {
					kinds["left undecoded"]++
				}
			}
			if q.Count && res.Count != total {
				t.Fatalf("seed %d where %s: count %d, want %d (plan %v)", seed, js(q.Where), res.Count, total, plan.Explain(res))
			}
			kinds[plan.access.String()[:min(12, len(plan.access.String()))]]++
			if plan.access.kind == accessGeo && plan.access.geo.near != nil && len(q.Order) == 0 && !q.Count {
				kinds["ring search"]++
			}
			queries++
			if total > 0 {
				nonEmpty++
			}
		}
	}
	t.Logf("%d queries (%d non-empty), plans %v", queries, nonEmpty, kinds)
	if kinds["geo index lo"] < 300 || kinds["geo polygon "] < 50 || kinds["ring search"] < 50 || kinds["left undecoded"] < 100 || nonEmpty < queries/3 {
		t.Errorf("the generator is too narrow: %v, %d non-empty", kinds, nonEmpty)
	}
}

// TestGeoNearestTouchesFewCells: the 20 nearest of many points are found
// by examining a small multiple of 20, not the whole radius.
func TestGeoNearestTouchesFewCells(t *testing.T) {
	src := newMemSource()
	r := rand.New(rand.NewSource(1))
	const n = 50000
	for i := 0; i < n; i++ {
		p := geo.Point{Lat: 40 + r.Float64(), Lng: -74 + r.Float64()}
		src.put("Place", schema.Object{"objectId": fmt.Sprintf("p%06d", i), "loc": geoValue(p)})
	}
	coll := src.db.Collection("Place", false)
	if err := coll.EnsureGeoIndex("loc", index.GeoPoints); err != nil {
		t.Fatal(err)
	}
	for _, w := range []map[string]any{
		{"loc": map[string]any{"$nearSphere": geoValue(geo.Point{Lat: 40.5, Lng: -73.5}), "$maxDistanceInKilometers": 10.0}},
		{"loc": map[string]any{"$nearSphere": geoValue(geo.Point{Lat: 40.5, Lng: -73.5})}},
		{"loc": map[string]any{"$nearSphere": geoValue(geo.Point{Lat: 40.001, Lng: -73.999})}}, // a corner: half the disc is empty
	} {
		plan, err := Compile(src, Query{Class: "Place", Where: w, Limit: 20}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := plan.Run()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: examined %d", js(w), res.Examined)
		if len(res.Objects) != 20 || res.Examined > 600 {
			t.Errorf("%s: %d results, examined %d of %d (%v)", js(w), len(res.Objects), res.Examined, n, plan.Explain(res))
		}
	}
	// Counting a large cap visits only its boundary cells.
	plan, err := Compile(src, Query{Class: "Place", Count: true, Where: map[string]any{"loc": map[string]any{
		"$geoWithin": map[string]any{"$centerSphere": []any{[]any{-73.5, 40.5}, 0.004}}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Run()
	if err != nil {
		t.Fatal(err)
	}
	if res.Count < 5000 || res.Examined > res.Count/2 {
		t.Errorf("count %d examined %d", res.Count, res.Examined)
	}
}

// TestNearSphereLimit: without a maximum distance, $nearSphere stops at
// 100 miles unless configured otherwise, in the plan and in the matcher.
func TestNearSphereLimit(t *testing.T) {
	if where.EarthRadiusMiles != geo.EarthRadiusMiles || where.EarthRadiusKilometers != geo.EarthRadiusKilometers ||
		where.DefaultNearSphereMaxDistance != geo.DefaultNearSphereMaxDistance {
		t.Fatal("where and geo disagree on the Earth's radii")
	}
	src := newMemSource()
	for i, miles := range []float64{10, 99, 101, 500} {
		p := geo.Point{Lat: geo.MilesToRadians(miles) * 180 / math.Pi, Lng: 0}
		src.put("Place", schema.Object{"objectId": fmt.Sprintf("m%d", i), "loc": geoValue(p)})
	}
	if err := src.db.Collection("Place", false).EnsureGeoIndex("loc", index.GeoPoints); err != nil {
		t.Fatal(err)
	}
	w := map[string]any{"loc": map[string]any{"$nearSphere": geoValue(geo.Point{})}}
	for _, c := range []struct {
		max  float64
		want string
	}{{0, "[m0 m1]"}, {-1, "[m0 m1 m2 m3]"}, {geo.MilesToRadians(200), "[m0 m1 m2]"}} {
		for _, count := range []bool{false, true} {
			plan, err := Compile(src, Query{Class: "Place", Where: w, Limit: 10, Count: count}, Options{NearSphereMaxDistance: c.max})
			if err != nil {
				t.Fatal(err)
			}
			res, err := plan.Run()
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(ids(res.Objects)); got != c.want {
				t.Errorf("max %g count %v: %s, want %s", c.max, count, got, c.want)
			}
		}
	}
}

// TestGeoEdgePointsUndecoded: points exactly on a $box's or $polygon's
// edges and corners, and just inside and outside them, answered with the
// results left undecoded (interior cells without the exact test, boundary
// cells tested on the stored point, the rest of the where on the bytes),
// agree with the matcher on every object.
func TestGeoEdgePointsUndecoded(t *testing.T) {
	readCachedMaps = false // the rest of the where read from the bytes
	defer func() { readCachedMaps = true }()
	sw, ne := geo.Point{Lat: 10, Lng: 20}, geo.Point{Lat: 10.5, Lng: 20.5}
	hexagon := []geo.Point{{Lat: 10, Lng: 20.25}, {Lat: 10.1, Lng: 20.45}, {Lat: 10.3, Lng: 20.45},
		{Lat: 10.4, Lng: 20.25}, {Lat: 10.3, Lng: 20.05}, {Lat: 10.1, Lng: 20.05}}
	var pts []geo.Point
	const eps = 1e-9
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} { // the box's edges and corners
		lat, lng := sw.Lat+f*(ne.Lat-sw.Lat), sw.Lng+f*(ne.Lng-sw.Lng)
		for _, d := range []float64{0, eps, -eps} {
			pts = append(pts, geo.Point{Lat: sw.Lat + d, Lng: lng}, geo.Point{Lat: ne.Lat + d, Lng: lng},
				geo.Point{Lat: lat, Lng: sw.Lng + d}, geo.Point{Lat: lat, Lng: ne.Lng + d})
		}
	}
	for k, a := range hexagon { // the hexagon's vertices and points along its edges
		b := hexagon[(k+1)%len(hexagon)]
		for _, f := range []float64{0, 0.5, 1.0 / 3} {
			pts = append(pts, geo.Point{Lat: a.Lat + f*(b.Lat-a.Lat), Lng: a.Lng + f*(b.Lng-a.Lng)})
		}
	}
	r := rand.New(rand.NewSource(9))
	for i := 0; i < 3000; i++ { // and many inside, where the interior cells are
		pts = append(pts, geo.Point{Lat: 9.9 + 0.7*r.Float64(), Lng: 19.9 + 0.7*r.Float64()})
	}
	src := newMemSource()
	var objs []schema.Object
	for i, p := range pts {
		o := schema.Object{"objectId": fmt.Sprintf("e%05d", i), "loc": geoValue(p), "n": float64(i % 3)}
		objs = append(objs, o)
		src.put("Place", o)
	}
	src.fields["Place"]["loc"] = schema.Field{Type: schema.TypeGeoPoint}
	if err := src.db.Collection("Place", false).EnsureGeoIndex("loc", index.GeoPoints); err != nil {
		t.Fatal(err)
	}
	var poly []any
	for _, p := range hexagon {
		poly = append(poly, geoValue(p))
	}
	regions := map[string]map[string]any{
		"box":     {"$within": map[string]any{"$box": []any{geoValue(sw), geoValue(ne)}}},
		"polygon": {"$geoWithin": map[string]any{"$polygon": poly}},
	}
	for name, g := range regions {
		for _, extra := range []map[string]any{nil, {"n": map[string]any{"$ne": 1.0}}} {
			w := map[string]any{"loc": g}
			for k, v := range extra {
				w[k] = v
			}
			q := Query{Class: "Place", Where: w, Limit: 100000, Undecoded: true}
			plan, err := Compile(src, q, Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := plan.Run()
			if err != nil {
				t.Fatal(err)
			}
			want, _ := geoBruteForce(t, objs, q, src, geo.DefaultNearSphereMaxDistance)
			got := resultIDs(t, res)
			if fmt.Sprint(got) != fmt.Sprint(ids(want)) {
				t.Fatalf("%s %v: %d results, want %d\nplan %v", name, extra, len(got), len(want), plan.Explain(res))
			}
			undecoded := 0
			for _, o := range res.Objects {
				if o == nil {
					undecoded++
				}
			}
			if undecoded != len(got) || len(got) < 100 || strings.Contains(fmt.Sprint(plan.Explain(res)["access"]), " 0 interior") {
				t.Errorf("%s %v: %d of %d results undecoded, plan %v", name, extra, undecoded, len(got), plan.Explain(res))
			}
		}
	}
}

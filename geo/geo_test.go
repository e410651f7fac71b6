package geo_test

import (
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/schema"
)

func TestValidatePoint(t *testing.T) {
	for _, c := range []struct {
		lat, lng float64
		ok       bool
	}{
		{0, 0, true}, {89.999999, 179.999999, true}, {-89.999999, -179.999999, true},
		{90, 0, false}, {-90, 0, false}, {0, 180, false}, {0, -180, false},
		{90.5, 0, false}, {0, -181, false}, {math.NaN(), 0, false}, {0, math.NaN(), false},
		{math.Inf(1), 0, false}, {0, math.Inf(-1), false},
	} {
		err := geo.ValidatePoint(c.lat, c.lng)
		if (err == nil) != c.ok {
			t.Errorf("ValidatePoint(%v, %v) = %v, want ok=%v", c.lat, c.lng, err, c.ok)
		}
		if err != nil {
			if ge, ok := err.(*geo.Error); !ok || ge.Code != geo.CodeInvalidJSON {
				t.Errorf("ValidatePoint(%v, %v): error %#v has no code 107", c.lat, c.lng, err)
			}
		}
		// The schema's check of written values applies the same rule.
		if serr := schema.ValidateGeoPoint(c.lat, c.lng); (serr == nil) != c.ok {
			t.Errorf("schema.ValidateGeoPoint(%v, %v) = %v, disagrees with geo", c.lat, c.lng, serr)
		}
	}
}

func TestValues(t *testing.T) {
	gp := func(lat, lng any) any {
		return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
	}
	if p, ok := geo.PointFromValue(gp(1.5, -2.0)); !ok || p != (geo.Point{Lat: 1.5, Lng: -2}) {
		t.Errorf("PointFromValue = %v %v", p, ok)
	}
	for _, v := range []any{gp(90.0, 0.0), gp("1", 0.0), gp(1.0, nil), map[string]any{"latitude": 1.0, "longitude": 2.0}, "x", nil} {
		if _, ok := geo.PointFromValue(v); ok {
			t.Errorf("PointFromValue(%v) accepted", v)
		}
	}
	poly := func(coords ...[]any) any {
		cs := make([]any, len(coords))
		for i, c := range coords {
			cs[i] = c
		}
		return map[string]any{"__type": "Polygon", "coordinates": cs}
	}
	pg, ok := geo.PolygonFromValue(poly([]any{0.0, 0.0}, []any{0.0, 10.0}, []any{10.0, 10.0}, []any{0.0, 0.0}))
	if !ok || len(pg.Points()) != 3 || !pg.ContainsPoint(geo.Point{Lat: 1, Lng: 5}) || pg.ContainsPoint(geo.Point{Lat: 5, Lng: 1}) {
		t.Errorf("PolygonFromValue: %v %v", pg, ok)
	}
	for _, v := range []any{poly([]any{0.0, 0.0}, []any{1.0, 1.0}), poly([]any{0.0, 0.0}, []any{1.0, 1.0}, []any{95.0, 0.0}),
		poly([]any{0.0, 0.0}, []any{1.0, 1.0}, []any{1.0}), gp(1.0, 1.0)} {
		if _, ok := geo.PolygonFromValue(v); ok {
			t.Errorf("PolygonFromValue(%v) accepted", v)
		}
	}
}

func TestDistanceAndUnits(t *testing.T) {
	// One degree of a great circle.
	d := geo.Distance(geo.Point{}, geo.Point{Lat: 1})
	if math.Abs(d-math.Pi/180) > 1e-15 {
		t.Errorf("1 degree = %v rad", d)
	}
	if km := geo.RadiansToKilometers(d); math.Abs(km-111.19492664455873) > 1e-9 {
		t.Errorf("1 degree = %v km", km)
	}
	if got := geo.Distance(geo.Point{Lat: 10, Lng: 20}, geo.Point{Lat: -10, Lng: -160}); math.Abs(got-math.Pi) > 1e-12 {
		t.Errorf("antipodes %v", got)
	}
	// Across the antimeridian and over a pole.
	if got := geo.Distance(geo.Point{Lng: 179.5}, geo.Point{Lng: -179.5}); math.Abs(got-math.Pi/180) > 1e-12 {
		t.Errorf("antimeridian %v", got)
	}
	if got := geo.Distance(geo.Point{Lat: 89, Lng: 0}, geo.Point{Lat: 89, Lng: 180}); math.Abs(got-2*math.Pi/180) > 1e-12 {
		t.Errorf("over the pole %v", got)
	}
	// A millimetre stays a millimetre.
	mm := geo.KilometersToRadians(1e-6)
	if got := geo.Distance(geo.Point{Lat: 45, Lng: 7}, geo.Point{Lat: 45 + mm/(math.Pi/180), Lng: 7}); math.Abs(got-mm)/mm > 1e-6 {
		t.Errorf("1 mm = %v rad, want %v", got, mm)
	}
	if geo.MilesToRadians(geo.RadiansToMiles(0.3)) != 0.3 || geo.KilometersToRadians(6371) != 1 || geo.MilesToRadians(3958.8) != 1 {
		t.Error("unit conversions")
	}
	if math.Abs(geo.DefaultNearSphereMaxDistance-100/3958.8) > 1e-18 {
		t.Error("default $nearSphere maximum")
	}
}

// TestEdgeSemantics is the fixture that decides how $box and $polygon
// edges run: along lines of latitude and longitude (as MongoDB-backed
// Parse Server's flat $box and $polygon), not along great circles. Between
// (10, -80) and (10, 80) a geodesic edge would bulge north to 45.4 degrees
// of latitude at longitude 0; a line of latitude stays at 10.
func TestEdgeSemantics(t *testing.T) {
	pg, err := geo.NewPolygon([]geo.Point{{10, -80}, {10, 80}, {20, 80}, {20, -80}})
	if err != nil {
		t.Fatal(err)
	}
	box := geo.NewBox(geo.Point{Lat: 10, Lng: -80}, geo.Point{Lat: 20, Lng: 80})
	for _, c := range []struct {
		p    geo.Point
		want bool
	}{
		{geo.Point{Lat: 10.5, Lng: 0}, true}, // south of the geodesic edge: inside only with flat edges
		{geo.Point{Lat: 50, Lng: 0}, false},  // between the geodesic edges: outside with flat edges
		{geo.Point{Lat: 10, Lng: 0}, true},   // on the southern edge
		{geo.Point{Lat: 20, Lng: 80}, true},  // a vertex
		{geo.Point{Lat: 15, Lng: -80}, true}, // on the western edge
		{geo.Point{Lat: 9.999, Lng: 0}, false},
	} {
		if got := pg.ContainsPoint(c.p); got != c.want {
			t.Errorf("polygon contains %v = %v, want %v", c.p, got, c.want)
		}
		if got := box.ContainsPoint(c.p); got != c.want {
			t.Errorf("box contains %v = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestBoxCorners(t *testing.T) {
	in := func(b geo.Box, lat, lng float64) bool { return b.ContainsPoint(geo.Point{Lat: lat, Lng: lng}) }
	// Across the antimeridian: southwest at 170, northeast at -170.
	am := geo.NewBox(geo.Point{Lat: -20, Lng: 170}, geo.Point{Lat: -10, Lng: -170})
	if !in(am, -15, 175) || !in(am, -15, -175) || !in(am, -15, 170) || in(am, -15, 0) || in(am, -25, 175) {
		t.Errorf("antimeridian box %+v", am)
	}
	// Latitudes in either order.
	b := geo.NewBox(geo.Point{Lat: 10, Lng: 0}, geo.Point{Lat: 0, Lng: 10})
	if !in(b, 5, 5) || in(b, 5, 11) {
		t.Errorf("box with latitudes reversed %+v", b)
	}
	// Both corners reversed: sent as [northeast, southwest].
	b = geo.NewBox(geo.Point{Lat: 10, Lng: 10}, geo.Point{Lat: 0, Lng: 0})
	if !in(b, 5, 5) || in(b, 5, 11) || in(b, 5, -170) {
		t.Errorf("reversed box %+v", b)
	}
	// Whole world and a single meridian.
	if w := geo.NewBox(geo.Point{Lat: -90, Lng: -180}, geo.Point{Lat: 90, Lng: 180}); !in(w, 89.9, 179.9) || !in(w, -89.9, -179.9) {
		t.Error("world box")
	}
	if m := geo.NewBox(geo.Point{Lat: 0, Lng: 5}, geo.Point{Lat: 1, Lng: 5}); !in(m, 0.5, 5) || in(m, 0.5, 5.0001) {
		t.Error("meridian box")
	}
}

func TestPolygonShapes(t *testing.T) {
	in := func(pg *geo.Polygon, lat, lng float64) bool { return pg.ContainsPoint(geo.Point{Lat: lat, Lng: lng}) }
	mk := func(pts ...geo.Point) *geo.Polygon {
		pg, err := geo.NewPolygon(pts)
		if err != nil {
			t.Fatal(err)
		}
		return pg
	}
	// Fiji, across the antimeridian: the short way.
	fiji := mk(geo.Point{Lat: -16, Lng: 177}, geo.Point{Lat: -16, Lng: -178}, geo.Point{Lat: -20, Lng: -178}, geo.Point{Lat: -20, Lng: 177})
	if !in(fiji, -18, 179) || !in(fiji, -18, -179) || in(fiji, -18, 0) || in(fiji, -18, 176) {
		t.Error("antimeridian polygon")
	}
	// Closed and open paths are the same polygon.
	open := mk(geo.Point{0, 0}, geo.Point{0, 10}, geo.Point{10, 10})
	closed := mk(geo.Point{0, 0}, geo.Point{0, 10}, geo.Point{10, 10}, geo.Point{0, 0})
	for _, p := range []geo.Point{{1, 5}, {5, 1}, {5, 5}, {0, 0}, {-1, 0}} {
		if open.ContainsPoint(p) != closed.ContainsPoint(p) {
			t.Errorf("open and closed differ at %v", p)
		}
	}
	// A ring around the north pole encloses it; one around the south pole the south pole.
	north := mk(geo.Point{80, 0}, geo.Point{80, 90}, geo.Point{80, 180}, geo.Point{80, -90})
	if !in(north, 85, 45) || !in(north, 89.99, -120) || in(north, 75, 0) || in(north, -85, 0) {
		t.Error("ring around the north pole")
	}
	south := mk(geo.Point{-70, 0}, geo.Point{-75, 120}, geo.Point{-70, -120})
	if !in(south, -80, 10) || in(south, -60, 0) || in(south, 80, 0) {
		t.Error("ring around the south pole")
	}
	// Concave: a U shape, the notch is outside.
	u := mk(geo.Point{0, 0}, geo.Point{0, 3}, geo.Point{3, 3}, geo.Point{3, 2}, geo.Point{1, 2}, geo.Point{1, 1}, geo.Point{3, 1}, geo.Point{3, 0})
	if !in(u, 0.5, 1.5) || !in(u, 2, 0.5) || in(u, 2, 1.5) || !in(u, 1, 1.5) {
		t.Error("concave polygon")
	}
	if _, err := geo.NewPolygon([]geo.Point{{0, 0}, {1, 1}}); err == nil {
		t.Error("two points accepted")
	}
}

// Random data for the covering properties: anywhere, near the poles, near
// the antimeridian, and clustered around the region at its own scale.

func randomPoint(r *rand.Rand) geo.Point {
	switch r.Intn(4) {
	case 0: // near a pole
		lat := 90 - math.Pow(10, -r.Float64()*6)
		if r.Intn(2) == 0 {
			lat = -lat
		}
		return geo.Point{Lat: lat, Lng: r.Float64()*360 - 180}
	case 1: // near the antimeridian
		lng := 180 - math.Pow(10, -r.Float64()*6)
		if r.Intn(2) == 0 {
			lng = -lng
		}
		return geo.Point{Lat: r.Float64()*170 - 85, Lng: lng}
	}
	return geo.Point{Lat: math.Asin(2*r.Float64()-1) / (math.Pi / 180), Lng: r.Float64()*360 - 180}
}

// destination is the point d radians from c along bearing brg.
func destination(c geo.Point, d, brg float64) geo.Point {
	lat1, lng1 := c.Lat*math.Pi/180, c.Lng*math.Pi/180
	lat2 := math.Asin(math.Max(-1, math.Min(1, math.Sin(lat1)*math.Cos(d)+math.Cos(lat1)*math.Sin(d)*math.Cos(brg))))
	lng2 := lng1 + math.Atan2(math.Sin(brg)*math.Sin(d)*math.Cos(lat1), math.Cos(d)-math.Sin(lat1)*math.Sin(lat2))
	return geo.Point{Lat: lat2 * 180 / math.Pi, Lng: math.Remainder(lng2*180/math.Pi, 360)}
}

// near returns a valid point about d radians from c in a random direction.
func near(r *rand.Rand, c geo.Point, d float64) geo.Point {
	for i := 0; ; i++ {
		p := destination(c, d, r.Float64()*2*math.Pi)
		if p.Valid() {
			return p
		}
		if i > 100 { // c is a pole and d too small to leave it
			d = d*2 + 1e-9
		}
	}
}

const meter = 1 / 6371000.0

var scales = []float64{meter, 30 * meter, 1000 * meter, 50000 * meter, 0.3, math.Pi / 2, 2.5}

func randomCenter(r *rand.Rand) geo.Point {
	switch r.Intn(5) {
	case 0:
		return geo.Point{Lat: 89.99 + r.Float64()*0.009, Lng: r.Float64()*360 - 180}
	case 1:
		return geo.Point{Lat: r.Float64()*40 - 20, Lng: 179.999 + r.Float64()*0.0009}
	}
	return randomPoint(r)
}

func randomRegion(r *rand.Rand) (geo.Region, geo.Point, float64) {
	c := randomCenter(r)
	s := scales[r.Intn(len(scales))]
	switch r.Intn(3) {
	case 0:
		return geo.Cap{Center: c, Radius: s * (0.5 + r.Float64())}, c, s
	case 1:
		deg := math.Min(s*180/math.Pi, 170)
		sw := geo.Point{Lat: math.Max(-90, c.Lat-deg*r.Float64()), Lng: math.Remainder(c.Lng-deg*r.Float64(), 360)}
		ne := geo.Point{Lat: math.Min(90, c.Lat+deg*r.Float64()), Lng: math.Remainder(c.Lng+deg*r.Float64(), 360)}
		if r.Intn(8) == 0 {
			ne.Lat, sw.Lat = 90, c.Lat-deg
		}
		return geo.NewBox(sw, ne), c, s
	}
	// A star-shaped polygon around c, sometimes concave.
	n := 3 + r.Intn(8)
	pts := make([]geo.Point, n)
	for i := range pts {
		d := s * (0.3 + r.Float64())
		if s >= 1 {
			d = math.Min(d, 1.2)
		}
		brg := 2 * math.Pi * (float64(i) + 0.8*r.Float64()) / float64(n)
		lat1, lng1 := c.Lat*math.Pi/180, c.Lng*math.Pi/180
		lat2 := math.Asin(math.Sin(lat1)*math.Cos(d) + math.Cos(lat1)*math.Sin(d)*math.Cos(brg))
		lng2 := lng1 + math.Atan2(math.Sin(brg)*math.Sin(d)*math.Cos(lat1), math.Cos(d)-math.Sin(lat1)*math.Sin(lat2))
		pts[i] = geo.Point{Lat: lat2 * 180 / math.Pi, Lng: math.Remainder(lng2*180/math.Pi, 360)}
	}
	pg, err := geo.NewPolygon(pts)
	if err != nil {
		panic(err)
	}
	return pg, c, s
}

func findRange(ranges []geo.CellRange, cell uint64) (geo.CellRange, bool) {
	i := sort.Search(len(ranges), func(i int) bool { return ranges[i].Hi >= cell })
	if i < len(ranges) && ranges[i].Lo <= cell {
		return ranges[i], true
	}
	return geo.CellRange{}, false
}

// TestCoveringProperties checks, for random regions of every size and
// place, that a covering holds every point the exact test accepts and that
// an interior range holds only such points.
func TestCoveringProperties(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	regions, inside, interior := 0, 0, 0
	for i := 0; i < 1500; i++ {
		reg, c, s := randomRegion(r)
		ranges := geo.CoverRefined(reg, []int{0, 4, 16, 64}[r.Intn(4)], r.Intn(3))
		for j := 1; j < len(ranges); j++ {
			if ranges[j].Lo <= ranges[j-1].Hi {
				t.Fatalf("ranges overlap or are unsorted: %v", ranges)
			}
		}
		var pts []geo.Point
		for j := 0; j < 300; j++ {
			if j%3 == 0 {
				pts = append(pts, randomPoint(r))
			} else {
				pts = append(pts, near(r, c, s*2*r.Float64()))
			}
		}
		if pg, ok := reg.(*geo.Polygon); ok {
			for _, v := range pg.Points() {
				if v.Valid() {
					pts = append(pts, v)
				}
			}
		}
		for _, p := range pts {
			want := reg.ContainsPoint(p)
			rg, found := findRange(ranges, geo.LeafCell(p))
			if want && !found {
				t.Fatalf("region %#v (scale %g): covering misses %v", reg, s, p)
			}
			if found && rg.Interior && !want {
				t.Fatalf("region %#v: interior range holds %v, which is outside", reg, p)
			}
			if want {
				inside++
				if rg.Interior {
					interior++
				}
			}
		}
		regions++
	}
	t.Logf("%d regions, %d points inside, %d of them in interior ranges", regions, inside, interior)
	if inside < 10000 || interior < inside/10 {
		t.Errorf("weak test: %d inside, %d interior", inside, interior)
	}
}

// TestRings checks that rings never repeat a cell and that after Next(r)
// every point within r of the center has been covered.
func TestRings(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 200; i++ {
		c := randomCenter(r)
		rings := geo.NewRings(c, 0)
		var all []geo.CellRange
		radius := scales[r.Intn(4)]
		pts := make([]geo.Point, 400)
		for j := range pts {
			pts[j] = near(r, c, radius*10*r.Float64())
		}
		for step := 0; step < 5 && radius < math.Pi; step++ {
			fresh := rings.Next(radius)
			for _, a := range fresh {
				for _, b := range all {
					if a.Lo <= b.Hi && b.Lo <= a.Hi {
						t.Fatalf("ring %d repeats cells", step)
					}
				}
			}
			all = append(all, fresh...)
			sort.Slice(all, func(i, j int) bool { return all[i].Lo < all[j].Lo })
			for _, p := range pts {
				if geo.Distance(c, p) <= radius {
					if _, ok := findRange(all, geo.LeafCell(p)); !ok {
						t.Fatalf("ring of radius %g around %v misses %v", radius, c, p)
					}
				}
			}
			radius *= 2
		}
	}
}

// BenchmarkCover compares the flood covering (Cover) with
// s2.RegionCoverer's (CoverAdaptive) on regions of about 1 km.
func BenchmarkCover(b *testing.B) {
	c := geo.Point{Lat: 40.7, Lng: -73.9}
	km := geo.KilometersToRadians(1)
	pg, _ := geo.NewPolygon([]geo.Point{{40.70, -73.91}, {40.705, -73.90}, {40.70, -73.89}, {40.695, -73.895}, {40.69, -73.905}})
	for _, s := range []struct {
		name string
		r    geo.Region
	}{
		{"Cap1km", geo.Cap{Center: c, Radius: km}},
		{"Box1km", geo.NewBox(geo.Point{Lat: 40.695, Lng: -73.906}, geo.Point{Lat: 40.705, Lng: -73.894})},
		{"Polygon5", pg},
	} {
		for _, n := range []int{8, 16, 32} {
			b.Run(s.name+"/Flood/cells="+itoa(n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					geo.Cover(s.r, n)
				}
			})
			b.Run(s.name+"/RegionCoverer/cells="+itoa(n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					geo.CoverAdaptive(s.r, n)
				}
			})
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// FuzzCover: for any region and point, a covering holds the point when the
// exact test accepts it, and an interior range only holds accepted points.
func FuzzCover(f *testing.F) {
	f.Add(uint8(0), 89.99, 179.99, 1e-6, 0.3, 1.0, uint8(0))
	f.Add(uint8(1), -10.0, 179.5, 2.0, 1.5, -0.7, uint8(1))
	f.Add(uint8(2), 80.0, 0.0, 10.0, 0.2, 0.9, uint8(2))
	f.Add(uint8(2), 0.0, -180.0, 1e-5, 3.0, 0.01, uint8(0))
	f.Fuzz(func(t *testing.T, kind uint8, lat, lng, size, brg, frac float64, refine uint8) {
		for _, v := range []float64{lat, lng, size, brg, frac} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return
			}
		}
		c := geo.Point{Lat: math.Max(-90, math.Min(90, lat)), Lng: math.Remainder(lng, 360)}
		size = math.Min(math.Abs(size), 170)
		var reg geo.Region
		switch kind % 3 {
		case 0:
			reg = geo.Cap{Center: c, Radius: size * math.Pi / 180}
		case 1:
			reg = geo.NewBox(geo.Point{Lat: math.Max(-90, c.Lat-size), Lng: c.Lng},
				geo.Point{Lat: math.Min(90, c.Lat+size/2), Lng: math.Remainder(c.Lng+size, 360)})
		default:
			var pts []geo.Point
			for k := 0; k < 5; k++ {
				pts = append(pts, destination(c, size*math.Pi/180*(0.5+float64(k)/5), 2*math.Pi*float64(k)/5+brg))
			}
			pg, err := geo.NewPolygon(pts)
			if err != nil {
				return
			}
			reg = pg
		}
		ranges := geo.CoverRefined(reg, 0, int(refine%3))
		p := geo.Point{Lat: c.Lat + frac*size*math.Cos(brg), Lng: math.Remainder(c.Lng+frac*size*math.Sin(brg), 360)}
		if !p.Valid() {
			return
		}
		in := reg.ContainsPoint(p)
		rg, found := findRange(ranges, geo.LeafCell(p))
		if in && !found {
			t.Fatalf("%#v: covering misses %v", reg, p)
		}
		if found && rg.Interior && !in {
			t.Fatalf("%#v: interior range holds %v", reg, p)
		}
	})
}

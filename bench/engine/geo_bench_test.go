package engine

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/planner"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/where"
)

// The geo benchmarks: 1,000,000 GeoPoints spread uniformly over a
// 0.5 x 0.6 degree area (about 55 x 50 km, 360 points per square km, a
// dense city), queried through service.Find (planner, S2 cell index,
// matcher, presentation) and through the planner alone. Results and the
// index memory per point are in ../README.md ("Geo").

const (
	geoPoints = 1_000_000
	geoSouth  = 40.5
	geoWest   = -74.3
	geoDLat   = 0.5
	geoDLng   = 0.6
)

type geoFixture struct {
	svc        *service.Service
	coll       *index.Collection
	indexBytes float64 // heap bytes per point of the S2 cell index
	loadTime   time.Duration
}

var (
	geoOnce sync.Once
	geoFx   geoFixture
)

// loadGeo puts the points straight into the in-memory collection (the
// store is not what is measured, and a million creates through it would
// take minutes), then builds the cell index in one bulk load.
func loadGeo(b *testing.B) *geoFixture {
	geoOnce.Do(func() {
		start := time.Now()
		adapter, err := store.Open(store.MemoryURI)
		if err != nil {
			b.Fatal(err)
		}
		svc, err := service.Open(adapter, service.Options{AllowClientClassCreation: true})
		if err != nil {
			b.Fatal(err)
		}
		coll := svc.Data().Collection("Place", true)
		r := rand.New(rand.NewSource(1))
		const created = "2024-01-01T00:00:00.000Z"
		for i := 0; i < geoPoints; i++ {
			coll.Put(schema.Object{
				"objectId":  fmt.Sprintf("p%07d", i),
				"createdAt": created, "updatedAt": created,
				"name": fmt.Sprintf("place %d", i),
				"loc": map[string]any{"__type": "GeoPoint",
					"latitude": geoSouth + r.Float64()*geoDLat, "longitude": geoWest + r.Float64()*geoDLng},
			})
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := coll.EnsureGeoIndex("loc", index.GeoPoints); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		geoFx = geoFixture{svc: svc, coll: coll, indexBytes: float64(after.HeapAlloc-before.HeapAlloc) / geoPoints,
			loadTime: time.Since(start)}
	})
	if geoFx.svc == nil {
		b.Fatal("geo fixture failed to load")
	}
	return &geoFx
}

func gp(lat, lng float64) map[string]any {
	return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
}

// The queries: each returns about 100 objects (20 for the nearest), in
// the middle of the area.
var (
	geoCenter = geo.Point{Lat: 40.75, Lng: -74.0}
	// 100 points cover 0.278 km2: a box of 0.53 x 0.53 km, a cap of 0.297 km.
	geoBoxHalfLat = 0.53 / 2 / 111.195
	geoBoxHalfLng = geoBoxHalfLat / math.Cos(geoCenter.Lat*math.Pi/180)
	geoCapRadius  = geo.KilometersToRadians(0.2975)
)

func geoQueries() map[string]service.FindParams {
	c := geoCenter
	// A pentagon of 0.278 km2 (circumradius 0.3418 km).
	var poly []any
	for k := 0; k < 5; k++ {
		a := 2 * math.Pi * float64(k) / 5
		dlat := 0.3418 / 111.195 * math.Cos(a)
		dlng := 0.3418 / 111.195 * math.Sin(a) / math.Cos(c.Lat*math.Pi/180)
		poly = append(poly, gp(c.Lat+dlat, c.Lng+dlng))
	}
	return map[string]service.FindParams{
		"Near20Within10km": {Limit: 20, Where: map[string]any{"loc": map[string]any{
			"$nearSphere": gp(c.Lat, c.Lng), "$maxDistanceInKilometers": 10.0}}},
		"Box100": {Limit: 1000, Where: map[string]any{"loc": map[string]any{"$within": map[string]any{"$box": []any{
			gp(c.Lat-geoBoxHalfLat, c.Lng-geoBoxHalfLng), gp(c.Lat+geoBoxHalfLat, c.Lng+geoBoxHalfLng)}}}}},
		"Polygon100": {Limit: 1000, Where: map[string]any{"loc": map[string]any{"$geoWithin": map[string]any{"$polygon": poly}}}},
		"CenterSphere100": {Limit: 1000, Where: map[string]any{"loc": map[string]any{"$geoWithin": map[string]any{
			"$centerSphere": []any{[]any{c.Lng, c.Lat}, geoCapRadius}}}}},
		"CountCenterSphere5km": {Limit: 0, Count: true, Where: map[string]any{"loc": map[string]any{"$geoWithin": map[string]any{
			"$centerSphere": []any{[]any{c.Lng, c.Lat}, geo.KilometersToRadians(5)}}}}},
	}
}

// geoWant are the expected result sizes (checked every iteration, so a
// fast wrong answer cannot pass); counted once by brute force.
var (
	geoWantOnce sync.Once
	geoWant     map[string]int
)

func wantGeo(b *testing.B, f *geoFixture) map[string]int {
	geoWantOnce.Do(func() {
		geoWant = map[string]int{}
		for name, p := range geoQueries() {
			tree, err := where.Parse(p.Where, where.Options{})
			if err != nil {
				b.Fatal(err)
			}
			matcher.LimitNearSphere(tree, geo.DefaultNearSphereMaxDistance)
			m, err := matcher.Compile(tree, nil)
			if err != nil {
				b.Fatal(err)
			}
			// Brute force: the matcher over every object.
			n := 0
			f.coll.Scan(func(o schema.Object) bool {
				if m.Match(o) {
					n++
				}
				return true
			})
			if p.Limit > 0 && n > p.Limit {
				n = p.Limit
			}
			if name == "CountCenterSphere5km" {
				geoWant[name+"/count"] = n
				n = 0
			}
			geoWant[name] = n
		}
		runtime.GC() // the brute force's garbage is not the benchmark's
	})
	return geoWant
}

// plainSource is a planner.Source over one collection.
type plainSource struct{ c *index.Collection }

func (s plainSource) Collection(string) planner.Collection            { return s.c }
func (plainSource) Related(string, string, string, func(string) bool) {}
func (plainSource) Owners(string, string, string, func(string) bool)  {}
func (plainSource) RelatedCount(string, string, string) int           { return 0 }
func (plainSource) FieldType(string, string) (schema.Type, bool)      { return "", false }
func (plainSource) RelationTarget(string, string) string              { return "" }

func benchGeoFind(b *testing.B, name string, auth service.Auth) {
	f := loadGeo(b)
	want := wantGeo(b, f)
	p := geoQueries()[name]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := f.svc.Find(auth, "Place", p)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Results) != want[name] || p.Count && res.Count != want[name+"/count"] {
			b.Fatalf("%s: %d results (count %d), want %d (count %d)", name, len(res.Results), res.Count, want[name], want[name+"/count"])
		}
	}
	b.ReportMetric(f.indexBytes, "indexB/point")
}

func benchGeoPlan(b *testing.B, name string) {
	f := loadGeo(b)
	want := wantGeo(b, f)
	p := geoQueries()[name]
	q := planner.Query{Class: "Place", Where: p.Where, Limit: p.Limit, Count: p.Count}
	b.ReportAllocs()
	b.ResetTimer()
	examined := 0
	for i := 0; i < b.N; i++ {
		plan, err := planner.Compile(plainSource{f.coll}, q, planner.Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := plan.Run()
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Objects) != want[name] || p.Count && res.Count != want[name+"/count"] {
			b.Fatalf("%s: %d results (count %d), want %d", name, len(res.Objects), res.Count, want[name])
		}
		examined = res.Examined
	}
	b.ReportMetric(float64(examined), "examined/op")
}

var geoNames = []string{"Near20Within10km", "Box100", "Polygon100", "CenterSphere100", "CountCenterSphere5km"}

// Benchmark_Geo_Plan_1M: planner.Compile + Run over the collection (no
// access control, no presentation): the query engine alone.
func Benchmark_Geo_Plan_1M(b *testing.B) {
	for _, name := range geoNames {
		b.Run(name, func(b *testing.B) { benchGeoPlan(b, name) })
	}
}

// Benchmark_Geo_Find_1M: service.Find as the REST layer calls it, with
// the master key and as a public client (ACL and CLP checks, presentation).
func Benchmark_Geo_Find_1M(b *testing.B) {
	for _, who := range []struct {
		name string
		auth service.Auth
	}{{"Master", service.Auth{Master: true}}, {"Public", service.Auth{}}} {
		for _, name := range geoNames {
			b.Run(who.name+"/"+name, func(b *testing.B) { benchGeoFind(b, name, who.auth) })
		}
	}
}

// Benchmark_Geo_Load_1M reports how long the fixture took to build and
// the index memory per point.
func Benchmark_Geo_Load_1M(b *testing.B) {
	f := loadGeo(b)
	for i := 0; i < b.N; i++ {
		_ = f
	}
	b.ReportMetric(f.loadTime.Seconds(), "setup-s")
	b.ReportMetric(f.indexBytes, "indexB/point")
}

package index

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/schema"
)

func geoObj(id string, lat, lng float64) schema.Object {
	return schema.Object{"objectId": id, "loc": map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}}
}

// TestGeoIndex: scans and counts of a covering find exactly the points in
// its cells, follow puts and deletes, see the snapshot they started on, and
// stop at the deadline.
func TestGeoIndex(t *testing.T) {
	c := newCollection("Place")
	r := rand.New(rand.NewSource(1))
	pts := map[string]geo.Point{}
	for i := 0; i < 3000; i++ {
		id := fmt.Sprintf("p%04d", i)
		p := geo.Point{Lat: r.Float64()*2 - 1, Lng: r.Float64()*2 - 1}
		pts[id] = p
		c.Put(geoObj(id, p.Lat, p.Lng))
	}
	c.Put(schema.Object{"objectId": "nowhere"})
	c.Put(schema.Object{"objectId": "bad", "loc": map[string]any{"__type": "GeoPoint", "latitude": 95.0, "longitude": 0.0}})
	if err := c.EnsureGeoIndex("loc", GeoPoints); err != nil {
		t.Fatal(err)
	}
	if c.EnsureGeoIndex("loc", GeoShapes) != ErrBadPath || c.GeoIndex("loc") != GeoPoints || c.GeoIndex("x") != GeoNone {
		t.Fatal("one geo index per path")
	}
	// Changes after the build are indexed too.
	for i := 0; i < 300; i++ {
		id := fmt.Sprintf("p%04d", r.Intn(3000))
		if i%3 == 0 {
			c.Delete(id)
			delete(pts, id)
			continue
		}
		p := geo.Point{Lat: r.Float64()*2 - 1, Lng: r.Float64()*2 - 1}
		pts[id] = p
		c.Put(geoObj(id, p.Lat, p.Lng))
	}
	region := geo.Cap{Center: geo.Point{Lat: 0.2, Lng: -0.1}, Radius: 0.005}
	ranges := geo.Cover(region, 0)
	inRanges := func(p geo.Point) bool {
		cell := geo.LeafCell(p)
		for _, rg := range ranges {
			if cell >= rg.Lo && cell <= rg.Hi {
				return true
			}
		}
		return false
	}
	want := map[string]bool{}
	for id, p := range pts {
		if inRanges(p) {
			want[id] = true
		}
	}
	got := map[string]bool{}
	if err := c.ScanGeo("loc", ranges, time.Time{}, func(ref Ref, p geo.Point, interior bool) bool {
		o := ref.Object()
		id := o["objectId"].(string)
		if got[id] || p != pts[id] || interior && !region.ContainsPoint(p) {
			t.Fatalf("%s: repeated, wrong point %v or wrongly interior", id, p)
		}
		got[id] = true
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) < 50 {
		t.Fatalf("scan found %d, want %d", len(got), len(want))
	}
	for id := range want {
		if !got[id] {
			t.Fatalf("scan missed %s", id)
		}
	}
	if n := c.EstimateGeo("loc", ranges, 0); n != len(want) {
		t.Errorf("EstimateGeo = %d, want %d", n, len(want))
	}
	if n := c.EstimateGeo("loc", []geo.CellRange{{Lo: 0, Hi: ^uint64(0)}}, 0); n != len(pts) {
		t.Errorf("whole curve: %d, want %d", n, len(pts))
	}
	if n := c.EstimateGeo("loc", ranges, 7); n != 7 {
		t.Errorf("limited estimate %d", n)
	}
	// A scan sees the snapshot it started on.
	n := 0
	_ = c.ScanGeo("loc", ranges, time.Time{}, func(Ref, geo.Point, bool) bool {
		if n == 0 {
			for id := range want {
				c.Delete(id)
			}
		}
		n++
		return true
	})
	if n != len(want) || c.EstimateGeo("loc", ranges, 0) != 0 {
		t.Errorf("snapshot scan saw %d of %d; after deletes %d remain", n, len(want), c.EstimateGeo("loc", ranges, 0))
	}
	if err := c.ScanGeo("loc", ranges, time.Now().Add(-time.Second), func(Ref, geo.Point, bool) bool { return true }); err != ErrDeadline {
		t.Errorf("deadline: %v", err)
	}
	if err := c.ScanGeo("nope", ranges, time.Time{}, nil); err != ErrNoIndex {
		t.Errorf("no index: %v", err)
	}
	if !c.DropGeoIndex("loc") || c.GeoIndex("loc") != GeoNone || c.DropGeoIndex("loc") {
		t.Error("drop")
	}
}

// TestGeoShapeIndex: polygons are found by any point inside them, after
// puts, moves and deletes.
func TestGeoShapeIndex(t *testing.T) {
	c := newCollection("Zone")
	square := func(id string, lat, lng, d float64) schema.Object {
		return schema.Object{"objectId": id, "area": map[string]any{"__type": "Polygon", "coordinates": []any{
			[]any{lat - d, lng - d}, []any{lat - d, lng + d}, []any{lat + d, lng + d}, []any{lat + d, lng - d}}}}
	}
	c.Put(square("big", 0, 0, 10))
	if err := c.EnsureGeoIndex("area", GeoShapes); err != nil {
		t.Fatal(err)
	}
	c.Put(square("small", 1, 1, 0.001))
	c.Put(square("far", 50, 50, 1))
	c.Put(schema.Object{"objectId": "line", "area": map[string]any{"__type": "Polygon", "coordinates": []any{[]any{0.0, 0.0}}}})
	find := func(lat, lng float64) string {
		var ids []string
		err := c.ScanGeoContaining("area", geo.Point{Lat: lat, Lng: lng}, time.Time{}, func(ref Ref) bool {
			o := ref.Object()
			ids = append(ids, o["objectId"].(string))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(ids)
	}
	if got := find(1, 1); got != "[big small]" && got != "[small big]" {
		t.Errorf("at (1, 1): %s", got)
	}
	if got := find(50.5, 50.5); got != "[far]" {
		t.Errorf("at (50.5, 50.5): %s", got)
	}
	c.Put(square("far", -50, -50, 1))
	c.Delete("small")
	if got := find(50.5, 50.5); got != "[]" {
		t.Errorf("moved polygon still found: %s", got)
	}
	if got := find(1, 1); got != "[big]" {
		t.Errorf("deleted polygon still found: %s", got)
	}
	if got := find(-50.5, -49.5); got != "[far]" {
		t.Errorf("moved polygon not found: %s", got)
	}
}

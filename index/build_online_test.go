package index

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/schema"
)

// TestEnsureIndexOnline holds an index build in its hook and, meanwhile,
// reads and writes the same collection (each call returning is the
// proof that the build holds no lock) and checks that the planner's
// view (HasIndex) does not show the half-built index; then the built
// index must order exactly what a full scan finds, the writes made
// during the build included, and count each key as the objects do.
func TestEnsureIndexOnline(t *testing.T) {
	cases := []struct {
		name  string
		n     int
		write func(c *Collection, i int) // i counts the writes made during the build
		count int
	}{
		{"updates", 2000, func(c *Collection, i int) {
			c.Put(schema.Object{"objectId": fmt.Sprintf("o%05d", i*7), "n": float64(1000 + i%5)})
		}, 300},
		{"deletes", 2000, func(c *Collection, i int) { c.Delete(fmt.Sprintf("o%05d", i*3)) }, 300},
		{"inserts", 500, func(c *Collection, i int) {
			c.Put(schema.Object{"objectId": fmt.Sprintf("new%04d", i), "n": float64(i % 3)})
		}, 300},
		{"churn", 1000, func(c *Collection, i int) {
			id := fmt.Sprintf("o%05d", i%40)
			if i%4 == 3 {
				c.Delete(id)
				return
			}
			c.Put(schema.Object{"objectId": id, "n": []any{float64(i % 6), "s"}}) // arrays too
		}, 400},
		{"nothing", 3000, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := New()
			c := db.Collection("C", true)
			for i := range tc.n {
				c.Put(schema.Object{"objectId": fmt.Sprintf("o%05d", i), "n": float64(i % 17)})
			}
			paused, resume := make(chan struct{}), make(chan struct{})
			db.SetBuildHook(func(class, path string) {
				close(paused)
				<-resume
			})
			built := make(chan error)
			go func() { built <- c.EnsureIndex("n") }()
			<-paused
			if c.HasIndex("n") {
				t.Fatal("the planner sees the index while it is built")
			}
			for i := range tc.count {
				tc.write(c, i)
				c.Get(fmt.Sprintf("o%05d", i))
				_ = c.ScanOrdered("objectId", false, time.Time{}, func(Ref) bool { return false })
			}
			close(resume)
			if err := <-built; err != nil {
				t.Fatal(err)
			}
			db.SetBuildHook(nil)
			checkIndexMatchesScan(t, c, "n")
		})
	}
}

// checkIndexMatchesScan compares the index on path with a full scan:
// the same objects, in key order, and the same count per key.
func checkIndexMatchesScan(t *testing.T, c *Collection, path string) {
	t.Helper()
	type row struct {
		key any
		id  string
	}
	var want []row
	c.Scan(func(o schema.Object) bool {
		id := o["objectId"].(string)
		switch v := o[path].(type) {
		case []any:
			seen := map[any]bool{}
			for _, e := range v {
				if !seen[e] {
					seen[e] = true
					want = append(want, row{e, id})
				}
			}
		default:
			want = append(want, row{v, id})
		}
		return true
	})
	slices.SortFunc(want, func(a, b row) int {
		if d := schema.Compare(a.key, b.key); d != 0 {
			return d
		}
		return compareStrings(a.id, b.id)
	})
	var got []string
	if err := c.ScanOrdered(path, false, time.Time{}, func(r Ref) bool {
		got = append(got, r.ID())
		return true
	}); err != nil {
		t.Fatal(err)
	}
	// A multikey scan delivers an object once, at its first element.
	var wantIDs []string
	seen := map[string]bool{}
	counts := map[any]int{}
	for _, r := range want {
		counts[r.key]++
		if !seen[r.id] {
			seen[r.id] = true
			wantIDs = append(wantIDs, r.id)
		}
	}
	if !slices.Equal(got, wantIDs) {
		t.Fatalf("index scan differs from a full scan: %d ids vs %d", len(got), len(wantIDs))
	}
	for k, n := range counts {
		if est := c.EstimateEqual(path, k, 1<<30); est != n {
			t.Fatalf("key %v: the index counts %d, the objects %d", k, est, n)
		}
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestEnsureIndexDroppedWhileBuilt drops an index during its build: the
// build ends without publishing it.
func TestEnsureIndexDroppedWhileBuilt(t *testing.T) {
	db := New()
	c := db.Collection("C", true)
	for i := range 100 {
		c.Put(schema.Object{"objectId": fmt.Sprintf("o%03d", i), "n": float64(i)})
	}
	paused, resume := make(chan struct{}), make(chan struct{})
	db.SetBuildHook(func(string, string) { close(paused); <-resume })
	built := make(chan error)
	go func() { built <- c.EnsureIndex("n") }()
	<-paused
	if !c.DropIndex("n") {
		t.Fatal("DropIndex did not find the index being built")
	}
	close(resume)
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	if c.HasIndex("n") {
		t.Fatal("a dropped build was published")
	}
}

// TestEnsureGeoIndexOnline is TestEnsureIndexOnline for a geo index:
// points moved, removed and added while the build is held must be found
// where they are now, and nowhere else.
func TestEnsureGeoIndexOnline(t *testing.T) {
	db := New()
	c := db.Collection("Place", true)
	r := rand.New(rand.NewSource(2))
	pts := map[string]geo.Point{}
	put := func(id string) {
		p := geo.Point{Lat: r.Float64()*2 - 1, Lng: r.Float64()*2 - 1}
		pts[id] = p
		c.Put(geoObj(id, p.Lat, p.Lng))
	}
	for i := range 2000 {
		put(fmt.Sprintf("p%04d", i))
	}
	paused, resume := make(chan struct{}), make(chan struct{})
	db.SetBuildHook(func(string, string) { close(paused); <-resume })
	built := make(chan error)
	go func() { built <- c.EnsureGeoIndex("loc", GeoPoints) }()
	<-paused
	if c.GeoIndex("loc") != GeoNone {
		t.Fatal("the planner sees the geo index while it is built")
	}
	if c.EnsureGeoIndex("loc", GeoShapes) != ErrBadPath {
		t.Fatal("another kind on a path being built")
	}
	for i := range 600 {
		switch id := fmt.Sprintf("p%04d", r.Intn(2200)); i % 3 {
		case 0:
			c.Delete(id)
			delete(pts, id)
		default:
			put(id)
		}
	}
	close(resume)
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	db.SetBuildHook(nil)
	region := geo.Cap{Center: geo.Point{Lat: 0.2, Lng: -0.1}, Radius: 0.01}
	ranges := geo.Cover(region, 0)
	want := map[string]bool{}
	for id, p := range pts {
		cell := geo.LeafCell(p)
		for _, rg := range ranges {
			if cell >= rg.Lo && cell <= rg.Hi {
				want[id] = true
			}
		}
	}
	got := map[string]bool{}
	if err := c.ScanGeo("loc", ranges, time.Time{}, func(ref Ref, p geo.Point, _ bool) bool {
		if p != pts[ref.ID()] {
			t.Fatalf("%s found at %v, now at %v", ref.ID(), p, pts[ref.ID()])
		}
		got[ref.ID()] = true
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || !maps.Equal(got, want) {
		t.Fatalf("the geo index finds %d points, a scan %d", len(got), len(want))
	}
}

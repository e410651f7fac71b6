package service_test

import (
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// TestGeoIndexesFollowFields: a GeoPoint or Polygon field gets its S2
// index when a write first brings it, and again at every start.
func TestGeoIndexesFollowFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	open := func() (*service.Service, store.Adapter) {
		a, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := service.Open(a, service.Options{AllowClientClassCreation: true})
		if err != nil {
			t.Fatal(err)
		}
		return s, a
	}
	check := func(s *service.Service, when string) {
		t.Helper()
		c := s.Data().Collection("Place", false)
		if c == nil || c.GeoIndex("loc") != index.GeoPoints || c.GeoIndex("area") != index.GeoShapes || c.GeoIndex("name") != index.GeoNone {
			t.Fatalf("%s: geo indexes %v", when, c.GeoIndexes())
		}
	}
	s, a := open()
	master := service.Auth{Master: true}
	if _, err := s.Create(master, "Place", map[string]any{"name": "a",
		"loc": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 2.0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(master, "Place", map[string]any{"name": "b", "area": map[string]any{"__type": "Polygon",
		"coordinates": []any{[]any{0.0, 0.0}, []any{0.0, 1.0}, []any{1.0, 1.0}}}}); err != nil {
		t.Fatal(err)
	}
	check(s, "after the writes")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	s, a = open()
	defer a.Close()
	check(s, "after a restart")
	res, err := s.Find(master, "Place", service.FindParams{Limit: -1, Where: map[string]any{"loc": map[string]any{
		"$nearSphere": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 2.0}}}, Explain: true})
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("find: %v %v", res.Results, err)
	}
}

package service_test

import (
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// TestObjectHeldOnce: an object's reply bytes are the very memory the
// embedded store keeps as its value, after a write and after a restart
// (once the first read has checked the loaded bytes).
func TestObjectHeldOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	var id string
	for _, phase := range []string{"written", "reloaded"} {
		a, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := service.Open(a, service.Options{AllowClientClassCreation: true})
		if err != nil {
			t.Fatal(err)
		}
		if phase == "written" {
			res, err := s.Create(service.Auth{Master: true}, "Item", map[string]any{"n": 1.0, "s": "<b>"})
			if err != nil {
				t.Fatal(err)
			}
			id = res.ObjectID
		}
		coll := s.Data().Collection("Item", false)
		obj, ok := coll.Get(id)
		if !ok {
			t.Fatalf("%s: object %s not found", phase, id)
		}
		var stored []byte
		err = a.Load(func(r store.Record) error {
			if r.Kind == store.KindObject && r.Class == "Item" && r.Key == id {
				stored = r.Value
			}
			return nil
		})
		if err != nil || stored == nil {
			t.Fatalf("%s: the store's record: %v", phase, err)
		}
		for read := range 2 {
			enc, err := coll.Encoding(obj)
			if err != nil {
				t.Fatal(err)
			}
			if &enc[0] != &stored[0] {
				t.Fatalf("%s, read %d: the reply bytes %s are a second copy of the store's %s", phase, read, enc, stored)
			}
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

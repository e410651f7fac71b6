package service

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

func openFile(t *testing.T, path string) (*Service, func()) {
	t.Helper()
	adapter, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(adapter, Options{})
	if err != nil {
		adapter.Close()
		t.Fatal(err)
	}
	return s, func() {
		if err := adapter.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSchemaChangesAreDurable: field deletions, options, CLPs, indexes,
// purges, Parse Config and event counters survive a restart.
func TestSchemaChangesAreDurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	master := Auth{Master: true}
	s, closeStore := openFile(t, path)
	var ids []string
	for i := 0; i < 2500; i++ { // more than one rewrite batch
		res, err := s.Create(master, "Big", map[string]any{"keep": float64(i), "drop": "x"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ObjectID)
	}
	if _, err := s.CreateSchema(master, "Opt", map[string]any{
		"fields":                map[string]any{"level": map[string]any{"type": "Number", "defaultValue": 1.0, "required": true}},
		"classLevelPermissions": map[string]any{"find": map[string]any{"*": true}},
		"indexes":               map[string]any{"by_level": map[string]any{"level": 1.0}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSchema(master, "Big", map[string]any{"fields": map[string]any{"drop": map[string]any{"__op": "Delete"}}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := s.Create(master, "Gone", map[string]any{"n": float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Purge(master, "Gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateConfig(master, map[string]any{"params": map[string]any{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.TrackEvent(Auth{}, "AppOpened", map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	closeStore()

	s, closeStore = openFile(t, path)
	defer closeStore()
	coll := s.data.Collection("Big", false)
	if coll.Len() != len(ids) {
		t.Fatalf("%d objects after restart, want %d", coll.Len(), len(ids))
	}
	coll.Scan(func(o schema.Object) bool {
		if _, ok := o["drop"]; ok {
			t.Fatalf("deleted field still stored in %v", o)
		}
		return true
	})
	if _, ok := s.Class("Big").Fields["drop"]; ok {
		t.Fatal("deleted field still declared")
	}
	opt := s.Class("Opt")
	if f := opt.Fields["level"]; !f.Required || f.DefaultValue != 1.0 {
		t.Fatalf("field options lost: %+v", f)
	}
	if e, _ := opt.CLP["get"].(map[string]any); e == nil || len(e) != 0 {
		t.Fatalf("CLP lost: %v", opt.CLP)
	}
	if !s.data.Collection("Opt", true).HasIndex("level") {
		t.Fatal("declared index not rebuilt")
	}
	res, err := s.Create(master, "Opt", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.data.Collection("Opt", false).Get(res.ObjectID); got["level"] != 1.0 {
		t.Fatalf("default not applied after restart: %v", got)
	}
	if c := s.data.Collection("Gone", false); c != nil && c.Len() != 0 {
		t.Fatalf("purged objects back: %d", c.Len())
	}
	if p := s.Config(master)["params"].(map[string]any); p["k"] != "v" {
		t.Fatalf("config lost: %v", p)
	}
	agg, err := s.Aggregate(master, AnalyticsClass, AggregateParams{Distinct: "count"})
	if err != nil || len(agg.Results) != 1 || agg.Results[0] != 3.0 {
		t.Fatalf("event counter: %v %v", agg.Results, err)
	}
}

// TestDeleteFieldUnderConcurrentWrites: a field deletion waits for writes
// in flight and leaves no object holding the field, without deadlocking
// against writers that add fields.
func TestDeleteFieldUnderConcurrentWrites(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	for i := 0; i < 200; i++ {
		if _, err := s.Create(master, "Hot", map[string]any{"f": "x", "n": float64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var written atomic.Int64
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := map[string]any{"n": float64(i), fmt.Sprintf("new%d_%d", w, i%5): true}
				if _, err := s.Create(master, "Hot", body); err != nil {
					t.Error(err)
					return
				}
				written.Add(1)
			}
		}(w)
	}
	for written.Load() < 200 {
		runtime.Gosched()
	}
	if _, err := s.UpdateSchema(master, "Hot", map[string]any{"fields": map[string]any{"f": map[string]any{"__op": "Delete"}}}); err != nil {
		t.Fatal(err)
	}
	before := written.Load()
	for written.Load() < before+200 {
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	s.data.Collection("Hot", false).Scan(func(o schema.Object) bool {
		if _, ok := o["f"]; ok {
			t.Fatalf("object still holds the deleted field: %v", o)
		}
		return true
	})
}

// TestRequiredAndDefaultOnUpdate: an update that nulls or deletes a field
// with a default gets the default; a required one without a default is
// refused.
func TestRequiredAndDefaultOnUpdate(t *testing.T) {
	s := openMemory(t)
	master := Auth{Master: true}
	if _, err := s.CreateSchema(master, "Opt", map[string]any{"fields": map[string]any{
		"d": map[string]any{"type": "String", "defaultValue": "dflt"},
		"r": map[string]any{"type": "String", "required": true},
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Create(master, "Opt", map[string]any{"r": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(master, "Opt", res.ObjectID, map[string]any{"d": map[string]any{"__op": "Delete"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.data.Collection("Opt", false).Get(res.ObjectID); got["d"] != "dflt" {
		t.Fatalf("deleting a defaulted field: %v", got)
	}
	_, err = s.Update(master, "Opt", res.ObjectID, map[string]any{"r": nil})
	if pe, ok := schema.AsError(err); !ok || pe.Code != schema.CodeValidationError || pe.Message != "r is required" {
		t.Fatalf("nulling a required field: %v", err)
	}
	if _, err := s.Update(master, "Opt", res.ObjectID, map[string]any{"other": 1.0}); err != nil {
		t.Fatalf("an update leaving the required field alone: %v", err)
	}
}

package service_test

import (
	"slices"
	"testing"

	"github.com/quarrydata/quarry/service"
)

// TestOnSchemaChange: every call that changes a class schema announces the
// class before it returns (the cacheAdapter invalidates LiveQuery servers'
// copies there); a write that adds no field announces nothing.
func TestOnSchemaChange(t *testing.T) {
	var got []string
	s := openTestService(t, service.Options{AllowClientClassCreation: true, OnSchemaChange: func(classes []string) {
		got = append(got, classes...)
	}})
	master := service.Auth{Master: true}
	var id string
	steps := []struct {
		name string
		run  func() error
		want []string
	}{
		{"a write creates the class", func() error {
			res, err := s.Create(service.Auth{}, "Post", map[string]any{"title": "a"})
			id = res.ObjectID
			return err
		}, []string{"Post"}},
		{"a write with known fields", func() error {
			_, err := s.Update(service.Auth{}, "Post", id, map[string]any{"title": "b"})
			return err
		}, nil},
		{"a write adds a field", func() error {
			_, err := s.Update(service.Auth{}, "Post", id, map[string]any{"score": 1.0})
			return err
		}, []string{"Post"}},
		{"a field added", func() error {
			_, err := s.UpdateSchema(master, "Post", map[string]any{"fields": map[string]any{"when": map[string]any{"type": "Date"}}})
			return err
		}, []string{"Post"}},
		{"a field deleted", func() error {
			_, err := s.UpdateSchema(master, "Post", map[string]any{"fields": map[string]any{"when": map[string]any{"__op": "Delete"}}})
			return err
		}, []string{"Post"}},
		{"permissions changed", func() error {
			_, err := s.UpdateSchema(master, "Post", map[string]any{"classLevelPermissions": map[string]any{"find": map[string]any{"*": true}}})
			return err
		}, []string{"Post"}},
		{"an index declared", func() error { return s.EnsureIndex("Post", "score") }, []string{"Post"}},
		{"a class created", func() error {
			_, err := s.CreateSchema(master, "Empty", map[string]any{})
			return err
		}, []string{"Empty"}},
		{"a class dropped", func() error { return s.DeleteSchema(master, "Empty") }, []string{"Empty"}},
		{"a refused change", func() error {
			if err := s.DeleteSchema(master, "Post"); err == nil {
				t.Error("dropping a class with objects succeeded")
			}
			return nil
		}, nil},
	}
	for _, st := range steps {
		got = nil
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if !slices.Equal(got, st.want) {
			t.Errorf("%s: announced %v, want %v", st.name, got, st.want)
		}
	}
}

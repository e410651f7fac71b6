package service_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// TestLoadProgress: reopening a store with objects in it reports the
// objects read every LoadProgressEvery, so a long start-up can say what
// it is doing; an empty store reports nothing.
func TestLoadProgress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	open := func(progress func(int)) (*service.Service, func()) {
		t.Helper()
		a, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := service.Open(a, service.Options{LoadProgress: progress, LoadProgressEvery: 10})
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		return s, func() { s.CloseChanges(0); a.Close() }
	}
	var empty []int
	s, closeFirst := open(func(n int) { empty = append(empty, n) })
	if len(empty) != 0 {
		t.Errorf("an empty store reported %v", empty)
	}
	master := service.Auth{Master: true}
	for i := range 25 {
		if _, err := s.Create(master, "Item", map[string]any{"n": float64(i), "name": fmt.Sprint("item", i)}); err != nil {
			t.Fatal(err)
		}
	}
	closeFirst()

	var got []int
	_, closeSecond := open(func(n int) { got = append(got, n) })
	defer closeSecond()
	if want := []int{10, 20}; !slices.Equal(got, want) {
		t.Errorf("progress %v, want %v", got, want)
	}
}

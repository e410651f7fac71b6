package service_test

import (
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openTestService opens a service on a new on-disk store, closed when the
// test ends.
func openTestService(tb testing.TB, opts service.Options) *service.Service {
	tb.Helper()
	a, err := store.Open(filepath.Join(tb.TempDir(), "q.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() })
	s, err := service.Open(a, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.CloseChanges(0) }) // before the store closes
	return s
}

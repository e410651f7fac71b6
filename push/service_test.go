package push

import (
	"testing"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openMemoryService opens a service on an in-memory store, closed when the
// test ends.
func openMemoryService(t testing.TB) *service.Service {
	t.Helper()
	adapter, err := store.Open(store.MemoryURI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adapter.Close() })
	svc, err := service.Open(adapter, service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

package live

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// TestRemoteSchemaFailureIsNotRemembered: a standalone LiveQuery server
// that cannot fetch a class's schema asks again next time instead of
// remembering "no fields"; a class that does not exist is remembered.
func TestRemoteSchemaFailureIsNotRemembered(t *testing.T) {
	var calls atomic.Int32
	rest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case r.URL.Path == "/parse/schemas/Missing":
			w.WriteHeader(400)
			w.Write([]byte(`{"code":103,"error":"Class Missing does not exist."}`))
		case n == 1:
			w.WriteHeader(503)
		default:
			w.Write([]byte(`{"className":"Place","fields":{"loc":{"type":"GeoPoint"}}}`))
		}
	}))
	defer rest.Close()
	auth := RemoteAuthority(RemoteOptions{ServerURL: rest.URL + "/parse", AppID: "a", MasterKey: "m"})
	if _, ok := auth.FieldType("Place", "loc"); ok {
		t.Fatal("a type known while the REST server failed")
	}
	if typ, ok := auth.FieldType("Place", "loc"); !ok || typ != schema.TypeGeoPoint {
		t.Fatalf("after the failure: %q %v, want GeoPoint (asked again)", typ, ok)
	}
	before := calls.Load()
	auth.FieldType("Missing", "x")
	auth.FieldType("Missing", "x")
	if got := calls.Load() - before; got != 1 {
		t.Errorf("a missing class was asked for %d times, want once (remembered)", got)
	}
}

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

// TestRemoteSchemaForgotten: ForgetSchema (a REST server announced a
// schema change) makes the next lookup ask again, and a lookup that was
// under way when the schema was forgotten answers its caller but is not
// kept: its answer may predate the change.
func TestRemoteSchemaForgotten(t *testing.T) {
	var calls atomic.Int32
	var auth Authority
	rest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Write([]byte(`{"className":"Place","fields":{"loc":{"type":"GeoPoint"}}}`))
		case 2:
			// The change lands while this lookup is under way.
			auth.(*remoteAuthority).ForgetSchema("Place")
			w.Write([]byte(`{"className":"Place","fields":{"loc":{"type":"GeoPoint"}}}`))
		default:
			w.Write([]byte(`{"className":"Place","fields":{"loc":{"type":"Polygon"}}}`))
		}
	}))
	defer rest.Close()
	auth = RemoteAuthority(RemoteOptions{ServerURL: rest.URL + "/parse", AppID: "a", MasterKey: "m"})
	steps := []struct {
		name      string
		forget    bool
		want      schema.Type
		wantCalls int32
	}{
		{"first lookup", false, schema.TypeGeoPoint, 1},
		{"kept", false, schema.TypeGeoPoint, 1},
		{"forgotten: asked again, forgotten meanwhile", true, schema.TypeGeoPoint, 2},
		{"that answer was not kept", false, schema.TypePolygon, 3},
		{"the new answer is kept", false, schema.TypePolygon, 3},
	}
	for _, st := range steps {
		if st.forget {
			auth.(*remoteAuthority).ForgetSchema("Place")
		}
		if typ, ok := auth.FieldType("Place", "loc"); !ok || typ != st.want || calls.Load() != st.wantCalls {
			t.Errorf("%s: %q %v after %d requests, want %q after %d", st.name, typ, ok, calls.Load(), st.want, st.wantCalls)
		}
	}
}

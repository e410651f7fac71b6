package transport_test

import (
	"net/url"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestQueryValuesCompareInTheStoredForm: an equality on a GeoPoint, a
// Polygon or a File with keys beyond those that define it matches what a
// write of the same value stored (the write keeps only the defining keys,
// and so does the query now).
func TestQueryValuesCompareInTheStoredForm(t *testing.T) {
	srv := servertest.Start(t, nil)
	point := map[string]any{"__type": "GeoPoint", "latitude": 10.0, "longitude": 20.0, "note": "extra"}
	ring := map[string]any{"__type": "Polygon", "coordinates": []any{[]any{0.0, 0.0}, []any{0.0, 1.0}, []any{1.0, 1.0}}, "note": "extra"}
	file := map[string]any{"__type": "File", "name": "a.txt", "url": "http://x/a.txt", "note": "extra"}
	if res := srv.Do(t, "POST", "/classes/Place", map[string]any{"loc": point, "area": ring, "doc": file}, servertest.App()); res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	for _, where := range []string{
		`{"loc":{"__type":"GeoPoint","latitude":10,"longitude":20,"note":"extra"}}`,
		`{"area":{"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1]],"note":"extra"}}`,
		`{"doc":{"__type":"File","name":"a.txt","url":"http://x/a.txt","note":"extra"}}`,
	} {
		res := srv.Do(t, "GET", "/classes/Place?where="+url.QueryEscape(where), nil, servertest.App())
		if res.Status != 200 {
			t.Fatalf("%s: %d %s", where, res.Status, res.Body)
		}
		if got := res.Map()["results"].([]any); len(got) != 1 {
			t.Errorf("%s matched %d objects, want 1", where, len(got))
		}
	}
}

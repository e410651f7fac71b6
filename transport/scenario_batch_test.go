package transport_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

func breq(method, path string, body any) map[string]any {
	m := map[string]any{"method": method, "path": path}
	if body != nil {
		m["body"] = body
	}
	return m
}

// batchItems decodes a batch reply into its items.
func batchItems(t testing.TB, res servertest.Response) []map[string]any {
	t.Helper()
	var items []map[string]any
	if err := json.Unmarshal(res.Body, &items); err != nil {
		t.Fatalf("batch reply is not an array: %s", clip(string(res.Body)))
	}
	return items
}

// itemCode returns the error code of a batch item, or 0 for a success.
func itemCode(t testing.TB, item map[string]any) int {
	t.Helper()
	if _, ok := item["success"]; ok {
		return 0
	}
	e, ok := item["error"].(map[string]any)
	if !ok {
		t.Fatalf("batch item is neither success nor error: %v", item)
	}
	if _, ok := e["error"].(string); !ok {
		t.Errorf("batch error without a message: %v", item)
	}
	c, _ := e["code"].(float64)
	return int(c)
}

// TestScenarioBatch: order, per-item errors, limits, routing errors.
func TestScenarioBatch(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	x := mustCreate(t, srv, "B", map[string]any{"n": 1})
	y := mustCreate(t, srv, "B", map[string]any{"n": 2})
	twentyOne := make([]any, 21)
	for i := range twentyOne {
		twentyOne[i] = breq("POST", "/parse/classes/B", map[string]any{"i": i})
	}
	runScenarios(t, srv, []scenario{
		{name: "update then delete in order", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"requests": []any{
				breq("PUT", "/parse/classes/B/"+x, map[string]any{"n": op("Increment", "amount", 1)}),
				breq("DELETE", "/parse/classes/B/"+x, nil),
				breq("PUT", "/parse/classes/B/"+x, map[string]any{"n": 5}),
				breq("POST", "/parse/classes/B", map[string]any{"n": 9}),
				breq("PUT", "/parse/classes/B/"+y, map[string]any{"n": "wrong type"}),
				breq("GET", "/parse/classes/B/"+y, nil),
			}},
			expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) {
				items := batchItems(t, res)
				want := []int{0, 0, 101, 0, 111, 0}
				if len(items) != len(want) {
					t.Fatalf("%d items, want %d: %s", len(items), len(want), res.Body)
				}
				for i, w := range want {
					if got := itemCode(t, items[i]); got != w {
						t.Errorf("item %d: code %d, want %d (%v)", i, got, w, items[i])
					}
				}
				if s := items[0]["success"].(map[string]any); s["n"] != 2.0 || s["updatedAt"] == nil {
					t.Errorf("update item: %v", s)
				}
				if s := items[1]["success"].(map[string]any); len(s) != 0 {
					t.Errorf("delete item: %v, want {}", s)
				}
				s := items[3]["success"].(map[string]any)
				if id, _ := s["objectId"].(string); !objectIDPattern.MatchString(id) || !isoPattern.MatchString(fmt.Sprint(s["createdAt"])) {
					t.Errorf("create item: %v", s)
				}
				if g := items[5]["success"].(map[string]any); g["n"] != 2.0 {
					t.Errorf("get item: %v", g)
				}
				if r := srv.Do(t, "GET", "/classes/B/"+x, nil, app); r.Status != 404 {
					t.Errorf("x survived its delete: %d %s", r.Status, r.Body)
				}
			}},
		{name: "X-Svc headers", method: "POST", path: "/batch", headers: map[string]string{"X-Svc-Application-Id": servertest.AppID},
			body:           map[string]any{"requests": []any{breq("GET", "/parse/classes/B/"+y, nil)}},
			expectedStatus: 200, expectedContains: []string{`"success"`}},
		{name: "body envelope", method: "POST", path: "/batch", headers: map[string]string{"Content-Type": "text/plain"},
			body: map[string]any{"_ApplicationId": servertest.AppID, "_ClientVersion": "js5.3.0",
				"requests": []any{breq("PUT", "/parse/classes/B/"+y, map[string]any{"m": 1})}},
			expectedStatus: 200, expectedContains: []string{`"success"`, `"updatedAt"`}},
		{name: "empty batch", method: "POST", path: "/batch", headers: app, body: map[string]any{"requests": []any{}},
			expectedStatus: 200, expectedContains: []string{`[]`}},
		{name: "21 requests", method: "POST", path: "/batch", headers: app, body: map[string]any{"requests": twentyOne},
			expectedStatus: 400, check: codeIs(107)},
		{name: "21 requests in a transaction", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"requests": twentyOne, "transaction": true}, expectedStatus: 400, check: codeIs(107)},
		{name: "20 requests", method: "POST", path: "/batch", headers: app, body: map[string]any{"requests": twentyOne[:20]},
			expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
				if items := batchItems(t, res); len(items) != 20 {
					t.Errorf("%d items", len(items))
				}
			}},
		{name: "path outside the mount", method: "POST", path: "/batch", headers: app,
			body:           map[string]any{"requests": []any{breq("GET", "/other/classes/B", nil)}},
			expectedStatus: 400, check: codeIs(107), expectedContains: []string{"cannot route batch path /other/classes/B"}},
		{name: "path without the mount", method: "POST", path: "/batch", headers: app,
			body:           map[string]any{"requests": []any{breq("GET", "/classes/B", nil)}},
			expectedStatus: 400, check: codeIs(107), expectedContains: []string{"cannot route batch path"}},
		{name: "mount path prefix of another word", method: "POST", path: "/batch", headers: app,
			body:           map[string]any{"requests": []any{breq("GET", "/parsed/classes/B", nil)}},
			expectedStatus: 400, check: codeIs(107), expectedContains: []string{"cannot route batch path"}},
		{name: "unknown route", method: "POST", path: "/batch", headers: app,
			body:           map[string]any{"requests": []any{breq("GET", "/parse/nothing", nil)}},
			expectedStatus: 400, check: codeIs(107), expectedContains: []string{"cannot route GET /parse/nothing"}},
		{name: "unknown method", method: "POST", path: "/batch", headers: app,
			body:           map[string]any{"requests": []any{breq("PATCH", "/parse/classes/B/"+y, nil)}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "nested batch", method: "POST", path: "/batch", headers: app,
			body:           map[string]any{"requests": []any{breq("POST", "/parse/batch", map[string]any{"requests": []any{}})}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "bad item rejects the whole batch", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"requests": []any{
				breq("PUT", "/parse/classes/B/"+y, map[string]any{"n": 100}),
				breq("GET", "/nowhere", nil),
			}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "earlier item did not run", path: "/classes/B/" + y, headers: app, expectedStatus: 200,
			notExpectedContains: []string{`"n":100`}},
		{name: "requests not an array", method: "POST", path: "/batch", headers: app, body: map[string]any{"requests": "x"},
			expectedStatus: 400, check: codeIs(107), expectedContains: []string{"requests must be an array"}},
		{name: "requests missing", method: "POST", path: "/batch", headers: app, body: map[string]any{},
			expectedStatus: 400, check: codeIs(107)},
		{name: "request not an object", method: "POST", path: "/batch", headers: app, body: map[string]any{"requests": []any{1}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "request body not an object", method: "POST", path: "/batch", headers: app,
			body:           map[string]any{"requests": []any{breq("POST", "/parse/classes/B", []any{1})}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "request without a path", method: "POST", path: "/batch", headers: app,
			body:           map[string]any{"requests": []any{map[string]any{"method": "GET"}}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "missing app id", method: "POST", path: "/batch", body: map[string]any{"requests": []any{}},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
	})
}

// TestScenarioBatchSizeOption: batchSize is configurable.
func TestScenarioBatchSizeOption(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.BatchSize = 2 })
	req := breq("POST", "/parse/classes/Small", map[string]any{"a": 1})
	runScenarios(t, srv, []scenario{
		{name: "two", method: "POST", path: "/batch", headers: servertest.App(),
			body: map[string]any{"requests": []any{req, req}}, expectedStatus: 200},
		{name: "three", method: "POST", path: "/batch", headers: servertest.App(),
			body: map[string]any{"requests": []any{req, req, req}}, expectedStatus: 400, check: codeIs(107)},
		{name: "three in a transaction", method: "POST", path: "/batch", headers: servertest.App(),
			body: map[string]any{"requests": []any{req, req, req}, "transaction": true}, expectedStatus: 400, check: codeIs(107)},
	})
	if n := len(listAll(t, srv, "Small")); n != 2 {
		t.Errorf("%d objects, want 2 (only the accepted batch)", n)
	}
}

// TestScenarioBatchTransaction: all-or-nothing, in order.
func TestScenarioBatchTransaction(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	x := mustCreate(t, srv, "Tx", map[string]any{"n": 1})
	y := mustCreate(t, srv, "Tx", map[string]any{"n": 2})
	var snap string
	takeSnap := func(t testing.TB, _ servertest.Response) { snap = snapshot(t, srv, "Tx") }
	unchanged := func(t testing.TB, res servertest.Response) {
		t.Helper()
		if after := snapshot(t, srv, "Tx"); after != snap {
			t.Errorf("failed transaction wrote:\nbefore %s\nafter  %s", snap, after)
		}
	}
	failed := func(code int) func(testing.TB, servertest.Response) {
		return func(t testing.TB, res servertest.Response) { codeIs(code)(t, res); unchanged(t, res) }
	}
	runScenarios(t, srv, []scenario{
		{name: "snapshot", path: "/classes/Tx", headers: app, expectedStatus: 200, check: takeSnap},
		{name: "last item has a wrong type", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"transaction": true, "requests": []any{
				breq("POST", "/parse/classes/Tx", map[string]any{"n": 10}),
				breq("PUT", "/parse/classes/Tx/"+x, map[string]any{"n": op("Increment", "amount", 1)}),
				breq("DELETE", "/parse/classes/Tx/"+y, nil),
				breq("PUT", "/parse/classes/Tx/"+x, map[string]any{"n": "str"}),
			}},
			expectedStatus: 400, check: failed(111)},
		{name: "item on a missing object", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"transaction": true, "requests": []any{
				breq("POST", "/parse/classes/Tx", map[string]any{"n": 10}),
				breq("PUT", "/parse/classes/Tx/missing123", map[string]any{"n": 1}),
			}},
			expectedStatus: 404, check: failed(101)},
		{name: "update after delete in one transaction", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"transaction": true, "requests": []any{
				breq("DELETE", "/parse/classes/Tx/"+y, nil),
				breq("PUT", "/parse/classes/Tx/"+y, map[string]any{"n": 1}),
			}},
			expectedStatus: 404, check: failed(101)},
		{name: "new field typed twice differently", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"transaction": true, "requests": []any{
				breq("POST", "/parse/classes/Tx", map[string]any{"fresh": 1}),
				breq("POST", "/parse/classes/Tx", map[string]any{"fresh": "one"}),
			}},
			expectedStatus: 400, check: failed(111)},
		{name: "field type not fixed by the failed transaction", method: "POST", path: "/classes/Tx", headers: app,
			body: map[string]any{"fresh": "one"}, expectedStatus: 201},
		{name: "snapshot again", path: "/classes/Tx", headers: app, expectedStatus: 200, check: takeSnap},
		{name: "bad operator", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"transaction": true, "requests": []any{
				breq("PUT", "/parse/classes/Tx/"+x, map[string]any{"n": 5}),
				breq("PUT", "/parse/classes/Tx/"+y, map[string]any{"n": op("Nope")}),
			}},
			expectedStatus: 400, check: failed(108)},
		{name: "GET in a transaction", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"transaction": true, "requests": []any{
				breq("PUT", "/parse/classes/Tx/"+x, map[string]any{"n": 5}),
				breq("GET", "/parse/classes/Tx/"+y, nil),
			}},
			expectedStatus: 400, check: failed(107)},
		{name: "all good", method: "POST", path: "/batch", headers: app,
			body: map[string]any{"transaction": true, "requests": []any{
				breq("PUT", "/parse/classes/Tx/"+x, map[string]any{"n": op("Increment", "amount", 1)}),
				breq("PUT", "/parse/classes/Tx/"+x, map[string]any{"n": op("Increment", "amount", 1)}),
				breq("POST", "/parse/classes/Tx", map[string]any{"n": 10}),
				breq("DELETE", "/parse/classes/Tx/"+y, nil),
			}},
			expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
				items := batchItems(t, res)
				if len(items) != 4 {
					t.Fatalf("%d items: %s", len(items), res.Body)
				}
				for i, it := range items {
					if c := itemCode(t, it); c != 0 {
						t.Errorf("item %d failed: %v", i, it)
					}
				}
				if n := items[1]["success"].(map[string]any)["n"]; n != 3.0 {
					t.Errorf("second increment saw n=%v, want 3 (in-order execution)", n)
				}
				if _, ok := items[2]["success"].(map[string]any)["objectId"]; !ok {
					t.Errorf("create item: %v", items[2])
				}
				if got := mustGet(t, srv, "Tx", x)["n"]; got != 3.0 {
					t.Errorf("x.n = %v, want 3", got)
				}
				if r := srv.Do(t, "GET", "/classes/Tx/"+y, nil, app); r.Status != 404 {
					t.Errorf("y not deleted: %d", r.Status)
				}
			}},
	})
}

// fsyncCount reads the server's count of data file fsyncs.
func fsyncCount(t *testing.T, srv *servertest.Server) float64 {
	t.Helper()
	n, ok := scrape(t, srv)["quarry_store_fsyncs_total"]
	if !ok {
		t.Fatal("metrics without quarry_store_fsyncs_total")
	}
	return n
}

// TestScenarioBatchCreatesCommitTogether: the creates of one class in a
// batch without transaction share one commit (one fsync), and each still
// succeeds or fails on its own, as it would alone and in order: a field
// typed by an earlier item binds a later one, and what a refused item
// would have added to the schema is not added.
func TestScenarioBatchCreatesCommitTogether(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	mustCreate(t, srv, "Warm", map[string]any{"n": 1})
	before := fsyncCount(t, srv)
	geo := func(lat float64) map[string]any {
		return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": 1.0}
	}
	res := srv.Do(t, "POST", "/batch", map[string]any{"requests": []any{
		breq("POST", "/parse/classes/G", map[string]any{"a": 1}),
		breq("POST", "/parse/classes/G", map[string]any{"a": "text"}),
		breq("POST", "/parse/classes/G", map[string]any{"c": op("Bogus")}),
		breq("POST", "/parse/classes/G", map[string]any{"a": 2, "here": geo(1), "there": geo(2)}),
		breq("POST", "/parse/classes/G", map[string]any{"a": 3, "d": op("Increment", "amount", 2)}),
		breq("GET", "/parse/classes/G", nil),
	}}, app)
	if res.Status != 200 {
		t.Fatalf("batch: %d %s", res.Status, res.Body)
	}
	if got := fsyncCount(t, srv) - before; got != 1 {
		t.Errorf("the batch took %v fsyncs, want 1", got)
	}
	items := batchItems(t, res)
	for i, want := range []int{0, 111, 0, 111, 0, 0} {
		got := itemCode(t, items[i])
		if got != want && !(i == 2 && got != 0) {
			t.Errorf("item %d: code %d, want %d (%v)", i, got, want, items[i])
		}
	}
	if s := items[4]["success"].(map[string]any); s["d"] != 2.0 || !objectIDPattern.MatchString(fmt.Sprint(s["objectId"])) {
		t.Errorf("create with an operator: %v, want its objectId and d 2", s)
	}
	found := items[5]["success"].(map[string]any)["results"].([]any)
	if len(found) != 2 {
		t.Errorf("the GET after the creates found %d objects, want 2: %v", len(found), found)
	}
	sch := srv.Do(t, "GET", "/schemas/G", nil, servertest.Master())
	for _, field := range []string{`"a":{"type":"Number"}`, `"d":{"type":"Number"}`} {
		if !strings.Contains(string(sch.Body), field) {
			t.Errorf("schema lacks %s: %s", field, sch.Body)
		}
	}
	for _, field := range []string{`"here"`, `"there"`, `"c"`} {
		if strings.Contains(string(sch.Body), field) {
			t.Errorf("schema has %s of a refused item: %s", field, sch.Body)
		}
	}
}

package transport_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestScenarioValueRoundTrip writes one field of every type and reads the
// exact value back, through get and find.
func TestScenarioValueRoundTrip(t *testing.T) {
	srv := servertest.Start(t, nil)
	target := mustCreate(t, srv, "Target", map[string]any{})
	values := map[string]any{
		"str":     "héllo ☃",
		"num":     12.5,
		"int":     float64(-7),
		"bool":    false,
		"date":    map[string]any{"__type": "Date", "iso": "2024-01-02T03:04:05.678Z"},
		"ptr":     map[string]any{"__type": "Pointer", "className": "Target", "objectId": target},
		"file":    map[string]any{"__type": "File", "name": "abc_pic.png", "url": "http://files.example/abc_pic.png"},
		"geo":     map[string]any{"__type": "GeoPoint", "latitude": 40.5, "longitude": -73.25},
		"poly":    map[string]any{"__type": "Polygon", "coordinates": []any{[]any{0.0, 0.0}, []any{0.0, 1.0}, []any{1.0, 1.0}, []any{1.0, 0.0}, []any{0.0, 0.0}}},
		"bytes":   map[string]any{"__type": "Bytes", "base64": "aGVsbG8="},
		"obj":     map[string]any{"a": 1.0, "b": map[string]any{"c": []any{"x", nil, true}}, "d": map[string]any{"__type": "Date", "iso": "2020-05-06T07:08:09.010Z"}},
		"arr":     []any{1.0, "two", map[string]any{"three": 3.0}, []any{4.0}, map[string]any{"__type": "Pointer", "className": "Target", "objectId": target}},
		"empties": []any{},
		"nothing": nil,
	}
	body := map[string]any{"rel": map[string]any{"__type": "Relation", "className": "Target"}}
	for k, v := range values {
		body[k] = v
	}
	id := mustCreate(t, srv, "Types", body)
	check := func(t *testing.T, got map[string]any) {
		for k, want := range values {
			if k == "nothing" {
				if v, ok := got[k]; ok && v != nil {
					t.Errorf("%s = %v, want null or absent", k, v)
				}
				continue
			}
			if k == "file" {
				// Every read gives a File its file's current URL.
				want = map[string]any{"__type": "File", "name": "abc_pic.png", "url": srv.URL + "/files/test-app/abc_pic.png"}
			}
			if !reflect.DeepEqual(got[k], want) {
				t.Errorf("%s = %#v, want %#v", k, got[k], want)
			}
		}
		wantRel := map[string]any{"__type": "Relation", "className": "Target"}
		if !reflect.DeepEqual(got["rel"], wantRel) {
			t.Errorf("rel = %#v, want %#v", got["rel"], wantRel)
		}
	}
	t.Run("get", func(t *testing.T) { check(t, mustGet(t, srv, "Types", id)) })
	t.Run("find", func(t *testing.T) {
		all := listAll(t, srv, "Types")
		if len(all) != 1 {
			t.Fatalf("%d results", len(all))
		}
		check(t, all[0])
	})
	t.Run("null on update keeps the type", func(t *testing.T) {
		for _, k := range []string{"str", "num", "date", "ptr", "geo", "arr", "obj", "bytes", "file", "poly"} {
			res := srv.Do(t, "PUT", "/classes/Types/"+id, map[string]any{k: nil}, servertest.App())
			if res.Status != 200 {
				t.Errorf("null into %s: %d %s", k, res.Status, res.Body)
			}
		}
		res := srv.Do(t, "PUT", "/classes/Types/"+id, map[string]any{"str": 5}, servertest.App())
		if res.Status != 400 || !strings.Contains(string(res.Body), `"code":111`) {
			t.Errorf("type stays locked after null: %d %s", res.Status, res.Body)
		}
	})
	t.Run("dates are normalized to milliseconds UTC", func(t *testing.T) {
		id := mustCreate(t, srv, "Types", map[string]any{"date": map[string]any{"__type": "Date", "iso": "2024-01-02T04:04:05+01:00"}})
		got := mustGet(t, srv, "Types", id)["date"]
		want := map[string]any{"__type": "Date", "iso": "2024-01-02T03:04:05.000Z"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("date %v, want %v", got, want)
		}
	})
}

// TestScenarioTypeRules: lock-in, names, reserved keys, special values.
func TestScenarioTypeRules(t *testing.T) {
	srv := servertest.Start(t, nil)
	id := mustCreate(t, srv, "Rules", map[string]any{"n": 1, "s": "x", "loc": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 2.0}})
	before := func() string { return snapshot(t, srv, "Rules") }
	snap := before()
	m := servertest.Master()
	post := func(name string, body any, status, code int, contains ...string) scenario {
		return scenario{name: name, method: "POST", path: "/classes/Rules", headers: m, body: body,
			expectedStatus: status, check: codeOrAny(code), expectedContains: contains}
	}
	put := func(name string, body any, status, code int, contains ...string) scenario {
		return scenario{name: name, method: "PUT", path: "/classes/Rules/" + id, headers: m, body: body,
			expectedStatus: status, check: codeOrAny(code), expectedContains: contains}
	}
	rejections := []scenario{
		post("string into a number", map[string]any{"n": "one"}, 400, 111),
		post("number into a string", map[string]any{"s": 2}, 400, 111),
		put("update string into a number", map[string]any{"n": "one"}, 400, 111),
		put("array into a number", map[string]any{"n": []any{1}}, 400, 111),
		put("object into a string", map[string]any{"s": map[string]any{"a": 1}}, 400, 111),
		put("date into a string", map[string]any{"s": map[string]any{"__type": "Date", "iso": "2024-01-02T03:04:05.678Z"}}, 400, 111),
		put("add on a number", map[string]any{"n": map[string]any{"__op": "Add", "objects": []any{1}}}, 400, 111),
		put("increment on a string", map[string]any{"s": map[string]any{"__op": "Increment", "amount": 1}}, 400, 111),
		{name: "bad class name digit", method: "POST", path: "/classes/1abc", headers: m, body: map[string]any{"a": 1},
			expectedStatus: 400, check: codeIs(103)},
		{name: "bad class name underscore", method: "POST", path: "/classes/_Custom", headers: m, body: map[string]any{"a": 1},
			expectedStatus: 400, check: codeIs(103)},
		{name: "bad class name dash", method: "POST", path: "/classes/a-b", headers: m, body: map[string]any{"a": 1},
			expectedStatus: 400, check: codeIs(103)},
		{name: "bad class name on get", path: "/classes/_Custom/abc", headers: m, expectedStatus: 400, check: codeIs(103)},
		{name: "bad class name on update", method: "PUT", path: "/classes/1abc/abc", headers: m, body: map[string]any{"a": 1},
			expectedStatus: 400, check: codeIs(103)},
		{name: "bad class name on delete", method: "DELETE", path: "/classes/1abc/abc", headers: m, expectedStatus: 400, check: codeIs(103)},
		post("key starting with a digit", map[string]any{"1a": 1}, 400, 105),
		post("key with a space", map[string]any{"a b": 1}, 400, 105),
		post("key with a dash", map[string]any{"a-b": 1}, 400, 105),
		post("empty key", map[string]any{"": 1}, 400, 105),
		post("reserved objectId", map[string]any{"objectId": "abcdefghij"}, 400, 105),
		post("reserved createdAt", map[string]any{"createdAt": "2024-01-02T03:04:05.678Z"}, 400, 105),
		post("reserved updatedAt", map[string]any{"updatedAt": "2024-01-02T03:04:05.678Z"}, 400, 105),
		post("reserved __type", map[string]any{"__type": "Pointer"}, 400, 105),
		post("reserved _rperm", map[string]any{"_rperm": []any{"*"}}, 400, 105),
		post("reserved _hashed_password", map[string]any{"_hashed_password": "x"}, 400, 105),
		post("dollar in a key", map[string]any{"a$b": 1}, 400, 105),
		post("dot in a key on create", map[string]any{"a.b": 1}, 400, 105),
		post("prohibited __proto__", map[string]any{"__proto__": map[string]any{"x": 1}}, 400, 105),
		post("prohibited nested constructor", map[string]any{"o": map[string]any{"constructor": 1}}, 400, 105),
		put("update reserved createdAt", map[string]any{"createdAt": "2024-01-02T03:04:05.678Z"}, 400, 105),
		put("update key with a dollar", map[string]any{"$set": 1}, 400, 105),
		post("nested key with a dollar", map[string]any{"o": map[string]any{"$gt": 1}}, 400, 121),
		post("nested key with a dot", map[string]any{"o": map[string]any{"a.b": 1}}, 400, 121),
		post("deeper nested key with a dot", map[string]any{"o": map[string]any{"a": []any{map[string]any{"b.c": 1}}}}, 400, 121),
		put("nested key with a dollar on update", map[string]any{"o": map[string]any{"x$": 1}}, 400, 121),
		post("latitude 90", map[string]any{"loc": map[string]any{"__type": "GeoPoint", "latitude": 90.0, "longitude": 0.0}}, 400, 0),
		post("latitude -91", map[string]any{"loc": map[string]any{"__type": "GeoPoint", "latitude": -91.0, "longitude": 0.0}}, 400, 0),
		post("longitude 180", map[string]any{"loc": map[string]any{"__type": "GeoPoint", "latitude": 0.0, "longitude": 180.0}}, 400, 0),
		post("longitude -200", map[string]any{"loc": map[string]any{"__type": "GeoPoint", "latitude": 0.0, "longitude": -200.0}}, 400, 0),
		post("GeoPoint latitude a string", map[string]any{"loc": map[string]any{"__type": "GeoPoint", "latitude": "1", "longitude": 0.0}}, 400, 111),
		post("second GeoPoint field", map[string]any{"other": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 1.0}}, 400, 111),
		put("second GeoPoint field on update", map[string]any{"other": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 1.0}}, 400, 111),
		{name: "two GeoPoint fields in a new class", method: "POST", path: "/classes/TwoGeo", headers: m,
			body: map[string]any{"a": map[string]any{"__type": "GeoPoint", "latitude": 1.0, "longitude": 1.0},
				"b": map[string]any{"__type": "GeoPoint", "latitude": 2.0, "longitude": 2.0}},
			expectedStatus: 400, check: codeIs(111)},
		post("GeoPoint polygon out of range", map[string]any{"poly": map[string]any{"__type": "Polygon",
			"coordinates": []any{[]any{0.0, 0.0}, []any{0.0, 1.0}, []any{95.0, 1.0}}}}, 400, 0),
		post("polygon with two points", map[string]any{"poly": map[string]any{"__type": "Polygon",
			"coordinates": []any{[]any{0.0, 0.0}, []any{0.0, 1.0}}}}, 400, 0),
		post("unknown __type", map[string]any{"x": map[string]any{"__type": "Spaceship"}}, 400, 111),
		post("__type not a string", map[string]any{"x": map[string]any{"__type": 5}}, 400, 111),
		post("Date without iso", map[string]any{"x": map[string]any{"__type": "Date"}}, 400, 111),
		post("Date with a bad iso", map[string]any{"x": map[string]any{"__type": "Date", "iso": "yesterday"}}, 400, 111),
		post("Bytes not base64", map[string]any{"x": map[string]any{"__type": "Bytes", "base64": "%%%"}}, 400, 111),
		post("File without name", map[string]any{"x": map[string]any{"__type": "File"}}, 400, 111),
		post("Relation without class", map[string]any{"x": map[string]any{"__type": "Relation"}}, 400, 111),
		post("Pointer without objectId", map[string]any{"x": map[string]any{"__type": "Pointer", "className": "Rules"}}, 400, 106),
		post("unknown __op", map[string]any{"x": map[string]any{"__op": "Explode"}}, 400, 108, "Explode"),
		put("unknown __op on update", map[string]any{"n": map[string]any{"__op": "Multiply", "amount": 2}}, 400, 108),
		put("__op not a string", map[string]any{"n": map[string]any{"__op": 1}}, 400, 108),
		post("__op nested", map[string]any{"o": map[string]any{"x": map[string]any{"__op": "Increment", "amount": 1}}}, 400, 0),
		put("increment without amount", map[string]any{"n": map[string]any{"__op": "Increment"}}, 400, 107, "incrementing must provide a number"),
		put("increment by a string", map[string]any{"n": map[string]any{"__op": "Increment", "amount": "1"}}, 400, 107),
		put("add without objects", map[string]any{"arr": map[string]any{"__op": "Add", "objects": 1}}, 400, 107, "objects to add must be an array"),
		put("remove without objects", map[string]any{"arr": map[string]any{"__op": "Remove"}}, 400, 107, "objects to remove must be an array"),
		post("ACL not an object", map[string]any{"ACL": "public"}, 400, 123),
		post("ACL unresolved", map[string]any{"ACL": map[string]any{"*unresolved": map[string]any{"read": true}}}, 400, 123),
		post("ACL bad permission", map[string]any{"ACL": map[string]any{"*": map[string]any{"fly": true}}}, 400, 123),
		post("ACL non-boolean", map[string]any{"ACL": map[string]any{"*": map[string]any{"read": "yes"}}}, 400, 123),
		post("ACL entry not an object", map[string]any{"ACL": map[string]any{"*": true}}, 400, 123),
		put("ACL invalid on update", map[string]any{"ACL": []any{}}, 400, 123),
	}
	runScenarios(t, srv, rejections)
	if after := before(); after != snap {
		t.Errorf("rejected writes changed the class:\nbefore %s\nafter  %s", snap, after)
	}
	runScenarios(t, srv, []scenario{
		{name: "null into a typed field on create", method: "POST", path: "/classes/Rules", headers: m,
			body: map[string]any{"n": nil, "s": nil, "loc": nil}, expectedStatus: 201},
		{name: "null into a new field", method: "POST", path: "/classes/Rules", headers: m,
			body: map[string]any{"fresh": nil}, expectedStatus: 201},
		{name: "null did not fix the new field's type", method: "POST", path: "/classes/Rules", headers: m,
			body: map[string]any{"fresh": "now a string"}, expectedStatus: 201},
		{name: "then it is locked", method: "POST", path: "/classes/Rules", headers: m,
			body: map[string]any{"fresh": 1}, expectedStatus: 400, check: codeIs(111)},
		{name: "same GeoPoint field again", method: "PUT", path: "/classes/Rules/" + id, headers: m,
			body: map[string]any{"loc": map[string]any{"__type": "GeoPoint", "latitude": -89.9, "longitude": 179.9}}, expectedStatus: 200},
		{name: "valid ACL", method: "PUT", path: "/classes/Rules/" + id, headers: m,
			body:           map[string]any{"ACL": map[string]any{"*": map[string]any{"read": true, "write": false}, "role:Admin": map[string]any{"write": true}}},
			expectedStatus: 200},
		{name: "ACL keeps only granted flags", path: "/classes/Rules/" + id, headers: m, expectedStatus: 200,
			expectedContains:    []string{`"ACL":{"*":{"read":true},"role:Admin":{"write":true}}`},
			notExpectedContains: []string{`false`}},
		{name: "pointer target locked", method: "POST", path: "/classes/Rules", headers: m,
			body: map[string]any{"p": map[string]any{"__type": "Pointer", "className": "A", "objectId": "x"}}, expectedStatus: 201},
		{name: "pointer to another class", method: "POST", path: "/classes/Rules", headers: m,
			body:           map[string]any{"p": map[string]any{"__type": "Pointer", "className": "B", "objectId": "x"}},
			expectedStatus: 400, check: codeIs(111)},
	})
}

// startAt starts a server on a fixed database file; it stops when t ends.
func startAt(t *testing.T, dbPath string) *servertest.Server {
	t.Helper()
	return servertest.Start(t, func(o *config.Options) { o.DatabaseURI = dbPath })
}

// TestScenarioLockInSurvivesRestart: field types, objects and relation
// declarations are durable.
func TestScenarioLockInSurvivesRestart(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "restart.db")
	var id string
	t.Run("first life", func(t *testing.T) {
		srv := startAt(t, dbPath)
		id = mustCreate(t, srv, "Durable", map[string]any{"n": 1, "when": map[string]any{"__type": "Date", "iso": "2024-01-02T03:04:05.678Z"}})
		target := mustCreate(t, srv, "Target", map[string]any{})
		runScenarios(t, srv, []scenario{
			{name: "locked now", method: "PUT", path: "/classes/Durable/" + id, headers: servertest.App(),
				body: map[string]any{"n": "str"}, expectedStatus: 400, check: codeIs(111)},
			{name: "relation", method: "PUT", path: "/classes/Durable/" + id, headers: servertest.App(),
				body: map[string]any{"rel": map[string]any{"__op": "AddRelation",
					"objects": []any{map[string]any{"__type": "Pointer", "className": "Target", "objectId": target}}}},
				expectedStatus: 200},
		})
	})
	if t.Failed() {
		t.FailNow()
	}
	t.Run("second life", func(t *testing.T) {
		srv := startAt(t, dbPath)
		runScenarios(t, srv, []scenario{
			{name: "object survived", path: "/classes/Durable/" + id, headers: servertest.App(), expectedStatus: 200,
				expectedContains: []string{`"n":1`, `"iso":"2024-01-02T03:04:05.678Z"`,
					`"rel":{"__type":"Relation","className":"Target"}`}},
			{name: "number still locked on update", method: "PUT", path: "/classes/Durable/" + id, headers: servertest.App(),
				body: map[string]any{"n": "str"}, expectedStatus: 400, check: codeIs(111)},
			{name: "number still locked on create", method: "POST", path: "/classes/Durable", headers: servertest.App(),
				body: map[string]any{"n": true}, expectedStatus: 400, check: codeIs(111)},
			{name: "date still locked", method: "POST", path: "/classes/Durable", headers: servertest.App(),
				body: map[string]any{"when": "2024"}, expectedStatus: 400, check: codeIs(111)},
			{name: "relation still locked", method: "POST", path: "/classes/Durable", headers: servertest.App(),
				body: map[string]any{"rel": 5}, expectedStatus: 400, check: codeIs(111)},
			{name: "null still allowed", method: "PUT", path: "/classes/Durable/" + id, headers: servertest.App(),
				body: map[string]any{"n": nil}, expectedStatus: 200},
			{name: "right type still allowed", method: "PUT", path: "/classes/Durable/" + id, headers: servertest.App(),
				body: map[string]any{"n": 2}, expectedStatus: 200},
		})
	})
	t.Run("third life", func(t *testing.T) {
		srv := startAt(t, dbPath)
		got := mustGet(t, srv, "Durable", id)
		if got["n"] != 2.0 {
			t.Errorf("n = %v after restart, want 2", got["n"])
		}
		b, _ := json.Marshal(got)
		if !strings.Contains(string(b), `"rel":{"__type":"Relation","className":"Target"}`) {
			t.Errorf("relation field lost: %s", b)
		}
	})
}

// codeOrAny checks a Parse error code; 0 accepts any code (the rule only
// asks for a clean client error).
func codeOrAny(code int) func(testing.TB, servertest.Response) {
	if code != 0 {
		return codeIs(code)
	}
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		if _, ok := res.Map()["code"].(float64); !ok {
			t.Errorf("no Parse error code: %s", clip(string(res.Body)))
		}
	}
}

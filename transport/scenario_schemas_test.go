package transport_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// bodyJSON checks that a reply decodes to exactly want (compared as JSON).
func replyIs(want string) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		var got, exp any
		if err := json.Unmarshal(res.Body, &got); err != nil {
			t.Fatalf("reply is not JSON: %s", res.Body)
		}
		if err := json.Unmarshal([]byte(want), &exp); err != nil {
			t.Fatalf("bad expectation %s: %v", want, err)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("reply\n  %s\nwant\n  %s", res.Body, want)
		}
	}
}

// pathJSON checks one value inside a JSON reply (dot path) against want.
func replyAt(path, want string) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		var v any = res.JSON()
		for _, p := range strings.Split(path, ".") {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		var exp any
		if err := json.Unmarshal([]byte(want), &exp); err != nil {
			t.Fatalf("bad expectation %s: %v", want, err)
		}
		if !reflect.DeepEqual(v, exp) {
			got, _ := json.Marshal(v)
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
}

func checkAll(checks ...func(testing.TB, servertest.Response)) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		for _, c := range checks {
			c(t, res)
		}
	}
}

const publicCLP = `{"find":{"*":true},"count":{"*":true},"get":{"*":true},"create":{"*":true},` +
	`"update":{"*":true},"delete":{"*":true},"addField":{"*":true},"protectedFields":{"*":[]}}`

// TestScenarioSchemasMasterOnly: every schema route answers 403 without
// the master key, with Parse's body.
func TestScenarioSchemasMasterOnly(t *testing.T) {
	srv := servertest.Start(t, nil)
	denied := func(name, method, path string) scenario {
		return scenario{name: name, method: method, path: path, headers: servertest.App(), body: map[string]any{},
			expectedStatus: 403, check: replyIs(`{"error":"unauthorized: master key is required"}`)}
	}
	runScenarios(t, srv, []scenario{
		denied("list", "GET", "/schemas"),
		denied("get", "GET", "/schemas/_User"),
		denied("create", "POST", "/schemas/Foo"),
		denied("create without a name", "POST", "/schemas"),
		denied("update", "PUT", "/schemas/Foo"),
		denied("delete", "DELETE", "/schemas/Foo"),
		denied("purge", "DELETE", "/purge/Foo"),
	})
}

// TestScenarioSchemas: the schemas API's payloads and errors (reference §7).
func TestScenarioSchemas(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	gameScore := `{"className":"GameScore","fields":{"objectId":{"type":"String"},"createdAt":{"type":"Date"},` +
		`"updatedAt":{"type":"Date"},"ACL":{"type":"ACL"},"score":{"type":"Number","required":true,"defaultValue":0},` +
		`"player":{"type":"Pointer","targetClass":"_User"},"fans":{"type":"Relation","targetClass":"_User"},` +
		`"name":{"type":"String","required":true}},"classLevelPermissions":` + publicCLP + `,"indexes":{"_id_":{"_id":1}}}`
	runScenarios(t, srv, []scenario{
		{name: "list on a fresh server is empty", path: "/schemas", headers: m, expectedStatus: 200,
			check: replyIs(`{"results":[]}`)},
		{name: "a sign-up brings _User and _Session", method: "POST", path: "/users", headers: servertest.App(),
			body: map[string]any{"username": "u", "password": "p"}, expectedStatus: 201},
		{name: "a role brings _Role", method: "POST", path: "/roles", headers: m,
			body: map[string]any{"name": "r", "ACL": map[string]any{}}, expectedStatus: 201},
		{name: "list shows the classes in use", path: "/schemas", headers: m, expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) {
				var out struct{ Results []map[string]any }
				_ = json.Unmarshal(res.Body, &out)
				var names []string
				for _, r := range out.Results {
					names = append(names, r["className"].(string))
				}
				if !reflect.DeepEqual(names, []string{"_Role", "_Session", "_User"}) {
					t.Errorf("classes %v", names)
				}
			}},
		{name: "list with a trailing slash (Parse.Schema.all)", path: "/schemas/", headers: m, expectedStatus: 200,
			expectedContains: []string{`"className":"_User"`}},
		{name: "get _User", path: "/schemas/_User", headers: m, expectedStatus: 200,
			check: checkAll(replyAt("fields.username", `{"type":"String"}`), replyAt("fields.emailVerified", `{"type":"Boolean"}`),
				replyAt("fields.authData", `{"type":"Object"}`), replyAt("classLevelPermissions", publicCLP))},
		{name: "get _Role", path: "/schemas/_Role", headers: m, expectedStatus: 200,
			check: replyAt("fields.users", `{"type":"Relation","targetClass":"_User"}`)},
		{name: "get an unknown class", path: "/schemas/Nope", headers: m, expectedStatus: 400,
			check: checkAll(codeIs(103), replyAt("error", `"Class Nope does not exist."`))},
		{name: "create", method: "POST", path: "/schemas/GameScore", headers: m, expectedStatus: 200,
			body: map[string]any{"className": "GameScore", "fields": map[string]any{
				"score":  map[string]any{"type": "Number", "required": true, "defaultValue": 0},
				"player": map[string]any{"type": "Pointer", "targetClass": "_User"},
				"fans":   map[string]any{"type": "Relation", "targetClass": "_User"},
				"name":   map[string]any{"type": "String", "required": true},
			}},
			check: replyIs(gameScore)},
		{name: "get it back", path: "/schemas/GameScore", headers: m, expectedStatus: 200, check: replyIs(gameScore)},
		{name: "create again", method: "POST", path: "/schemas/GameScore", headers: m, body: map[string]any{},
			expectedStatus: 400, check: checkAll(codeIs(103), replyAt("error", `"Class GameScore already exists."`))},
		{name: "create with the name in the body", method: "POST", path: "/schemas", headers: m,
			body: map[string]any{"className": "Other"}, expectedStatus: 200, check: replyAt("className", `"Other"`)},
		{name: "name mismatch", method: "POST", path: "/schemas/A", headers: m, body: map[string]any{"className": "B"},
			expectedStatus: 400, check: checkAll(codeIs(103), replyAt("error", `"Class name mismatch between B and A."`))},
		{name: "no class name", method: "POST", path: "/schemas", headers: m, body: map[string]any{},
			expectedStatus: 400, check: checkAll(codeIs(135), replyAt("error", `"POST /schemas needs a class name."`))},
		{name: "bad class name", method: "POST", path: "/schemas/_Secret", headers: m, body: map[string]any{},
			expectedStatus: 400, check: codeIs(103), expectedContains: []string{"Invalid classname: _Secret"}},
		{name: "bad field name", method: "POST", path: "/schemas/Bad1", headers: m,
			body:           map[string]any{"fields": map[string]any{"1x": map[string]any{"type": "String"}}},
			expectedStatus: 400, check: checkAll(codeIs(105), replyAt("error", `"invalid field name: 1x"`))},
		{name: "a default field", method: "POST", path: "/schemas/Bad2", headers: m,
			body:           map[string]any{"fields": map[string]any{"createdAt": map[string]any{"type": "Date"}}},
			expectedStatus: 400, check: checkAll(codeIs(136), replyAt("error", `"field createdAt cannot be added"`))},
		{name: "unknown type", method: "POST", path: "/schemas/Bad3", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": "Integer"}}},
			expectedStatus: 400, check: checkAll(codeIs(111), replyAt("error", `"invalid field type: Integer"`))},
		{name: "type not a string", method: "POST", path: "/schemas/Bad4", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": 5}}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "pointer without a target", method: "POST", path: "/schemas/Bad5", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": "Pointer"}}},
			expectedStatus: 400, check: checkAll(codeIs(135), replyAt("error", `"type Pointer needs a class name"`))},
		{name: "default of the wrong type", method: "POST", path: "/schemas/Bad6", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": "Number", "defaultValue": "x"}}},
			expectedStatus: 400, check: checkAll(codeIs(111),
				replyAt("error", `"schema mismatch for Bad6.a default value; expected Number but got String"`))},
		{name: "required relation", method: "POST", path: "/schemas/Bad7", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": "Relation", "targetClass": "X", "required": true}}},
			expectedStatus: 400, check: codeIs(111)},
		{name: "bad target class", method: "POST", path: "/schemas/Bad9", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": "Pointer", "targetClass": "no-such"}}},
			expectedStatus: 400, check: codeIs(103), expectedContains: []string{"Invalid classname: no-such"}},
		{name: "default on a relation", method: "POST", path: "/schemas/Bad10", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": "Relation", "targetClass": "X", "defaultValue": 1}}},
			expectedStatus: 400, check: checkAll(codeIs(111), replyAt("error", `"The 'default value' option is not applicable for Relation<X>"`))},
		{name: "pointer default of another class", method: "POST", path: "/schemas/Bad11", headers: m,
			body: map[string]any{"fields": map[string]any{"a": map[string]any{"type": "Pointer", "targetClass": "X",
				"defaultValue": map[string]any{"__type": "Pointer", "className": "Y", "objectId": "abc"}}}},
			expectedStatus: 400, check: checkAll(codeIs(111),
				replyAt("error", `"schema mismatch for Bad11.a default value; expected Pointer<X> but got Pointer<Y>"`))},
		{name: "two geopoints", method: "POST", path: "/schemas/Bad8", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": "GeoPoint"}, "b": map[string]any{"type": "GeoPoint"}}},
			expectedStatus: 400, check: codeIs(111), expectedContains: []string{"only one GeoPoint"}},
		{name: "nothing was created by the failures", path: "/schemas/Bad1", headers: m, expectedStatus: 400, check: codeIs(103)},

		// Field options on writes.
		{name: "create without the defaulted field", method: "POST", path: "/classes/GameScore", headers: m,
			body: map[string]any{"name": "a"}, expectedStatus: 201},
		{name: "required field missing", method: "POST", path: "/classes/GameScore", headers: m,
			body: map[string]any{"score": 3}, expectedStatus: 400,
			check: checkAll(codeIs(142), replyAt("error", `"name is required"`))},
		{name: "required field null", method: "POST", path: "/classes/GameScore", headers: m,
			body: map[string]any{"score": 3, "name": nil}, expectedStatus: 400, check: codeIs(142)},
		{name: "default applied", path: "/classes/GameScore?where=" + qEscape(`{"name":"a"}`), headers: m, expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) {
				r := res.Map()["results"].([]any)
				if len(r) != 1 || r[0].(map[string]any)["score"] != 0.0 {
					t.Errorf("default not applied: %s", res.Body)
				}
			}},

		// PUT.
		{name: "add a field", method: "PUT", path: "/schemas/GameScore", headers: m,
			body:           map[string]any{"className": "GameScore", "fields": map[string]any{"level": map[string]any{"type": "Number"}}},
			expectedStatus: 200, check: checkAll(replyAt("fields.level", `{"type":"Number"}`), replyAt("fields.score.defaultValue", `0`))},
		{name: "re-declare with other options", method: "PUT", path: "/schemas/GameScore", headers: m,
			body:           map[string]any{"fields": map[string]any{"level": map[string]any{"type": "Number", "defaultValue": 1}}},
			expectedStatus: 200, check: replyAt("fields.level", `{"type":"Number","defaultValue":1}`)},
		{name: "change a field's type", method: "PUT", path: "/schemas/GameScore", headers: m,
			body:           map[string]any{"fields": map[string]any{"level": map[string]any{"type": "String"}}},
			expectedStatus: 400, check: checkAll(codeIs(255), replyAt("error", `"Field level exists, cannot update."`))},
		{name: "delete a missing field", method: "PUT", path: "/schemas/GameScore", headers: m,
			body:           map[string]any{"fields": map[string]any{"nope": map[string]any{"__op": "Delete"}}},
			expectedStatus: 400, check: checkAll(codeIs(255), replyAt("error", `"Field nope does not exist, cannot delete."`))},
		{name: "delete a default field", method: "PUT", path: "/schemas/GameScore", headers: m,
			body:           map[string]any{"fields": map[string]any{"createdAt": map[string]any{"__op": "Delete"}}},
			expectedStatus: 400, check: checkAll(codeIs(136), replyAt("error", `"field createdAt cannot be changed"`))},
		{name: "update an unknown class", method: "PUT", path: "/schemas/Nope", headers: m, body: map[string]any{},
			expectedStatus: 400, check: checkAll(codeIs(103), replyAt("error", `"Class Nope does not exist."`))},
		{name: "put with a mismatched name", method: "PUT", path: "/schemas/GameScore", headers: m,
			body: map[string]any{"className": "Other"}, expectedStatus: 400, check: codeIs(103)},
		{name: "unknown body key", method: "PUT", path: "/schemas/GameScore", headers: m,
			body: map[string]any{"feelds": map[string]any{}}, expectedStatus: 400, check: codeIs(107)},

		// Built-in classes keep their internal fields to themselves.
		{name: "sign up", method: "POST", path: "/users", headers: servertest.App(),
			body: map[string]any{"username": "schemauser", "password": "pw-long-enough", "email": "s@example.com"}, expectedStatus: 201},
		{name: "_User shows no internal field", path: "/schemas/_User", headers: m, expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) {
				for k := range res.Map()["fields"].(map[string]any) {
					if strings.HasPrefix(k, "_") {
						t.Errorf("internal field %s shown", k)
					}
				}
			}},
		{name: "internal fields cannot be deleted", method: "PUT", path: "/schemas/_User", headers: m,
			body: map[string]any{"fields": map[string]any{"_hashed_password": map[string]any{"__op": "Delete"}}}, expectedStatus: 400,
			check: codeIs(105)},
		{name: "nor a default field of _User", method: "PUT", path: "/schemas/_User", headers: m,
			body: map[string]any{"fields": map[string]any{"email": map[string]any{"__op": "Delete"}}}, expectedStatus: 400,
			check: codeIs(136)},
		{name: "_User gets new fields", method: "PUT", path: "/schemas/_User", headers: m,
			body: map[string]any{"fields": map[string]any{"nickname": map[string]any{"type": "String"}}}, expectedStatus: 200,
			check: checkAll(replyAt("fields.nickname", `{"type":"String"}`), replyAt("fields.username", `{"type":"String"}`))},
	})
}

// q URL-encodes a JSON parameter.
func qEscape(s string) string {
	return strings.NewReplacer("{", "%7B", "}", "%7D", `"`, "%22", " ", "%20", "[", "%5B", "]", "%5D", ":", "%3A", ",", "%2C", "$", "%24").Replace(s)
}

// TestScenarioSchemaDeleteField: deleting a field drops its data from every
// object, and the key may then be reused with another type.
func TestScenarioSchemaDeleteField(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, mustCreate(t, srv, "Doomed", map[string]any{"keep": i, "drop": "x", "other": true}))
	}
	owner := mustCreate(t, srv, "Doomed", map[string]any{"keep": 99})
	res := srv.Do(t, "PUT", "/classes/Doomed/"+owner, map[string]any{
		"rel": map[string]any{"__op": "AddRelation", "objects": []any{map[string]any{"__type": "Pointer", "className": "Doomed", "objectId": ids[0]}}},
	}, m)
	if res.Status != 200 {
		t.Fatalf("relation: %d %s", res.Status, res.Body)
	}
	runScenarios(t, srv, []scenario{
		{name: "delete two fields", method: "PUT", path: "/schemas/Doomed", headers: m, expectedStatus: 200,
			body: map[string]any{"fields": map[string]any{"drop": map[string]any{"__op": "Delete"}, "rel": map[string]any{"__op": "Delete"}}},
			check: func(t testing.TB, res servertest.Response) {
				f := res.Map()["fields"].(map[string]any)
				if _, ok := f["drop"]; ok {
					t.Errorf("drop still declared: %s", res.Body)
				}
				if _, ok := f["rel"]; ok {
					t.Errorf("rel still declared: %s", res.Body)
				}
			}},
		{name: "relation members are gone", path: "/classes/Doomed?where=" + qEscape(`{"$relatedTo":{"object":{"__type":"Pointer","className":"Doomed","objectId":"`+owner+`"},"key":"rel"}}`),
			headers: m, expectedStatus: 200, expectedContains: []string{`"results":[]`}},
		{name: "reuse the key with another type", method: "PUT", path: "/classes/Doomed/" + ids[1], headers: m,
			body: map[string]any{"drop": 7}, expectedStatus: 200},
	})
	for i, id := range ids {
		obj := mustGet(t, srv, "Doomed", id)
		if i == 1 {
			if obj["drop"] != 7.0 {
				t.Errorf("%s: drop = %v, want 7", id, obj["drop"])
			}
			continue
		}
		if _, ok := obj["drop"]; ok {
			t.Errorf("%s still holds the deleted field: %v", id, obj)
		}
		if obj["keep"] != float64(i) || obj["other"] != true {
			t.Errorf("%s lost other fields: %v", id, obj)
		}
	}
}

// TestScenarioSchemaCLP: class-level permissions are validated and stored
// in Parse's shape.
func TestScenarioSchemaCLP(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	if res := srv.Do(t, "POST", "/schemas/Guarded", map[string]any{"fields": map[string]any{
		"owner":   map[string]any{"type": "Pointer", "targetClass": "_User"},
		"editors": map[string]any{"type": "Array"},
		"secret":  map[string]any{"type": "String"},
		"other":   map[string]any{"type": "Pointer", "targetClass": "Thing"},
	}}, m); res.Status != 200 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	clp := map[string]any{
		"find":            map[string]any{"requiresAuthentication": true, "role:Admin": true},
		"get":             map[string]any{"*": true, "pointerFields": []any{"owner"}},
		"create":          map[string]any{"abc123XYZ": true},
		"readUserFields":  []any{"editors"},
		"writeUserFields": []any{"owner"},
		"protectedFields": map[string]any{"*": []any{"secret"}, "role:Admin": []any{}, "userField:owner": []any{}},
	}
	stored := `{"find":{"requiresAuthentication":true,"role:Admin":true},"count":{},"get":{"*":true,"pointerFields":["owner"]},` +
		`"create":{"abc123XYZ":true},"update":{},"delete":{},"addField":{},"readUserFields":["editors"],"writeUserFields":["owner"],` +
		`"protectedFields":{"*":["secret"],"role:Admin":[],"userField:owner":[]}}`
	bad := func(name string, clp any, msg string) scenario {
		return scenario{name: name, method: "PUT", path: "/schemas/Guarded", headers: m,
			body: map[string]any{"classLevelPermissions": clp}, expectedStatus: 400, check: codeIs(107),
			expectedContains: []string{msg}}
	}
	runScenarios(t, srv, []scenario{
		{name: "set", method: "PUT", path: "/schemas/Guarded", headers: m, body: map[string]any{"classLevelPermissions": clp},
			expectedStatus: 200, check: replyAt("classLevelPermissions", stored)},
		{name: "kept", path: "/schemas/Guarded", headers: m, expectedStatus: 200, check: replyAt("classLevelPermissions", stored)},
		bad("unknown operation", map[string]any{"destroy": map[string]any{"*": true}}, "destroy is not a valid operation"),
		bad("false value", map[string]any{"find": map[string]any{"*": false}}, "is not a valid value for class level permissions find:*:false"),
		bad("bad key", map[string]any{"find": map[string]any{"user-1": true}}, "'user-1' is not a valid key"),
		bad("operation not an object", map[string]any{"find": true}, "must be an object"),
		bad("pointer field of the wrong class", map[string]any{"get": map[string]any{"pointerFields": []any{"other"}}}, "not a valid column"),
		bad("pointer field missing", map[string]any{"readUserFields": []any{"nobody"}}, "not a valid column"),
		bad("userFields not an array", map[string]any{"writeUserFields": "owner"}, "must be an array"),
		bad("protecting a missing field", map[string]any{"protectedFields": map[string]any{"*": []any{"nope"}}}, "does not exist"),
		bad("protecting a default field", map[string]any{"protectedFields": map[string]any{"*": []any{"createdAt"}}}, "can not be protected"),
		bad("bad protectedFields key", map[string]any{"protectedFields": map[string]any{"someone!": []any{}}}, "not a valid key"),
		{name: "unchanged by the failures", path: "/schemas/Guarded", headers: m, expectedStatus: 200,
			check: replyAt("classLevelPermissions", stored)},
		{name: "an empty CLP locks every operation", method: "PUT", path: "/schemas/Guarded", headers: m,
			body: map[string]any{"classLevelPermissions": map[string]any{}}, expectedStatus: 200,
			check: replyAt("classLevelPermissions", `{"find":{},"count":{},"get":{},"create":{},"update":{},"delete":{},"addField":{},"protectedFields":{}}`)},
		{name: "null restores the default", method: "PUT", path: "/schemas/Guarded", headers: m,
			body: map[string]any{"classLevelPermissions": nil}, expectedStatus: 200, check: replyAt("classLevelPermissions", publicCLP)},
		{name: "CLP with the class", method: "POST", path: "/schemas/Locked", headers: m,
			body: map[string]any{"classLevelPermissions": map[string]any{"find": map[string]any{"*": true}}}, expectedStatus: 200,
			check: replyAt("classLevelPermissions", `{"find":{"*":true},"count":{},"get":{},"create":{},"update":{},"delete":{},"addField":{},"protectedFields":{}}`)},
	})
}

// TestScenarioSchemaIndexes: indexes are created and dropped through the
// schemas API, and the planner uses exactly the declared ones.
func TestScenarioSchemaIndexes(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	for i := 0; i < 20; i++ {
		mustCreate(t, srv, "Scored", map[string]any{"score": i, "name": "n" + string(rune('a'+i))})
	}
	explain := func(name, want string) scenario {
		return scenario{name: name, path: "/classes/Scored?explain=1&where=" + qEscape(`{"score":{"$gte":15}}`), headers: m,
			expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
				access, _ := res.Map()["results"].(map[string]any)["access"].(string)
				if !strings.HasPrefix(access, want) {
					t.Errorf("access %q, want %q…", access, want)
				}
			}}
	}
	runScenarios(t, srv, []scenario{
		explain("no index yet", "full scan"),
		{name: "add an index", method: "PUT", path: "/schemas/Scored", headers: m,
			body: map[string]any{"indexes": map[string]any{"by_score": map[string]any{"score": -1}}}, expectedStatus: 200,
			check: replyAt("indexes", `{"_id_":{"_id":1},"by_score":{"score":-1}}`)},
		explain("the planner uses it", "index score"),
		{name: "index exists", method: "PUT", path: "/schemas/Scored", headers: m,
			body: map[string]any{"indexes": map[string]any{"by_score": map[string]any{"name": 1}}}, expectedStatus: 400,
			check: checkAll(codeIs(102), replyAt("error", `"Index by_score exists, cannot update."`))},
		{name: "index on a missing field", method: "PUT", path: "/schemas/Scored", headers: m,
			body: map[string]any{"indexes": map[string]any{"x": map[string]any{"nope": 1}}}, expectedStatus: 400,
			check: checkAll(codeIs(102), replyAt("error", `"Field nope does not exist, cannot add index."`))},
		{name: "bad direction", method: "PUT", path: "/schemas/Scored", headers: m,
			body: map[string]any{"indexes": map[string]any{"x": map[string]any{"name": 2}}}, expectedStatus: 400, check: codeIs(102)},
		{name: "drop a missing index", method: "PUT", path: "/schemas/Scored", headers: m,
			body: map[string]any{"indexes": map[string]any{"x": map[string]any{"__op": "Delete"}}}, expectedStatus: 400,
			check: checkAll(codeIs(102), replyAt("error", `"Index x does not exist, cannot delete."`))},
		{name: "drop _id_", method: "PUT", path: "/schemas/Scored", headers: m,
			body: map[string]any{"indexes": map[string]any{"_id_": map[string]any{"__op": "Delete"}}}, expectedStatus: 400, check: codeIs(102)},
		{name: "compound and text", method: "PUT", path: "/schemas/Scored", headers: m,
			body:           map[string]any{"indexes": map[string]any{"name_text": map[string]any{"name": "text"}, "pair": map[string]any{"name": 1, "score": 1}}},
			expectedStatus: 200, check: replyAt("indexes", `{"_id_":{"_id":1},"by_score":{"score":-1},"name_text":{"name":"text"},"pair":{"name":1,"score":1}}`)},
		{name: "drop it", method: "PUT", path: "/schemas/Scored", headers: m,
			body: map[string]any{"indexes": map[string]any{"by_score": map[string]any{"__op": "Delete"}}}, expectedStatus: 200,
			check: replyAt("indexes", `{"_id_":{"_id":1},"name_text":{"name":"text"},"pair":{"name":1,"score":1}}`)},
		explain("the compound index still serves score", "index score"),
		{name: "drop the compound index", method: "PUT", path: "/schemas/Scored", headers: m,
			body: map[string]any{"indexes": map[string]any{"pair": map[string]any{"__op": "Delete"}}}, expectedStatus: 200},
		explain("no index any more", "full scan"),
		{name: "indexes with the class", method: "POST", path: "/schemas/Indexed", headers: m,
			body:           map[string]any{"fields": map[string]any{"a": map[string]any{"type": "String"}}, "indexes": map[string]any{"a_1": map[string]any{"a": 1}}},
			expectedStatus: 200, check: replyAt("indexes", `{"_id_":{"_id":1},"a_1":{"a":1}}`)},
		{name: "deleting a field drops its indexes", method: "PUT", path: "/schemas/Indexed", headers: m,
			body: map[string]any{"fields": map[string]any{"a": map[string]any{"__op": "Delete"}}}, expectedStatus: 200,
			check: replyAt("indexes", `{"_id_":{"_id":1}}`)},
	})
}

// TestScenarioSchemaDropAndPurge: DELETE /schemas refuses non-empty classes
// (255); /purge empties a class and keeps its schema.
func TestScenarioSchemaDropAndPurge(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	for i := 0; i < 3; i++ {
		mustCreate(t, srv, "Full", map[string]any{"n": i})
	}
	runScenarios(t, srv, []scenario{
		{name: "drop a non-empty class", method: "DELETE", path: "/schemas/Full", headers: m, expectedStatus: 400,
			check: checkAll(codeIs(255), replyAt("error", `"Class Full is not empty, contains 3 objects, cannot drop schema."`))},
		{name: "purge", method: "DELETE", path: "/purge/Full", headers: m, expectedStatus: 200, check: replyIs(`{}`)},
		{name: "empty now", path: "/classes/Full?count=1", headers: m, expectedStatus: 200, check: replyIs(`{"results":[],"count":0}`)},
		{name: "schema kept", path: "/schemas/Full", headers: m, expectedStatus: 200, check: replyAt("fields.n", `{"type":"Number"}`)},
		{name: "purge an unknown class", method: "DELETE", path: "/purge/Nope", headers: m, expectedStatus: 400, check: codeIs(103)},
		{name: "drop", method: "DELETE", path: "/schemas/Full", headers: m, expectedStatus: 200, check: replyIs(`{}`)},
		{name: "gone", path: "/schemas/Full", headers: m, expectedStatus: 400, check: codeIs(103)},
		{name: "drop again: gone either way, as in Parse", method: "DELETE", path: "/schemas/Full", headers: m, expectedStatus: 200, check: replyIs(`{}`)},
		{name: "drop a class never made", method: "DELETE", path: "/schemas/Never", headers: m, expectedStatus: 200, check: replyIs(`{}`)},
		{name: "still no such class", path: "/schemas/Never", headers: m, expectedStatus: 400, check: codeIs(103)},
		{name: "the class can be recreated", method: "POST", path: "/classes/Full", headers: m, body: map[string]any{"n": "text"},
			expectedStatus: 201},
	})
}

// TestScenarioSchemasReadOnlyMaster: the read-only master key reads
// schemas; every change fails with 119.
func TestScenarioSchemasReadOnlyMaster(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.ReadOnlyMasterKey = "ro-key" })
	mustCreate(t, srv, "Kept", map[string]any{"a": 1})
	ro := map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Master-Key": "ro-key"}
	forbidden := func(name, method, path string, body any, verb string) scenario {
		return scenario{name: name, method: method, path: path, headers: ro, body: body, expectedStatus: 400,
			check: checkAll(codeIs(119), replyAt("error", `"read-only masterKey isn't allowed to `+verb+` a schema."`))}
	}
	runScenarios(t, srv, []scenario{
		{name: "read", path: "/schemas/Kept", headers: ro, expectedStatus: 200},
		{name: "list", path: "/schemas", headers: ro, expectedStatus: 200},
		forbidden("create", "POST", "/schemas/New", map[string]any{}, "create"),
		forbidden("update", "PUT", "/schemas/Kept", map[string]any{"fields": map[string]any{"b": map[string]any{"type": "String"}}}, "update"),
		forbidden("delete", "DELETE", "/schemas/Kept", nil, "delete"),
		forbidden("purge", "DELETE", "/purge/Kept", nil, "purge"),
	})
}

// TestDefaultValuesInTheCreateReply: a default applied on create is in the
// reply, alone and in a batch, so the SDKs' saved objects know it.
func TestDefaultValuesInTheCreateReply(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	runScenarios(t, srv, []scenario{
		{name: "declare", method: "POST", path: "/schemas/Profile", headers: m, expectedStatus: 200,
			body: map[string]any{"fields": map[string]any{"level": map[string]any{"type": "Number", "defaultValue": 1},
				"since": map[string]any{"type": "Date", "defaultValue": map[string]any{"__type": "Date", "iso": "2024-01-02T03:04:05.000Z"}}}}},
		{name: "create", method: "POST", path: "/classes/Profile", headers: servertest.App(), body: map[string]any{"nick": "a"},
			expectedStatus: 201, check: checkAll(replyAt("level", "1"), replyAt("since", `{"__type":"Date","iso":"2024-01-02T03:04:05.000Z"}`))},
		{name: "a value given wins", method: "POST", path: "/classes/Profile", headers: servertest.App(), body: map[string]any{"level": 5},
			expectedStatus: 201, notExpectedContains: []string{`"level"`}},
		{name: "batch", method: "POST", path: "/batch", headers: servertest.App(), expectedStatus: 200,
			body:             map[string]any{"requests": []any{map[string]any{"method": "POST", "path": "/parse/classes/Profile", "body": map[string]any{}}}},
			expectedContains: []string{`"level":1`}},
	})
}

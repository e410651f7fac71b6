package transport_test

import (
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestInvalidCLPPayloads: every malformed class-level permission is
// refused with 107 (reference §7.4), and nothing of it is stored.
func TestInvalidCLPPayloads(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	mustCreate(t, srv, "_User", map[string]any{"username": "u", "password": "p"})
	if r := srv.Do(t, "POST", "/schemas/Doc", map[string]any{"fields": map[string]any{
		"owner": map[string]any{"type": "Pointer", "targetClass": "_User"},
		"other": map[string]any{"type": "Pointer", "targetClass": "Doc"},
		"title": map[string]any{"type": "String"},
		"tags":  map[string]any{"type": "Array"},
	}}, m); r.Status != 200 {
		t.Fatalf("schema: %d %s", r.Status, r.Body)
	}
	bad := map[string]any{
		"not an object":                   "public",
		"unknown operation":               map[string]any{"read": map[string]any{"*": true}},
		"an operation that is not a map":  map[string]any{"find": true},
		"false grants":                    map[string]any{"find": map[string]any{"*": false}},
		"a grant that is not a boolean":   map[string]any{"find": map[string]any{"*": 1}},
		"a key that is no user or role":   map[string]any{"find": map[string]any{"not a user id!": true}},
		"an empty role":                   map[string]any{"find": map[string]any{"role:": true}},
		"pointerFields not an array":      map[string]any{"find": map[string]any{"pointerFields": "owner"}},
		"pointerFields naming a string":   map[string]any{"find": map[string]any{"pointerFields": []any{"title"}}},
		"pointerFields naming a missing":  map[string]any{"find": map[string]any{"pointerFields": []any{"nope"}}},
		"pointerFields to another class":  map[string]any{"find": map[string]any{"pointerFields": []any{"other"}}},
		"readUserFields not an array":     map[string]any{"readUserFields": "owner"},
		"writeUserFields naming a string": map[string]any{"writeUserFields": []any{"title"}},
		"protectedFields not a map":       map[string]any{"protectedFields": []any{"title"}},
		"protectedFields not a list":      map[string]any{"protectedFields": map[string]any{"*": "title"}},
		"protecting a missing field":      map[string]any{"protectedFields": map[string]any{"*": []any{"nope"}}},
		"protecting a default field":      map[string]any{"protectedFields": map[string]any{"*": []any{"objectId"}}},
		"protectedFields for a bad key":   map[string]any{"protectedFields": map[string]any{"who?": []any{"title"}}},
		"userField naming a string":       map[string]any{"protectedFields": map[string]any{"userField:title": []any{"tags"}}},
	}
	for name, clp := range bad {
		t.Run(name, func(t *testing.T) {
			res := srv.Do(t, "PUT", "/schemas/Doc", map[string]any{"classLevelPermissions": clp}, m)
			if res.Status != 400 || res.Map()["code"] != float64(107) {
				t.Errorf("%d %s, want 400 with code 107", res.Status, res.Body)
			}
		})
	}
	runScenarios(t, srv, []scenario{
		{name: "nothing of them was stored", path: "/schemas/Doc", headers: m, expectedStatus: 200,
			check: replyAt("classLevelPermissions.find", `{"*":true}`)},
		{name: "a valid one", method: "PUT", path: "/schemas/Doc", headers: m, expectedStatus: 200,
			body: map[string]any{"classLevelPermissions": map[string]any{
				"find":            map[string]any{"requiresAuthentication": true, "role:Admin": true, "abc123": true, "pointerFields": []any{"owner", "tags"}},
				"readUserFields":  []any{"owner"},
				"protectedFields": map[string]any{"*": []any{"title"}, "authenticated": []any{}, "userField:owner": []any{}},
			}},
			check: replyAt("classLevelPermissions.readUserFields", `["owner"]`)},
	})
}

package transport_test

import (
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestRelationsFollowReadRules: a protected Relation field is hidden, and
// $relatedTo lists members only to a caller who may read the owner and the
// field (a role the caller cannot read lists none).
func TestRelationsFollowReadRules(t *testing.T) {
	srv := servertest.Start(t, nil)
	m, app := servertest.Master(), servertest.App()
	memberID := mustCreate(t, srv, "Member", map[string]any{"n": 1})
	member := map[string]any{"__type": "Pointer", "className": "Member", "objectId": memberID}
	teamID := mustCreate(t, srv, "Team", map[string]any{"name": "a",
		"members": map[string]any{"__op": "AddRelation", "objects": []any{member}}})
	if r := srv.Do(t, "PUT", "/schemas/Team", map[string]any{"classLevelPermissions": map[string]any{
		"get": map[string]any{"*": true}, "find": map[string]any{"*": true}, "protectedFields": map[string]any{"*": []any{"members"}},
	}}, m); r.Status != 200 {
		t.Fatalf("CLP: %d %s", r.Status, r.Body)
	}
	adminID, adminToken := signUp(t, srv, "admin", "")
	userPtr := map[string]any{"__type": "Pointer", "className": "_User", "objectId": adminID}
	roleID := mustCreate(t, srv, "_Role", map[string]any{"name": "secret", "ACL": map[string]any{adminID: map[string]any{"read": true}},
		"users": map[string]any{"__op": "AddRelation", "objects": []any{userPtr}}})
	relatedTo := func(class, id, key string) string {
		return qPath(map[bool]string{true: "Member", false: "_User"}[key == "members"], map[string]any{"where": map[string]any{
			"$relatedTo": map[string]any{"object": map[string]any{"__type": "Pointer", "className": class, "objectId": id}, "key": key}}})
	}
	count := func(n int) func(testing.TB, servertest.Response) {
		return func(t testing.TB, res servertest.Response) {
			t.Helper()
			if got := len(res.Map()["results"].([]any)); got != n {
				t.Errorf("%d results, want %d: %s", got, n, res.Body)
			}
		}
	}
	admin := with(app, "X-Parse-Session-Token", adminToken)
	runScenarios(t, srv, []scenario{
		{name: "the protected relation is not shown", path: "/classes/Team/" + teamID, headers: app, expectedStatus: 200,
			notExpectedContains: []string{`"members"`}},
		{name: "the master key sees it", path: "/classes/Team/" + teamID, headers: m, expectedStatus: 200,
			expectedContains: []string{`"members":{"__type":"Relation","className":"Member"}`}},
		{name: "nor in a find", path: "/classes/Team", headers: app, expectedStatus: 200, notExpectedContains: []string{`"members"`}},
		{name: "$relatedTo through the protected relation lists nothing", path: relatedTo("Team", teamID, "members"), headers: app,
			expectedStatus: 200, check: count(0)},
		{name: "the master key lists the members", path: relatedTo("Team", teamID, "members"), headers: m, expectedStatus: 200, check: count(1)},
		{name: "a role the caller cannot read lists no users", path: relatedTo("_Role", roleID, "users"), headers: app,
			expectedStatus: 200, check: count(0)},
		{name: "its reader lists them", path: relatedTo("_Role", roleID, "users"), headers: admin, expectedStatus: 200, check: count(1)},
		{name: "an operator as the owner's objectId", headers: app, expectedStatus: 400, check: codeIs(102),
			path: qPath("_User", map[string]any{"where": map[string]any{"$relatedTo": map[string]any{
				"object": map[string]any{"__type": "Pointer", "className": "_Role", "objectId": map[string]any{"$ne": nil}}, "key": "users"}}})},
	})
}

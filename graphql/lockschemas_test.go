package graphql_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestLockSchemasGraphQL: under the schema option's lockSchemas, the
// GraphQL schema mutations (a new class, a new field, a class deleted)
// are refused exactly as REST refuses POST/PUT/DELETE /schemas: 119 and
// Parse Server's message, the schema unchanged. Without the lock both
// succeed.
func TestLockSchemasGraphQL(t *testing.T) {
	const lockedMsg = "Cannot perform this operation when schemas options is used."
	ops := []struct {
		name                 string
		restMethod, restPath string
		restBody             map[string]any
		gqlQuery             string
		gqlField             string
	}{
		{name: "a new class", restMethod: "POST", restPath: "/schemas/NewRest", restBody: map[string]any{"className": "NewRest"},
			gqlQuery: `mutation { createClass(input: {name: "NewGql", schemaFields: {addStrings: [{name: "title"}]}}) { class { name } } }`,
			gqlField: "createClass"},
		{name: "a new field", restMethod: "PUT", restPath: "/schemas/Team", restBody: map[string]any{"className": "Team",
			"fields": map[string]any{"restField": map[string]any{"type": "String"}}},
			gqlQuery: `mutation { updateClass(input: {name: "Team", schemaFields: {addNumbers: [{name: "gqlField"}]}}) { class { name } } }`,
			gqlField: "updateClass"},
	}
	for _, locked := range []bool{true, false} {
		name := "locked"
		if !locked {
			name = "unlocked"
		}
		t.Run(name, func(t *testing.T) {
			srv := start(t, func(o *config.Options) {
				o.Schema = map[string]any{"lockSchemas": locked, "definitions": []any{
					map[string]any{"className": "Team", "fields": map[string]any{"name": map[string]any{"type": "String"}}}}}
			})
			m := servertest.Master()
			for _, op := range ops {
				rest := srv.Do(t, op.restMethod, op.restPath, op.restBody, m)
				gql := post(t, srv, m, op.gqlQuery, nil)
				if !locked {
					if rest.Status != 200 || gql.get("errors").Exists() {
						t.Errorf("%s unlocked: REST %d %s; GraphQL %s", op.name, rest.Status, rest.Body, gql.body)
					}
					continue
				}
				var restErr struct {
					Code  int    `json:"code"`
					Error string `json:"error"`
				}
				if err := json.Unmarshal(rest.Body, &restErr); err != nil || rest.Status != 400 || restErr.Code != 119 || restErr.Error != lockedMsg {
					t.Errorf("%s: REST %d %s, want 400 119 %q", op.name, rest.Status, rest.Body, lockedMsg)
				}
				if code, msg := gql.get("errors.0.extensions.code").Int(), gql.get("errors.0.message").String(); code != int64(restErr.Code) || msg != restErr.Error {
					t.Errorf("%s: GraphQL %s, want REST's code %d and message %q", op.name, gql.body, restErr.Code, restErr.Error)
				}
				if v := gql.get("data." + op.gqlField); v.Exists() && v.Type.String() != "Null" {
					t.Errorf("%s: GraphQL answered data %s", op.name, v.Raw)
				}
			}
			// deleteClass is refused too when locked.
			gql := post(t, srv, m, `mutation { deleteClass(input: {name: "Team"}) { class { name } } }`, nil)
			if got := gql.get("errors.0.extensions.code").Int(); locked && got != 119 || !locked && got != 0 {
				t.Errorf("deleteClass (locked %v): %s", locked, gql.body)
			}
			// Locked, the schema is as declared: no class and no field came in.
			if locked {
				team := srv.Do(t, "GET", "/schemas/Team", nil, m)
				if team.Status != 200 || strings.Contains(string(team.Body), "gqlField") || strings.Contains(string(team.Body), "restField") {
					t.Errorf("Team after the refusals: %d %s", team.Status, team.Body)
				}
				if res := srv.Do(t, "GET", "/schemas/NewGql", nil, m); res.Status == 200 {
					t.Errorf("NewGql was created: %s", res.Body)
				}
			}
		})
	}
}

package transport_test

import (
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestPushAudiencesAndGraphQLConfig: the two admin endpoints Parse
// Dashboard uses exist for the master key only; audiences are stored with
// their query as a string and returned parsed; /classes/_Audience refuses
// everyone else.
func TestPushAudiencesAndGraphQLConfig(t *testing.T) {
	srv := servertest.Start(t, nil)
	m, app := servertest.Master(), servertest.App()
	denied := `{"error":"unauthorized: master key is required"}`
	created := srv.Do(t, "POST", "/push_audiences", map[string]any{"name": "iOS users", "query": `{"deviceType":"ios"}`}, m)
	if created.Status != 201 {
		t.Fatalf("create audience: %d %s", created.Status, created.Body)
	}
	id := created.Map()["objectId"].(string)
	runScenarios(t, srv, []scenario{
		{name: "list", path: "/push_audiences", headers: m, expectedStatus: 200,
			check: replyAt("results", `[{"objectId":"`+id+`","name":"iOS users","query":{"deviceType":"ios"},"createdAt":"`+created.Map()["createdAt"].(string)+`","updatedAt":"`+created.Map()["createdAt"].(string)+`"}]`)},
		{name: "get", path: "/push_audiences/" + id, headers: m, expectedStatus: 200, check: replyAt("query", `{"deviceType":"ios"}`)},
		{name: "update", method: "PUT", path: "/push_audiences/" + id, headers: m, body: map[string]any{"name": "iPhones"}, expectedStatus: 200},
		{name: "list without the master key", path: "/push_audiences", headers: app, expectedStatus: 403, check: replyIs(denied)},
		{name: "create without the master key", method: "POST", path: "/push_audiences", headers: app, body: map[string]any{"name": "x"},
			expectedStatus: 403, check: replyIs(denied)},
		{name: "no back door through /classes", path: "/classes/_Audience", headers: app, expectedStatus: 400, check: codeIs(119)},
		{name: "nor for writes", method: "POST", path: "/classes/_Audience", headers: app, body: map[string]any{"name": "x"},
			expectedStatus: 400, check: codeIs(119)},
		{name: "delete", method: "DELETE", path: "/push_audiences/" + id, headers: m, expectedStatus: 200},
		{name: "graphql-config starts empty", path: "/graphql-config", headers: m, expectedStatus: 200, check: replyIs(`{}`)},
		{name: "graphql-config is stored", method: "PUT", path: "/graphql-config", headers: m,
			body: map[string]any{"params": map[string]any{"enabledForClasses": []any{"Post"}}}, expectedStatus: 200,
			check: replyIs(`{"response":{"result":true}}`)},
		{name: "and read back", path: "/graphql-config", headers: m, expectedStatus: 200, check: replyIs(`{"enabledForClasses":["Post"]}`)},
		{name: "unknown keys are refused", method: "PUT", path: "/graphql-config", headers: m,
			body: map[string]any{"params": map[string]any{"bogus": 1}}, expectedStatus: 400, check: codeIs(107)},
		{name: "graphql-config without the master key", path: "/graphql-config", headers: app, expectedStatus: 403, check: replyIs(denied)},
	})
	srv.Restart(t)
	if res := srv.Do(t, "GET", "/graphql-config", nil, m); string(res.Body) != `{"enabledForClasses":["Post"]}` {
		t.Errorf("graphql-config after a restart: %s", res.Body)
	}
}

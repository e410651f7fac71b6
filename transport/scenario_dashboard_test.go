package transport_test

import (
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestDashboardRequests: requests Parse Dashboard sends that the SDK tests
// do not (each found by e2e/dashboard). The audience page counts the
// installations an audience reaches with its stored query as the where:
// JSON text inside the JSON body of a POST with _method GET.
func TestDashboardRequests(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	for i, device := range []string{"ios", "ios", "android"} {
		id := fmt.Sprintf("0b5d2a5c-9e0a-4f4e-8c1a-00000000000%d", i)
		res := srv.Do(t, "POST", "/installations", map[string]any{"deviceType": device, "installationId": id}, m)
		if res.Status != 201 {
			t.Fatalf("create installation: %d %s", res.Status, res.Body)
		}
	}
	type M = map[string]any
	runScenarios(t, srv, []scenario{
		{name: "where as JSON text in the body", method: "POST", path: "/classes/_Installation", headers: m,
			body: M{"_method": "GET", "where": `{"deviceType":"ios"}`, "limit": 0, "count": 1}, expectedStatus: 200,
			check: replyIs(`{"results":[],"count":2}`)},
		{name: "blank where text means no constraint", method: "POST", path: "/classes/_Installation", headers: m,
			body: M{"_method": "GET", "where": " ", "limit": 0, "count": 1}, expectedStatus: 200,
			check: replyIs(`{"results":[],"count":3}`)},
		{name: "where text that is not JSON", method: "POST", path: "/classes/_Installation", headers: m,
			body: M{"_method": "GET", "where": `{"deviceType":`}, expectedStatus: 400, check: codeIs(107)},
		{name: "where text that is not an object", method: "POST", path: "/classes/_Installation", headers: m,
			body: M{"_method": "GET", "where": `["ios"]`}, expectedStatus: 400, check: codeIs(107)},
	})
}

package transport_test

import (
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestScenarioConfig: Parse Config read by anyone (master-only parameters
// hidden), changed with the master key only.
func TestScenarioConfig(t *testing.T) {
	srv := servertest.Start(t, nil)
	m, app := servertest.Master(), servertest.App()
	runScenarios(t, srv, []scenario{
		{name: "empty", path: "/config", headers: app, expectedStatus: 200, check: replyIs(`{"params":{}}`)},
		{name: "put without the master key", method: "PUT", path: "/config", headers: app,
			body: map[string]any{"params": map[string]any{"a": 1}}, expectedStatus: 403,
			check: replyIs(`{"error":"unauthorized: master key is required"}`)},
		{name: "set", method: "PUT", path: "/config", headers: m, expectedStatus: 200, check: replyIs(`{"result":true}`),
			body: map[string]any{
				"params": map[string]any{"welcome": "hi", "limit": 3, "launch": map[string]any{"__type": "Date", "iso": "2024-05-01T10:00:00Z"},
					"secret": "s3cret", "flags": map[string]any{"beta": true}},
				"masterKeyOnly": map[string]any{"secret": true, "welcome": false},
			}},
		{name: "the master key sees everything", path: "/config", headers: m, expectedStatus: 200,
			check: replyIs(`{"params":{"welcome":"hi","limit":3,"launch":{"__type":"Date","iso":"2024-05-01T10:00:00.000Z"},` +
				`"secret":"s3cret","flags":{"beta":true}},"masterKeyOnly":{"secret":true,"welcome":false}}`)},
		{name: "clients do not see master-only parameters", path: "/config", headers: app, expectedStatus: 200,
			check: replyIs(`{"params":{"welcome":"hi","limit":3,"launch":{"__type":"Date","iso":"2024-05-01T10:00:00.000Z"},` +
				`"flags":{"beta":true}},"masterKeyOnly":{"welcome":false}}`)},
		{name: "change and delete", method: "PUT", path: "/config", headers: m, expectedStatus: 200,
			body: map[string]any{"params": map[string]any{"limit": 4, "flags": map[string]any{"__op": "Delete"}},
				"masterKeyOnly": map[string]any{"secret": false, "welcome": map[string]any{"__op": "Delete"}}}},
		{name: "merged", path: "/config", headers: app, expectedStatus: 200,
			check: replyIs(`{"params":{"welcome":"hi","limit":4,"launch":{"__type":"Date","iso":"2024-05-01T10:00:00.000Z"},` +
				`"secret":"s3cret"},"masterKeyOnly":{"secret":false}}`)},
		{name: "params not an object", method: "PUT", path: "/config", headers: m, body: map[string]any{"params": []any{1}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "masterKeyOnly not booleans", method: "PUT", path: "/config", headers: m,
			body:           map[string]any{"params": map[string]any{"x": 1}, "masterKeyOnly": map[string]any{"x": "yes"}},
			expectedStatus: 400, check: codeIs(107)},
		{name: "an operator other than Delete", method: "PUT", path: "/config", headers: m,
			body:           map[string]any{"params": map[string]any{"limit": map[string]any{"__op": "Increment", "amount": 1}}},
			expectedStatus: 400, check: codeIs(108)},
		{name: "a dotted name", method: "PUT", path: "/config", headers: m,
			body: map[string]any{"params": map[string]any{"a.b": 1}}, expectedStatus: 400, check: codeIs(105)},
		{name: "a bad nested key", method: "PUT", path: "/config", headers: m,
			body: map[string]any{"params": map[string]any{"o": map[string]any{"$x": 1}}}, expectedStatus: 400, check: codeIs(121)},
		{name: "unchanged by the failures", path: "/config", headers: m, expectedStatus: 200,
			check: replyAt("params.limit", `4`)},
	})
}

// TestScenarioConfigLimit: at most 100 parameters (116).
func TestScenarioConfigLimit(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	params := map[string]any{}
	for i := 0; i < 100; i++ {
		params[fmt.Sprintf("p%03d", i)] = i
	}
	too := map[string]any{}
	for k, v := range params {
		too[k] = v
	}
	too["one_more"] = true
	runScenarios(t, srv, []scenario{
		{name: "101 at once", method: "PUT", path: "/config", headers: m, body: map[string]any{"params": too},
			expectedStatus: 400, check: codeIs(116)},
		{name: "100", method: "PUT", path: "/config", headers: m, body: map[string]any{"params": params}, expectedStatus: 200},
		{name: "the 101st", method: "PUT", path: "/config", headers: m,
			body: map[string]any{"params": map[string]any{"one_more": true}}, expectedStatus: 400, check: codeIs(116)},
		{name: "replacing one still fits", method: "PUT", path: "/config", headers: m,
			body: map[string]any{"params": map[string]any{"p000": map[string]any{"__op": "Delete"}, "one_more": true}}, expectedStatus: 200},
		{name: "still 100", path: "/config", headers: m, expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
			if n := len(res.Map()["params"].(map[string]any)); n != 100 {
				t.Errorf("%d parameters", n)
			}
		}},
	})
}

// TestScenarioConfigReadOnlyMaster: the read-only master key reads
// everything and changes nothing.
func TestScenarioConfigReadOnlyMaster(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.ReadOnlyMasterKey = "ro-key" })
	ro := map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Master-Key": "ro-key"}
	m := servertest.Master()
	runScenarios(t, srv, []scenario{
		{name: "set", method: "PUT", path: "/config", headers: m, expectedStatus: 200,
			body: map[string]any{"params": map[string]any{"k": 1}, "masterKeyOnly": map[string]any{"k": true}}},
		{name: "read-only reads master-only values", path: "/config", headers: ro, expectedStatus: 200,
			check: replyIs(`{"params":{"k":1},"masterKeyOnly":{"k":true}}`)},
		{name: "read-only cannot write", method: "PUT", path: "/config", headers: ro,
			body: map[string]any{"params": map[string]any{"k": 2}}, expectedStatus: 400,
			check: checkAll(codeIs(119), replyAt("error", `"read-only masterKey isn't allowed to update the config."`))},
	})
}

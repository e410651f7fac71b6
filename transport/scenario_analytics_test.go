package transport_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestScenarioAnalytics: events are validated and counted by name,
// dimensions and day; the master key counts them through aggregate.
func TestScenarioAnalytics(t *testing.T) {
	srv := servertest.Start(t, nil)
	app, m := servertest.App(), servertest.Master()
	ev := func(name, path string, body any, status int, code int) scenario {
		sc := scenario{name: name, method: "POST", path: path, headers: app, body: body, expectedStatus: status}
		if code != 0 {
			sc.check = codeIs(code)
		} else {
			sc.check = replyIs(`{}`)
		}
		return sc
	}
	day := func(iso string) map[string]any {
		return map[string]any{"__type": "Date", "iso": iso}
	}
	runScenarios(t, srv, []scenario{
		ev("app opened", "/events/AppOpened", map[string]any{}, 200, 0),
		ev("app opened without a body", "/events/AppOpened", nil, 200, 0),
		ev("app opened at a time", "/events/AppOpened", map[string]any{"at": day("2024-05-01T23:59:59.000Z")}, 200, 0),
		ev("custom with dimensions", "/events/Search", map[string]any{"dimensions": map[string]any{"category": "books", "day": "sat"},
			"at": day("2024-05-01T10:00:00.000Z")}, 200, 0),
		ev("same again", "/events/Search", map[string]any{"dimensions": map[string]any{"day": "sat", "category": "books"},
			"at": "2024-05-01T11:00:00Z"}, 200, 0),
		ev("another dimension value", "/events/Search", map[string]any{"dimensions": map[string]any{"category": "music", "day": "sat"},
			"at": day("2024-05-02T10:00:00.000Z")}, 200, 0),
		ev("a name with a space (URL-encoded)", "/events/Button%20Click", map[string]any{}, 200, 0),
		ev("a bad name", "/events/bad$name", map[string]any{}, 400, 160),
		ev("a name starting with punctuation", "/events/-x", map[string]any{}, 400, 160),
		ev("a long name", "/events/"+strings.Repeat("x", 129), map[string]any{}, 400, 160),
		ev("dimensions not an object", "/events/Search", map[string]any{"dimensions": []any{"a"}}, 400, 107),
		ev("a dimension that is not a string", "/events/Search", map[string]any{"dimensions": map[string]any{"n": 1}}, 400, 107),
		ev("a dotted dimension key", "/events/Search", map[string]any{"dimensions": map[string]any{"a.b": "x"}}, 400, 107),
		ev("too many dimensions", "/events/Search", map[string]any{"dimensions": map[string]any{
			"a": "1", "b": "1", "c": "1", "d": "1", "e": "1", "f": "1", "g": "1", "h": "1", "i": "1"}}, 400, 107),
		ev("a bad at", "/events/Search", map[string]any{"at": "yesterday"}, 400, 107),
		{name: "the counters are not a class clients reach", path: "/classes/_EventCount", headers: m, expectedStatus: 400,
			check: codeIs(103)},
		{name: "counts by name and day", headers: m, expectedStatus: 200,
			path:  aggURL("_EventCount", "pipeline", `[{"$match":{"event":"Search"}},{"$group":{"objectId":"$day","n":{"$sum":"$count"}}}]`),
			check: aggResults(`[{"objectId":"2024-05-01","n":2},{"objectId":"2024-05-02","n":1}]`)},
		{name: "counts by dimension", headers: m, expectedStatus: 200,
			path:  aggURL("_EventCount", "pipeline", `[{"$match":{"event":"Search"}},{"$group":{"objectId":"$dimensions.category","n":{"$sum":"$count"}}}]`),
			check: aggResults(`[{"objectId":"books","n":2},{"objectId":"music","n":1}]`)},
		{name: "app opens", headers: m, expectedStatus: 200,
			path:  aggURL("_EventCount", "pipeline", `[{"$match":{"event":"AppOpened"}},{"$group":{"objectId":null,"n":{"$sum":"$count"}}}]`),
			check: aggResults(`[{"objectId":null,"n":3}]`)},
		{name: "named events", headers: m, expectedStatus: 200, path: aggURL("_EventCount", "distinct", "event"),
			check: aggResults(`["AppOpened","Button Click","Search"]`)},
		{name: "clients cannot count", path: aggURL("_EventCount", "distinct", "event"), headers: app, expectedStatus: 403},
	})
}

// TestScenarioServerInfo: /serverInfo (master key) gives a semver and the
// Dashboard's features, true only for what is served; /health needs no key.
func TestScenarioServerInfo(t *testing.T) {
	srv := servertest.Start(t, nil)
	semver := regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	features := `{"globalConfig":{"create":true,"read":true,"update":true,"delete":true},` +
		`"hooks":{"create":true,"read":true,"update":true,"delete":true},"cloudCode":{"jobs":true},` +
		`"logs":{"level":true,"size":true,"order":true,"until":true,"from":true},` +
		`"push":{"immediatePush":false,"scheduledPush":false,"storedPushData":false,"pushAudiences":true,"localization":false},` +
		`"schemas":{"addField":true,"removeField":true,"addClass":true,"removeClass":true,"clearAllDataFromClass":true,` +
		`"exportClass":false,"editClassLevelPermissions":true,"editPointerPermissions":true},"settings":{"securityCheck":false}}`
	runScenarios(t, srv, []scenario{
		{name: "master key required", path: "/serverInfo", headers: servertest.App(), expectedStatus: 403,
			check: replyIs(`{"error":"unauthorized: master key is required"}`)},
		{name: "server info", path: "/serverInfo", headers: servertest.Master(), expectedStatus: 200,
			check: checkAll(replyAt("features", features), func(t testing.TB, res servertest.Response) {
				v, _ := res.Map()["parseServerVersion"].(string)
				if !semver.MatchString(v) || !strings.HasPrefix(v, "7.") {
					t.Errorf("parseServerVersion %q", v)
				}
			})},
		{name: "health without credentials", path: "/health", expectedStatus: 200, check: replyIs(`{"status":"ok"}`)},
		{name: "health at the root", root: true, path: "/health", method: "POST", expectedStatus: 200, check: replyIs(`{"status":"ok"}`)},
	})
}

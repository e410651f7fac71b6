package transport_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

const (
	iidA   = "3f1b6c2e-0000-4000-8000-00000000000a"
	iidB   = "3f1b6c2e-0000-4000-8000-00000000000b"
	tokenT = "AB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9CAB9C" // 64 characters: lower-cased
)

// installations lists every installation (master key).
func installations(t testing.TB, srv *servertest.Server) []map[string]any {
	t.Helper()
	res := srv.Do(t, "GET", "/installations?order=objectId", nil, servertest.Master())
	if res.Status != http.StatusOK {
		t.Fatalf("list installations: %d %s", res.Status, res.Body)
	}
	var out []map[string]any
	for _, r := range res.Map()["results"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func installationCount(n int) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		if got, _ := res.Map()["count"].(float64); int(got) != n {
			t.Errorf("count %v, want %d: %s", res.Map()["count"], n, clip(string(res.Body)))
		}
	}
}

// TestScenarioInstallations: creation, identification, immutable fields,
// channels and the find and delete rules.
func TestScenarioInstallations(t *testing.T) {
	srv := servertest.Start(t, nil)
	app, m := servertest.App(), servertest.Master()
	var id string
	runScenarios(t, srv, []scenario{
		{name: "no id at all", method: "POST", path: "/installations", headers: app,
			body: map[string]any{"deviceType": "ios"}, expectedStatus: 400,
			check: checkAll(codeIs(135), replyAt("error", `"at least one ID field (deviceToken, installationId) must be specified in this operation"`))},
		{name: "no deviceType", method: "POST", path: "/installations", headers: app,
			body: map[string]any{"installationId": iidA}, expectedStatus: 400,
			check: checkAll(codeIs(135), replyAt("error", `"deviceType must be specified in this operation"`))},
		{name: "create", method: "POST", path: "/installations", headers: app, expectedStatus: 201,
			body:            map[string]any{"installationId": strings.ToUpper(iidA), "deviceType": "ios", "deviceToken": tokenT, "channels": []any{"", "news"}},
			expectedHeaders: map[string]string{"Location": ""},
			check: func(t testing.TB, res servertest.Response) {
				id, _ = res.Map()["objectId"].(string)
				if !objectIDPattern.MatchString(id) {
					t.Fatalf("no objectId: %s", res.Body)
				}
				if loc := res.Header.Get("Location"); loc != srv.URL+"/classes/_Installation/"+id {
					t.Errorf("Location %q", loc)
				}
			}},
	})
	runScenarios(t, srv, []scenario{
		{name: "lower-cased", path: "/installations/" + id, headers: app, expectedStatus: 200,
			check: checkAll(replyAt("installationId", `"`+iidA+`"`), replyAt("deviceToken", `"`+strings.ToLower(tokenT)+`"`),
				replyAt("channels", `["","news"]`))},
		{name: "the same installationId again updates it", method: "POST", path: "/installations", headers: app,
			body: map[string]any{"installationId": iidA, "deviceType": "ios", "badge": 3}, expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) {
				m := res.Map()
				if m["objectId"] != id || m["updatedAt"] == nil || m["createdAt"] != nil {
					t.Errorf("reply %s, want {objectId: %s, updatedAt}", res.Body, id)
				}
			}},
		{name: "still one installation", path: "/installations?count=1&limit=0", headers: m, expectedStatus: 200, check: installationCount(1)},
		{name: "update through PUT", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"channels": map[string]any{"__op": "AddUnique", "objects": []any{"sports"}}}, expectedStatus: 200,
			notExpectedContains: []string{`"objectId"`}},
		{name: "installationId is immutable", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"installationId": iidB}, expectedStatus: 400,
			check: checkAll(codeIs(136), replyAt("error", `"installationId may not be changed in this operation"`))},
		{name: "deviceType is immutable", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"deviceType": "android"}, expectedStatus: 400,
			check: checkAll(codeIs(136), replyAt("error", `"deviceType may not be changed in this operation"`))},
		{name: "the same deviceType is fine", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"deviceType": "ios", "installationId": iidA}, expectedStatus: 200},
		{name: "update of a missing installation", method: "PUT", path: "/installations/nothere123", headers: app,
			body: map[string]any{"deviceType": "ios"}, expectedStatus: 404,
			check: checkAll(codeIs(101), replyAt("error", `"Object not found for update."`))},
		{name: "bad channel name", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"channels": []any{"9lives"}}, expectedStatus: 400, check: codeIs(112)},
		{name: "bad channel in an operator", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"channels": map[string]any{"__op": "Add", "objects": []any{"a-b"}}}, expectedStatus: 400, check: codeIs(112)},
		{name: "channels not an array", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"channels": "news"}, expectedStatus: 400, check: codeIs(134)},
		{name: "a channel that is not a string", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"channels": []any{1}}, expectedStatus: 400, check: codeIs(134)},
		{name: "typed default field", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"badge": "three"}, expectedStatus: 400, check: codeIs(111)},
		{name: "channels kept", path: "/installations/" + id, headers: app, expectedStatus: 200,
			check: checkAll(replyAt("channels", `["","news","sports"]`), replyAt("badge", `3`))},

		// find and delete
		{name: "clients cannot list", path: "/installations", headers: app, expectedStatus: 400,
			check: checkAll(codeIs(119), replyAt("error", `"Clients aren't allowed to perform the find operation on the installation collection."`))},
		{name: "clients cannot query other fields", path: "/installations?where=" + qEscape(`{"deviceType":"ios"}`), headers: app,
			expectedStatus: 400, check: codeIs(119)},
		{name: "clients may query by installationId", path: "/installations?where=" + qEscape(`{"installationId":"`+iidA+`"}`), headers: app,
			expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
				if r := res.Map()["results"].([]any); len(r) != 1 {
					t.Errorf("results %s", res.Body)
				}
			}},
		{name: "or by a list of them", path: "/installations?where=" + qEscape(`{"installationId":{"$in":["`+iidA+`","`+iidB+`"]}}`), headers: app,
			expectedStatus: 200},
		{name: "clients cannot delete", method: "DELETE", path: "/installations/" + id, headers: app, expectedStatus: 400,
			check: checkAll(codeIs(119), replyAt("error", `"Clients aren't allowed to perform the delete operation on the installation collection."`))},
		{name: "nor through /classes", method: "DELETE", path: "/classes/_Installation/" + id, headers: app, expectedStatus: 400, check: codeIs(119)},
		{name: "nor list through /classes", path: "/classes/_Installation", headers: app, expectedStatus: 400, check: codeIs(119)},
		{name: "a transaction may not hold installations", method: "POST", path: "/batch", headers: m, expectedStatus: 400, check: codeIs(107),
			body: map[string]any{"transaction": true, "requests": []any{map[string]any{"method": "POST", "path": "/parse/classes/_Installation",
				"body": map[string]any{"installationId": iidB, "deviceType": "ios"}}}}},
		{name: "the master key lists", path: "/installations", headers: m, expectedStatus: 200},
		{name: "the master key deletes", method: "DELETE", path: "/installations/" + id, headers: m, expectedStatus: 200, check: replyIs(`{}`)},
		{name: "gone", path: "/installations/" + id, headers: app, expectedStatus: 404, check: codeIs(101)},
	})
}

// TestScenarioInstallationDedup: deviceToken deduplication (reference §6.2).
func TestScenarioInstallationDedup(t *testing.T) {
	srv := servertest.Start(t, nil)
	app, m := servertest.App(), servertest.Master()
	save := func(body map[string]any) servertest.Response {
		return srv.Do(t, "POST", "/classes/_Installation", body, app)
	}
	// The token moves to a new installation: the old holder goes.
	a := save(map[string]any{"installationId": iidA, "deviceType": "ios", "deviceToken": "tok1"})
	b := save(map[string]any{"installationId": iidB, "deviceType": "ios", "deviceToken": "tok1"})
	if a.Status != 201 || b.Status != 201 {
		t.Fatalf("creates: %d %s / %d %s", a.Status, a.Body, b.Status, b.Body)
	}
	all := installations(t, srv)
	if len(all) != 1 || all[0]["installationId"] != iidB {
		t.Fatalf("after the token moved: %v", all)
	}

	// A token-only installation is adopted by the first save that names
	// the token with an installationId.
	c := save(map[string]any{"deviceType": "android", "deviceToken": "tok2"})
	if c.Status != 201 {
		t.Fatalf("token-only create: %d %s", c.Status, c.Body)
	}
	cid := c.Map()["objectId"]
	d := save(map[string]any{"installationId": "3f1b6c2e-0000-4000-8000-00000000000c", "deviceType": "android", "deviceToken": "tok2"})
	if d.Status != 200 || d.Map()["objectId"] != cid {
		t.Fatalf("adoption: %d %s, want 200 with objectId %v", d.Status, d.Body, cid)
	}

	// Two installations share a token: a save naming only the token is ambiguous.
	for _, iid := range []string{"3f1b6c2e-0000-4000-8000-0000000000d1", "3f1b6c2e-0000-4000-8000-0000000000d2"} {
		// Create the installation, then give it the token by objectId.
		res := srv.Do(t, "POST", "/installations", map[string]any{"installationId": iid, "deviceType": "ios"}, app)
		if res.Status != 201 {
			t.Fatalf("create %s: %d %s", iid, res.Status, res.Body)
		}
		id := res.Map()["objectId"].(string)
		// Setting the token by objectId without an installationId in the
		// body removes no other holder (Parse cannot tell which to keep).
		if up := srv.Do(t, "PUT", "/installations/"+id, map[string]any{"deviceToken": "tok3"}, m); up.Status != 200 {
			t.Fatalf("set token: %d %s", up.Status, up.Body)
		}
	}
	runScenarios(t, srv, []scenario{
		{name: "two holders of tok3", path: "/installations?count=1&limit=0&where=" + qEscape(`{"deviceToken":"tok3"}`), headers: m,
			expectedStatus: 200, check: installationCount(2)},
		{name: "ambiguous token", method: "POST", path: "/installations", headers: app,
			body: map[string]any{"deviceType": "ios", "deviceToken": "tok3"}, expectedStatus: 400,
			check: checkAll(codeIs(132), replyAt("error", `"Must specify installationId when deviceToken matches multiple Installation objects"`))},
		{name: "naming a new installationId takes the token over", method: "POST", path: "/installations", headers: app,
			body:           map[string]any{"installationId": "3f1b6c2e-0000-4000-8000-0000000000d3", "deviceType": "ios", "deviceToken": "tok3"},
			expectedStatus: 201},
		{name: "one holder left", path: "/installations?count=1&limit=0&where=" + qEscape(`{"deviceToken":"tok3"}`), headers: m,
			expectedStatus: 200, check: installationCount(1)},
	})
}

// TestScenarioInstallationHeaderID: the client's installation id (header)
// finds its installation but is not copied into a new one.
func TestScenarioInstallationHeaderID(t *testing.T) {
	srv := servertest.Start(t, nil)
	h := map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Installation-Id": iidA}
	res := srv.Do(t, "POST", "/installations", map[string]any{"deviceType": "web"}, h)
	if res.Status != 201 {
		t.Fatalf("create with the header id: %d %s", res.Status, res.Body)
	}
	got := installations(t, srv)
	if len(got) != 1 || got[0]["installationId"] != nil {
		t.Fatalf("the header id was copied: %v", got)
	}
	// A body installationId is kept.
	if res := srv.Do(t, "POST", "/installations", map[string]any{"deviceType": "web", "installationId": iidB}, h); res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	// Saving again with only the header id finds the one holding it.
	if res := srv.Do(t, "POST", "/installations", map[string]any{"deviceType": "web", "appName": "x"},
		map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Installation-Id": iidB}); res.Status != 200 {
		t.Fatalf("save by header id: %d %s", res.Status, res.Body)
	}
	all := installations(t, srv)
	if len(all) != 2 {
		t.Fatalf("%d installations, want 2", len(all))
	}
	// An update by objectId changes that installation, whatever the
	// caller's own installation id.
	var other string
	for _, inst := range all {
		if inst["installationId"] != iidB {
			other = inst["objectId"].(string)
		}
	}
	if res := srv.Do(t, "PUT", "/installations/"+other, map[string]any{"badge": 5},
		map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Installation-Id": iidB}); res.Status != 200 {
		t.Fatalf("update: %d %s", res.Status, res.Body)
	}
	for _, inst := range installations(t, srv) {
		if (inst["objectId"] == other) != (inst["badge"] == 5.0) {
			t.Errorf("the update landed on the wrong installation: %v", inst)
		}
	}
}

// TestScenarioInstallationsReadOnlyMaster: the read-only master key reads
// installations and changes none.
func TestScenarioInstallationsReadOnlyMaster(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.ReadOnlyMasterKey = "ro-key" })
	ro := map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Master-Key": "ro-key"}
	runScenarios(t, srv, []scenario{
		{name: "create", method: "POST", path: "/installations", headers: ro,
			body: map[string]any{"installationId": iidA, "deviceType": "ios"}, expectedStatus: 400, check: codeIs(119)},
		{name: "list", path: "/installations", headers: ro, expectedStatus: 200},
	})
}

// TestScenarioInstallationCLP: the specification's table — an
// installation's CLP is ignored for get, create and update (its ACL still
// applies); find and delete keep their own rules.
func TestScenarioInstallationCLP(t *testing.T) {
	srv := servertest.Start(t, nil)
	app, m := servertest.App(), servertest.Master()
	first := srv.Do(t, "POST", "/installations", map[string]any{"installationId": iidA, "deviceType": "ios"}, app)
	if first.Status != 201 {
		t.Fatalf("create: %d %s", first.Status, first.Body)
	}
	id := first.Map()["objectId"].(string)
	locked := map[string]any{"find": map[string]any{}, "count": map[string]any{}, "get": map[string]any{}, "create": map[string]any{},
		"update": map[string]any{}, "delete": map[string]any{}, "addField": map[string]any{}}
	var privateID string
	runScenarios(t, srv, []scenario{
		{name: "lock every operation", method: "PUT", path: "/schemas/_Installation", headers: m,
			body: map[string]any{"classLevelPermissions": locked}, expectedStatus: 200},
		{name: "create still works", method: "POST", path: "/installations", headers: app,
			body: map[string]any{"installationId": iidB, "deviceType": "android", "ACL": map[string]any{}}, expectedStatus: 201,
			check: func(t testing.TB, res servertest.Response) { privateID, _ = res.Map()["objectId"].(string) }},
		{name: "get still works", path: "/installations/" + id, headers: app, expectedStatus: 200},
		{name: "update still works", method: "PUT", path: "/installations/" + id, headers: app,
			body: map[string]any{"badge": 1}, expectedStatus: 200},
		{name: "find by installationId follows the find CLP", path: "/installations?where=" + qEscape(`{"installationId":"`+iidA+`"}`),
			headers: app, expectedStatus: 400, check: codeIs(119)},
	})
	runScenarios(t, srv, []scenario{
		{name: "the ACL still applies to get", path: "/installations/" + privateID, headers: app, expectedStatus: 404, check: codeIs(101)},
		{name: "and to update", method: "PUT", path: "/installations/" + privateID, headers: app,
			body: map[string]any{"badge": 1}, expectedStatus: 404, check: codeIs(101)},
		{name: "the master key reads it", path: "/installations/" + privateID, headers: m, expectedStatus: 200},
	})
}

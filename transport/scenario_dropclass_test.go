package transport_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// wipe drops every class the way SDK test suites do between tests: purge
// each class listed by GET /schemas, then drop its schema.
func wipe(t *testing.T, srv *servertest.Server) {
	t.Helper()
	res := srv.Do(t, "GET", "/schemas", nil, servertest.Master())
	if res.Status != 200 {
		t.Fatalf("GET /schemas: %d %s", res.Status, res.Body)
	}
	for _, c := range res.Map()["results"].([]any) {
		name := c.(map[string]any)["className"].(string)
		if r := srv.Do(t, "DELETE", "/purge/"+name, nil, servertest.Master()); r.Status != 200 {
			t.Fatalf("purge %s: %d %s", name, r.Status, r.Body)
		}
		if r := srv.Do(t, "DELETE", "/schemas/"+name, nil, servertest.Master()); r.Status != 200 {
			t.Fatalf("drop %s: %d %s", name, r.Status, r.Body)
		}
	}
	res = srv.Do(t, "GET", "/schemas", nil, servertest.Master())
	if got := res.Map()["results"].([]any); len(got) != 0 {
		t.Fatalf("after a wipe GET /schemas lists %s", res.Body)
	}
}

func signUp(t *testing.T, srv *servertest.Server, name, email string) (id, token string) {
	t.Helper()
	body := map[string]any{"username": name, "password": "pw-" + name}
	if email != "" {
		body["email"] = email
	}
	res := srv.Do(t, "POST", "/users", body, servertest.App())
	if res.Status != 201 {
		t.Fatalf("sign-up %s: %d %s", name, res.Status, res.Body)
	}
	m := res.Map()
	return m["objectId"].(string), m["sessionToken"].(string)
}

// TestBuiltinClassesDropAndComeBack: after every class is purged and
// dropped, the built-in classes come back with their default fields on the
// next write, and every lookup (sessions, logins, unique names, roles,
// installations) works as on a new server.
func TestBuiltinClassesDropAndComeBack(t *testing.T) {
	srv := servertest.Start(t, nil)
	for round := range 3 {
		aliceID, _ := signUp(t, srv, "alice", "alice@example.com")
		mustCreate(t, srv, "_Role", map[string]any{"name": "admins", "ACL": map[string]any{"*": map[string]any{"read": true}},
			"users": map[string]any{"__op": "AddRelation", "objects": []any{map[string]any{"__type": "Pointer", "className": "_User", "objectId": aliceID}}}})
		mustCreate(t, srv, "Item", map[string]any{"n": round})
		if r := srv.Do(t, "POST", "/installations", map[string]any{"installationId": "inst-1", "deviceType": "ios"}, servertest.App()); r.Status != 201 {
			t.Fatalf("round %d: installation: %d %s", round, r.Status, r.Body)
		}
		wipe(t, srv)

		bobID, token := signUp(t, srv, "bob", "bob@example.com")
		user := with(servertest.App(), "X-Parse-Session-Token", token)
		runScenarios(t, srv, []scenario{
			{name: fmt.Sprintf("round %d: me", round), path: "/users/me", headers: user, expectedStatus: 200,
				expectedContains: []string{bobID}},
			{name: "the token reads", path: "/classes/Item", headers: user, expectedStatus: 200},
			{name: "login with the new password", method: "POST", path: "/login",
				body: map[string]any{"username": "bob", "password": "pw-bob"}, headers: servertest.App(), expectedStatus: 200,
				expectedContains: []string{"sessionToken"}},
			{name: "a wiped user is gone", method: "POST", path: "/login",
				body: map[string]any{"username": "alice", "password": "pw-alice"}, headers: servertest.App(), expectedStatus: 404,
				check: codeIs(101)},
			{name: "the wiped name is free again", method: "POST", path: "/users",
				body: map[string]any{"username": "alice", "password": "x", "email": "alice@example.com"}, headers: servertest.App(),
				expectedStatus: 201},
			{name: "names stay unique", method: "POST", path: "/users",
				body: map[string]any{"username": "bob", "password": "x"}, headers: servertest.App(), expectedStatus: 400, check: codeIs(202)},
			{name: "emails stay unique", method: "POST", path: "/users",
				body: map[string]any{"username": "bob2", "password": "x", "email": "BOB@example.com"}, headers: servertest.App(),
				expectedStatus: 400, check: codeIs(203)},
			{name: "the schema is back with its default fields", path: "/schemas/_User", headers: servertest.Master(),
				expectedStatus: 200, expectedContains: []string{`"username"`, `"emailVerified"`, `"authData"`}},
			{name: "sessions are back", path: "/schemas/_Session", headers: servertest.Master(),
				expectedStatus: 200, expectedContains: []string{`"sessionToken"`, `"expiresAt"`}},
			{name: "a role the wipe dropped gives nothing", path: "/roles", headers: servertest.Master(),
				expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
					if n := len(res.Map()["results"].([]any)); n != 0 {
						t.Errorf("roles after the wipe: %s", res.Body)
					}
				}},
		})
		if r := srv.Do(t, "POST", "/logout", nil, user); r.Status != 200 {
			t.Fatalf("logout: %d %s", r.Status, r.Body)
		}
		if r := srv.Do(t, "GET", "/users/me", nil, user); r.Status != 400 || !strings.Contains(string(r.Body), "209") {
			t.Fatalf("me after logout: %d %s", r.Status, r.Body)
		}
		wipe(t, srv)
	}
}

// TestSchemasListOnlyClassesThatExist: a built-in class appears in GET
// /schemas once created (by use or by the schemas API) and goes when
// dropped; an empty app lists nothing.
func TestSchemasListOnlyClassesThatExist(t *testing.T) {
	srv := servertest.Start(t, nil)
	classes := func() string {
		res := srv.Do(t, "GET", "/schemas", nil, servertest.Master())
		var names []string
		for _, c := range res.Map()["results"].([]any) {
			names = append(names, c.(map[string]any)["className"].(string))
		}
		return strings.Join(names, ",")
	}
	if got := classes(); got != "" {
		t.Fatalf("a new app lists %q", got)
	}
	runScenarios(t, srv, []scenario{
		{name: "a missing built-in class", path: "/schemas/_User", headers: servertest.Master(), expectedStatus: 400, check: codeIs(103)},
		{name: "create _Role through the API", method: "POST", path: "/schemas/_Role", headers: servertest.Master(),
			body: map[string]any{}, expectedStatus: 200, expectedContains: []string{`"users"`, `"roles"`}},
	})
	signUp(t, srv, "carol", "")
	if got := classes(); got != "_Role,_Session,_User" {
		t.Fatalf("after creating _Role and a sign-up: %q", got)
	}
	wipe(t, srv)
}

// TestConfiguredIndexesSurviveADrop: an index declared in the configuration
// applies whenever its class exists, also after a wipe brings it back.
func TestConfiguredIndexesSurviveADrop(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.Indexes = []string{"Item.price"}; o.MaxScan = 20 })
	for round := range 2 {
		qBatchCreate(t, srv, "Item", 40, func(i int) map[string]any { return map[string]any{"price": i % 10} })
		res := srv.Do(t, "GET", qPath("Item", map[string]any{"where": map[string]any{"price": 3}, "explain": true}), nil, servertest.Master())
		plan, _ := res.Map()["results"].(map[string]any)
		if plan["access"] != "index price (1 range)" {
			t.Fatalf("round %d: plan %s", round, res.Body)
		}
		if r := srv.Do(t, "GET", qPath("Item", map[string]any{"where": map[string]any{"price": 3}}), nil, servertest.App()); r.Status != 200 {
			t.Fatalf("round %d: indexed find: %d %s", round, r.Status, r.Body)
		}
		if r := srv.Do(t, "GET", "/schemas/Item", nil, servertest.Master()); !strings.Contains(string(r.Body), `"price_1":{"price":1}`) {
			t.Errorf("round %d: schema lacks the declared index: %s", round, r.Body)
		}
		wipe(t, srv)
	}
}

// TestBuiltinClassesAreNotClientClassCreation: with client class creation
// off, a new database still takes sign-ups, roles and installations; only
// custom classes need the master key to come into being.
func TestBuiltinClassesAreNotClientClassCreation(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.AllowClientClassCreation = false })
	runScenarios(t, srv, []scenario{
		{name: "sign-up", method: "POST", path: "/users", headers: servertest.App(),
			body: map[string]any{"username": "dora", "password": "pw"}, expectedStatus: 201},
		{name: "installation", method: "POST", path: "/installations", headers: servertest.App(),
			body: map[string]any{"installationId": "i-1", "deviceType": "android"}, expectedStatus: 201},
		{name: "role", method: "POST", path: "/roles", headers: servertest.App(),
			body: map[string]any{"name": "team", "ACL": map[string]any{"*": map[string]any{"read": true}}}, expectedStatus: 201},
		{name: "a custom class", method: "POST", path: "/classes/Custom", headers: servertest.App(),
			body: map[string]any{"a": 1}, expectedStatus: 400, check: codeIs(119),
			expectedContains: []string{"This user is not allowed to access non-existent class: Custom"}},
	})
}

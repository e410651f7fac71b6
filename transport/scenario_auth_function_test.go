package transport_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// A custom auth adapter written as cloud code: auth.<provider>.cloudFunction
// names a function doing validateAuthData and validateAppId.
const authFunctionJS = `
Parse.Cloud.define("validateAcmeAuth", (req) => {
  if (!req.master) { throw new Parse.Error(119, "master only"); }
  const { provider, authData, options, appIds } = req.params;
  if (authData.token !== options.secretWord + ":" + authData.id) {
    throw new Parse.Error(101, "acme: wrong token");
  }
  if (authData.app && !appIds.includes(authData.app)) { return false; }
  return { save: { id: authData.id }, response: { welcome: provider } };
}, { requireMaster: true });
Parse.Cloud.define("throwsPlain", () => { throw "the directory is closed"; });
`

func TestScenarioAuthDataCloudFunctionAdapter(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "main.js")
	if err := os.WriteFile(main, []byte(authFunctionJS), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, func(o *config.Options) {
		o.Cloud = main
		o.Auth.Providers = map[string]any{
			"acme":  map[string]any{"cloudFunction": "validateAcmeAuth", "secretWord": "swordfish", "appIds": []any{"app-1"}},
			"plain": map[string]any{"cloudFunction": "throwsPlain"},
		}
	})
	app := servertest.App()
	var token string
	runScenarios(t, srv, []scenario{
		{name: "accepted, with the function's response", method: "POST", path: "/users", headers: app,
			body:           authBody("acme", map[string]any{"id": "a-1", "token": "swordfish:a-1", "app": "app-1"}),
			expectedStatus: 201, expectedContains: []string{`"authDataResponse":{"acme":{"welcome":"acme"}}`},
			check: capture("sessionToken", &token)},
		{name: "the same authData logs in", method: "POST", path: "/users", headers: app,
			body:           authBody("acme", map[string]any{"id": "a-1", "token": "swordfish:a-1"}),
			expectedStatus: 200, expectedContains: []string{`"authData":{"acme":{"id":"a-1"}}`}, notExpectedContains: []string{"swordfish"}},
		{name: "a thrown Parse error keeps its code", method: "POST", path: "/users", headers: app,
			body:           authBody("acme", map[string]any{"id": "a-1", "token": "trout:a-1"}),
			expectedStatus: 404, check: msgIs(101, "acme: wrong token")},
		{name: "false refuses (an app id not configured)", method: "POST", path: "/users", headers: app,
			body:           authBody("acme", map[string]any{"id": "a-1", "token": "swordfish:a-1", "app": "app-2"}),
			expectedStatus: 400, check: msgIs(251, "acme auth is invalid for this user.")},
		{name: "any other throw is 251", method: "POST", path: "/users", headers: app,
			body:           authBody("plain", map[string]any{"id": "p-1"}),
			expectedStatus: 400, check: msgIs(251, "the directory is closed")},
	})
	if token == "" {
		return
	}
	runScenarios(t, srv, []scenario{
		{name: "only what the function saved is stored", method: "GET", path: "/users/me", headers: asUser(token),
			expectedStatus: 200, expectedContains: []string{`"authData":{"acme":{"id":"a-1"}}`}, notExpectedContains: []string{"swordfish"}},
	})
}

// TestScenarioAuthDataCustomAdapterWithoutID: a custom adapter's authData
// need not hold an id (Parse Server lets the adapter alone judge it):
// each such sign-up is a new user, and an entry without an id never
// links to a user that has none either (the lookup by id is skipped).
func TestScenarioAuthDataCustomAdapterWithoutID(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "main.js")
	js := `Parse.Cloud.define("validateBadge", (req) => {
  if (req.params.authData.badge !== "valid") { return false; }
}, { requireMaster: true });`
	if err := os.WriteFile(main, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, func(o *config.Options) {
		o.Cloud = main
		o.Auth.Providers = map[string]any{"badge": map[string]any{"cloudFunction": "validateBadge"}}
	})
	app := servertest.App()
	var first, second string
	runScenarios(t, srv, []scenario{
		{name: "a user without this provider exists first", method: "POST", path: "/users", headers: app,
			body: map[string]any{"username": "plain", "password": "pw-plain-1"}, expectedStatus: 201},
		{name: "sign-up with id-less authData", method: "POST", path: "/users", headers: app,
			body: authBody("badge", map[string]any{"badge": "valid"}), expectedStatus: 201, check: capture("objectId", &first)},
		{name: "again: another new user, not a log-in of the first or of plain", method: "POST", path: "/users", headers: app,
			body: authBody("badge", map[string]any{"badge": "valid"}), expectedStatus: 201, check: capture("objectId", &second)},
		{name: "the adapter still judges", method: "POST", path: "/users", headers: app,
			body: authBody("badge", map[string]any{"badge": "forged"}), expectedStatus: 400, check: codeIs(251)},
	})
	if first == "" || first == second {
		t.Errorf("id-less sign-ups gave users %q and %q, want two new users", first, second)
	}
}

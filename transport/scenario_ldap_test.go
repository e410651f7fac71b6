package transport_test

import (
	"testing"

	"github.com/quarrydata/quarry/auth/authtest"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// Sign-in with a directory: authData.ldap = {id, password} through
// POST /users against an LDAP server on 127.0.0.1 speaking the real
// protocol (auth/authtest). The password is never stored nor shown.
func TestScenarioAuthDataLDAP(t *testing.T) {
	dir := authtest.StartLDAP(t)
	dir.AddUser("alice", "alice-pw")
	dir.AddUser("bob", "bob-pw")
	dir.AddGroup("staff", "alice")
	down := authtest.StartLDAP(t)
	down.Stop()
	srv := servertest.Start(t, func(o *config.Options) {
		o.Auth.Providers = map[string]any{
			"ldap": map[string]any{"url": dir.URL, "suffix": authtest.LDAPSuffix,
				"dn": "uid={{id}},ou=people," + authtest.LDAPSuffix, "groupCn": "staff", "groupFilter": "(memberUid={{id}})"},
		}
	})
	downSrv := servertest.Start(t, func(o *config.Options) {
		o.Auth.Providers = map[string]any{"ldap": map[string]any{"url": down.URL, "suffix": authtest.LDAPSuffix}}
	})
	app := servertest.App()
	var userID, token string
	runScenarios(t, srv, []scenario{
		{name: "sign up with a directory bind", method: "POST", path: "/users", headers: app,
			body:           authBody("ldap", map[string]any{"id": "alice", "password": "alice-pw"}),
			expectedStatus: 201, expectedContains: []string{`"sessionToken":"r:`},
			check: checkAll(capture("objectId", &userID), capture("sessionToken", &token))},
		{name: "the same id and password log the same user in", method: "POST", path: "/users", headers: app,
			body:           authBody("ldap", map[string]any{"id": "alice", "password": "alice-pw"}),
			expectedStatus: 200, expectedContains: []string{`"authData":{"ldap":{"id":"alice"}}`, `"sessionToken":"r:`},
			notExpectedContains: []string{"alice-pw"}},
		{name: "wrong password", method: "POST", path: "/users", headers: app,
			body:           authBody("ldap", map[string]any{"id": "alice", "password": "wrong"}),
			expectedStatus: 404, check: msgIs(101, "LDAP: Wrong username or password")},
		{name: "user not in the required group", method: "POST", path: "/users", headers: app,
			body: authBody("ldap", map[string]any{"id": "bob", "password": "bob-pw"}),
			// 101, not Parse Server's 1: a refusal is a 4xx (the SDK retries 5xx).
			expectedStatus: 404, check: msgIs(101, "LDAP: User not in group")},
		{name: "no id", method: "POST", path: "/users", headers: app,
			body:           authBody("ldap", map[string]any{"password": "alice-pw"}),
			expectedStatus: 400, check: codeIs(250)},
	})
	if t.Failed() {
		return
	}
	runScenarios(t, srv, []scenario{
		{name: "the stored authData holds no password", method: "GET", path: "/users/me", headers: asUser(token),
			expectedStatus: 200, expectedContains: []string{`"authData":{"ldap":{"id":"alice"}}`}, notExpectedContains: []string{"alice-pw"}},
	})
	runScenarios(t, downSrv, []scenario{
		{name: "directory down", method: "POST", path: "/users", headers: app,
			body:           authBody("ldap", map[string]any{"id": "alice", "password": "alice-pw"}),
			expectedStatus: 404, check: msgIs(101, "LDAP: Cannot connect to the LDAP server")},
	})
}

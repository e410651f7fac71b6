package transport_test

import (
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestScenarioSessionServerOwnedFields: a session's expiry, creation
// record and restriction are the server's: its own user cannot change
// them (105), through /sessions, /classes/_Session or a batch, so
// sessionLength holds; the master key can. A user cannot store a
// sessionToken field on itself (105), by any route.
func TestScenarioSessionServerOwnedFields(t *testing.T) {
	w := newWorld(t, nil)
	srv, a := w.srv, w.alice
	sess := w.sessionID(t, a)
	far := map[string]any{"__type": "Date", "iso": "2999-01-01T00:00:00.000Z"}
	var cases []scenario
	for _, path := range []string{"/sessions/" + sess, "/classes/_Session/" + sess} {
		cases = append(cases,
			scenario{name: "expiresAt in 2999 via " + path, method: "PUT", path: path, headers: a.headers,
				body: map[string]any{"expiresAt": far}, expectedStatus: 400, check: msgIs(105, "Cannot change expiresAt of a session.")},
			scenario{name: "expiresAt deleted via " + path, method: "PUT", path: path, headers: a.headers,
				body: map[string]any{"expiresAt": map[string]any{"__op": "Delete"}}, expectedStatus: 400, check: codeIs(105)},
			scenario{name: "createdWith via " + path, method: "PUT", path: path, headers: a.headers,
				body: map[string]any{"createdWith": map[string]any{"action": "login"}}, expectedStatus: 400, check: codeIs(105)},
			scenario{name: "createdWith.action via " + path, method: "PUT", path: path, headers: a.headers,
				body: map[string]any{"createdWith.action": "login"}, expectedStatus: 400, check: codeIs(105)},
			scenario{name: "restricted via " + path, method: "PUT", path: path, headers: a.headers,
				body: map[string]any{"restricted": false}, expectedStatus: 400, check: codeIs(105)},
		)
	}
	cases = append(cases,
		scenario{name: "expiresAt in a batch", method: "POST", path: "/batch", headers: a.headers,
			body: map[string]any{"requests": []any{map[string]any{"method": "PUT", "path": "/parse/sessions/" + sess,
				"body": map[string]any{"expiresAt": far}}}},
			expectedStatus: 200, expectedContains: []string{`"code":105`}},
		scenario{name: "the expiry is unchanged", path: "/sessions/me", headers: a.headers, expectedStatus: 200,
			notExpectedContains: []string{"2999"}},
		scenario{name: "other fields stay writable", method: "PUT", path: "/sessions/" + sess, headers: a.headers,
			body: map[string]any{"device": "phone"}, expectedStatus: 200},
		scenario{name: "the master key may shorten a session", method: "PUT", path: "/sessions/" + sess, headers: servertest.Master(),
			body: map[string]any{"expiresAt": map[string]any{"__type": "Date", "iso": "2099-01-01T00:00:00.000Z"}}, expectedStatus: 200},
		scenario{name: "sessionToken on oneself", method: "PUT", path: "/users/" + a.userID, headers: a.headers,
			body: map[string]any{"sessionToken": "r:public"}, expectedStatus: 400, check: msgIs(105, "Invalid field name: sessionToken.")},
		scenario{name: "sessionToken on oneself through /classes", method: "PUT", path: "/classes/_User/" + a.userID, headers: a.headers,
			body: map[string]any{"sessionToken": "r:public"}, expectedStatus: 400, check: codeIs(105)},
		scenario{name: "sessionToken at sign-up", method: "POST", path: "/users", headers: servertest.App(),
			body: map[string]any{"username": "mallory", "password": "pw", "sessionToken": "r:public"}, expectedStatus: 400, check: codeIs(105)},
		scenario{name: "sessionToken by the master key", method: "PUT", path: "/users/" + a.userID, headers: servertest.Master(),
			body: map[string]any{"sessionToken": "r:public"}, expectedStatus: 400, check: codeIs(105)},
		scenario{name: "no stored sessionToken shows to others", path: "/users/" + a.userID, headers: w.bob.headers,
			expectedStatus: 200, notExpectedContains: []string{"sessionToken", "r:public"}},
	)
	runScenarios(t, srv, cases)
}

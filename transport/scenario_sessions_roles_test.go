package transport_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/server/servertest"
)

// Sessions (/sessions, /sessions/me) and roles (/roles): their endpoints,
// errors, and how role membership reaches permissions.

func TestScenarioSessions(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a, b := w.alice, w.bob
	aliceSess, bobSess := w.sessionID(t, a), w.sessionID(t, b)
	var extraID, extraToken string
	inst := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	runScenarios(t, srv, []scenario{
		{name: "me", path: "/sessions/me", headers: a.headers, expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) {
				m := res.Map()
				if m["objectId"] != aliceSess || m["sessionToken"] != a.token || fmt.Sprint(m["user"]) != fmt.Sprint(ptr("_User", a.userID)) {
					t.Errorf("session %s", res.Body)
				}
				if fmt.Sprint(m["createdWith"]) != fmt.Sprint(map[string]any{"action": "signup", "authProvider": "password"}) {
					t.Errorf("createdWith %v", m["createdWith"])
				}
				exp, _ := m["expiresAt"].(map[string]any)
				at, err := time.Parse(time.RFC3339, fmt.Sprint(exp["iso"]))
				if exp["__type"] != "Date" || err != nil || at.Sub(time.Now()) < 364*24*time.Hour || at.Sub(time.Now()) > 366*24*time.Hour {
					t.Errorf("expiresAt %v: a year from now as a Date", m["expiresAt"])
				}
				if _, ok := m["ACL"]; ok {
					t.Errorf("sessions have no ACL: %s", res.Body)
				}
			}},
		{name: "me without a token", path: "/sessions/me", headers: servertest.App(), expectedStatus: 400, check: msgIs(209, "Session token required.")},
		{name: "me with an unknown token", path: "/sessions/me", headers: asUser("r:unknown"), expectedStatus: 400, check: msgIs(209, "Session token not found.")},
		{name: "create", method: "POST", path: "/sessions", headers: a.headers, body: map[string]any{"note": "tablet"},
			expectedStatus: 201, check: func(t testing.TB, res servertest.Response) {
				m := res.Map()
				extraID, _ = m["objectId"].(string)
				extraToken = tokenOf(res)
				if !tokenPattern.MatchString(extraToken) || extraToken == a.token || m["note"] != "tablet" ||
					fmt.Sprint(m["user"]) != fmt.Sprint(ptr("_User", a.userID)) ||
					fmt.Sprint(m["createdWith"]) != fmt.Sprint(map[string]any{"action": "create"}) || m["expiresAt"] == nil {
					t.Errorf("created session %s", res.Body)
				}
				if loc := res.Header.Get("Location"); loc != srv.URL+"/sessions/"+extraID {
					t.Errorf("Location %q", loc)
				}
			}},
		{name: "create without a session", method: "POST", path: "/sessions", headers: servertest.App(), body: map[string]any{},
			expectedStatus: 400, check: msgIs(209, "Session token required.")},
		{name: "create through /classes/_Session", method: "POST", path: "/classes/_Session", headers: a.headers, body: map[string]any{"user": ptr("_User", a.userID)},
			expectedStatus: 400, check: codeIs(119)},
		{name: "the master key creates one for a user", method: "POST", path: "/sessions", headers: servertest.Master(), body: map[string]any{"user": ptr("_User", b.userID)},
			expectedStatus: 201, expectedContains: []string{b.userID}},
		{name: "list own", path: "/sessions", headers: a.headers, expectedStatus: 200,
			notExpectedContains: []string{b.token, b.userID},
			check: func(t testing.TB, res servertest.Response) {
				if n := len(results(res)); n != 2 {
					t.Errorf("alice has %d sessions listed, want 2: %s", n, res.Body)
				}
			}},
		{name: "get own", path: "/sessions/" + aliceSess, headers: a.headers, expectedStatus: 200},
		{name: "get another's", path: "/sessions/" + bobSess, headers: a.headers, expectedStatus: 404, check: codeIs(101)},
		{name: "update own", method: "PUT", path: "/sessions/" + aliceSess, headers: a.headers, body: map[string]any{"device": "phone"}, expectedStatus: 200},
		{name: "cannot move a session to another user", method: "PUT", path: "/sessions/" + aliceSess, headers: a.headers,
			body: map[string]any{"user": ptr("_User", b.userID)}, expectedStatus: 400, check: codeIs(105)},
		{name: "cannot change the installationId", method: "PUT", path: "/sessions/" + aliceSess, headers: a.headers,
			body: map[string]any{"installationId": "x"}, expectedStatus: 400, check: codeIs(105)},
		{name: "cannot change the token", method: "PUT", path: "/sessions/" + aliceSess, headers: a.headers,
			body: map[string]any{"sessionToken": "r:0123456789abcdef0123456789abcdef"}, expectedStatus: 400, check: codeIs(105)},
		{name: "cannot set an ACL", method: "PUT", path: "/sessions/" + aliceSess, headers: a.headers,
			body: map[string]any{"ACL": map[string]any{"*": map[string]any{"read": true}}}, expectedStatus: 400, check: msgIs(105, "Cannot set ACL on a Session.")},
		{name: "update another's", method: "PUT", path: "/sessions/" + bobSess, headers: a.headers, body: map[string]any{"device": "x"}, expectedStatus: 404, check: codeIs(101)},
		{name: "delete another's", method: "DELETE", path: "/sessions/" + bobSess, headers: a.headers, expectedStatus: 404,
			check: msgIs(101, "Object not found for delete.")},
		{name: "bob's session survived", path: "/users/me", headers: b.headers, expectedStatus: 200},
		{name: "pair with an installation", method: "PUT", path: "/sessions/me", headers: a.headers, body: map[string]any{"installationId": inst}, expectedStatus: 200},
		{name: "the pairing shows", path: "/sessions/me", headers: a.headers, expectedStatus: 200, expectedContains: []string{`"installationId":"` + inst + `"`}},
		{name: "pair through the header", method: "PUT", path: "/sessions/me", headers: with(b.headers, "X-Parse-Installation-Id", inst), body: map[string]any{}, expectedStatus: 200},
		{name: "pair without an installation", method: "PUT", path: "/sessions/me", headers: w.carol.headers, body: map[string]any{}, expectedStatus: 400, check: codeIs(135)},
		{name: "pair without a session", method: "PUT", path: "/sessions/me", headers: servertest.App(), body: map[string]any{"installationId": inst}, expectedStatus: 400, check: codeIs(209)},
	})
	if res := srv.Do(t, "GET", "/sessions/me", nil, b.headers); !strings.Contains(string(res.Body), inst) {
		t.Errorf("header pairing: %s", res.Body)
	}
	runScenarios(t, srv, []scenario{
		{name: "the created token works", path: "/users/me", headers: asUser(extraToken), expectedStatus: 200, expectedContains: []string{`"username":"alice"`}},
		{name: "delete own", method: "DELETE", path: "/sessions/" + extraID, headers: a.headers, expectedStatus: 200, expectedContains: []string{"{}"}},
		{name: "the deleted token is dead", path: "/users/me", headers: asUser(extraToken), expectedStatus: 400, check: codeIs(209)},
		{name: "the master key lists every session", path: "/sessions", headers: servertest.Master(), expectedStatus: 200,
			expectedContains: []string{a.token, b.token, w.carol.token, w.dave.token}},
		{name: "the master key deletes any session", method: "DELETE", path: "/sessions/" + bobSess, headers: servertest.Master(), expectedStatus: 200},
		{name: "bob's token is dead", path: "/users/me", headers: b.headers, expectedStatus: 400, check: codeIs(209)},
	})
}

func TestScenarioRoles(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a, b := w.alice, w.bob
	readable := map[string]any{"*": map[string]any{"read": true}}
	var editorsID string
	runScenarios(t, srv, []scenario{
		{name: "name required", method: "POST", path: "/roles", headers: a.headers, body: map[string]any{"ACL": readable},
			expectedStatus: 400, check: msgIs(111, "name is required.")},
		{name: "ACL required", method: "POST", path: "/roles", headers: a.headers, body: map[string]any{"name": "NoACL"},
			expectedStatus: 400, check: msgIs(111, "ACL is required.")},
		{name: "invalid name", method: "POST", path: "/roles", headers: a.headers, body: map[string]any{"name": "bad*name", "ACL": readable},
			expectedStatus: 400, check: codeIs(139)},
		{name: "invalid name: a dot", method: "POST", path: "/roles", headers: a.headers, body: map[string]any{"name": "a.b", "ACL": readable},
			expectedStatus: 400, check: codeIs(139)},
		{name: "create", method: "POST", path: "/roles", headers: a.headers,
			body: map[string]any{"name": "Editors", "ACL": map[string]any{"*": map[string]any{"read": true}, a.userID: rw()},
				"users": addRelation(ptr("_User", w.carol.userID))},
			expectedStatus: 201, check: func(t testing.TB, res servertest.Response) {
				editorsID, _ = res.Map()["objectId"].(string)
				if loc := res.Header.Get("Location"); loc != srv.URL+"/roles/"+editorsID {
					t.Errorf("Location %q", loc)
				}
			}},
		{name: "letters, digits, spaces, - and _", method: "POST", path: "/roles", headers: a.headers,
			body: map[string]any{"name": "Team A-1_b", "ACL": readable}, expectedStatus: 201},
		{name: "unique name", method: "POST", path: "/roles", headers: b.headers, body: map[string]any{"name": "Editors", "ACL": readable},
			expectedStatus: 400, check: codeIs(137)},
	})
	runScenarios(t, srv, []scenario{
		{name: "get hides the relations", path: "/roles/" + editorsID, headers: b.headers, expectedStatus: 200,
			expectedContains:    []string{`"name":"Editors"`, `"ACL"`, `"objectId"`, `"createdAt"`, `"updatedAt"`},
			notExpectedContains: []string{`"users"`, `"roles"`, w.carol.userID + `"}`}},
		{name: "find hides the relations", path: "/roles?" + whereQ(map[string]any{"name": "Editors"}), headers: b.headers, expectedStatus: 200,
			expectedContains: []string{`"name":"Editors"`}, notExpectedContains: []string{`"users"`, `"roles"`}},
		{name: "members through $relatedTo", path: "/users?" + whereQ(map[string]any{"$relatedTo": map[string]any{"object": ptr("_Role", editorsID), "key": "users"}}),
			headers: b.headers, expectedStatus: 200, expectedContains: []string{`"username":"carol"`}, notExpectedContains: []string{`"username":"alice"`}},
		{name: "name is immutable", method: "PUT", path: "/roles/" + editorsID, headers: a.headers, body: map[string]any{"name": "Writers"},
			expectedStatus: 400, check: codeIs(136)},
		{name: "the same name is no change", method: "PUT", path: "/roles/" + editorsID, headers: a.headers, body: map[string]any{"name": "Editors"},
			expectedStatus: 200},
		{name: "update needs write access", method: "PUT", path: "/roles/" + editorsID, headers: b.headers,
			body: map[string]any{"users": addRelation(ptr("_User", b.userID))}, expectedStatus: 404, check: codeIs(101)},
		{name: "update with write access", method: "PUT", path: "/roles/" + editorsID, headers: a.headers,
			body: map[string]any{"users": addRelation(ptr("_User", w.dave.userID))}, expectedStatus: 200},
		{name: "the public cannot update", method: "PUT", path: "/roles/" + editorsID, headers: servertest.App(),
			body: map[string]any{"users": addRelation(ptr("_User", b.userID))}, expectedStatus: 404, check: codeIs(101)},
		{name: "a member is no writer", method: "DELETE", path: "/roles/" + editorsID, headers: w.carol.headers, expectedStatus: 404, check: codeIs(101)},
		{name: "master updates any role", method: "PUT", path: "/roles/" + w.parentRoleID, headers: servertest.Master(),
			body: map[string]any{"users": addRelation(ptr("_User", b.userID))}, expectedStatus: 200},
	})
	if got := outcome(srv.Do(t, "GET", "/roles/"+editorsID, nil, servertest.Master())); got != "200" {
		t.Fatal(got)
	}
	if name := mustGet(t, srv, "_Role", editorsID)["name"]; name != "Editors" {
		t.Errorf("role renamed to %v", name)
	}
	runScenarios(t, srv, []scenario{
		{name: "delete with write access", method: "DELETE", path: "/roles/" + editorsID, headers: a.headers, expectedStatus: 200},
		{name: "the name is free again", method: "POST", path: "/roles", headers: a.headers, body: map[string]any{"name": "Editors", "ACL": readable}, expectedStatus: 201},
	})
}

// TestScenarioRoleMembership: role changes reach permissions on the very
// next request, through users and through child roles, and cycles in the
// role graph end.
func TestScenarioRoleMembership(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a := w.alice
	readable := map[string]any{"*": map[string]any{"read": true}}
	staff := mustPost(t, srv, "/roles", map[string]any{"name": "Staff", "ACL": readable}, servertest.Master())
	interns := mustPost(t, srv, "/roles", map[string]any{"name": "Interns", "ACL": readable}, servertest.Master())
	doc := mustCreate(t, srv, "Memo", map[string]any{"n": 1, "ACL": map[string]any{"role:Staff": map[string]any{"read": true}}})
	get := func() string { return outcome(srv.Do(t, "GET", "/classes/Memo/"+doc, nil, a.headers)) }
	change := func(role, key, op string, p map[string]any) {
		t.Helper()
		res := srv.Do(t, "PUT", "/roles/"+role, map[string]any{key: map[string]any{"__op": op, "objects": []any{p}}}, servertest.Master())
		if res.Status != 200 {
			t.Fatalf("%s %s: %d %s", op, key, res.Status, res.Body)
		}
	}
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"not a member", func() {}, "404/101"},
		{"added to Staff", func() { change(staff, "users", "AddRelation", ptr("_User", a.userID)) }, "200"},
		{"removed from Staff", func() { change(staff, "users", "RemoveRelation", ptr("_User", a.userID)) }, "404/101"},
		{"added to Interns", func() { change(interns, "users", "AddRelation", ptr("_User", a.userID)) }, "404/101"},
		{"Interns made a child of Staff", func() { change(staff, "roles", "AddRelation", ptr("_Role", interns)) }, "200"},
		{"Interns no longer a child", func() { change(staff, "roles", "RemoveRelation", ptr("_Role", interns)) }, "404/101"},
		{"child again", func() { change(staff, "roles", "AddRelation", ptr("_Role", interns)) }, "200"},
		{"Interns deleted", func() {
			if res := srv.Do(t, "DELETE", "/roles/"+interns, nil, servertest.Master()); res.Status != 200 {
				t.Fatalf("delete Interns: %d %s", res.Status, res.Body)
			}
		}, "404/101"},
	}
	for _, s := range steps {
		s.do()
		if got := get(); got != s.want {
			t.Errorf("%s: alice reads the Staff memo: %s, want %s", s.name, got, s.want)
		}
	}

	// A cycle: Ping's child is Pong and Pong's child is Ping.
	ping := mustPost(t, srv, "/roles", map[string]any{"name": "Ping", "ACL": readable, "users": addRelation(ptr("_User", w.bob.userID))}, servertest.Master())
	pong := mustPost(t, srv, "/roles", map[string]any{"name": "Pong", "ACL": readable, "roles": addRelation(ptr("_Role", ping))}, servertest.Master())
	change(ping, "roles", "AddRelation", ptr("_Role", pong))
	pongDoc := mustCreate(t, srv, "Memo", map[string]any{"ACL": map[string]any{"role:Pong": map[string]any{"read": true}}})
	start := time.Now()
	if got := outcome(srv.Do(t, "GET", "/classes/Memo/"+pongDoc, nil, w.bob.headers)); got != "200" {
		t.Errorf("bob, in Ping (a child of Pong), reads a Pong memo: %s", got)
	}
	if got := outcome(srv.Do(t, "GET", "/classes/Memo/"+doc, nil, w.bob.headers)); got != "404/101" {
		t.Errorf("bob reads the Staff memo: %s", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a role cycle took %v", d)
	}
}

// TestScenarioRoleCacheUnderLoad: membership flips while other requests
// resolve the same user's roles; after the last flip the next request must
// see it (a role lookup that started before a change must not be cached
// after it).
func TestScenarioRoleCacheUnderLoad(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a := w.alice
	role := mustPost(t, srv, "/roles", map[string]any{"name": "Flip", "ACL": map[string]any{}}, servertest.Master())
	doc := mustCreate(t, srv, "FlipDoc", map[string]any{"ACL": map[string]any{"role:Flip": map[string]any{"read": true}}})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := tryDo(srv.URL+"/classes/FlipDoc/"+doc, "GET", nil, a.headers); err != nil {
					return
				}
			}
		}()
	}
	for i := range 40 {
		op := "AddRelation"
		want := "200"
		if i%2 == 1 {
			op, want = "RemoveRelation", "404/101"
		}
		res := srv.Do(t, "PUT", "/roles/"+role, map[string]any{"users": map[string]any{"__op": op, "objects": []any{ptr("_User", a.userID)}}}, servertest.Master())
		if res.Status != 200 {
			t.Fatalf("flip %d: %d %s", i, res.Status, res.Body)
		}
		if got := outcome(srv.Do(t, "GET", "/classes/FlipDoc/"+doc, nil, a.headers)); got != want {
			t.Errorf("flip %d (%s): alice reads %s, want %s", i, op, got, want)
		}
	}
	close(stop)
	wg.Wait()
}

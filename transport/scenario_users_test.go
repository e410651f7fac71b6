package transport_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// Users: sign-up, login, logout, /users/me, reading and changing users,
// /verifyPassword, /upgradeToRevocableSession, and their errors.

var tokenPattern = regexp.MustCompile(`^r:[0-9a-f]{32}$`)

// msgIs checks a Parse error's code and exact message.
func msgIs(code int, msg string) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		codeIs(code)(t, res)
		if got := res.Map()["error"]; got != msg {
			t.Errorf("error %q, want %q", got, msg)
		}
	}
}

func tokenOf(res servertest.Response) string {
	s, _ := res.Map()["sessionToken"].(string)
	return s
}

func asUser(token string) map[string]string {
	return with(servertest.App(), "X-Parse-Session-Token", token)
}

// sessionCount counts a user's sessions with the master key.
func sessionCount(t testing.TB, srv *servertest.Server, userID string) int {
	t.Helper()
	res := srv.Do(t, "GET", "/sessions?count=1&limit=0&"+whereQ(map[string]any{"user": ptr("_User", userID)}), nil, servertest.Master())
	n, ok := res.Map()["count"].(float64)
	if res.Status != 200 || !ok {
		t.Fatalf("count sessions: %d %s", res.Status, res.Body)
	}
	return int(n)
}

func TestScenarioSignUp(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	var aliceID string
	runScenarios(t, srv, []scenario{
		{name: "sign up", method: "POST", path: "/users", headers: app,
			body:           map[string]any{"username": "alice", "password": password("alice"), "email": "alice@example.com", "age": 30},
			expectedStatus: 201, expectedHeaders: map[string]string{"Location": ""},
			notExpectedContains: []string{"password", "pw-", "email", "age"},
			check: func(t testing.TB, res servertest.Response) {
				m := res.Map()
				aliceID, _ = m["objectId"].(string)
				if !objectIDPattern.MatchString(aliceID) || !isoPattern.MatchString(fmt.Sprint(m["createdAt"])) {
					t.Errorf("reply %s", res.Body)
				}
				if !tokenPattern.MatchString(tokenOf(res)) {
					t.Errorf("sessionToken %q is not r: and 32 hex characters", tokenOf(res))
				}
				if loc := res.Header.Get("Location"); loc != srv.URL+"/users/"+aliceID {
					t.Errorf("Location %q", loc)
				}
				if len(m) != 3 {
					t.Errorf("reply holds more than objectId, createdAt, sessionToken: %s", res.Body)
				}
			}},
		{name: "username missing", method: "POST", path: "/users", headers: app, body: map[string]any{"password": "x"},
			expectedStatus: 400, check: msgIs(200, "bad or missing username")},
		{name: "username empty", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "", "password": "x"},
			expectedStatus: 400, check: codeIs(200)},
		{name: "username not a string", method: "POST", path: "/users", headers: app, body: map[string]any{"username": 12, "password": "x"},
			expectedStatus: 400},
		{name: "password missing", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "nopw"},
			expectedStatus: 400, check: msgIs(201, "password is required")},
		{name: "password empty", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "nopw", "password": ""},
			expectedStatus: 400, check: codeIs(201)},
		{name: "username taken", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "alice", "password": "x"},
			expectedStatus: 400, check: msgIs(202, "Account already exists for this username.")},
		{name: "username taken, other case", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "ALICE", "password": "x"},
			expectedStatus: 400, check: codeIs(202)},
		{name: "email taken", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "al2", "password": "x", "email": "alice@example.com"},
			expectedStatus: 400, check: msgIs(203, "Account already exists for this email address.")},
		{name: "email taken, other case", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "al3", "password": "x", "email": "Alice@Example.COM"},
			expectedStatus: 400, check: codeIs(203)},
		{name: "bad email", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "al4", "password": "x", "email": "not-an-email"},
			expectedStatus: 400, check: msgIs(125, "Email address format is invalid.")},
		{name: "clients cannot set emailVerified", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "al5", "password": "x", "emailVerified": true},
			expectedStatus: 400, check: codeIs(119)},
		{name: "internal keys refused", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "al6", "password": "x", "_hashed_password": "$2a$04$forged"},
			expectedStatus: 400, check: codeIs(105)},
		{name: "a 100-byte passphrase", method: "POST", path: "/users", headers: app,
			body: map[string]any{"username": "longpw", "password": strings.Repeat("correct horse ", 7) + "battery!"}, expectedStatus: 201},
		{name: "login with the long passphrase", method: "POST", path: "/login", headers: app,
			body: map[string]any{"username": "longpw", "password": strings.Repeat("correct horse ", 7) + "battery!"}, expectedStatus: 200},
		{name: "sign up through /classes/_User", method: "POST", path: "/classes/_User", headers: app,
			body: map[string]any{"username": "viaclasses", "password": password("viaclasses")}, expectedStatus: 201,
			check: func(t testing.TB, res servertest.Response) {
				if !tokenPattern.MatchString(tokenOf(res)) {
					t.Errorf("no session token: %s", res.Body)
				}
			}},
		{name: "X-Parse-Revocable-Session is harmless", method: "POST", path: "/users", headers: with(app, "X-Parse-Revocable-Session", "1"),
			body: map[string]any{"username": "revocable", "password": password("revocable")}, expectedStatus: 201,
			check: func(t testing.TB, res servertest.Response) {
				if !tokenPattern.MatchString(tokenOf(res)) {
					t.Errorf("token %q", tokenOf(res))
				}
			}},
	})
	// A new user is readable by everyone and writable by themselves.
	acl := mustGet(t, srv, "_User", aliceID)["ACL"]
	want := fmt.Sprint(map[string]any{"*": map[string]any{"read": true}, aliceID: map[string]any{"read": true, "write": true}})
	if fmt.Sprint(acl) != want {
		t.Errorf("default ACL %v, want %v", acl, want)
	}
}

func TestScenarioSignUpPrivateUsers(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.EnforcePrivateUsers = true })
	alice := srv.Do(t, "POST", "/users", map[string]any{"username": "alice", "password": password("alice")}, servertest.App())
	bob := srv.Do(t, "POST", "/users", map[string]any{"username": "bob", "password": password("bob")}, servertest.App())
	aliceID := alice.Map()["objectId"].(string)
	if acl := fmt.Sprint(mustGet(t, srv, "_User", aliceID)["ACL"]); acl != fmt.Sprint(map[string]any{aliceID: map[string]any{"read": true, "write": true}}) {
		t.Errorf("private user's ACL %s", acl)
	}
	runScenarios(t, srv, []scenario{
		{name: "others cannot read", path: "/users/" + aliceID, headers: asUser(tokenOf(bob)), expectedStatus: 404, check: codeIs(101)},
		{name: "the public cannot list", path: "/users", headers: servertest.App(), expectedStatus: 200, expectedContains: []string{`"results":[]`}},
		{name: "the user reads themselves", path: "/users/" + aliceID, headers: asUser(tokenOf(alice)), expectedStatus: 200},
	})
}

// TestScenarioSignUpRace: 20 concurrent sign-ups with one username (in
// different cases): exactly one wins, the others get 202.
func TestScenarioSignUpRace(t *testing.T) {
	srv := servertest.Start(t, nil)
	const n = 20
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "racer"
			if i%2 == 1 {
				name = "RACER"
			}
			res, err := tryDo(srv.URL+"/users", "POST", map[string]any{"username": name, "password": password("racer"), "email": fmt.Sprintf("r%d@example.com", i)}, servertest.App())
			if err != nil {
				codes[i] = err.Error()
				return
			}
			codes[i] = outcome(res)
		}()
	}
	wg.Wait()
	won := 0
	for i, c := range codes {
		switch c {
		case "201":
			won++
		case "400/202":
		default:
			t.Errorf("sign-up %d: %s", i, c)
		}
	}
	if won != 1 {
		t.Errorf("%d sign-ups won, want exactly 1: %v", won, codes)
	}
	res := srv.Do(t, "GET", "/users?count=1&limit=0", nil, servertest.Master())
	if res.Map()["count"] != 1.0 {
		t.Errorf("users stored: %s", res.Body)
	}
}

func TestScenarioLogin(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	app := servertest.App()
	numeric := w.signUpWith(t, "numeric", "12345678")
	locked := w.signUp(t, "locked")
	if res := srv.Do(t, "PUT", "/users/"+locked.userID, map[string]any{"ACL": map[string]any{}}, servertest.Master()); res.Status != 200 {
		t.Fatalf("lock: %d %s", res.Status, res.Body)
	}
	fullUser := func(t testing.TB, res servertest.Response) {
		m := res.Map()
		for _, k := range []string{"objectId", "username", "email", "createdAt", "updatedAt", "ACL"} {
			if _, ok := m[k]; !ok {
				t.Errorf("login reply lacks %s: %s", k, res.Body)
			}
		}
		if m["objectId"] != w.alice.userID || m["username"] != "alice" {
			t.Errorf("login reply for someone else: %s", res.Body)
		}
		tok := tokenOf(res)
		if !tokenPattern.MatchString(tok) || tok == w.alice.token {
			t.Errorf("login must open a new session, got token %q", tok)
		}
		if me := srv.Do(t, "GET", "/users/me", nil, asUser(tok)); me.Status != 200 {
			t.Errorf("the login token does not work: %d %s", me.Status, me.Body)
		}
	}
	wrong := msgIs(101, "Invalid username/password.")
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	runScenarios(t, srv, []scenario{
		{name: "POST", method: "POST", path: "/login", headers: app, body: map[string]any{"username": "alice", "password": password("alice")},
			expectedStatus: 200, notExpectedContains: []string{"password", "_hashed"}, check: fullUser},
		{name: "GET with query parameters", path: "/login?" + q("username", "alice", "password", password("alice")), headers: app,
			expectedStatus: 200, check: fullUser},
		{name: "GET with a numeric-looking password", path: "/login?" + q("username", "numeric", "password", "12345678"), headers: app,
			expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
				if res.Map()["objectId"] != numeric.userID {
					t.Errorf("%s", res.Body)
				}
			}},
		{name: "by email", method: "POST", path: "/login", headers: app, body: map[string]any{"email": "alice@example.com", "password": password("alice")},
			expectedStatus: 200, check: fullUser},
		{name: "email in the username field", method: "POST", path: "/login", headers: app, body: map[string]any{"username": "ALICE@example.com", "password": password("alice")},
			expectedStatus: 200, check: fullUser},
		{name: "username and email must both match", method: "POST", path: "/login", headers: app,
			body: map[string]any{"username": "alice", "email": "bob@example.com", "password": password("alice")}, expectedStatus: 404, check: wrong},
		{name: "a session token header is ignored", method: "POST", path: "/login", headers: with(app, "X-Parse-Session-Token", "r:bogus"),
			body: map[string]any{"username": "alice", "password": password("alice")}, expectedStatus: 200, check: fullUser},
		{name: "wrong password is 101 and HTTP 404", method: "POST", path: "/login", headers: app, body: map[string]any{"username": "alice", "password": "wrong-password"},
			expectedStatus: 404, check: wrong},
		{name: "unknown user", method: "POST", path: "/login", headers: app, body: map[string]any{"username": "nobody", "password": "whatever-pw"},
			expectedStatus: 404, check: wrong},
		{name: "usernames are case-sensitive", method: "POST", path: "/login", headers: app, body: map[string]any{"username": "ALICE", "password": password("alice")},
			expectedStatus: 404, check: wrong},
		{name: "no username or email", method: "POST", path: "/login", headers: app, body: map[string]any{"password": "x"},
			expectedStatus: 400, check: msgIs(200, "username/email is required.")},
		{name: "no password", method: "POST", path: "/login", headers: app, body: map[string]any{"username": "alice"},
			expectedStatus: 400, check: msgIs(201, "password is required.")},
		{name: "password not a string", method: "POST", path: "/login", headers: app, body: map[string]any{"username": "alice", "password": 12345678},
			expectedStatus: 404, check: wrong},
		{name: "username not a string", method: "POST", path: "/login", headers: app, body: map[string]any{"username": []any{"alice"}, "password": "x"},
			expectedStatus: 404, check: wrong},
		{name: "a locked user (ACL {}) cannot log in", method: "POST", path: "/login", headers: app, body: map[string]any{"username": "locked", "password": password("locked")},
			expectedStatus: 404, check: wrong},
	})

	// One session per user and installation: logging in again from the
	// same installation replaces the session.
	inst := with(app, "X-Parse-Installation-Id", "11111111-2222-3333-4444-555555555555")
	first := srv.Do(t, "POST", "/login", map[string]any{"username": "bob", "password": password("bob")}, inst)
	second := srv.Do(t, "POST", "/login", map[string]any{"username": "bob", "password": password("bob")}, inst)
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, asUser(tokenOf(first)))); got != "400/209" {
		t.Errorf("the replaced session still works: %s", got)
	}
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, asUser(tokenOf(second)))); got != "200" {
		t.Errorf("the new session: %s", got)
	}
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, w.bob.headers)); got != "200" {
		t.Errorf("bob's sign-up session (no installation) was revoked: %s", got)
	}
	res := srv.Do(t, "GET", "/sessions/me", nil, asUser(tokenOf(second)))
	if m := res.Map(); fmt.Sprint(m["createdWith"]) != fmt.Sprint(map[string]any{"action": "login", "authProvider": "password"}) ||
		m["installationId"] != "11111111-2222-3333-4444-555555555555" {
		t.Errorf("login session: %s", res.Body)
	}
}

// signUpWith signs up a user with a given password.
func (w *world) signUpWith(t testing.TB, name, pw string) caller {
	t.Helper()
	res := w.srv.Do(t, "POST", "/users", map[string]any{"username": name, "password": pw}, servertest.App())
	if res.Status != 201 {
		t.Fatalf("sign up %s: %d %s", name, res.Status, res.Body)
	}
	return caller{name: name, userID: res.Map()["objectId"].(string), token: tokenOf(res), headers: asUser(tokenOf(res))}
}

func TestScenarioLogoutAndMe(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	app := servertest.App()
	runScenarios(t, srv, []scenario{
		{name: "me", path: "/users/me", headers: w.alice.headers, expectedStatus: 200,
			expectedContains:    []string{`"username":"alice"`, `"email":"alice@example.com"`, `"sessionToken":"` + w.alice.token + `"`},
			notExpectedContains: []string{"password", "_hashed", w.bob.token}},
		{name: "me with a bad token", path: "/users/me", headers: asUser("r:0123456789abcdef0123456789abcdef"), expectedStatus: 400,
			check: msgIs(209, "invalid session token")},
		{name: "me without a token", path: "/users/me", headers: app, expectedStatus: 400, check: msgIs(209, "invalid session token")},
		{name: "me with the master key only", path: "/users/me", headers: servertest.Master(), expectedStatus: 400, check: codeIs(209)},
		{name: "a bad token elsewhere", path: "/classes/Thing", headers: asUser("r:nope"), expectedStatus: 400, check: msgIs(209, "Invalid session token")},
		{name: "logout without a token", method: "POST", path: "/logout", headers: app, expectedStatus: 200, expectedContains: []string{"{}"}},
		{name: "logout with a bad token", method: "POST", path: "/logout", headers: asUser("r:nope"), expectedStatus: 400, check: codeIs(209)},
		{name: "logout", method: "POST", path: "/logout", headers: w.alice.headers, expectedStatus: 200, expectedContains: []string{"{}"}},
		{name: "the token is gone", path: "/users/me", headers: w.alice.headers, expectedStatus: 400, check: msgIs(209, "invalid session token")},
		{name: "and refused everywhere", path: "/classes/Thing", headers: w.alice.headers, expectedStatus: 400, check: codeIs(209)},
		{name: "bob's session is untouched", path: "/users/me", headers: w.bob.headers, expectedStatus: 200},
	})
	if n := sessionCount(t, srv, w.alice.userID); n != 0 {
		t.Errorf("alice has %d sessions after logout", n)
	}
}

func TestScenarioUserReadWrite(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a, b := w.alice, w.bob
	runScenarios(t, srv, []scenario{
		{name: "get yourself: with your token", path: "/users/" + a.userID, headers: a.headers, expectedStatus: 200,
			expectedContains: []string{`"sessionToken":"` + a.token + `"`, "alice@example.com"}},
		{name: "get another: no token, no email", path: "/users/" + b.userID, headers: a.headers, expectedStatus: 200,
			expectedContains: []string{`"username":"bob"`}, notExpectedContains: []string{"sessionToken", "bob@example.com"}},
		{name: "public get", path: "/users/" + b.userID, headers: servertest.App(), expectedStatus: 200,
			notExpectedContains: []string{"sessionToken", "bob@example.com"}},
		{name: "unknown user", path: "/users/nosuchuser", headers: a.headers, expectedStatus: 404, check: codeIs(101)},
		{name: "list users", path: "/users?order=username", headers: a.headers, expectedStatus: 200,
			expectedContains:    []string{`"username":"alice"`, `"username":"bob"`, "alice@example.com"},
			notExpectedContains: []string{"bob@example.com", "sessionToken"}},
		{name: "update yourself", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"nick": "Al"},
			expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
				if m := res.Map(); len(m) != 1 || !isoPattern.MatchString(fmt.Sprint(m["updatedAt"])) {
					t.Errorf("update reply %s", res.Body)
				}
			}},
		{name: "update another", method: "PUT", path: "/users/" + b.userID, headers: a.headers, body: map[string]any{"nick": "x"},
			expectedStatus: 400, check: msgIs(206, "Cannot modify user "+b.userID+".")},
		{name: "update without a session", method: "PUT", path: "/users/" + b.userID, headers: servertest.App(), body: map[string]any{"nick": "x"},
			expectedStatus: 400, check: msgIs(206, "Cannot modify user "+b.userID+".")},
		{name: "master updates anyone", method: "PUT", path: "/users/" + b.userID, headers: servertest.Master(), body: map[string]any{"nick": "B"}, expectedStatus: 200},
		{name: "delete another", method: "DELETE", path: "/users/" + b.userID, headers: a.headers, expectedStatus: 400,
			check: msgIs(206, "Cannot modify user "+b.userID+".")},
		{name: "delete without a session", method: "DELETE", path: "/users/" + b.userID, headers: servertest.App(), expectedStatus: 400,
			check: msgIs(206, "Insufficient auth to delete user")},
		{name: "username to a used one", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"username": "Bob"},
			expectedStatus: 400, check: codeIs(202)},
		{name: "email to a used one", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"email": "BOB@example.com"},
			expectedStatus: 400, check: codeIs(203)},
		{name: "email to a bad one", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"email": "nope"},
			expectedStatus: 400, check: codeIs(125)},
		{name: "username to empty", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"username": ""},
			expectedStatus: 400, check: codeIs(200)},
		{name: "password to empty", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"password": ""},
			expectedStatus: 400, check: codeIs(201)},
		{name: "emailVerified by a client", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"emailVerified": true},
			expectedStatus: 400, check: codeIs(119)},
		{name: "your own name in another case", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"email": "ALICE@example.com"},
			expectedStatus: 200},
		{name: "username to an unused one", method: "PUT", path: "/users/" + a.userID, headers: a.headers, body: map[string]any{"username": "alicia"},
			expectedStatus: 200},
		{name: "login with the new name", method: "POST", path: "/login", headers: servertest.App(), body: map[string]any{"username": "alicia", "password": password("alice")},
			expectedStatus: 200},
		{name: "the old name is free", method: "POST", path: "/login", headers: servertest.App(), body: map[string]any{"username": "alice", "password": password("alice")},
			expectedStatus: 404, check: codeIs(101)},
		{name: "the old name can be taken", method: "POST", path: "/users", headers: servertest.App(), body: map[string]any{"username": "alice", "password": password("alice2")},
			expectedStatus: 201},
	})

	// Deleting a user deletes their sessions.
	login := srv.Do(t, "POST", "/login", map[string]any{"username": "carol", "password": password("carol")}, servertest.App())
	if n := sessionCount(t, srv, w.carol.userID); n != 2 {
		t.Fatalf("carol has %d sessions, want 2", n)
	}
	runScenarios(t, srv, []scenario{
		{name: "delete yourself", method: "DELETE", path: "/users/" + w.carol.userID, headers: w.carol.headers, expectedStatus: 200, expectedContains: []string{"{}"}},
		{name: "every token of the deleted user dies", path: "/users/me", headers: asUser(tokenOf(login)), expectedStatus: 400, check: codeIs(209)},
		{name: "the deleted user cannot log in", method: "POST", path: "/login", headers: servertest.App(),
			body: map[string]any{"username": "carol", "password": password("carol")}, expectedStatus: 404, check: codeIs(101)},
		{name: "master deletes anyone", method: "DELETE", path: "/users/" + w.dave.userID, headers: servertest.Master(), expectedStatus: 200},
	})
	for _, id := range []string{w.carol.userID, w.dave.userID} {
		if n := sessionCount(t, srv, id); n != 0 {
			t.Errorf("a deleted user keeps %d sessions", n)
		}
	}
}

// TestScenarioPasswordChange: a new password revokes every session of the
// user; the user who changed it gets a new token.
func TestScenarioPasswordChange(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a := w.alice
	second := tokenOf(srv.Do(t, "POST", "/login", map[string]any{"username": "alice", "password": password("alice")}, servertest.App()))
	res := srv.Do(t, "PUT", "/users/"+a.userID, map[string]any{"password": "pw-alice-N3w!"}, a.headers)
	if res.Status != 200 {
		t.Fatalf("password change: %d %s", res.Status, res.Body)
	}
	fresh := tokenOf(res)
	if !tokenPattern.MatchString(fresh) || fresh == a.token || fresh == second {
		t.Fatalf("password change reply needs a new sessionToken: %s", res.Body)
	}
	runScenarios(t, srv, []scenario{
		{name: "the session used is revoked", path: "/users/me", headers: a.headers, expectedStatus: 400, check: codeIs(209)},
		{name: "other sessions are revoked", path: "/users/me", headers: asUser(second), expectedStatus: 400, check: codeIs(209)},
		{name: "the new token works", path: "/users/me", headers: asUser(fresh), expectedStatus: 200},
		{name: "the old password fails", method: "POST", path: "/login", headers: servertest.App(), body: map[string]any{"username": "alice", "password": password("alice")},
			expectedStatus: 404, check: codeIs(101)},
		{name: "the new password works", method: "POST", path: "/login", headers: servertest.App(), body: map[string]any{"username": "alice", "password": "pw-alice-N3w!"},
			expectedStatus: 200},
	})
	if res := srv.Do(t, "GET", "/sessions/me", nil, asUser(fresh)); fmt.Sprint(res.Map()["createdWith"]) != fmt.Sprint(map[string]any{"action": "signup", "authProvider": "password"}) {
		t.Errorf("password-change session: %s", res.Body)
	}

	// Through /classes/_User the same rules hold.
	b := w.bob
	res = srv.Do(t, "PUT", "/classes/_User/"+b.userID, map[string]any{"password": "pw-bob-N3w!"}, b.headers)
	if res.Status != 200 || !tokenPattern.MatchString(tokenOf(res)) {
		t.Errorf("password change through /classes/_User: %d %s", res.Status, res.Body)
	}
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, b.headers)); got != "400/209" {
		t.Errorf("bob's old session after a change through /classes/_User: %s", got)
	}

	// The master key resetting a password revokes the sessions too; it gets no token.
	c := w.carol
	res = srv.Do(t, "PUT", "/users/"+c.userID, map[string]any{"password": "pw-carol-R3set!"}, servertest.Master())
	if res.Status != 200 || tokenOf(res) != "" {
		t.Errorf("master password reset: %d %s", res.Status, res.Body)
	}
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, c.headers)); got != "400/209" {
		t.Errorf("carol's session after a master reset: %s", got)
	}
	// Other changes keep sessions.
	if res := srv.Do(t, "PUT", "/users/"+w.dave.userID, map[string]any{"nick": "d"}, w.dave.headers); res.Status != 200 || tokenOf(res) != "" {
		t.Errorf("a plain update: %d %s", res.Status, res.Body)
	}
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, w.dave.headers)); got != "200" {
		t.Errorf("dave's session after a plain update: %s", got)
	}

	// Inside an all-or-nothing batch the same rules hold: dave's old
	// session ends and the batch item's reply carries his new token.
	res = srv.Do(t, "POST", "/batch", map[string]any{"transaction": true, "requests": []any{
		map[string]any{"method": "PUT", "path": "/parse/classes/_User/" + w.dave.userID, "body": map[string]any{"password": "pw-dave-N3w!"}},
		map[string]any{"method": "PUT", "path": "/parse/classes/_User/" + w.dave.userID, "body": map[string]any{"nick": "dd"}},
	}}, w.dave.headers)
	items, _ := res.JSON().([]any)
	if res.Status != 200 || len(items) != 2 {
		t.Fatalf("password change in a transaction: %d %s", res.Status, res.Body)
	}
	success, _ := items[0].(map[string]any)["success"].(map[string]any)
	batchToken, _ := success["sessionToken"].(string)
	if !tokenPattern.MatchString(batchToken) {
		t.Errorf("the password change's batch reply needs a new sessionToken: %s", res.Body)
	}
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, w.dave.headers)); got != "400/209" {
		t.Errorf("dave's old session after a change in a transaction: %s", got)
	}
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, asUser(batchToken))); got != "200" {
		t.Errorf("dave's token from the transaction: %s", got)
	}
}

func TestScenarioVerifyPassword(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	before := sessionCount(t, srv, w.alice.userID)
	noToken := func(t testing.TB, res servertest.Response) {
		if m := res.Map(); m["objectId"] != w.alice.userID || m["sessionToken"] != nil {
			t.Errorf("verifyPassword reply: %s", res.Body)
		}
	}
	runScenarios(t, srv, []scenario{
		{name: "POST", method: "POST", path: "/verifyPassword", headers: servertest.App(), body: map[string]any{"username": "alice", "password": password("alice")},
			expectedStatus: 200, check: noToken, notExpectedContains: []string{"password"}},
		{name: "GET", path: "/verifyPassword?username=alice&password=" + url.QueryEscape(password("alice")), headers: servertest.App(),
			expectedStatus: 200, check: noToken},
		{name: "wrong", method: "POST", path: "/verifyPassword", headers: servertest.App(), body: map[string]any{"username": "alice", "password": "wrong-password"},
			expectedStatus: 404, check: codeIs(101)},
		{name: "no password", method: "POST", path: "/verifyPassword", headers: servertest.App(), body: map[string]any{"username": "alice"},
			expectedStatus: 400, check: codeIs(201)},
	})
	if after := sessionCount(t, srv, w.alice.userID); after != before {
		t.Errorf("verifyPassword opened a session: %d → %d", before, after)
	}
}

func TestScenarioUpgradeToRevocableSession(t *testing.T) {
	w := newWorld(t, nil)
	runScenarios(t, w.srv, []scenario{
		{name: "no token", method: "POST", path: "/upgradeToRevocableSession", headers: servertest.App(), expectedStatus: 404, check: msgIs(101, "invalid session")},
		{name: "already revocable", method: "POST", path: "/upgradeToRevocableSession", headers: w.alice.headers, expectedStatus: 400,
			check: msgIs(209, "invalid legacy session token")},
		{name: "unknown token", method: "POST", path: "/upgradeToRevocableSession", headers: asUser("legacytoken"), expectedStatus: 400, check: codeIs(209)},
	})
}

// TestScenarioSessionExpiry: with sessionLength 1 s a token stops working
// once the (injected) clock has moved past that second.
func TestScenarioSessionExpiry(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	srv := servertest.Start(t, func(o *config.Options) {
		o.SessionLength = time.Second
		o.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	})
	res := srv.Do(t, "POST", "/users", map[string]any{"username": "brief", "password": password("brief")}, servertest.App())
	tok := tokenOf(res)
	if got := outcome(srv.Do(t, "GET", "/users/me", nil, asUser(tok))); got != "200" {
		t.Fatalf("fresh token: %s", got)
	}
	mu.Lock()
	now = now.Add(1100 * time.Millisecond)
	mu.Unlock()
	runScenarios(t, srv, []scenario{
		{name: "expired", path: "/classes/Thing", headers: asUser(tok), expectedStatus: 400, check: msgIs(209, "Session token is expired.")},
		{name: "expired on /users/me", path: "/users/me", headers: asUser(tok), expectedStatus: 400, check: msgIs(209, "invalid session token")},
		{name: "expired on logout", method: "POST", path: "/logout", headers: asUser(tok), expectedStatus: 400, check: codeIs(209)},
		// /sessions/me looks the token up even when it has expired.
		{name: "the session can still be inspected", path: "/sessions/me", headers: asUser(tok), expectedStatus: 200, expectedContains: []string{tok}},
		{name: "a new login works", method: "POST", path: "/login", headers: servertest.App(), body: map[string]any{"username": "brief", "password": password("brief")},
			expectedStatus: 200},
	})
}

// TestScenarioReadOnlyMasterKeyAuth: on users, roles and sessions the
// read-only master key reads like the master key; every write fails 119.
func TestScenarioReadOnlyMasterKeyAuth(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	ro := w.ro.headers
	hidden := mustCreate(t, srv, "RoThing", map[string]any{"n": 1, "ACL": map[string]any{}})
	sess := w.sessionID(t, w.alice)
	forbidden := codeIs(119)
	runScenarios(t, srv, []scenario{
		{name: "reads hidden objects", path: "/classes/RoThing/" + hidden, headers: ro, expectedStatus: 200},
		{name: "reads emails", path: "/users/" + w.alice.userID, headers: ro, expectedStatus: 200, expectedContains: []string{"alice@example.com"}},
		{name: "reads sessions", path: "/sessions", headers: ro, expectedStatus: 200, expectedContains: []string{w.alice.token, w.bob.token}},
		{name: "reads roles", path: "/roles", headers: ro, expectedStatus: 200, expectedContains: []string{"Parent"}},
		{name: "create", method: "POST", path: "/classes/RoThing", headers: ro, body: map[string]any{"n": 2}, expectedStatus: 400, check: forbidden},
		{name: "update", method: "PUT", path: "/classes/RoThing/" + hidden, headers: ro, body: map[string]any{"n": 2}, expectedStatus: 400, check: forbidden},
		{name: "delete", method: "DELETE", path: "/classes/RoThing/" + hidden, headers: ro, expectedStatus: 400, check: forbidden},
		{name: "sign up", method: "POST", path: "/users", headers: ro, body: map[string]any{"username": "x", "password": "x"}, expectedStatus: 400, check: forbidden},
		{name: "update a user", method: "PUT", path: "/users/" + w.alice.userID, headers: ro, body: map[string]any{"nick": "x"}, expectedStatus: 400, check: forbidden},
		{name: "delete a user", method: "DELETE", path: "/users/" + w.alice.userID, headers: ro, expectedStatus: 400, check: forbidden},
		{name: "create a role", method: "POST", path: "/roles", headers: ro, body: map[string]any{"name": "X", "ACL": map[string]any{}}, expectedStatus: 400, check: forbidden},
		{name: "update a role", method: "PUT", path: "/roles/" + w.parentRoleID, headers: ro, body: map[string]any{"users": addRelation(ptr("_User", w.bob.userID))}, expectedStatus: 400, check: forbidden},
		{name: "delete a role", method: "DELETE", path: "/roles/" + w.parentRoleID, headers: ro, expectedStatus: 400, check: forbidden},
		{name: "create a session", method: "POST", path: "/sessions", headers: ro, body: map[string]any{"user": ptr("_User", w.alice.userID)}, expectedStatus: 400, check: forbidden},
		{name: "update a session", method: "PUT", path: "/sessions/" + sess, headers: ro, body: map[string]any{"note": "x"}, expectedStatus: 400, check: forbidden},
		{name: "delete a session", method: "DELETE", path: "/sessions/" + sess, headers: ro, expectedStatus: 400, check: forbidden},
		{name: "batch", method: "POST", path: "/batch", headers: ro, body: map[string]any{"requests": []any{
			breq("POST", "/parse/classes/RoThing", map[string]any{"n": 3}), breq("GET", "/parse/classes/RoThing/"+hidden, nil)}},
			expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
				if got := batchOutcome(t, res); got != "items:119,0" {
					t.Errorf("batch %s", got)
				}
			}},
		{name: "transaction", method: "POST", path: "/batch", headers: ro, body: map[string]any{"transaction": true, "requests": []any{
			breq("POST", "/parse/classes/RoThing", map[string]any{"n": 3})}}, expectedStatus: 400, check: forbidden},
	})
	if got := outcome(srv.Do(t, "GET", "/classes/RoThing/"+hidden, nil, servertest.Master())); got != "200" {
		t.Errorf("the object the read-only key tried to delete: %s", got)
	}
}

// TestScenarioWrongKeys: wrong keys are refused with 403 (the comparison
// itself is constant-time: subtle.ConstantTimeCompare in transport).
func TestScenarioWrongKeys(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.ReadOnlyMasterKey = roMasterKey
		o.JavaScriptKey = "test-js"
	})
	hidden := mustCreate(t, srv, "KeyThing", map[string]any{"ACL": map[string]any{}})
	js := with(servertest.App(), "X-Parse-Javascript-Key", "test-js")
	runScenarios(t, srv, []scenario{
		{name: "wrong app id", path: "/classes/KeyThing", headers: map[string]string{"X-Parse-Application-Id": "nope"}, expectedStatus: 403, expectedContains: []string{`"error":"unauthorized"`}},
		{name: "wrong javascript key", path: "/classes/KeyThing", headers: with(servertest.App(), "X-Parse-Javascript-Key", "nope"), expectedStatus: 403},
		{name: "no client key", path: "/classes/KeyThing", headers: servertest.App(), expectedStatus: 403},
		{name: "wrong master key alone", path: "/classes/KeyThing", headers: with(servertest.App(), "X-Parse-Master-Key", "nope"), expectedStatus: 403},
		{name: "master key one character off", path: "/classes/KeyThing", headers: with(servertest.App(), "X-Parse-Master-Key", servertest.MasterKey+"x"), expectedStatus: 403},
		{name: "wrong master key is no master key", path: "/classes/KeyThing/" + hidden, headers: with(js, "X-Parse-Master-Key", "nope"), expectedStatus: 404, check: codeIs(101)},
		{name: "wrong basic-auth master key", path: "/classes/KeyThing", headers: map[string]string{"Authorization": basic(servertest.AppID, "nope")}, expectedStatus: 403},
		{name: "right key", path: "/classes/KeyThing/" + hidden, headers: servertest.Master(), expectedStatus: 200},
		{name: "read-only key", path: "/classes/KeyThing/" + hidden, headers: with(servertest.App(), "X-Parse-Master-Key", roMasterKey), expectedStatus: 200},
	})
}

// TestScenarioLoginAs: POST /loginAs opens a session for any user on the
// master key's word, with the userId in the body or the URL; the session
// says it was made with the master key.
func TestScenarioLoginAs(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	m := servertest.Master()
	asAlice := func(t testing.TB, res servertest.Response) {
		if res.Map()["objectId"] != w.alice.userID || res.Map()["username"] != "alice" {
			t.Fatalf("logged in as someone else: %s", res.Body)
		}
		tok := tokenOf(res)
		me := srv.Do(t, "GET", "/users/me", nil, asUser(tok))
		if me.Status != 200 || me.Map()["objectId"] != w.alice.userID {
			t.Errorf("the token does not work: %d %s", me.Status, me.Body)
		}
		sess := srv.Do(t, "GET", "/sessions/me", nil, asUser(tok)).Map()
		if cw, _ := sess["createdWith"].(map[string]any); cw["action"] != "login" || cw["authProvider"] != "masterkey" {
			t.Errorf("createdWith %v", sess["createdWith"])
		}
	}
	runScenarios(t, srv, []scenario{
		{name: "in the body", method: "POST", path: "/loginAs", headers: m, body: map[string]any{"userId": w.alice.userID},
			expectedStatus: 200, notExpectedContains: []string{"_hashed", "password"}, check: asAlice},
		{name: "in the URL", method: "POST", path: "/loginAs?userId=" + w.alice.userID, headers: m, expectedStatus: 200, check: asAlice},
		{name: "without the master key", method: "POST", path: "/loginAs", headers: servertest.App(), body: map[string]any{"userId": w.alice.userID},
			expectedStatus: 400, check: msgIs(119, "master key is required")},
		{name: "no userId", method: "POST", path: "/loginAs", headers: m, body: map[string]any{}, expectedStatus: 400,
			check: msgIs(162, "userId must not be empty, null, or undefined")},
		{name: "an unknown user", method: "POST", path: "/loginAs", headers: m, body: map[string]any{"userId": "nobody"}, expectedStatus: 404,
			check: msgIs(101, "user not found")},
	})
}

// TestScenarioUserKeepsOwnAccess: a client never locks a user out of its
// own object: an ACL it sends at sign-up or on update gets the user's own
// read and write back (Parse's rule), so a user signed up with ACL {} logs
// in; the master key still can lock a user out.
func TestScenarioUserKeepsOwnAccess(t *testing.T) {
	srv := servertest.Start(t, nil)
	app := servertest.App()
	res := srv.Do(t, "POST", "/users", map[string]any{"username": "sealed", "password": "pw-sealed-1", "ACL": map[string]any{}}, app)
	if res.Status != 201 {
		t.Fatalf("sign-up: %d %s", res.Status, res.Body)
	}
	id, token := res.Map()["objectId"].(string), tokenOf(res)
	ownOnly := map[string]any{id: map[string]any{"read": true, "write": true}}
	aclOf := func() any {
		t.Helper()
		got := srv.Do(t, "GET", "/users/"+id, nil, servertest.Master())
		return got.Map()["ACL"]
	}
	if got := aclOf(); fmt.Sprint(got) != fmt.Sprint(ownOnly) {
		t.Errorf("ACL after sign-up with {}: %v, want %v", got, ownOnly)
	}
	if res := srv.Do(t, "POST", "/login", map[string]any{"username": "sealed", "password": "pw-sealed-1"}, app); res.Status != 200 {
		t.Errorf("log-in of a user signed up with ACL {}: %d %s", res.Status, res.Body)
	}
	res = srv.Do(t, "PUT", "/users/"+id, map[string]any{"ACL": map[string]any{"*": map[string]any{"read": true}}}, asUser(token))
	if res.Status != 200 {
		t.Fatalf("update own ACL: %d %s", res.Status, res.Body)
	}
	want := map[string]any{"*": map[string]any{"read": true}, id: map[string]any{"read": true, "write": true}}
	if got := aclOf(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ACL after the user dropped itself: %v, want %v", got, want)
	}
	if res := srv.Do(t, "PUT", "/users/"+id, map[string]any{"ACL": map[string]any{}}, servertest.Master()); res.Status != 200 {
		t.Fatalf("lock with the master key: %d %s", res.Status, res.Body)
	}
	if res := srv.Do(t, "POST", "/login", map[string]any{"username": "sealed", "password": "pw-sealed-1"}, app); res.Status != 404 || res.Map()["code"] != float64(101) {
		t.Errorf("log-in of a user the master key locked out: %d %s", res.Status, res.Body)
	}
}

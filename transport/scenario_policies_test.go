package transport_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/email/emailtest"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/server/servertest"
)

// Account policies: passwordPolicy, accountLockout, expireInactiveSessions,
// revokeSessionOnPasswordReset, and the gates on unverified emails.

func TestScenarioPasswordPolicyAndLockout(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	clock := newClock()
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
		o.Now = clock.Now
		o.Accounts.VerifyUserEmails = false
		o.Accounts.PasswordPolicy = config.PasswordPolicy{ValidatorPattern: `^.{10,}$`, ValidationError: "Use at least 10 characters.",
			DoNotAllowUsername: true, MaxPasswordAge: 1, MaxPasswordHistory: 2, ResetTokenValidityDuration: time.Hour}
		o.Accounts.AccountLockout = config.AccountLockout{Duration: 1, Threshold: 2, UnlockOnPasswordReset: true}
		o.Accounts.ExpireInactiveSessions = false
		o.Accounts.RevokeSessionOnPasswordReset = false
	}))
	app := servertest.App()
	locked := msgIs(101, "Your account is locked due to multiple failed login attempts. Please try again after 1 minute(s)")
	invalid := msgIs(101, "Invalid username/password.")
	var daveID, token string
	keepToken := func(t testing.TB, res servertest.Response) {
		if tok := tokenOf(res); tok != "" {
			token = tok
		}
	}
	changePassword := func(name, pw string, status int, check func(testing.TB, servertest.Response)) scenario {
		return scenario{name: name, method: "PUT", path: "/users/{dave}", body: map[string]any{"password": pw},
			expectedStatus: status, check: check}
	}
	login := func(name, pw string, status int, check func(testing.TB, servertest.Response)) scenario {
		return scenario{name: name, method: "POST", path: "/login", headers: app, body: loginBody("dave", pw),
			expectedStatus: status, check: check}
	}
	run := func(table []scenario) {
		t.Helper()
		for _, sc := range table {
			sc.path = strings.ReplaceAll(sc.path, "{dave}", daveID)
			if sc.headers == nil {
				sc.headers = asUser(token)
			}
			t.Run(sc.name, func(t *testing.T) { sc.run(t, srv) })
		}
	}
	run([]scenario{
		{name: "pattern", method: "POST", path: "/users", headers: app, body: map[string]any{"username": "dave", "password": "short"},
			expectedStatus: 400, check: msgIs(142, "Use at least 10 characters.")},
		{name: "username in password", method: "POST", path: "/users", headers: app,
			body: map[string]any{"username": "dave", "password": "dave-is-long-1"}, expectedStatus: 400,
			check: msgIs(142, "Password cannot contain your username.")},
		{name: "sign up", method: "POST", path: "/users", headers: app,
			body:           map[string]any{"username": "dave", "password": "first-Passw0rd", "email": "dave@example.com"},
			expectedStatus: 201, check: func(t testing.TB, res servertest.Response) {
				daveID = res.Map()["objectId"].(string)
				keepToken(t, res)
			}},
	})
	run([]scenario{
		{name: "session never expires", method: "GET", path: "/sessions/me", expectedStatus: 200,
			notExpectedContains: []string{"expiresAt"}},
		changePassword("second password", "second-Passw0rd", 200, keepToken),
		changePassword("first again is in the history", "first-Passw0rd", 400,
			msgIs(142, "New password should not be the same as last 2 passwords.")),
		changePassword("current one too", "second-Passw0rd", 400, codeIs(142)),
		changePassword("third password", "third-Passw0rd", 200, keepToken),
		changePassword("first is out of the history", "first-Passw0rd", 200, keepToken),
	})
	updatedAt := userField(t, srv, daveID)["updatedAt"]
	run([]scenario{
		login("wrong once", "nope-nope-nope", 404, invalid),
		login("wrong twice", "nope-nope-nope", 404, invalid),
		login("locked, even with the right password", "first-Passw0rd", 404, locked),
	})
	if now := userField(t, srv, daveID)["updatedAt"]; now != updatedAt {
		t.Errorf("failed logins moved updatedAt from %v to %v", updatedAt, now)
	}
	clock.Add(61 * time.Second)
	run([]scenario{
		login("unlocked after the duration", "first-Passw0rd", 200, keepToken),
		login("count starts over: wrong once", "nope-nope-nope", 404, invalid),
		login("wrong twice", "nope-nope-nope", 404, invalid),
		login("wrong thrice", "nope-nope-nope", 404, locked),
		{name: "reset request", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{"email": "dave@example.com"}, expectedStatus: 200},
	})
	link := mailedLink(t, relay, "dave@example.com", "request_password_reset")
	token0 := strings.SplitN(link, "token=", 2)[1]
	action := srv.URL + "/apps/" + servertest.AppID + "/request_password_reset"
	redirectsTo(t, "POST", action, url.Values{"token": {token0}, "new_password": {"tiny"}}, "choose_password.html",
		map[string]string{"error": "Use at least 10 characters."})
	redirectsTo(t, "POST", action, url.Values{"token": {token0}, "new_password": {"fourth-Passw0rd"}}, "password_reset_success.html", nil)
	run([]scenario{
		{name: "sessions survive the reset", method: "GET", path: "/users/me", expectedStatus: 200},
		login("the reset unlocked the account", "fourth-Passw0rd", 200, keepToken),
		{name: "another reset request", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{"email": "dave@example.com"}, expectedStatus: 200},
	})
	link = mailedLink(t, relay, "dave@example.com", "request_password_reset")
	clock.Add(2 * time.Hour)
	redirectsTo(t, "GET", link, nil, "invalid_link.html", nil)
	clock.Add(23 * time.Hour)
	run([]scenario{
		login("the password has expired", "fourth-Passw0rd", 404, msgIs(101, "Your password has expired. Please reset your password.")),
	})
}

func TestScenarioUnverifiedEmailGates(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	clock := newClock()
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) {
		o.Now = clock.Now
		o.Accounts.PreventLoginWithUnverifiedEmail = true
		o.Accounts.EmailVerifyTokenValidityDuration = time.Hour
		o.Accounts.EmailVerifyTokenReuseIfValid = true
		o.Accounts.CustomPages.VerifyEmailSuccess = "https://app.example/verified"
	}))
	app := servertest.App()
	var first string
	runScenarios(t, srv, []scenario{
		{name: "sign up gets no session", method: "POST", path: "/users", headers: app,
			body:           map[string]any{"username": "erin", "password": password("erin"), "email": "erin@example.com"},
			expectedStatus: 201, notExpectedContains: []string{"sessionToken"},
			check: func(t testing.TB, res servertest.Response) {
				first = mailedLink(t, relay, "erin@example.com", "verify_email")
			}},
		{name: "login refused", method: "POST", path: "/login", headers: app, body: loginBody("erin", password("erin")),
			expectedStatus: 400, check: msgIs(205, "User email is not verified.")},
		{name: "the master key may log in", method: "POST", path: "/login", headers: servertest.Master(),
			body: loginBody("erin", password("erin")), expectedStatus: 200},
		{name: "a user without email has no verified email", method: "POST", path: "/users", headers: app,
			body:           map[string]any{"username": "ian", "password": password("ian")},
			expectedStatus: 201, notExpectedContains: []string{"sessionToken"}},
		{name: "and cannot log in", method: "POST", path: "/login", headers: app, body: loginBody("ian", password("ian")),
			expectedStatus: 400, check: codeIs(205)},
		{name: "a new link repeats the valid token", method: "POST", path: "/verificationEmailRequest", headers: app,
			body: map[string]any{"email": "erin@example.com"}, expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) {
				if again := mailedLink(t, relay, "erin@example.com", "verify_email"); again != first {
					t.Errorf("link %s, want the still valid %s", again, first)
				}
			}},
	})
	clock.Add(time.Hour + time.Second)
	redirectsTo(t, "GET", first, nil, "invalid_verification_link.html", nil)
	res := srv.Do(t, "POST", "/verificationEmailRequest", map[string]any{"email": "erin@example.com"}, app)
	if res.Status != 200 {
		t.Fatalf("new link: %d %s", res.Status, res.Body)
	}
	fresh := mailedLink(t, relay, "erin@example.com", "verify_email")
	if fresh == first {
		t.Error("an expired token was sent again")
	}
	loc := redirectsTo(t, "GET", fresh, nil, "https://app.example/verified?", map[string]string{"username": "erin", "id": servertest.AppID})
	if !strings.HasPrefix(loc, "https://app.example/verified?") {
		t.Errorf("custom page %s", loc)
	}
	runScenarios(t, srv, []scenario{
		{name: "login after verification", method: "POST", path: "/login", headers: app, body: loginBody("erin", password("erin")),
			expectedStatus: 200},
	})
}

func TestScenarioSignupGateOnly(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	srv := servertest.Start(t, withMail(relay, func(o *config.Options) { o.Accounts.PreventSignupWithUnverifiedEmail = true }))
	app := servertest.App()
	runScenarios(t, srv, []scenario{
		{name: "sign up gets no session", method: "POST", path: "/users", headers: app,
			body:           map[string]any{"username": "finn", "password": password("finn"), "email": "finn@example.com"},
			expectedStatus: 201, notExpectedContains: []string{"sessionToken"}},
		{name: "login is allowed", method: "POST", path: "/login", headers: app, body: loginBody("finn", password("finn")),
			expectedStatus: 200},
		{name: "a user without email gets a session", method: "POST", path: "/users", headers: app,
			body: map[string]any{"username": "gus", "password": password("gus")}, expectedStatus: 201, expectedContains: []string{"sessionToken"}},
	})
	mailedLink(t, relay, "finn@example.com", "verify_email")
}

// TestScenarioBookkeepingRunsNoTriggers: lockout counts and reset tokens
// are the server's bookkeeping: _User triggers do not see them, while a
// user change the flows make (emailVerified) runs them as any update.
func TestScenarioBookkeepingRunsNoTriggers(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	var saves atomic.Int64
	reg := cloud.New(nil, 0)
	reg.BeforeSave("_User", func(context.Context, *cloud.TriggerRequest) error { saves.Add(1); return nil })
	srv := servertest.StartCloud(t, nil, reg, withMail(relay, func(o *config.Options) {
		o.Accounts.AccountLockout = config.AccountLockout{Duration: 5, Threshold: 3}
	}))
	app := servertest.App()
	runScenarios(t, srv, []scenario{
		{name: "sign up", method: "POST", path: "/users", headers: app, expectedStatus: 201,
			body: map[string]any{"username": "jo", "password": password("jo"), "email": "jo@example.com"}},
		{name: "failed login", method: "POST", path: "/login", headers: app, body: loginBody("jo", "wrong"), expectedStatus: 404},
		{name: "good login", method: "POST", path: "/login", headers: app, body: loginBody("jo", password("jo")), expectedStatus: 200},
		{name: "reset request", method: "POST", path: "/requestPasswordReset", headers: app,
			body: map[string]any{"email": "jo@example.com"}, expectedStatus: 200},
	})
	if n := saves.Load(); n != 1 {
		t.Errorf("beforeSave ran %d times, want once (the sign-up)", n)
	}
	// Two emails are under way, in either order.
	verify := ""
	for range 2 {
		if link := linkPattern.FindString(relay.Next(t).Text); strings.Contains(link, "/verify_email?") {
			verify = link
		}
	}
	redirectsTo(t, "GET", verify, nil, "verify_email_success.html", nil)
	if n := saves.Load(); n != 2 {
		t.Errorf("beforeSave ran %d times, want twice (sign-up, verification)", n)
	}
}

// TestScenarioExtendSessionOnUse: with extendSessionOnUse a session used
// past half its life moves its expiry to sessionLength from then; used
// earlier it keeps it; without the option it expires.
func TestScenarioExtendSessionOnUse(t *testing.T) {
	const length = 100 * time.Second
	for _, extend := range []bool{true, false} {
		t.Run(fmt.Sprintf("extendSessionOnUse=%v", extend), func(t *testing.T) {
			clock := newClock()
			srv := servertest.Start(t, func(o *config.Options) {
				o.Now = clock.Now
				o.SessionLength = length
				o.ExtendSessionOnUse = extend
			})
			_, token := signUp(t, srv, "erin", "")
			expiry := func() string {
				res := srv.Do(t, "GET", "/sessions/me", nil, asUser(token))
				exp, _ := res.Map()["expiresAt"].(map[string]any)
				return fmt.Sprint(exp["iso"])
			}
			first := expiry()
			clock.Add(length / 4)
			if got := expiry(); got != first {
				t.Fatalf("used before half its life: expiry %s, was %s", got, first)
			}
			clock.Add(length / 2) // three quarters gone
			now := clock.Now()
			me := srv.Do(t, "GET", "/users/me", nil, asUser(token))
			if me.Status != 200 {
				t.Fatalf("users/me: %d %s", me.Status, me.Body)
			}
			want := first
			if extend {
				want = schema.FormatTime(now.Add(length))
			}
			if got := expiry(); got != want {
				t.Fatalf("after a use past half its life: expiry %s, want %s", got, want)
			}
			clock.Add(length/2 + time.Second)
			res := srv.Do(t, "GET", "/users/me", nil, asUser(token))
			if alive := res.Status == 200; alive != extend {
				t.Errorf("half a length later: %d %s (extended %v)", res.Status, res.Body, extend)
			}
		})
	}
}

// TestScenarioConvertToLowercase: with convertUsernameToLowercase and
// convertEmailToLowercase, sign-up and updates store both lower-cased, and
// log-in finds the user whatever the case typed.
func TestScenarioConvertToLowercase(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.ConvertUsernameToLowercase = true
		o.ConvertEmailToLowercase = true
	})
	app, m := servertest.App(), servertest.Master()
	res := srv.Do(t, "POST", "/users", map[string]any{"username": "MiXeD", "password": password("mixed"), "email": "MiXeD@Example.COM"}, app)
	if res.Status != 201 {
		t.Fatalf("sign up: %d %s", res.Status, res.Body)
	}
	id := res.Map()["objectId"].(string)
	stored := srv.Do(t, "GET", "/users/"+id, nil, m).Map()
	if stored["username"] != "mixed" || stored["email"] != "mixed@example.com" {
		t.Errorf("stored %v / %v, want both lower-cased", stored["username"], stored["email"])
	}
	for _, name := range []string{"MIXED", "mixed", "MiXeD"} {
		if r := srv.Do(t, "POST", "/login", loginBody(name, password("mixed")), app); r.Status != 200 {
			t.Errorf("log-in as %q: %d %s", name, r.Status, r.Body)
		}
	}
	srv.Do(t, "PUT", "/users/"+id, map[string]any{"username": "NewName", "email": "New@Example.com"}, m)
	stored = srv.Do(t, "GET", "/users/"+id, nil, m).Map()
	if stored["username"] != "newname" || stored["email"] != "new@example.com" {
		t.Errorf("after an update: %v / %v", stored["username"], stored["email"])
	}
}

// TestScenarioCustomObjectIDs: allowCustomObjectId lets a create name its
// objectId (137 when taken, 104 when empty or not id-shaped); without it
// objectId stays a reserved field; objectIdSize sets the length of the ids
// the server makes.
func TestScenarioCustomObjectIDs(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.AllowCustomObjectID = true
		o.ObjectIDSize = 24
	})
	app := servertest.App()
	runScenarios(t, srv, []scenario{
		{name: "a named id", method: "POST", path: "/classes/Item", headers: app, body: map[string]any{"objectId": "my-item_1", "n": 1},
			expectedStatus: 201, expectedContains: []string{`"objectId":"my-item_1"`}},
		{name: "read by it", path: "/classes/Item/my-item_1", headers: app, expectedStatus: 200, expectedContains: []string{`"n":1`}},
		{name: "taken", method: "POST", path: "/classes/Item", headers: app, body: map[string]any{"objectId": "my-item_1"},
			expectedStatus: 400, check: codeIs(137)},
		{name: "empty", method: "POST", path: "/classes/Item", headers: app, body: map[string]any{"objectId": ""},
			expectedStatus: 400, check: codeIs(104)},
		{name: "not id-shaped", method: "POST", path: "/classes/Item", headers: app, body: map[string]any{"objectId": "../x"},
			expectedStatus: 400, check: codeIs(104)},
		{name: "two in one transaction", method: "POST", path: "/batch", headers: app, body: map[string]any{"transaction": true, "requests": []any{
			map[string]any{"method": "POST", "path": "/parse/classes/Item", "body": map[string]any{"objectId": "twin"}},
			map[string]any{"method": "POST", "path": "/parse/classes/Item", "body": map[string]any{"objectId": "twin"}}}},
			expectedStatus: 400, check: codeIs(137)},
		{name: "a made id has objectIdSize characters", method: "POST", path: "/classes/Item", headers: app, body: map[string]any{"n": 2},
			expectedStatus: 201, check: func(t testing.TB, res servertest.Response) {
				if id, _ := res.Map()["objectId"].(string); len(id) != 24 {
					t.Errorf("objectId %q, want 24 characters", id)
				}
			}},
	})
	plain := servertest.Start(t, nil)
	runScenarios(t, plain, []scenario{
		{name: "without the option objectId is reserved", method: "POST", path: "/classes/Item", headers: app, body: map[string]any{"objectId": "mine"},
			expectedStatus: 400, check: codeIs(105)},
	})
}

// TestScenarioServerProtectedFields: the protectedFields option replaces
// Parse's default (users' emails hidden from others), and a class's CLP
// still adds to it.
func TestScenarioServerProtectedFields(t *testing.T) {
	cases := []struct {
		name      string
		option    map[string]any
		hiddenKey []string
		shownKey  []string
	}{
		{"default: email hidden", nil, []string{"email"}, []string{"phone"}},
		{"phone too", map[string]any{"_User": map[string]any{"*": []any{"email", "phone"}}}, []string{"email", "phone"}, nil},
		{"nothing hidden", map[string]any{}, nil, []string{"email", "phone"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := servertest.Start(t, func(o *config.Options) { o.ProtectedFields = c.option })
			id, _ := signUp(t, srv, "gus", "gus@example.com")
			srv.Do(t, "PUT", "/users/"+id, map[string]any{"phone": "555"}, servertest.Master())
			_, other := signUp(t, srv, "hal", "hal@example.com")
			seen := srv.Do(t, "GET", "/users/"+id, nil, asUser(other)).Map()
			for _, k := range c.hiddenKey {
				if _, ok := seen[k]; ok {
					t.Errorf("another user sees %s: %v", k, seen)
				}
			}
			for _, k := range c.shownKey {
				if _, ok := seen[k]; !ok {
					t.Errorf("another user does not see %s: %v", k, seen)
				}
			}
			if own := srv.Do(t, "GET", "/users/"+id, nil, servertest.Master()).Map(); own["email"] != "gus@example.com" || own["phone"] != "555" {
				t.Errorf("the master key sees %v", own)
			}
		})
	}
}

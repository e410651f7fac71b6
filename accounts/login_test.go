package accounts_test

import (
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// TestLogIn: who a username/email and password log in, and the answers
// of the refusals (codes as Parse Server gives them).
func TestLogIn(t *testing.T) {
	cases := []struct {
		name            string
		opts            func(*service.Options)
		setup           func(t *testing.T, f *fixture, id string)
		username, email any
		password        any
		verifyOnly      bool
		wantCode        int
		wantSession     bool
	}{
		{name: "username and password", username: "Ann", password: "pw", wantSession: true},
		{name: "email given as username", username: "ANN@example.com", password: "pw", wantSession: true},
		{name: "email", email: "ann@example.com", password: "pw", wantSession: true},
		{name: "username and its email", username: "Ann", email: "ANN@EXAMPLE.COM", password: "pw", wantSession: true},
		{name: "username and another email", username: "Ann", email: "bob@example.com", password: "pw", wantCode: 101},
		{name: "wrong password", username: "Ann", password: "nope", wantCode: 101},
		{name: "unknown user", username: "nobody", password: "pw", wantCode: 101},
		{name: "no username or email", password: "pw", wantCode: 200},
		{name: "empty username", username: "", password: "pw", wantCode: 101},
		{name: "no password", username: "Ann", wantCode: 201},
		{name: "password not a string", username: "Ann", password: 7.0, wantCode: 101},
		{name: "verify only", username: "Ann", password: "pw", verifyOnly: true},
		{name: "user locked out by ACL {}", username: "Ann", password: "pw", wantCode: 101,
			setup: func(t *testing.T, f *fixture, id string) {
				if _, err := f.svc.Update(service.Auth{Master: true}, "_User", id, map[string]any{"ACL": map[string]any{}}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "lower-cased usernames", username: "ANN", password: "pw", wantSession: true,
			opts: func(o *service.Options) { o.LowercaseUsernames = true }},
		{name: "unverified email refused", username: "Ann", password: "pw", wantCode: 205,
			opts: func(o *service.Options) {
				o.Accounts.VerifyUserEmails, o.Accounts.PreventLoginWithUnverifiedEmail = true, true
			}},
		{name: "expired password", username: "Ann", password: "pw", wantCode: 101,
			opts:  func(o *service.Options) { o.Accounts.MaxPasswordAge = 24 * time.Hour },
			setup: func(t *testing.T, f *fixture, id string) { f.clock.Add(25 * time.Hour) }},
		{name: "password not yet expired", username: "Ann", password: "pw", wantSession: true,
			opts:  func(o *service.Options) { o.Accounts.MaxPasswordAge = 24 * time.Hour },
			setup: func(t *testing.T, f *fixture, id string) { f.clock.Add(23 * time.Hour) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, tc.opts)
			id := f.user(t, map[string]any{"username": "Ann", "password": "pw", "email": "ann@example.com"})
			if tc.setup != nil {
				tc.setup(t, f, id)
			}
			out, err := f.acc.LogIn(service.Auth{}, tc.username, tc.email, tc.password, tc.verifyOnly)
			if code(err) != tc.wantCode {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCode)
			}
			if err != nil {
				return
			}
			if out["objectId"] != id || out[schema.KeyHashedPassword] != nil {
				t.Fatalf("reply %v", out)
			}
			tok, _ := out["sessionToken"].(string)
			if (tok != "") != tc.wantSession {
				t.Fatalf("sessionToken %q, want one: %v", tok, tc.wantSession)
			}
			if tok != "" {
				if _, ok := f.svc.SessionByToken(tok); !ok {
					t.Fatal("no session for the token")
				}
			}
		})
	}
}

// TestLockout: failed logins past accountLockout's threshold lock the
// account, even for the right password, until the lock expires.
func TestLockout(t *testing.T) {
	f := open(t, func(o *service.Options) { o.Accounts.LockoutThreshold, o.Accounts.LockoutMinutes = 2, 5 })
	f.user(t, map[string]any{"username": "ann", "password": "pw"})
	steps := []struct {
		name     string
		password string
		advance  time.Duration
		wantCode int
		wantMsg  string
	}{
		{name: "first failure", password: "x", wantCode: 101, wantMsg: "Invalid username/password."},
		{name: "second failure locks", password: "x", wantCode: 101, wantMsg: "Invalid username/password."},
		{name: "right password while locked", password: "pw", wantCode: 101,
			wantMsg: "Your account is locked due to multiple failed login attempts. Please try again after 5 minute(s)"},
		{name: "after the lock", password: "pw", advance: 6 * time.Minute},
		{name: "count cleared: one failure does not lock", password: "x", wantCode: 101, wantMsg: "Invalid username/password."},
		{name: "right password", password: "pw"},
	}
	for _, st := range steps {
		f.clock.Add(st.advance)
		_, err := f.acc.LogIn(service.Auth{}, "ann", nil, st.password, false)
		if code(err) != st.wantCode {
			t.Fatalf("%s: code %d (%v), want %d", st.name, code(err), err, st.wantCode)
		}
		if pe, ok := schema.AsError(err); ok && pe.Message != st.wantMsg {
			t.Fatalf("%s: message %q, want %q", st.name, pe.Message, st.wantMsg)
		}
	}
}

// TestSessions: sign-up, me, the session, pairing, another session, and
// log-out, each with the caller's session token.
func TestSessions(t *testing.T) {
	f := open(t, nil)
	res, tok, err := f.acc.SignUp(service.Auth{InstallationID: "inst-1"}, map[string]any{"username": "ann", "password": "pw"})
	if err != nil || tok == "" {
		t.Fatalf("SignUp: %q, %v", tok, err)
	}
	me := service.Auth{UserID: res.ObjectID, SessionToken: tok}
	steps := []struct {
		name     string
		run      func() (schema.Object, error)
		wantCode int
		check    func(t *testing.T, out schema.Object)
	}{
		{name: "me", run: func() (schema.Object, error) { return f.acc.Me(me) },
			check: func(t *testing.T, out schema.Object) {
				if out["username"] != "ann" || out["sessionToken"] != tok {
					t.Fatalf("me %v", out)
				}
			}},
		{name: "me without a user", run: func() (schema.Object, error) { return f.acc.Me(service.Auth{}) }, wantCode: 209},
		{name: "session me", run: func() (schema.Object, error) { return f.acc.SessionMe(me) },
			check: func(t *testing.T, out schema.Object) {
				if out["sessionToken"] != tok || out["installationId"] != "inst-1" {
					t.Fatalf("session %v", out)
				}
				if cw, _ := out["createdWith"].(map[string]any); cw["action"] != "signup" {
					t.Fatalf("createdWith %v", out["createdWith"])
				}
			}},
		{name: "session me with an unknown token", run: func() (schema.Object, error) {
			return f.acc.SessionMe(service.Auth{SessionToken: "r:unknown"})
		}, wantCode: 209},
		{name: "pair", run: func() (schema.Object, error) {
			return f.acc.PairSession(me, map[string]any{"installationId": "inst-2"})
		}, check: func(t *testing.T, _ schema.Object) {
			if s, _ := f.svc.SessionByToken(tok); s["installationId"] != "inst-2" {
				t.Fatalf("installationId %v", s["installationId"])
			}
		}},
		{name: "pair without an installation", run: func() (schema.Object, error) {
			return f.acc.PairSession(me, map[string]any{})
		}, wantCode: 135},
		{name: "another session", run: func() (schema.Object, error) {
			return f.acc.CreateRestrictedSession(me, map[string]any{"note": "cli", "expiresAt": "never"})
		}, check: func(t *testing.T, out schema.Object) {
			if out["note"] != "cli" || out["sessionToken"] == tok || out["expiresAt"] == "never" {
				t.Fatalf("session %v", out)
			}
		}},
		{name: "another session, read-only master", run: func() (schema.Object, error) {
			return f.acc.CreateRestrictedSession(service.Auth{Master: true, ReadOnly: true}, map[string]any{})
		}, wantCode: 119},
		{name: "log out", run: func() (schema.Object, error) { return nil, f.acc.LogOut(me) },
			check: func(t *testing.T, _ schema.Object) {
				if _, ok := f.svc.SessionByToken(tok); ok {
					t.Fatal("the session outlived log-out")
				}
			}},
		{name: "log out again", run: func() (schema.Object, error) { return nil, f.acc.LogOut(me) }, wantCode: 209},
	}
	for _, st := range steps {
		out, err := st.run()
		if code(err) != st.wantCode {
			t.Fatalf("%s: code %d (%v), want %d", st.name, code(err), err, st.wantCode)
		}
		if err == nil && st.check != nil {
			st.check(t, out)
		}
	}
}

// TestSignUpWithheldSession: preventSignupWithUnverifiedEmail leaves a
// new user with an unverified email without a session.
func TestSignUpWithheldSession(t *testing.T) {
	f := open(t, func(o *service.Options) {
		o.Accounts.VerifyUserEmails, o.Accounts.PreventSignupWithUnverifiedEmail = true, true
	})
	cases := []struct {
		name        string
		body        map[string]any
		wantSession bool
	}{
		{name: "with an email", body: map[string]any{"username": "ann", "password": "pw", "email": "ann@example.com"}},
		{name: "without one", body: map[string]any{"username": "bob", "password": "pw"}, wantSession: true},
	}
	for _, tc := range cases {
		_, tok, err := f.acc.SignUp(service.Auth{}, tc.body)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (tok != "") != tc.wantSession {
			t.Fatalf("%s: token %q, want one: %v", tc.name, tok, tc.wantSession)
		}
	}
}

// TestExtendSession: a session used past half its life gets a full
// sessionLength from then; used earlier it keeps its expiry.
func TestExtendSession(t *testing.T) {
	const length = 100 * time.Second
	cases := []struct {
		name     string
		after    time.Duration
		extended bool
	}{
		{name: "used early", after: 40 * time.Second},
		{name: "used past half its life", after: 60 * time.Second, extended: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, func(o *service.Options) { o.SessionLength = length })
			f.svc.OnSessionUse(f.acc.ExtendSession)
			_, tok, err := f.acc.SignUp(service.Auth{}, map[string]any{"username": "ann", "password": "pw"})
			if err != nil {
				t.Fatal(err)
			}
			f.clock.Add(tc.after)
			if _, err := f.svc.Authenticate(service.Auth{SessionToken: tok}); err != nil {
				t.Fatal(err)
			}
			sess, _ := f.svc.SessionByToken(tok)
			exp, _ := sess["expiresAt"].(map[string]any)
			want := f.clock.Now().Add(length - tc.after)
			if tc.extended {
				want = f.clock.Now().Add(length)
			}
			if exp["iso"] != schema.FormatTime(want) {
				t.Fatalf("expiresAt %v, want %s", exp["iso"], schema.FormatTime(want))
			}
		})
	}
}

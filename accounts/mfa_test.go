package accounts_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/service"
)

const mfaSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

// withAuth turns on the providers (mfa with maxAttempts wrong codes, and
// anonymous users) on the fixture's clock.
func withAuth(maxAttempts int) func(*service.Options) {
	return func(o *service.Options) {
		r, err := auth.New(auth.Config{EnableAnonymousUsers: true, AnyAnonymousID: true, Now: o.Now,
			Providers: map[string]map[string]any{auth.MFA: {"enabled": true, "maxAttempts": float64(maxAttempts),
				"attemptWindow": 600.0, "lockoutDuration": 300.0}}})
		if err != nil {
			panic(err)
		}
		o.Auth = r
	}
}

// totp is the current code of the test secret.
func (f *fixture) totp(tb testing.TB) string {
	tb.Helper()
	c, err := auth.TOTP{Digits: 6, Period: 30, Algorithm: "SHA1"}.Code(mfaSecret, f.clock.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// enrol signs ann up with TOTP and returns her id and recovery codes.
func (f *fixture) enrol(tb testing.TB) (string, []string) {
	tb.Helper()
	res, tok, err := f.acc.SignUp(service.Auth{}, map[string]any{"username": "ann", "password": "pw"})
	if err != nil {
		tb.Fatal(err)
	}
	up, err := f.svc.Update(service.Auth{UserID: res.ObjectID, SessionToken: tok}, "_User", res.ObjectID,
		map[string]any{"authData": map[string]any{auth.MFA: map[string]any{"secret": mfaSecret, "token": f.totp(tb)}}})
	if err != nil {
		tb.Fatal(err)
	}
	resp, _ := up.Reply()["authDataResponse"].(map[string]any)
	m, _ := resp[auth.MFA].(map[string]any)
	codes := strings.Split(str(m["recovery"]), ", ")
	if len(codes) < 2 {
		tb.Fatalf("recovery codes %v", up.Reply())
	}
	return res.ObjectID, codes
}

func withMFA(token string) service.Auth {
	return service.Auth{LoginAuthData: map[string]any{auth.MFA: map[string]any{"token": token}}}
}

// TestMFALogin: an enrolled user logs in only with a current code or an
// unused recovery code; wrong codes past maxAttempts lock MFA logins,
// even with a right code, until lockoutDuration has passed.
func TestMFALogin(t *testing.T) {
	f := open(t, withAuth(3))
	_, recovery := f.enrol(t)
	steps := []struct {
		name     string
		auth     func() service.Auth
		advance  time.Duration
		wantCode int
		wantMsg  string
	}{
		{name: "no code", auth: func() service.Auth { return service.Auth{} }, wantCode: 211},
		{name: "current code", auth: func() service.Auth { return withMFA(f.totp(t)) }},
		{name: "recovery code", auth: func() service.Auth { return withMFA(recovery[0]) }},
		{name: "spent recovery code", auth: func() service.Auth { return withMFA(recovery[0]) }, wantCode: 210, wantMsg: "Invalid MFA token"},
		{name: "second wrong code", auth: func() service.Auth { return withMFA("000000x") }, wantCode: 210, wantMsg: "Invalid MFA token"},
		{name: "third wrong code sets the lock", auth: func() service.Auth { return withMFA("000000x") }, wantCode: 210, wantMsg: "Invalid MFA token"},
		{name: "right code while locked", auth: func() service.Auth { return withMFA(f.totp(t)) }, wantCode: 210,
			wantMsg: "Too many failed MFA attempts. Please try again after 5 minute(s)."},
		{name: "after the lock", advance: 6 * time.Minute, auth: func() service.Auth { return withMFA(recovery[1]) }},
	}
	for _, st := range steps {
		f.clock.Add(st.advance)
		out, err := f.acc.LogIn(st.auth(), "ann", nil, "pw", false)
		if code(err) != st.wantCode {
			t.Fatalf("%s: code %d (%v), want %d", st.name, code(err), err, st.wantCode)
		}
		if err != nil && st.wantMsg != "" && !strings.Contains(err.Error(), st.wantMsg) {
			t.Fatalf("%s: %v, want %q", st.name, err, st.wantMsg)
		}
		if err == nil && out["sessionToken"] == nil {
			t.Fatalf("%s: no session", st.name)
		}
	}
}

// TestChallenge: POST /challenge checks who asks and answers each
// provider.
func TestChallenge(t *testing.T) {
	f := open(t, withAuth(3))
	f.enrol(t)
	cases := []struct {
		name     string
		body     map[string]any
		wantCode int
	}{
		{name: "password and mfa", body: map[string]any{"username": "ann", "password": "pw", "challengeData": map[string]any{"mfa": map[string]any{}}}},
		{name: "wrong password", body: map[string]any{"username": "ann", "password": "x", "challengeData": map[string]any{"mfa": map[string]any{}}}, wantCode: 101},
		{name: "nothing to challenge", body: map[string]any{"username": "ann", "password": "pw"}, wantCode: -1},
		{name: "no one named", body: map[string]any{"challengeData": map[string]any{"mfa": map[string]any{}}}, wantCode: -1},
		{name: "provider off", body: map[string]any{"username": "ann", "password": "pw", "challengeData": map[string]any{"github": map[string]any{}}}, wantCode: 252},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.acc.Challenge(service.Auth{}, tc.body)
			if code(err) != tc.wantCode {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCode)
			}
			if err == nil {
				if cd, _ := out["challengeData"].(map[string]any); cd["mfa"] != true {
					t.Fatalf("reply %v", out)
				}
			}
		})
	}
}

// TestSignUpWithAuthData: authData signs a new user up, then logs the
// same user in; with allowExpiredAuthDataToken too.
func TestSignUpWithAuthData(t *testing.T) {
	for _, expired := range []bool{false, true} {
		f := open(t, func(o *service.Options) {
			withAuth(0)(o)
			o.AllowExpiredAuthDataToken = expired
		})
		body := map[string]any{"authData": map[string]any{auth.Anonymous: map[string]any{"id": "anon-1"}}}
		first, err := f.acc.SignUpWithAuthData(service.Auth{}, body)
		if err != nil {
			t.Fatal(err)
		}
		if !first.Created || len(first.Username) != 25 || first.SessionToken == "" {
			t.Fatalf("first sign-in %+v", first)
		}
		again, err := f.acc.SignUpWithAuthData(service.Auth{}, body)
		if err != nil {
			t.Fatal(err)
		}
		if again.Created || again.User["objectId"] != first.Create.ObjectID || again.SessionToken == first.SessionToken {
			t.Fatalf("second sign-in %+v", again)
		}
		sess, _ := f.svc.SessionByToken(again.SessionToken)
		if cw, _ := sess["createdWith"].(map[string]any); cw["authProvider"] != auth.Anonymous {
			t.Fatalf("createdWith %v", sess["createdWith"])
		}
		// Another user logged in may not take the authData over.
		other, tok, err := f.acc.SignUp(service.Auth{}, map[string]any{"username": "bob", "password": "pw"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.acc.SignUpWithAuthData(service.Auth{UserID: other.ObjectID, SessionToken: tok}, body)
		if code(err) != 208 {
			t.Fatalf("taking over another user's authData: %v, want 208", err)
		}
	}
}

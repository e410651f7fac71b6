package accounts_test

import (
	"testing"
	"time"

	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

func verifying(reveal bool) func(*service.Options) {
	return func(o *service.Options) {
		o.Accounts.VerifyUserEmails = true
		o.Accounts.RevealUnknownEmail = reveal
		o.Accounts.VerifyTokenValidity = time.Hour
	}
}

// TestRequestVerificationEmail: who gets a new link, and what the others
// are told with emailVerifySuccessOnInvalidEmail on and off.
func TestRequestVerificationEmail(t *testing.T) {
	cases := []struct {
		name      string
		reveal    bool
		email     any
		wantCode  int
		wantLinks int
	}{
		{name: "unverified user gets a link", email: "ann@example.com", wantLinks: 1},
		{name: "address in another case", email: "ANN@example.com", wantLinks: 1},
		{name: "unknown address, same success", email: "nobody@example.com"},
		{name: "unknown address revealed", reveal: true, email: "nobody@example.com", wantCode: 205},
		{name: "verified address, same success", email: "bob@example.com"},
		{name: "verified address revealed", reveal: true, email: "bob@example.com", wantCode: -1},
		{name: "no email", email: nil, wantCode: 204},
		{name: "email not a string", email: 7.0, wantCode: 125},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, verifying(tc.reveal))
			f.user(t, map[string]any{"username": "ann", "password": "pw", "email": "ann@example.com"})
			bob := f.user(t, map[string]any{"username": "bob", "password": "pw", "email": "bob@example.com"})
			if err := f.svc.EditUser(bob, map[string]any{"emailVerified": true}, nil, false); err != nil {
				t.Fatal(err)
			}
			f.sent() // the sign-ups' own links
			err := f.acc.RequestVerificationEmail(tc.email)
			if code(err) != tc.wantCode {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCode)
			}
			if got := len(f.sent()); got != tc.wantLinks {
				t.Fatalf("%d links sent, want %d", got, tc.wantLinks)
			}
		})
	}
}

// TestRequestVerificationEmailWithoutMailer: no email adapter, code 1.
func TestRequestVerificationEmailWithoutMailer(t *testing.T) {
	f := open(t, nil)
	if err := f.acc.RequestVerificationEmail("ann@example.com"); code(err) != 1 {
		t.Fatalf("got %v, want code 1", err)
	}
	if err := f.acc.RequestPasswordReset("ann@example.com"); code(err) != 1 {
		t.Fatalf("got %v, want code 1", err)
	}
}

// TestVerifyEmail: a link verifies its user once, and not after it expired.
func TestVerifyEmail(t *testing.T) {
	cases := []struct {
		name     string
		token    func(sent string) string
		advance  time.Duration
		wantErr  error
		verified bool
	}{
		{name: "the link sent", token: func(s string) string { return s }, verified: true},
		{name: "no token", token: func(string) string { return "" }, wantErr: accounts.ErrInvalidLink},
		{name: "another token", token: func(string) string { return "0123456789abcdef0123456789abcdef" }, wantErr: accounts.ErrInvalidLink},
		{name: "expired link", token: func(s string) string { return s }, advance: 2 * time.Hour, wantErr: accounts.ErrInvalidLink},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, verifying(false))
			id := f.user(t, map[string]any{"username": "ann", "password": "pw", "email": "ann@example.com"})
			links := f.sent()
			if len(links) != 1 {
				t.Fatalf("sign-up sent %d links, want 1", len(links))
			}
			f.clock.Add(tc.advance)
			name, err := f.acc.VerifyEmail(tc.token(token(t, links[0])))
			if err != tc.wantErr {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			if err == nil && name != "ann" {
				t.Fatalf("username %q, want ann", name)
			}
			u := f.stored(t, id)
			if (u["emailVerified"] == true) != tc.verified {
				t.Fatalf("emailVerified %v, want %v", u["emailVerified"], tc.verified)
			}
			if tc.verified {
				if _, again := f.acc.VerifyEmail(token(t, links[0])); again != accounts.ErrInvalidLink {
					t.Fatalf("a spent link: %v, want ErrInvalidLink", again)
				}
			}
		})
	}
}

// TestPasswordReset: a reset link sets a new password once, ends the
// user's sessions unless told to keep them, and lifts a lockout when
// unlockOnPasswordReset is on.
func TestPasswordReset(t *testing.T) {
	cases := []struct {
		name         string
		keepSessions bool
		unlock       bool
	}{
		{name: "sessions end"},
		{name: "sessions kept", keepSessions: true},
		{name: "lock lifted", unlock: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, func(o *service.Options) {
				o.Accounts.Mailer = &mailbox{}
				o.Accounts.KeepSessionsOnPasswordReset = tc.keepSessions
				o.Accounts.UnlockOnPasswordReset = tc.unlock
			})
			f.mail = f.svc.AccountOptions().Mailer.(*mailbox)
			id := f.user(t, map[string]any{"username": "ann", "password": "old", "email": "ann@example.com"})
			sess, err := f.acc.LogInAs(service.Auth{Master: true}, id)
			if err != nil {
				t.Fatal(err)
			}
			err = f.svc.TouchUser(id, func(u schema.Object) error { // a lockout under way
				u[schema.KeyFailedLoginCount] = 1.0
				u[schema.KeyAccountLockoutExpiresAt] = schema.Date(schema.FormatTime(f.clock.Now().Add(time.Hour)))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := f.acc.RequestPasswordReset("nobody@example.com"); err != nil {
				t.Fatalf("unknown address: %v, want the same success", err)
			}
			if err := f.acc.RequestPasswordReset("ann@example.com"); err != nil {
				t.Fatal(err)
			}
			links := f.sent()
			if len(links) != 1 {
				t.Fatalf("%d links sent, want 1", len(links))
			}
			tok := token(t, links[0])
			if name, err := f.acc.ResetTokenUser(tok); err != nil || name != "ann" {
				t.Fatalf("ResetTokenUser: %q, %v", name, err)
			}
			if _, err := f.acc.ResetPassword(tok, "new"); err != nil {
				t.Fatal(err)
			}
			u := f.stored(t, id)
			if !service.PasswordMatches(str(u[schema.KeyHashedPassword]), "new") {
				t.Fatal("the new password is not the user's")
			}
			if _, err := f.acc.ResetPassword(tok, "newer"); err != accounts.ErrInvalidLink {
				t.Fatalf("a spent link: %v, want ErrInvalidLink", err)
			}
			_, alive := f.svc.SessionByToken(str(sess["sessionToken"]))
			if alive != tc.keepSessions {
				t.Fatalf("session alive %v, want %v", alive, tc.keepSessions)
			}
			if f.locked(t, id) == tc.unlock {
				t.Fatalf("locked %v after the reset, unlockOnPasswordReset %v", f.locked(t, id), tc.unlock)
			}
		})
	}
}

// locked reports whether the user has a lockout running.
func (f *fixture) locked(tb testing.TB, id string) bool {
	_, ok := f.stored(tb, id)[schema.KeyAccountLockoutExpiresAt]
	return ok
}

func str(v any) string { s, _ := v.(string); return s }

package accounts_test

import (
	"regexp"
	"testing"

	"github.com/quarrydata/quarry/service"
)

// TestPasswordPolicy: the passwords a sign-up and a change may set, as
// passwordPolicy's pattern, doNotAllowUsername, maxPasswordHistory and
// validatorCallback judge them (142 for every refusal).
func TestPasswordPolicy(t *testing.T) {
	cases := []struct {
		name     string
		opts     func(*service.AccountOptions)
		signUp   int      // the sign-up's code (with "first1")
		change   []string // passwords set one after the other after it
		wantCode int
		wantMsg  string
	}{
		{name: "no policy", opts: func(*service.AccountOptions) {}, change: []string{"first1"}},
		{name: "pattern met", opts: func(a *service.AccountOptions) { a.PasswordPattern = regexp.MustCompile(`\d`) }, change: []string{"second2"}},
		{name: "pattern missed", opts: func(a *service.AccountOptions) { a.PasswordPattern = regexp.MustCompile(`\d`) },
			change: []string{"second"}, wantCode: 142, wantMsg: "Password does not meet the Password Policy requirements."},
		{name: "pattern missed, own message", opts: func(a *service.AccountOptions) {
			a.PasswordPattern, a.PasswordPatternError = regexp.MustCompile(`\d`), "digits please"
		}, change: []string{"second"}, wantCode: 142, wantMsg: "digits please"},
		{name: "username in the password", opts: func(a *service.AccountOptions) { a.DoNotAllowUsername = true },
			change: []string{"xannx"}, wantCode: 142, wantMsg: "Password cannot contain your username."},
		{name: "history: the current one", opts: func(a *service.AccountOptions) { a.MaxPasswordHistory = 2 },
			change: []string{"first1"}, wantCode: 142, wantMsg: "New password should not be the same as last 2 passwords."},
		{name: "history: the one before", opts: func(a *service.AccountOptions) { a.MaxPasswordHistory = 2 },
			change: []string{"second2", "first1"}, wantCode: 142},
		{name: "history: older than kept", opts: func(a *service.AccountOptions) { a.MaxPasswordHistory = 2 },
			change: []string{"second2", "third3", "first1"}},
		{name: "validator missing refuses", opts: func(a *service.AccountOptions) { a.PasswordValidator = "noSuchFunction" },
			signUp: 142},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, func(o *service.Options) { tc.opts(&o.Accounts) })
			res, err := f.svc.Create(service.Auth{}, "_User", map[string]any{"username": "ann", "password": "first1"})
			if code(err) != tc.signUp {
				t.Fatalf("sign-up: code %d (%v), want %d", code(err), err, tc.signUp)
			}
			if err != nil {
				return
			}
			for i, p := range tc.change {
				_, err = f.svc.Update(service.Auth{Master: true}, "_User", res.ObjectID, map[string]any{"password": p})
				if i < len(tc.change)-1 && err != nil {
					t.Fatalf("change %d: %v", i, err)
				}
			}
			if code(err) != tc.wantCode {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCode)
			}
			if tc.wantMsg != "" && err.Error() != "parse error 142: "+tc.wantMsg {
				t.Fatalf("%v, want %q", err, tc.wantMsg)
			}
		})
	}
}

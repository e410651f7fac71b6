package accounts_test

import (
	"testing"

	"github.com/quarrydata/quarry/service"
)

// TestLogInAs: only the master key logs in as another user, and the
// session says so.
func TestLogInAs(t *testing.T) {
	f := open(t, nil)
	id := f.user(t, map[string]any{"username": "ann", "password": "pw"})
	cases := []struct {
		name     string
		auth     service.Auth
		userID   any
		wantCode int
	}{
		{name: "master", auth: service.Auth{Master: true}, userID: id},
		{name: "no master key", auth: service.Auth{}, userID: id, wantCode: 119},
		{name: "read-only master key", auth: service.Auth{Master: true, ReadOnly: true}, userID: id, wantCode: 119},
		{name: "no user id", auth: service.Auth{Master: true}, userID: nil, wantCode: 162},
		{name: "unknown user", auth: service.Auth{Master: true}, userID: "nobody", wantCode: 101},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := f.acc.LogInAs(tc.auth, tc.userID)
			if code(err) != tc.wantCode {
				t.Fatalf("code %d (%v), want %d", code(err), err, tc.wantCode)
			}
			if err != nil {
				return
			}
			if out["username"] != "ann" || out["password"] != nil {
				t.Fatalf("reply %v", out)
			}
			sess, ok := f.svc.SessionByToken(str(out["sessionToken"]))
			if !ok {
				t.Fatal("no session for the token")
			}
			if cw, _ := sess["createdWith"].(map[string]any); cw["authProvider"] != "masterkey" {
				t.Fatalf("createdWith %v", sess["createdWith"])
			}
		})
	}
}

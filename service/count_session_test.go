package service_test

import (
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// TestCountGuardedSession: in _Session the public-read flag does not
// decide what a caller sees (a session is its user's alone), so neither
// the ACL filter (aclFilters) nor a count may take the unflagged objects
// as seen: a user counts and finds only its own sessions, even those whose
// ACL would let anyone read them.
func TestCountGuardedSession(t *testing.T) {
	s := openTestService(t, service.Options{})
	master := service.Auth{Master: true}
	if err := s.EnsureIndex("_Session", "installationId"); err != nil {
		t.Fatal(err)
	}
	for i, user := range []string{"u1", "u2", "u2"} {
		body := map[string]any{"user": schema.Pointer("_User", user), "installationId": "inst",
			"sessionToken": "r:rvreads" + string(rune('a'+i)), "ACL": map[string]any{"*": map[string]any{"read": true}}}
		if _, err := s.Create(master, "_Session", body); err != nil {
			t.Fatalf("create session: %v", err)
		}
	}
	for _, c := range []struct {
		auth service.Auth
		want int
	}{{master, 3}, {service.Auth{UserID: "u1"}, 1}, {service.Auth{UserID: "u2"}, 2}} {
		cnt, err := s.Find(c.auth, "_Session", service.FindParams{Where: map[string]any{"installationId": "inst"}, Count: true, ReplyOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		all, err := s.Find(c.auth, "_Session", service.FindParams{Where: map[string]any{"installationId": "inst"}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if cnt.Count != c.want || len(all.Results) != c.want {
			t.Errorf("%q counts %d and finds %d sessions, want %d", c.auth.UserID, cnt.Count, len(all.Results), c.want)
		}
	}
}

package live_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// readRounds is how many times each cross-instance read is tried: before
// reads by id caught up, about half of them missed.
const readRounds = 60

// A request by id on one instance right after another instance answered
// the write sees it: GET, PUT, DELETE, GET with include, /users/me, and
// a session token another instance just made. Nothing waits between the
// write's answer and the read.
func TestPostgresReadYourWritesByID(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	app := testAppID()
	a, b, c := startOn(t, uri, app, ""), startOn(t, uri, app, ""), startOn(t, uri, app, "")
	h := appHeaders(app, servertest.MasterKey)
	do := func(s *servertest.Server, method, path string, body any, want int) map[string]any {
		t.Helper()
		r := s.Do(t, method, path, body, h)
		if r.Status != want {
			t.Fatalf("%s %s: HTTP %d %s, want %d", method, path, r.Status, r.Body, want)
		}
		return r.Map()
	}
	instances := []*servertest.Server{a, b, c}
	for i := range readRounds {
		w, r := instances[i%3], instances[(i+1)%3]
		id := do(w, "POST", "/classes/Note", map[string]any{"n": i}, 201)["objectId"].(string)
		if got := do(r, "GET", "/classes/Note/"+id, nil, 200); got["n"] != float64(i) {
			t.Fatalf("round %d: GET after the create on another instance: %v", i, got)
		}
		do(w, "PUT", "/classes/Note/"+id, map[string]any{"n": i + 1000}, 200)
		if got := do(r, "GET", "/classes/Note/"+id, nil, 200); got["n"] != float64(i+1000) {
			t.Fatalf("round %d: GET after the update on another instance: %v", i, got)
		}
		// An update of another field on r keeps w's update.
		do(r, "PUT", "/classes/Note/"+id, map[string]any{"seen": true}, 200)
		if got := do(w, "GET", "/classes/Note/"+id, nil, 200); got["n"] != float64(i+1000) || got["seen"] != true {
			t.Fatalf("round %d: after updates on two instances: %v", i, got)
		}
		// A pointer to an object made on w, included on r.
		holder := do(r, "POST", "/classes/Holder", map[string]any{
			"note": map[string]any{"__type": "Pointer", "className": "Note", "objectId": id}}, 201)["objectId"].(string)
		do(w, "PUT", "/classes/Note/"+id, map[string]any{"n": i + 2000}, 200)
		got := do(r, "GET", "/classes/Holder/"+holder+"?include=note", nil, 200)
		if note, _ := got["note"].(map[string]any); note["n"] != float64(i+2000) {
			t.Fatalf("round %d: included pointer after an update on another instance: %v", i, got)
		}
		do(r, "DELETE", "/classes/Note/"+id, nil, 200)
		do(w, "GET", "/classes/Note/"+id, nil, 404)
		do(w, "DELETE", "/classes/Holder/"+holder, nil, 200)
		// A PUT and a DELETE with no read before them.
		fresh := do(w, "POST", "/classes/Note", map[string]any{"n": i}, 201)["objectId"].(string)
		do(r, "PUT", "/classes/Note/"+fresh, map[string]any{"n": -i}, 200)
		fresh = do(w, "POST", "/classes/Note", map[string]any{"n": i}, 201)["objectId"].(string)
		do(r, "DELETE", "/classes/Note/"+fresh, nil, 200)
	}
	for i := range readRounds / 3 {
		w, r := instances[i%3], instances[(i+2)%3]
		user := do(w, "POST", "/users", map[string]any{"username": fmt.Sprint("u", i), "password": "pw"}, 201)
		token := user["sessionToken"].(string)
		me := r.Do(t, "GET", "/users/me", nil, map[string]string{"X-Parse-Application-Id": app, "X-Parse-Session-Token": token})
		if me.Status != 200 || me.Map()["username"] != fmt.Sprint("u", i) {
			t.Fatalf("round %d: /users/me after the sign-up on another instance: %d %s", i, me.Status, me.Body)
		}
		do(w, "PUT", "/users/"+user["objectId"].(string), map[string]any{"nick": i}, 200)
		me = r.Do(t, "GET", "/users/me", nil, map[string]string{"X-Parse-Application-Id": app, "X-Parse-Session-Token": token})
		if me.Map()["nick"] != float64(i) {
			t.Fatalf("round %d: /users/me after an update on another instance: %d %s", i, me.Status, me.Body)
		}
	}
}

// A query with X-Quarry-Read-After-Writes, or on an instance with
// queryReadAfterWrites, finds what another instance just wrote.
func TestPostgresQueryReadAfterWrites(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	app := testAppID()
	a, b := startOn(t, uri, app, ""), startOn(t, uri, app, "")
	waiting := servertest.Start(t, func(o *config.Options) {
		o.AppID = app
		o.DatabaseURI = uri
		o.QueryReadAfterWrites = true
	})
	h := appHeaders(app, servertest.MasterKey)
	asking := map[string]string{"X-Quarry-Read-After-Writes": "1"}
	for k, v := range h {
		asking[k] = v
	}
	cases := []struct {
		name    string
		on      *servertest.Server
		headers map[string]string
	}{
		{"header", b, asking},
		{"queryReadAfterWrites", waiting, h},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := range readRounds {
				tag := fmt.Sprintf("%s-%d", tc.name, i)
				if r := a.Do(t, "POST", "/classes/Tagged", map[string]any{"tag": tag}, h); r.Status != 201 {
					t.Fatalf("create: %d %s", r.Status, r.Body)
				}
				where := url.QueryEscape(fmt.Sprintf(`{"tag":%q}`, tag))
				r := tc.on.Do(t, "GET", "/classes/Tagged?count=1&where="+where, nil, tc.headers)
				if r.Status != 200 || r.Map()["count"] != float64(1) {
					t.Fatalf("round %d: the query after a create on another instance: %d %s", i, r.Status, r.Body)
				}
			}
		})
	}
}

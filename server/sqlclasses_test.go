package server_test

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// TestSQLClassesOverREST runs a class kept out of memory through the REST
// API: writes, a query with where, order, count and the ACL, get, an
// increment, a refused $text, a delete, and the same answers after a
// restart.
func TestSQLClassesOverREST(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	s := servertest.Start(t, func(o *config.Options) {
		o.DatabaseURI = uri
		o.SQLClasses = []string{"Event"}
	})
	master, app := servertest.Master(), servertest.App()
	var ids []string
	for i, body := range []map[string]any{
		{"kind": "click", "n": 1},
		{"kind": "click", "n": 2},
		{"kind": "view", "n": 3, "ACL": map[string]any{"someone": map[string]any{"read": true}}},
	} {
		r := s.Do(t, "POST", "/classes/Event", body, app)
		if r.Status != 201 {
			t.Fatalf("create %d: %d %s", i, r.Status, r.Body)
		}
		ids = append(ids, r.Map()["objectId"].(string))
	}
	query := func(where map[string]any, extra string, headers map[string]string) map[string]any {
		t.Helper()
		w, _ := json.Marshal(where)
		r := s.Do(t, "GET", "/classes/Event?where="+url.QueryEscape(string(w))+extra, nil, headers)
		if r.Status != 200 {
			t.Fatalf("query %s: %d %s", w, r.Status, r.Body)
		}
		return r.Map()
	}
	got := query(map[string]any{"n": map[string]any{"$gte": 2}}, "&order=-n&count=1", app)
	if res := got["results"].([]any); got["count"] != 1.0 || len(res) != 1 || res[0].(map[string]any)["objectId"] != ids[1] {
		t.Errorf("public query: %v", got)
	}
	if got := query(map[string]any{"n": map[string]any{"$gte": 2}}, "&count=1", master); got["count"] != 2.0 {
		t.Errorf("master query: %v", got)
	}
	if r := s.Do(t, "PUT", "/classes/Event/"+ids[0], map[string]any{"n": map[string]any{"__op": "Increment", "amount": 10}}, app); r.Status != 200 {
		t.Fatalf("increment: %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, "GET", "/classes/Event/"+ids[0], nil, app); r.Status != 200 || r.Map()["n"] != 11.0 {
		t.Errorf("get after increment: %d %s", r.Status, r.Body)
	}
	// $text has no exact SQL form: it runs in Go over SQL's rows.
	if got := query(map[string]any{"kind": map[string]any{"$text": map[string]any{"$search": map[string]any{"$term": "click"}}}}, "&count=1", app); got["count"] != 2.0 {
		t.Errorf("$text: %v, want the two clicks", got)
	}
	if r := s.Do(t, "DELETE", "/classes/Event/"+ids[1], nil, app); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	s.Restart(t)
	if got := query(map[string]any{}, "&order=n", master); len(got["results"].([]any)) != 2 {
		t.Errorf("after the restart: %v", got)
	}
}

// TestSQLClassesNeedPostgreSQL: on the embedded store the option is
// refused at start-up, with a message saying why.
func TestSQLClassesNeedPostgreSQL(t *testing.T) {
	opts, _, err := config.Load([]string{"--appId", "app", "--masterKey", "mk", "--databaseURI", filepath.Join(t.TempDir(), "q.db"),
		"--sqlClasses", "Event"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Open(opts, nil)
	if err == nil {
		srv.Close()
		t.Fatal("sqlClasses on the embedded store started")
	}
	if !strings.Contains(err.Error(), "sqlClasses needs a PostgreSQL databaseURI") {
		t.Errorf("error %q does not say why", err)
	}
}

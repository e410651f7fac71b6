package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
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

// TestSQLClassesBoxUsesGiST: a $within $box on an indexed GeoPoint of a
// class kept out of memory is served by the column's GiST index (a cap
// around the box first, the exact box test after), so a client without the
// master key gets its answer instead of 154; explain=1 shows the plan and
// estimate that request gets. A box of the whole world still scans the
// table, and explain says that a client would be refused.
func TestSQLClassesBoxUsesGiST(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	s := servertest.Start(t, func(o *config.Options) {
		o.DatabaseURI = uri
		o.SQLClasses = []string{"Spot"}
		o.Indexes = []string{"Spot.loc"}
		o.MaxScan = 200
	})
	master, app := servertest.Master(), servertest.App()
	point := func(lat, lng float64) map[string]any {
		return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
	}
	if r := s.Do(t, "POST", "/classes/Spot", map[string]any{"loc": point(0.5, 0.5)}, app); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	s.Restart(t) // the index is made at start-up, on the column the create made
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// A grid of 20,000 points one degree apart, then fresh statistics.
	for _, sql := range []string{
		`INSERT INTO "Spot" ("objectId", "loc", "createdAt", "updatedAt")
		 SELECT 'g' || g, ST_SetSRID(ST_MakePoint(-100 + g % 200, -50 + g / 200), 4326)::geography, now(), now()
		 FROM generate_series(0, 19999) AS g`,
		`ANALYZE "Spot"`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	var gist int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename = 'Spot' AND indexdef ILIKE '%USING gist%'`).Scan(&gist); err != nil || gist != 1 {
		t.Fatalf("GiST indexes on Spot: %d %v, want 1", gist, err)
	}
	box := func(south, west, north, east float64) string {
		w, _ := json.Marshal(map[string]any{"loc": map[string]any{"$within": map[string]any{"$box": []any{point(south, west), point(north, east)}}}})
		return "/classes/Spot?where=" + url.QueryEscape(string(w))
	}
	small := box(10, 10, 12.5, 13.5) // latitudes 10..12, longitudes 10..13: 12 points
	r := s.Do(t, "GET", small+"&count=1&limit=100", nil, app)
	if r.Status != 200 || r.Map()["count"] != 12.0 {
		t.Fatalf("a small $box without the master key: %d %s, want 200 with count 12", r.Status, r.Body)
	}
	explain := func(path string) map[string]any {
		t.Helper()
		r := s.Do(t, "GET", path+"&limit=100&explain=1", nil, master)
		if r.Status != 200 {
			t.Fatalf("explain: %d %s", r.Status, r.Body)
		}
		var out struct {
			Results map[string]any `json:"results"`
		}
		if err := json.Unmarshal(r.Body, &out); err != nil || out.Results == nil {
			t.Fatalf("explain's answer: %s", r.Body)
		}
		return out.Results
	}
	plan := explain(small)
	if w, _ := plan["where"].(string); plan["sequentialScan"] != false || !strings.Contains(w, "ST_DWithin") || plan["refusedWithoutMasterKey"] != nil {
		t.Errorf("explain of the small $box: %v, want an index scan (ST_DWithin) a client is not refused", plan)
	}
	world := box(-90, -180, 90, 180)
	if r := s.Do(t, "GET", world+"&limit=100", nil, app); r.Status != 400 || r.Map()["code"] != 154.0 {
		t.Errorf("a $box of the whole world without the master key: %d %s, want 154", r.Status, r.Body)
	}
	if plan := explain(world); plan["sequentialScan"] != true || plan["refusedWithoutMasterKey"] == nil {
		t.Errorf("explain of the whole world: %v, want a sequential scan a client is refused", plan)
	}
}

// TestSQLClassesFollowCallerContext: a query of a class kept out of memory
// runs under the caller's context (service.Auth.WithContext), so a caller
// that has gone stops its work in PostgreSQL; one still there is answered.
func TestSQLClassesFollowCallerContext(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	s := servertest.Start(t, func(o *config.Options) {
		o.DatabaseURI = uri
		o.SQLClasses = []string{"Event"}
	})
	if r := s.Do(t, "POST", "/classes/Event", map[string]any{"n": 1}, servertest.App()); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		wantErr error
		want    int
	}{
		{name: "caller still there", ctx: context.Background(), want: 1},
		{name: "caller gone", ctx: gone, wantErr: context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			auth := service.Auth{Master: true}.WithContext(tc.ctx)
			res, err := s.Service.Find(auth, "Event", service.FindParams{Limit: 100})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("find: err %v, want %v", err, tc.wantErr)
			}
			if err == nil && len(res.Results) != tc.want {
				t.Errorf("find: %d results, want %d", len(res.Results), tc.want)
			}
		})
	}
}

// TestSQLQueryStopsWhenClientHangsUp: a REST find of a class kept in
// PostgreSQL, blocked there (a test transaction holds the table's lock),
// is cancelled in PostgreSQL once its client closes the connection,
// long before the query timeout (30 s) would end it.
func TestSQLQueryStopsWhenClientHangsUp(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	s := servertest.Start(t, func(o *config.Options) {
		o.DatabaseURI = uri
		o.SQLClasses = []string{"Event"}
	})
	if r := s.Do(t, "POST", "/classes/Event", map[string]any{"n": 1}, servertest.App()); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	locker, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	watcher, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(ctx)
	var table string
	if err := locker.QueryRow(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'Event'`).Scan(&table); err != nil {
		t.Fatalf("the class's table: %v", err)
	}
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE "Event" IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	// blocked counts the queries of the class waiting for the lock.
	blocked := func() int {
		var n int
		if err := watcher.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query ILIKE '%"Event"%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// waitFor polls until cond holds, failing after a bound far beyond
	// the hang-up watch's polls (and far below the query timeout).
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s", what)
			}
		}
	}
	u, _ := url.Parse(s.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s/classes/Event HTTP/1.1\r\nHost: %s\r\nX-Parse-Application-Id: %s\r\nX-Parse-Master-Key: %s\r\n\r\n",
		u.Path, u.Host, servertest.AppID, servertest.MasterKey)
	waitFor("the find waits for the lock in PostgreSQL", func() bool { return blocked() == 1 })
	conn.Close()
	waitFor("the find is cancelled after its client hung up", func() bool { return blocked() == 0 })
}

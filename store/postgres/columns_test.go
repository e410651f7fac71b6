package postgres_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// TestTypedColumns checks that values land in typed columns a person can
// query with psql, and only misfits in $extra.
func TestTypedColumns(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, err := postgres.Open(uri, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Commit(conformance[0].commits[0]); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var (
		name, owner string
		rank        float64
		open        bool
		when        time.Time
		lat, lng    float64
		tags        []any
		extra       map[string]any
	)
	err = conn.QueryRow(ctx, `SELECT "name", "rank", "open", "when", "owner", ST_Y("where"::geometry), ST_X("where"::geometry), "tags", "$extra"
		FROM "Place" WHERE "objectId" = $1`, "a1").Scan(&name, &rank, &open, &when, &owner, &lat, &lng, &tags, &extra)
	if err != nil {
		t.Fatal(err)
	}
	if name != "Café ☕" || rank != -0.5 || !open || when.UTC().Format(time.RFC3339Nano) != "1999-12-31T23:59:59.999Z" ||
		owner != "u1" || lat != -33.8688 || lng != 151.2093 || len(tags) != 4 {
		t.Errorf("typed columns: %q %v %v %v %q %v %v %v", name, rank, open, when, owner, lat, lng, tags)
	}
	if want := map[string]any{"_rperm": []any{"*"}, "_hashed_password": "$2a$10$x"}; !reflect.DeepEqual(extra, want) {
		t.Errorf("$extra = %v, want %v", extra, want)
	}
	// the misfits of a2 stay in $extra, typed columns NULL
	var misfit []byte
	if err := conn.QueryRow(ctx, `SELECT "$extra" FROM "Place" WHERE "objectId" = 'a2' AND "name" IS NULL AND "rank" IS NULL AND "when" IS NULL`).Scan(&misfit); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(misfit, &m); err != nil || len(m) != 8 {
		t.Errorf("a2's $extra = %s", misfit)
	}
	// relations and settings
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM "_Join:fans:Place" WHERE "owningId" = 'a1'`).Scan(&n); err != nil || n != 2 {
		t.Errorf("join rows = %d, %v", n, err)
	}
	var changes int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM "_changes"`).Scan(&changes); err != nil || changes != 1 {
		t.Errorf("changes = %d, %v", changes, err)
	}
}

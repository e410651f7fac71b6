package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

const zoneSchema = `{"className":"Zone","fields":{"area":{"type":"Polygon"},"name":{"type":"String"}}}`

// randomRing is a closed ring of n random vertices with full-precision
// coordinates, as JSON.
func randomRing(r *rand.Rand, n int) string {
	var pts []string
	for range n {
		pts = append(pts, fmt.Sprintf("[%v,%v]", r.Float64()*180-90, r.Float64()*360-180))
	}
	pts = append(pts, pts[0])
	return "[" + strings.Join(pts, ",") + "]"
}

// TestPolygonColumn checks that Polygon values that PostGIS can hold land
// in the geometry column, readable with psql, and that every value, there
// or in $extra, loads back exactly.
func TestPolygonColumn(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 2))
	inColumn := map[string]string{
		"square":  `[[0,0],[0,1],[1,1],[1,0],[0,0]]`,
		"edges":   `[[-90,-180],[90,-180],[90,180],[-90,180],[-90,-180]]`,
		"tiny":    `[[1e-300,5e-324],[0,1],[1,1],[1e-300,5e-324]]`,
		"negzero": `[[-0,0],[0,1],[1,1],[-0,0]]`,
	}
	for i := range 20 {
		inColumn[fmt.Sprintf("random%d", i)] = randomRing(r, 3+i)
	}
	inExtra := map[string]string{
		"open":     `[[0,0],[0,1],[1,1]]`,           // Quarry closes rings; an open one still reads back as written
		"three":    `[[0,0],[0,1],[0,0]]`,           // PostGIS wants 4 points
		"outside":  `[[0,0],[0,200],[1,1],[0,0]]`,   // longitude past 180
		"triplets": `[[0,0,1],[0,1],[1,1],[0,0]]`,   // not pairs
		"strings":  `[["0",0],[0,1],[1,1],["0",0]]`, // not numbers
	}
	commit := []store.Record{sch("Zone", zoneSchema)}
	for id, ring := range inColumn {
		commit = append(commit, obj("Zone", id, `{"objectId":"`+id+`","area":{"__type":"Polygon","coordinates":`+ring+`}}`))
	}
	for id, ring := range inExtra {
		commit = append(commit, obj("Zone", id, `{"objectId":"`+id+`","area":{"__type":"Polygon","coordinates":`+ring+`}}`))
	}
	commit = append(commit, obj("Zone", "extraKey", `{"objectId":"extraKey","area":{"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[0,0]],"x":1}}`))

	uri := pgtest.NewDatabase(t)
	a, err := postgres.Open(uri, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Commit(commit); err != nil {
		t.Fatal(err)
	}
	mem, err := store.Open(store.MemoryURI)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := mem.Commit(commit); err != nil {
		t.Fatal(err)
	}
	compareLoads(t, loadAll(t, mem), loadAll(t, a))

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var typ string
	if err := conn.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '"Zone"'::regclass AND attname = 'area'`).Scan(&typ); err != nil || typ != "geometry(Polygon,4326)" {
		t.Errorf("area column is %q (%v), want geometry(Polygon,4326)", typ, err)
	}
	for id := range inColumn {
		var n int
		if err := conn.QueryRow(ctx, `SELECT ST_NPoints("area") FROM "Zone" WHERE "objectId" = $1 AND NOT coalesce("$extra" ? 'area', false)`, id).Scan(&n); err != nil {
			t.Errorf("%s: not in the geometry column: %v", id, err)
		}
	}
	for id := range inExtra {
		var inCol bool
		if err := conn.QueryRow(ctx, `SELECT "area" IS NOT NULL FROM "Zone" WHERE "objectId" = $1`, id).Scan(&inCol); err != nil || inCol {
			t.Errorf("%s: in the column (%v), want $extra", id, err)
		}
	}
	// what psql shows, and a query a person might run: longitude first
	var wkt string
	var covers bool
	if err := conn.QueryRow(ctx, `SELECT ST_AsText("area"), ST_Covers("area", ST_SetSRID(ST_MakePoint(0.5, 0.5), 4326)) FROM "Zone" WHERE "objectId" = 'square'`).Scan(&wkt, &covers); err != nil {
		t.Fatal(err)
	}
	if wkt != "POLYGON((0 0,1 0,1 1,0 1,0 0))" || !covers {
		t.Errorf("square reads %s, covers (0.5, 0.5): %v", wkt, covers)
	}
}

// TestPolygonColumnMigrated opens a database whose Polygon column is jsonb
// (as written before Polygon had a geometry column): its values move to
// $extra, load back unchanged, and the next write fills the new column.
func TestPolygonColumnMigrated(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, err := postgres.Open(uri, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const z1 = `{"objectId":"z1","name":"one","area":{"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[0,0]]}}`
	commit := []store.Record{sch("Zone", zoneSchema), obj("Zone", "z1", z1)}
	if err := a.Commit(commit); err != nil {
		t.Fatal(err)
	}
	a.Close()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// the old layout: the polygon as jsonb
	if _, err := conn.Exec(ctx, `ALTER TABLE "Zone" ALTER COLUMN "area" TYPE jsonb USING '{"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[0,0]]}'::jsonb`); err != nil {
		t.Fatal(err)
	}

	b, err := postgres.Open(uri, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := []store.Record{sch("Zone", zoneSchema), obj("Zone", "z1", z1)}
	got := loadAll(t, b)
	compareLoads(t, loadOf(t, want), got)
	var inCol bool
	if err := conn.QueryRow(ctx, `SELECT "area" IS NOT NULL FROM "Zone"`).Scan(&inCol); err != nil || inCol {
		t.Fatalf("after the migration: area in the column %v (%v), want in $extra", inCol, err)
	}
	if err := b.Commit([]store.Record{obj("Zone", "z1", z1)}); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT "area" IS NOT NULL AND NOT coalesce("$extra" ? 'area', false) FROM "Zone"`).Scan(&inCol); err != nil || !inCol {
		t.Errorf("after a write: area in the column %v (%v)", inCol, err)
	}
	compareLoads(t, loadOf(t, want), loadAll(t, b))
}

// loadOf is what the in-memory store loads after commit.
func loadOf(t *testing.T, commit []store.Record) []store.Record {
	t.Helper()
	mem, err := store.Open(store.MemoryURI)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := mem.Commit(commit); err != nil {
		t.Fatal(err)
	}
	return loadAll(t, mem)
}

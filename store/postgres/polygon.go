package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/schema"
)

// polygonSQLType is a Polygon field's column. geometry rather than
// geography: Quarry's polygon edges are straight lines on the
// latitude/longitude plane (geo.Polygon, as Parse Server's own PostgreSQL
// `point <@ polygon`), which is what a planar geometry in EPSG:4326 means;
// geography would make them great-circle arcs, and ST_Covers in psql would
// disagree with Quarry's $geoIntersects on long edges.
const polygonSQLType = "geometry(Polygon,4326)"

// polygonSelect reads a Polygon column as two float8 arrays, the ring's
// latitudes and longitudes in order: ST_X and ST_Y give each double
// exactly, where a text form would round.
func polygonSelect(q string) string {
	// (ARRAY of nothing is an empty array, not NULL: hence the CASE.)
	return fmt.Sprintf("CASE WHEN %s IS NOT NULL THEN ARRAY(SELECT ST_Y(p.geom) FROM ST_DumpPoints(%[1]s) p ORDER BY p.path) END, "+
		"CASE WHEN %[1]s IS NOT NULL THEN ARRAY(SELECT ST_X(p.geom) FROM ST_DumpPoints(%[1]s) p ORDER BY p.path) END", q)
}

// polygonArg is a Polygon value as EWKT for its column, when the column
// gives it back exactly: {"__type":"Polygon","coordinates":[[lat,lng],...]}
// with a closed ring of at least 4 points (PostGIS's rule; Quarry stores
// rings closed). Coordinates print in the shortest form that parses back
// to the same double.
func polygonArg(v any) (any, bool) {
	m, ok := special(v, "Polygon", 2)
	if !ok {
		return nil, false
	}
	coords, ok := m["coordinates"].([]any)
	if !ok || len(coords) < 4 {
		return nil, false
	}
	var b strings.Builder
	b.WriteString("SRID=4326;POLYGON((")
	var first, last [2]float64
	for i, c := range coords {
		pair, ok := c.([]any)
		if !ok || len(pair) != 2 {
			return nil, false
		}
		lat, ok1 := pair[0].(float64)
		lng, ok2 := pair[1].(float64)
		if !ok1 || !ok2 || lat < -90 || lat > 90 || lng < -180 || lng > 180 {
			return nil, false
		}
		if i == 0 {
			first = [2]float64{lat, lng}
		} else {
			b.WriteString(",")
		}
		last = [2]float64{lat, lng}
		b.WriteString(strconv.FormatFloat(lng, 'g', -1, 64) + " " + strconv.FormatFloat(lat, 'g', -1, 64))
	}
	if first != last {
		return nil, false
	}
	b.WriteString("))")
	return b.String(), true
}

// polygonCoordinates rebuilds [[lat,lng],...] from the arrays
// polygonSelect read.
func polygonCoordinates(lats, lngs any) ([]any, error) {
	la, ok1 := lats.([]any)
	ln, ok2 := lngs.([]any)
	if !ok1 || !ok2 || len(la) != len(ln) {
		return nil, errors.New("the polygon column does not read back as a ring")
	}
	out := make([]any, len(la))
	for i := range la {
		out[i] = []any{la[i], ln[i]}
	}
	return out, nil
}

// migratePolygonColumns turns the jsonb Polygon columns of databases
// written before Polygon had its own column type into geometry columns.
// Their values move to $extra unchanged (so every object reads back as it
// was); each object's next write puts its polygon in the new column.
// It runs in prepare's transaction, under the commit lock.
func migratePolygonColumns(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT s."className", s."schema", c.column_name
		FROM `+quote(tableSchema)+` s JOIN information_schema.columns c
		  ON c.table_schema = current_schema() AND c.table_name = s."tableName" AND c.udt_name = 'jsonb'
		WHERE s."schema" IS NOT NULL`)
	if err != nil {
		return err
	}
	type move struct{ table, key, column string }
	var moves []move
	for rows.Next() {
		var class, column string
		var raw []byte
		if err := rows.Scan(&class, &raw, &column); err != nil {
			rows.Close()
			return err
		}
		var c schema.Class
		if err := json.Unmarshal(raw, &c); err != nil {
			rows.Close()
			return fmt.Errorf("the schema of %s in %s is not valid JSON", class, tableSchema)
		}
		for _, col := range layoutOf(class, &c, true).cols {
			if col.kind == kindPolygon && col.name == column {
				moves = append(moves, move{identName(class), col.key, col.name})
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range moves {
		t, c := quote(m.table), quote(m.column)
		if _, err := tx.Exec(ctx, "UPDATE "+t+" SET "+quote(colExtra)+" = coalesce("+quote(colExtra)+", '{}'::jsonb) || jsonb_build_object($1::text, "+c+") WHERE "+c+" IS NOT NULL", m.key); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "ALTER TABLE "+t+" ALTER COLUMN "+c+" TYPE "+polygonSQLType+" USING NULL"); err != nil {
			return err
		}
	}
	return nil
}

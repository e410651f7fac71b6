package transfer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/schema"
)

// isPostgresURI reports whether from names a PostgreSQL database rather
// than files.
func isPostgresURI(from string) bool {
	l := strings.ToLower(from)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// redactURI drops the password from a database URI, for checkpoints and
// messages.
func redactURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "postgres://(unparsable URI)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// postgresSource reads a Parse Server database kept in PostgreSQL: one
// table per class (a column per field, "_rperm"/"_wperm" text arrays,
// pointers as the target's objectId, timestamptz dates, jsonb objects and
// arrays, point and polygon geometry), the "_SCHEMA" table of class
// schemas, and "_Join:<key>:<Class>" tables of relation members.
type postgresSource struct {
	ctx  context.Context
	conn *pgx.Conn
}

// listPostgres connects to uri and lists its tables as collections:
// _SCHEMA first, relations last.
func listPostgres(ctx context.Context, uri string) (*postgresSource, []Collection, error) {
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		return nil, nil, fmt.Errorf("transfer: connect to %s: %w", redactURI(uri), err)
	}
	ps := &postgresSource{ctx: ctx, conn: conn}
	// Parse's tables: class tables have an objectId column; other tables
	// (PostGIS's spatial_ref_sys, an application's own) are left alone.
	rows, err := conn.Query(ctx, `SELECT c.relname, greatest(c.reltuples, 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()
		AND (c.relname = '_SCHEMA' OR c.relname LIKE '\_Join:%' OR EXISTS (
			SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'objectId' AND NOT a.attisdropped))`)
	if err != nil {
		conn.Close(ctx)
		return nil, nil, err
	}
	var cols []Collection
	for rows.Next() {
		var c Collection
		if err := rows.Scan(&c.Name, &c.Size); err != nil {
			rows.Close()
			conn.Close(ctx)
			return nil, nil, err
		}
		name := c.Name
		c.open = func() (documents, error) { return ps.table(name) }
		cols = append(cols, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		conn.Close(ctx)
		return nil, nil, err
	}
	if len(cols) == 0 {
		conn.Close(ctx)
		return nil, nil, fmt.Errorf("%w in %s (no tables in its current schema)", ErrNoSource, redactURI(uri))
	}
	for i, c := range cols {
		if c.Size > 0 {
			continue
		}
		// Never analysed (reltuples unknown): count, so progress is right.
		q := `SELECT count(*) FROM ` + pgx.Identifier{c.Name}.Sanitize()
		if err := conn.QueryRow(ctx, q).Scan(&cols[i].Size); err != nil {
			conn.Close(ctx)
			return nil, nil, fmt.Errorf("transfer: count table %s: %w", c.Name, err)
		}
	}
	sortCollections(cols)
	return ps, cols, nil
}

func (ps *postgresSource) close() { ps.conn.Close(context.Background()) }

// table streams a table's rows as JSON objects, in key order so that a
// resumed import skips exactly the rows it committed.
func (ps *postgresSource) table(name string) (documents, error) {
	order := `"objectId"`
	switch {
	case name == schemaColl:
		order = `"className"`
	case strings.HasPrefix(name, joinPrefix):
		order = `"owningId", "relatedId"`
	}
	q := fmt.Sprintf(`SELECT row_to_json(t)::text FROM %s t ORDER BY %s`, pgx.Identifier{name}.Sanitize(), order)
	rows, err := ps.conn.Query(ps.ctx, q)
	if err != nil {
		return nil, fmt.Errorf("transfer: read table %s: %w", name, err)
	}
	return &pgRows{rows: rows}, nil
}

type pgRows struct {
	rows pgx.Rows
	n    int64
}

func (r *pgRows) Next(skip bool) ([]byte, error) {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	r.n++
	var text string
	if err := r.rows.Scan(&text); err != nil || skip {
		return nil, err
	}
	return []byte(text), nil
}

func (r *pgRows) Decode(raw []byte) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

func (r *pgRows) Offset() int64  { return r.n }
func (r *pgRows) Format() Format { return FormatPostgres }
func (r *pgRows) Close() error   { r.rows.Close(); return nil }

// classFromPostgres reads a row of Parse Server's "_SCHEMA" table:
// {"className", "schema": {fields, classLevelPermissions, indexes}}.
func classFromPostgres(row map[string]any) (*schema.Class, error) {
	name, _ := row["className"].(string)
	def, _ := row["schema"].(map[string]any)
	if name == "" || def == nil {
		return nil, fmt.Errorf("_SCHEMA row without className or schema")
	}
	c := schema.NewClass(name)
	fields, _ := def["fields"].(map[string]any)
	for k, v := range fields {
		spec, _ := v.(map[string]any)
		typ, _ := spec["type"].(string)
		if strings.HasPrefix(k, "_") || typ == "" {
			continue // _rperm, _wperm, _hashed_password...: Parse Server's own columns
		}
		f := schema.Field{Type: schema.Type(typ)}
		f.TargetClass, _ = spec["targetClass"].(string)
		f.Required, _ = spec["required"].(bool)
		f.DefaultValue = spec["defaultValue"]
		c.Fields[k] = f
	}
	raw, present := def["classLevelPermissions"]
	clp, err := clpOf(name, raw, present)
	if err != nil {
		return nil, err
	}
	c.CLP = clp
	if idx, ok := def["indexes"].(map[string]any); ok {
		c.Indexes = indexesFromMongo(idx)
	}
	return c, nil
}

// objectFromPostgres turns a row of a class table into a stored object.
// Columns are typed by the class schema; a NULL column is a field the
// object does not have.
func objectFromPostgres(class string, row map[string]any, cls *schema.Class) (converted, error) {
	var out converted
	id, _ := row["objectId"].(string)
	if id == "" {
		return out, fmt.Errorf("no objectId")
	}
	obj := schema.Object{"objectId": id}
	out.obj = obj
	if row[mongoRPerm] != nil || row[mongoWPerm] != nil {
		obj["ACL"] = aclFromPerms(row[mongoRPerm], row[mongoWPerm])
	}
	for k, v := range row {
		if v == nil {
			continue
		}
		switch {
		case k == "objectId" || k == mongoRPerm || k == mongoWPerm:
		case k == "createdAt" || k == "updatedAt":
			t, ok := schema.ParseTime(fmt.Sprint(v))
			if !ok {
				return out, fmt.Errorf("%s is not a date", k)
			}
			obj[k] = schema.FormatTime(t)
		case strings.HasPrefix(k, "_"):
			out.internalField(class, k, v)
		default:
			cv, err := postgresValue(cls.Fields[k], v)
			if err != nil {
				out.dropped = append(out.dropped, k+": "+err.Error())
				continue
			}
			obj[k] = cv
		}
	}
	out.finish(class)
	return out, nil
}

// postgresValue converts one column value (as row_to_json renders it) of
// a field of type f.
func postgresValue(f schema.Field, v any) (any, error) {
	switch f.Type {
	case schema.TypePointer:
		if id, ok := v.(string); ok {
			return schema.Pointer(f.TargetClass, id), nil
		}
	case schema.TypeDate:
		if t, ok := schema.ParseTime(fmt.Sprint(v)); ok {
			return schema.Date(schema.FormatTime(t)), nil
		}
		return nil, fmt.Errorf("not a date")
	case schema.TypeFile:
		if name, ok := v.(string); ok {
			return map[string]any{"__type": "File", "name": name}, nil
		}
	case schema.TypeGeoPoint:
		pts, err := pgPoints(fmt.Sprint(v))
		if err != nil || len(pts) != 1 {
			return nil, fmt.Errorf("not a point")
		}
		return map[string]any{"__type": "GeoPoint", "latitude": pts[0][1], "longitude": pts[0][0]}, nil
	case schema.TypePolygon:
		pts, err := pgPoints(fmt.Sprint(v))
		if err != nil || len(pts) < 3 {
			return nil, fmt.Errorf("not a polygon")
		}
		coords := make([]any, len(pts))
		for i, p := range pts {
			coords[i] = []any{p[1], p[0]}
		}
		return map[string]any{"__type": "Polygon", "coordinates": coords}, nil
	}
	return v, nil
}

// pgPoints reads PostgreSQL's text form of a point "(x,y)" or a polygon
// "((x1,y1),(x2,y2),...)"; x is the longitude, y the latitude.
func pgPoints(s string) ([][2]float64, error) {
	s = strings.NewReplacer("(", " ", ")", " ").Replace(s)
	parts := strings.Split(s, ",")
	if len(parts)%2 != 0 {
		return nil, fmt.Errorf("odd coordinates")
	}
	var out [][2]float64
	for i := 0; i < len(parts); i += 2 {
		x, err1 := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
		y, err2 := strconv.ParseFloat(strings.TrimSpace(parts[i+1]), 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad coordinate")
		}
		out = append(out, [2]float64{x, y})
	}
	return out, nil
}

// sortCollections puts _SCHEMA first and relations last, the rest by name.
func sortCollections(cols []Collection) {
	rank := func(c Collection) int {
		switch {
		case c.isSchema():
			return 0
		case strings.HasPrefix(c.Name, joinPrefix):
			return 2
		}
		return 1
	}
	slices.SortFunc(cols, func(a, b Collection) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Name, b.Name)
	})
}

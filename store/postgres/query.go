package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quarrydata/quarry/store"
)

// KeepOut implements store.Querier: Load skips these classes' objects.
func (a *Adapter) KeepOut(classes []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keepOut == nil {
		a.keepOut = map[string]bool{}
	}
	for _, c := range classes {
		a.keepOut[c] = true
	}
}

func (a *Adapter) keptOut(class string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.keepOut[class]
}

// tableOf is the layout queries read class's table with: the one derived
// from the schema this instance's memory holds, as commits derive theirs.
func (a *Adapter) tableOf(class string) (*layout, bool) {
	raw, ok := a.knownSchema(class)
	if !ok {
		return nil, false
	}
	return layoutOf(class, parseSchema(raw), true), true
}

// Table implements store.Querier.
func (a *Adapter) Table(class string) (store.Table, bool) {
	l, ok := a.tableOf(class)
	if !ok {
		return store.Table{}, false
	}
	t := store.Table{Columns: make(map[string]store.Column, len(l.cols)), ID: colID, Extra: colExtra, Raw: colRaw}
	for _, c := range l.cols {
		t.Columns[c.key] = store.Column{Name: c.name, Kind: columnKinds[c.kind], Target: c.target}
	}
	return t, true
}

var columnKinds = [...]store.ColumnKind{
	kindText: store.ColumnText, kindNumber: store.ColumnNumber, kindBool: store.ColumnBoolean,
	kindDate: store.ColumnDate, kindStamp: store.ColumnStamp, kindPointer: store.ColumnPointer,
	kindGeo: store.ColumnGeoPoint, kindJSON: store.ColumnJSON, kindPolygon: store.ColumnPolygon,
}

// statement is q as SQL over l's table, selecting what.
func (l *layout) statement(what string, q store.Select, page bool) (string, []any) {
	sql := l.shape() + "SELECT " + what + " FROM " + quote(l.table)
	if q.Where != "" {
		sql += " WHERE " + q.Where
	}
	args := q.Args
	if !page {
		return sql, args
	}
	if q.OrderBy != "" {
		sql += " ORDER BY " + q.OrderBy
		args = append(args[:len(args):len(args)], q.OrderArgs...)
	}
	if q.Limit >= 0 {
		args = append(args[:len(args):len(args)], q.Limit)
		sql += " LIMIT $" + strconv.Itoa(len(args))
	}
	if q.Offset > 0 {
		args = append(args[:len(args):len(args)], q.Offset)
		sql += " OFFSET $" + strconv.Itoa(len(args))
	}
	return sql, args
}

// noTable reports whether err is PostgreSQL's "relation does not exist":
// a class whose table is not there (yet) holds no object.
func noTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42P01"
}

// Select implements store.Querier.
func (a *Adapter) Select(ctx context.Context, class string, q store.Select, fn func(id string, object []byte) error) (err error) {
	defer func() { err = a.readFault(err) }()
	l, ok := a.tableOf(class)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	sql, args := l.statement(strings.TrimPrefix(l.selectList(), l.shape()), q, true)
	if q.Batch > 0 {
		return a.selectBatched(ctx, class, l, sql, args, q.Batch, fn)
	}
	rows, err := a.pool.Query(ctx, sql, args...)
	if err != nil {
		if noTable(err) {
			return nil
		}
		return fmt.Errorf("postgres: query on %s: %w", class, err)
	}
	defer rows.Close()
	return scanRows(class, l, rows, fn)
}

// maxBatch bounds the growth of a cursor's fetches.
const maxBatch = 8192

// selectBatched runs sql through a cursor in a read-only transaction (one
// snapshot for every fetch), fetching batch rows, then twice as many each
// time: a caller that stops early leaves the rest unproduced, and the
// cursor makes PostgreSQL plan for the first rows (an index in the order
// rather than a sort of everything).
func (a *Adapter) selectBatched(ctx context.Context, class string, l *layout, sql string, args []any, batch int,
	fn func(id string, object []byte) error) error {
	tx, err := a.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres: query on %s: %w", class, err)
	}
	// Read-only: ending it by a rollback loses nothing, and its error
	// (a broken connection) leaves the pool to discard the connection.
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, "DECLARE quarry_rows NO SCROLL CURSOR FOR "+sql, args...); err != nil {
		if noTable(err) {
			return nil
		}
		return fmt.Errorf("postgres: query on %s: %w", class, err)
	}
	for {
		rows, err := tx.Query(ctx, "FETCH "+strconv.Itoa(batch)+" FROM quarry_rows")
		if err != nil {
			return fmt.Errorf("postgres: query on %s: %w", class, err)
		}
		n := 0
		err = scanRows(class, l, rows, func(id string, object []byte) error {
			n++
			return fn(id, object)
		})
		rows.Close()
		if err != nil || n < batch {
			return err
		}
		batch = min(2*batch, maxBatch)
	}
}

// scanRows decodes rows (l's select list) and hands each object to fn.
func scanRows(class string, l *layout, rows pgx.Rows, fn func(id string, object []byte) error) error {
	d := l.decoder()
	for rows.Next() {
		if err := rows.Scan(d.dest...); err != nil {
			return fmt.Errorf("postgres: query on %s: %w", class, err)
		}
		b, err := d.object()
		if err != nil {
			return fmt.Errorf("%w: %v", store.ErrDamaged, err)
		}
		if err := fn(d.id, b); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil && !noTable(err) {
		return fmt.Errorf("postgres: query on %s: %w", class, err)
	}
	return nil
}

// Count implements store.Querier.
func (a *Adapter) Count(ctx context.Context, class string, q store.Select) (_ int, err error) {
	defer func() { err = a.readFault(err) }()
	l, ok := a.tableOf(class)
	if !ok {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	sql, args := l.statement("count(*)", q, false)
	var n int64
	if err := a.pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		if noTable(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("postgres: count on %s: %w", class, err)
	}
	return int(n), nil
}

// planNode is one node of EXPLAIN (FORMAT JSON)'s plan tree.
type planNode struct {
	Type      string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	Rows      float64    `json:"Plan Rows"`
	IndexCond string     `json:"Index Cond"`
	Plans     []planNode `json:"Plans"`
}

// Explain implements store.Querier: a sequential scan of the table reads
// its estimated size (the planner's estimate for the whole table, asked
// separately), an index scan the rows of its index condition.
func (a *Adapter) Explain(ctx context.Context, class string, q store.Select) (float64, bool, error) {
	l, ok := a.tableOf(class)
	if !ok {
		return 0, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	sql, args := l.statement(quote(colID), q, true)
	root, err := a.explain(ctx, sql, args)
	if err != nil {
		if noTable(err) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("postgres: explain on %s: %w", class, err)
	}
	// A Limit over a streaming child stops it early: its scans read the
	// fraction of their rows PostgreSQL expects the limit to need.
	type scan struct {
		rows float64
		seq  bool
	}
	var scans []scan
	var walk func(n planNode, frac float64)
	walk = func(n planNode, frac float64) {
		index := n.Type == "Index Scan" || n.Type == "Index Only Scan" || n.Type == "Bitmap Index Scan"
		switch {
		case n.Relation == l.table && (n.Type == "Seq Scan" || index && n.IndexCond == ""):
			// A whole index walked for its order reads the table too.
			scans = append(scans, scan{frac, true})
		case index:
			scans = append(scans, scan{n.Rows * frac, false})
		}
		if n.Type == "Limit" && len(n.Plans) == 1 && n.Plans[0].Rows > 0 && !blocking[n.Plans[0].Type] {
			frac *= min(1, n.Rows/n.Plans[0].Rows)
		}
		for _, c := range n.Plans {
			walk(c, frac)
		}
	}
	walk(root, 1)
	var rows, all float64
	seq := false
	for _, s := range scans {
		if !s.seq {
			rows += s.rows
			continue
		}
		if !seq {
			whole, err := a.explain(ctx, l.shape()+"SELECT 1 FROM "+quote(l.table), nil)
			if err != nil {
				return 0, false, fmt.Errorf("postgres: explain on %s: %w", class, err)
			}
			all, seq = whole.Rows, true
		}
		rows += all * s.rows
	}
	return rows, seq, nil
}

// blocking are the plan nodes that read all their input before the first
// row comes out: a Limit above them does not shorten their scans.
var blocking = map[string]bool{"Sort": true, "Incremental Sort": true, "Aggregate": true, "Hash": true,
	"Materialize": true, "WindowAgg": true, "Unique": true, "SetOp": true}

func (a *Adapter) explain(ctx context.Context, sql string, args []any) (planNode, error) {
	var raw []byte
	if err := a.pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
		return planNode{}, err
	}
	var out []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) == 0 {
		return planNode{}, fmt.Errorf("EXPLAIN gave no plan")
	}
	return out[0].Plan, nil
}

var _ store.Querier = (*Adapter)(nil)

// EnsureIndexes implements store.Querier: a B-tree per typed column
// (strings under the C collation, as queries compare them), a GiST index
// per GeoPoint and Polygon column. Several instances may race to create one: the
// loser's duplicate is no error. The indexes are built concurrently with
// writes; one whose build was cut short by a crash stays invalid
// (PostgreSQL maintains it but plans without it) until it is dropped.
func (a *Adapter) EnsureIndexes(ctx context.Context, class string, keys []string) error {
	l, ok := a.tableOf(class)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	for _, key := range keys {
		i, found := slices.BinarySearchFunc(l.cols, key, func(c column, k string) int { return strings.Compare(c.key, k) })
		if !found {
			continue
		}
		c := l.cols[i]
		var using string
		switch c.kind {
		case kindJSON:
			continue
		case kindGeo, kindPolygon:
			// A B-tree would hold whole polygons, past its row size.
			using = "USING gist (" + quote(c.name) + ")"
		case kindText, kindPointer:
			using = "(" + quote(c.name) + ` COLLATE "C")`
		default:
			using = "(" + quote(c.name) + ")"
		}
		name := identName(l.table + ":" + c.name + ":idx")
		// CONCURRENTLY: writes to the table go on while it builds (a
		// plain CREATE INDEX would hold them for the whole build).
		_, err := a.pool.Exec(ctx, "CREATE INDEX CONCURRENTLY IF NOT EXISTS "+quote(name)+" ON "+quote(l.table)+" "+using)
		var pe *pgconn.PgError
		if err != nil && !(errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07")) && !noTable(err) {
			// A failed concurrent build leaves its index invalid (kept up
			// by writes, never used): it goes, so a later call builds it.
			dctx, dcancel := context.WithTimeout(context.Background(), a.opts.Timeout)
			_, _ = a.pool.Exec(dctx, "DROP INDEX CONCURRENTLY IF EXISTS "+quote(name))
			dcancel()
			return fmt.Errorf("postgres: index on %s.%s: %w", class, key, err)
		}
	}
	return nil
}

// Sizes implements store.Querier from pg_class.reltuples (-1, never
// analyzed, reads as 0).
func (a *Adapter) Sizes(ctx context.Context) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	rows, err := a.pool.Query(ctx, `SELECT s."className", greatest(c.reltuples, 0)::float8 FROM `+quote(tableSchema)+
		` s JOIN pg_class c ON c.oid = to_regclass(quote_ident(s."tableName"))`)
	if err != nil {
		return nil, fmt.Errorf("postgres: class sizes: %w", err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var class string
		var n float64
		if err := rows.Scan(&class, &n); err != nil {
			return nil, err
		}
		out[class] = n
	}
	return out, rows.Err()
}

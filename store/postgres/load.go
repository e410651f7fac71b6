package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Load implements store.Adapter: every record, in (Kind, Class, Key) order,
// read from one snapshot (REPEATABLE READ), which also fixes Position.
// It is not bounded by Options.Timeout: a large database takes long.
func (a *Adapter) Load(fn func(store.Record) error) error {
	if a.isClosed() {
		return store.ErrClosed
	}
	ctx := context.Background()
	err := pgx.BeginTxFunc(ctx, a.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var pos int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(max("id"), 0) FROM `+quote(tableChanges)).Scan(&pos); err != nil {
			return err
		}
		l := loader{a: a, ctx: ctx, tx: tx, fn: fn}
		// Kinds in byte order: join 'j' < meta 'm' < object 'o' < schema 's'.
		for _, step := range []func() error{l.joins, l.meta, l.objects, l.schemas} {
			if err := step(); err != nil {
				return err
			}
		}
		a.mu.Lock()
		a.position = pos
		a.mu.Unlock()
		a.advance(pos)
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: load: %w", err)
	}
	return nil
}

type loader struct {
	a   *Adapter
	ctx context.Context
	tx  pgx.Tx
	fn  func(store.Record) error
}

// pairs runs a query of (text, text) rows and calls each with them.
func (l *loader) pairs(sql string, each func(a, b string) error) error {
	rows, err := l.tx.Query(l.ctx, sql)
	if err != nil {
		return err
	}
	defer rows.Close()
	var x, y string
	for rows.Next() {
		if err := rows.Scan(&x, &y); err != nil {
			return err
		}
		if err := each(x, y); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (l *loader) joins() error {
	type join struct{ class, table string }
	var all []join
	err := l.pairs(`SELECT "joinClass", "tableName" FROM `+quote(tableJoins)+` ORDER BY "joinClass" COLLATE "C"`, func(c, t string) error {
		all = append(all, join{c, t})
		return nil
	})
	if err != nil {
		return err
	}
	for _, j := range all {
		err := l.pairs(`SELECT "owningId", "relatedId" FROM `+quote(j.table)+` ORDER BY ("owningId" || ':' || "relatedId") COLLATE "C"`, func(o, r string) error {
			return l.fn(store.Record{Kind: store.KindJoin, Class: j.class, Key: o + ":" + r, Value: []byte{}})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) meta() error {
	rows, err := l.tx.Query(l.ctx, `SELECT "key", "value" FROM `+quote(tableMeta)+` ORDER BY "key" COLLATE "C"`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r store.Record
		r.Kind = store.KindMeta
		if err := rows.Scan(&r.Key, &r.Value); err != nil {
			return err
		}
		if r.Value == nil {
			r.Value = []byte{}
		}
		if err := l.fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// classes lists every class table with its schema (nil when none).
func (l *loader) classes() ([]string, map[string][]byte, error) {
	rows, err := l.tx.Query(l.ctx, `SELECT "className", "schema" FROM `+quote(tableSchema)+` ORDER BY "className" COLLATE "C"`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var names []string
	schemas := map[string][]byte{}
	for rows.Next() {
		var name string
		var raw []byte
		if err := rows.Scan(&name, &raw); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		if raw != nil {
			schemas[name] = raw
		}
	}
	return names, schemas, rows.Err()
}

func (l *loader) objects() error {
	names, schemas, err := l.classes()
	if err != nil {
		return err
	}
	for _, class := range names {
		if l.a.keptOut(class) {
			continue // read by queries (query.go)
		}
		var c *schema.Class
		if raw := schemas[class]; raw != nil {
			c = &schema.Class{}
			if err := json.Unmarshal(raw, c); err != nil {
				return fmt.Errorf("%w: the schema of %s in %s is not valid JSON", store.ErrDamaged, class, tableSchema)
			}
		}
		lay := layoutOf(class, c, true)
		if err := l.objectsOf(lay); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) objectsOf(lay *layout) error {
	rows, err := l.tx.Query(l.ctx, "SELECT "+lay.selectList()+" FROM "+quote(lay.table)+" ORDER BY "+quote(colID))
	if err != nil {
		return err
	}
	defer rows.Close()
	d := lay.decoder()
	for rows.Next() {
		if err := rows.Scan(d.dest...); err != nil {
			return err
		}
		b, err := d.object()
		if err != nil {
			return fmt.Errorf("%w: %v", store.ErrDamaged, err)
		}
		if err := l.fn(store.Record{Kind: store.KindObject, Class: lay.class, Key: d.id, Value: b}); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (l *loader) schemas() error {
	names, schemas, err := l.classes()
	if err != nil {
		return err
	}
	for _, class := range names {
		if raw := schemas[class]; raw != nil {
			l.a.noteKnown(class, raw)
			if err := l.fn(store.Record{Kind: store.KindSchema, Class: class, Value: raw}); err != nil {
				return err
			}
		}
	}
	return nil
}

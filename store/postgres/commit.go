package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Commit implements store.Adapter: one PostgreSQL transaction applies the
// schema changes (CREATE / ALTER TABLE), the objects, relations and
// settings, and appends the whole commit to _changes, whose NOTIFY hands
// it to the other instances when it commits (notify.go).
func (a *Adapter) Commit(records []store.Record) error {
	return a.commit(records, nil)
}

// commit is Commit, refused when a guard does not hold (guard.go).
func (a *Adapter) commit(records []store.Record, guards []store.Guard) error {
	if a.isClosed() {
		return store.ErrClosed
	}
	for _, r := range records {
		switch r.Kind {
		case store.KindObject, store.KindSchema, store.KindJoin, store.KindMeta:
		default:
			return fmt.Errorf("%w: unknown kind %q", store.ErrInvalidRecord, r.Kind)
		}
		if strings.ContainsRune(r.Class, 0) || strings.ContainsRune(r.Key, 0) {
			return fmt.Errorf("%w: a class or key holds a NUL byte", store.ErrInvalidRecord)
		}
	}
	if len(records) == 0 {
		return nil
	}
	payload, err := encodeChange(records)
	if err != nil {
		return err
	}
	p := &pending{records: records, guards: guards, payload: payload, own: a.beginOwn(records), done: make(chan struct{})}
	a.group(p)
	var doubt *inDoubtError
	if errors.As(p.err, &doubt) {
		// Answered only once known (faults.go).
		switch id, err := a.resolve(p); {
		case err != nil:
			p.err = fmt.Errorf("%w (and whether it committed is unknown: %v)", doubt.err, err)
		case id > 0:
			p.id, p.err = id, nil
			a.settled(p)
		default:
			p.err = doubt.err
		}
	}
	a.endOwn(p.own, records, p.id)
	if p.err != nil {
		if unreachable(p.err) {
			a.unavailable(p.err)
			return fmt.Errorf("postgres: commit: %w: %w", store.ErrUnavailable, p.err)
		}
		return fmt.Errorf("postgres: commit: %w", asUnique(p.err))
	}
	if p.stale != nil {
		a.reachable()
		return fmt.Errorf("postgres: commit: %w", p.stale)
	}
	a.reachable()
	return nil
}

// maxGroup caps the Commits one transaction carries.
const maxGroup = 64

// pending is one Commit waiting for its group's transaction.
type pending struct {
	records []store.Record
	guards  []store.Guard  // what it was decided on (guard.go)
	stale   error          // a *store.StaleError: refused, nothing written
	payload []byte         // its _changes row
	schemas []store.Record // its schema records as stored (merged or not)
	merged  []store.Record // those merged with another instance's change
	own     *ownWrite
	sent    []byte // the _changes row its transaction wrote
	after   int64  // a change id its row must follow (faults.go)
	id      int64  // its change id, once committed
	err     error
	done    chan struct{}
}

// group commits p together with the Commits that arrive while another
// group is under way (group commit): the adapter's committer goroutine
// runs one transaction, and so one fsync, for all that queued meanwhile.
func (a *Adapter) group(p *pending) {
	a.gmu.Lock()
	if a.stopping {
		a.gmu.Unlock()
		p.err = store.ErrClosed
		return
	}
	a.queue = append(a.queue, p)
	a.gcond.Signal()
	a.gmu.Unlock()
	<-p.done
}

// runGroups commits queued groups until Close, finishing what is queued.
// A group that fails is retried one Commit at a time, so a Commit fails
// only for its own records.
func (a *Adapter) runGroups() {
	defer close(a.groupsDone)
	a.gmu.Lock()
	for {
		for len(a.queue) == 0 && !a.stopping {
			a.gcond.Wait()
		}
		if len(a.queue) == 0 {
			a.gmu.Unlock()
			return
		}
		n := min(len(a.queue), maxGroup)
		batch := a.queue[:n:n]
		a.queue = a.queue[n:]
		a.gmu.Unlock()
		start := time.Now()
		err := a.commitGroup(batch)
		if err == nil {
			a.groups.Add(1)
			a.commits.Add(uint64(len(batch)))
			if observe := a.observe.Load(); observe != nil {
				(*observe)(time.Since(start), len(batch))
			}
		}
		if err != nil {
			if len(batch) == 1 || unreachable(err) || errors.As(err, new(*inDoubtError)) {
				// Retrying one by one would not reach the database
				// either, and a group in doubt may have committed.
				for _, q := range batch {
					q.err = err
				}
			} else {
				for _, q := range batch {
					if q.err = a.commitGroup([]*pending{q}); q.err == nil {
						a.groups.Add(1)
						a.commits.Add(1)
					}
				}
			}
		}
		for _, q := range batch {
			close(q.done)
		}
		a.gmu.Lock()
	}
}

// commitGroup runs one transaction for batch and sets each one's id.
//
// The transaction is sent as two pipelined round trips in the usual case:
// BEGIN, the commit lock and the tables of every class the batch writes;
// then the row writes, the _changes rows, the NOTIFY and COMMIT. Every
// round trip made while holding the lock is paid by all instances'
// commits, which wait on it (schema changes add their own).
func (a *Adapter) commitGroup(batch []*pending) error {
	ctx, cancel := context.WithTimeout(context.Background(), a.opts.Timeout)
	defer cancel()
	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// A connection still inside a transaction (one that failed) is closed
	// by Release, never handed to another caller.
	defer conn.Release()
	c := &committer{a: a, ctx: ctx, conn: conn, tables: map[string]*tableState{}, joins: map[string]string{}}
	ids := make([]int64, len(batch))
	after := a.faults.seen.Load()
	for _, p := range batch {
		p.after = after
	}
	if err := c.run(batch, ids); err != nil {
		c.rollback()
		return err
	}
	for i, p := range batch {
		p.id = ids[i]
		a.settled(p)
	}
	return nil
}

// settled notes what p's commit, now known to have committed, changed.
func (a *Adapter) settled(p *pending) {
	a.noteSeen(p.id)
	for _, r := range p.schemas {
		a.noteKnown(r.Class, r.Value)
	}
	if len(p.merged) > 0 {
		a.mu.Lock()
		if a.mergedOwn == nil {
			a.mergedOwn = map[int64][]store.Record{}
		}
		a.mergedOwn[p.id] = p.merged
		a.mu.Unlock()
	}
}

// run is the transaction of commitGroup, up to and including its COMMIT.
func (c *committer) run(batch []*pending, ids []int64) error {
	if err := c.begin(batch); err != nil {
		return err
	}
	for _, p := range batch {
		c.cur = p
		p.merged, p.schemas = nil, nil
		// A stale Commit is left out; the others of its group go on.
		if p.stale = c.staleness(p); p.stale != nil {
			continue
		}
		rewritten := rewrittenLater(p.records)
		for i, r := range p.records {
			if rewritten != nil && rewritten[i] {
				continue // its row is written whole by a later record
			}
			if err := c.apply(r); err != nil {
				return err
			}
		}
	}
	if err := c.dropEmpty(); err != nil {
		return err
	}
	for i, p := range batch {
		if p.stale != nil {
			continue
		}
		payload := p.payload
		if len(p.merged) > 0 {
			// Others follow the merged schema, not the one sent.
			var err error
			if payload, err = encodeChange(withMerged(p.records, p.merged)); err != nil {
				return err
			}
		}
		p.sent = payload
		id := &ids[i]
		c.queued.Queue("INSERT INTO "+quote(tableChanges)+` ("origin", "records") VALUES ($1, $2) RETURNING "id"`,
			c.a.origin, payload).QueryRow(func(row pgx.Row) error { return row.Scan(id) })
		// lastval() is the id just inserted (notify.go).
		c.queued.Queue("SELECT pg_notify($1, lastval()::text || $2)", channel, notifyTail(c.a.origin, payload))
		c.queueVersions(writtenKeys(p))
	}
	c.queued.Queue("COMMIT")
	return mayHaveCommitted(c.flush())
}

// rewrittenLater marks the object records of one Commit that a later
// record of the same object replaces: each version stays in _changes,
// but the object's row is written once, by the last (an upsert writes
// the whole row). nil when none is.
func rewrittenLater(records []store.Record) []bool {
	if len(records) < 2 {
		return nil
	}
	var out []bool
	last := make(map[[2]string]int, len(records))
	for i, r := range records {
		if r.Kind != store.KindObject {
			continue
		}
		k := [2]string{r.Class, r.Key}
		if j, ok := last[k]; ok {
			if out == nil {
				out = make([]bool, len(records))
			}
			out[j] = true
		}
		last[k] = i
	}
	return out
}

// begin opens the transaction, takes the commit lock and reads the state
// of every table the batch writes, in one round trip.
func (c *committer) begin(batch []*pending) error {
	var classes, joinClasses []string
	seen := map[string]bool{}
	for _, p := range batch {
		for _, r := range p.records {
			var list *[]string
			switch r.Kind {
			case store.KindObject, store.KindSchema:
				list = &classes
			case store.KindJoin:
				list = &joinClasses
			default:
				continue
			}
			if k := string(rune(r.Kind)) + r.Class; !seen[k] {
				seen[k] = true
				*list = append(*list, r.Class)
			}
		}
	}
	var b pgx.Batch
	b.Queue("BEGIN")
	b.Queue("SELECT pg_advisory_xact_lock($1)", commitLock)
	if len(classes) > 0 {
		b.Queue(`SELECT "className", "schema" FROM `+quote(tableSchema)+` WHERE "className" = ANY($1)`, classes).Query(func(rows pgx.Rows) error {
			found := map[string][]byte{}
			for rows.Next() {
				var class string
				var raw []byte
				if err := rows.Scan(&class, &raw); err != nil {
					return err
				}
				found[class] = raw
			}
			if err := rows.Err(); err != nil {
				return err
			}
			for _, class := range classes {
				raw, ok := found[class]
				t, err := c.a.tableState(class, ok, raw)
				if err != nil {
					return err
				}
				c.tables[class] = t
			}
			return nil
		})
	}
	if keys := guardKeys(batch); len(keys) > 0 {
		b.Queue(`SELECT "key", "id", "origin" FROM `+quote(tableVersions)+` WHERE "key" = ANY($1)`, keys).Query(func(rows pgx.Rows) error {
			c.versions = make(map[string]version, len(keys))
			for rows.Next() {
				var k string
				var v version
				if err := rows.Scan(&k, &v.id, &v.origin); err != nil {
					return err
				}
				c.versions[k] = v
			}
			return rows.Err()
		})
	}
	c.queueContended(&b, c.a.contendable(batch))
	if len(joinClasses) > 0 {
		b.Queue(`SELECT "joinClass", "tableName" FROM `+quote(tableJoins)+` WHERE "joinClass" = ANY($1)`, joinClasses).Query(func(rows pgx.Rows) error {
			for _, jc := range joinClasses {
				c.joins[jc] = "" // known not to exist, unless found
			}
			for rows.Next() {
				var jc, table string
				if err := rows.Scan(&jc, &table); err != nil {
					return err
				}
				c.joins[jc] = table
			}
			return rows.Err()
		})
	}
	return c.conn.SendBatch(c.ctx, &b).Close()
}

// rollback ends a transaction that failed, if it is still open. When that
// fails too, Release closes the connection instead of reusing it.
func (c *committer) rollback() {
	if c.conn.Conn().PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	c.conn.Exec(ctx, "ROLLBACK")
}

// rollbackTimeout bounds the ROLLBACK of a failed commit.
const rollbackTimeout = 5 * time.Second

// withMerged is records with each merged schema in place of the one sent.
func withMerged(records, merged []store.Record) []store.Record {
	out := make([]store.Record, len(records))
	copy(out, records)
	for i, r := range out {
		if r.Kind != store.KindSchema {
			continue
		}
		for _, m := range merged {
			if m.Class == r.Class {
				out[i] = m
			}
		}
	}
	return out
}

// base is the schema this instance's memory holds for class (nil: none).
func (c *committer) base(class string) *schema.Class {
	raw, _ := c.a.knownSchema(class)
	return parseSchema(raw)
}

// tableState is what one Commit knows of a class table.
type tableState struct {
	exists  bool
	schema  *schema.Class // nil: no schema record
	layout  *layout
	dropped bool // its schema was deleted in this commit
}

// committer applies one Commit's records inside its transaction.
type committer struct {
	a      *Adapter
	cur    *pending // the Commit whose records are being applied
	ctx    context.Context
	conn   *pgxpool.Conn // inside the transaction begin opened
	tables map[string]*tableState
	joins  map[string]string // joinClass -> table ("": none), once read
	// versions are the guard keys' rows of _versions, read under the lock.
	versions map[string]version
	// contended are the lock ids of keys another instance's LockKeys
	// holds (serialize.go).
	contended map[int64]bool
	// queued holds the plain row writes (objects, relations, settings,
	// the _changes rows) until a statement needs to read what they wrote
	// or the transaction ends: they reach PostgreSQL in one round trip.
	// Every instance's commits wait on the commit lock, so each round
	// trip made while holding it is paid by all of them.
	queued pgx.Batch
}

// flush sends the queued writes, in order, and reports the first error.
func (c *committer) flush() error {
	if c.queued.Len() == 0 {
		return nil
	}
	err := c.conn.SendBatch(c.ctx, &c.queued).Close()
	c.queued = pgx.Batch{}
	return err
}

func (c *committer) apply(r store.Record) error {
	switch r.Kind {
	case store.KindSchema:
		return c.applySchema(r)
	case store.KindObject:
		t, err := c.table(r.Class, true)
		if err != nil {
			return err
		}
		if r.Value == nil {
			c.queued.Queue("DELETE FROM "+quote(t.layout.table)+" WHERE "+quote(colID)+" = $1", r.Key)
		} else {
			args, err := t.layout.encode(r.Key, r.Value)
			if err != nil {
				return fmt.Errorf("%w: %v", store.ErrInvalidRecord, err)
			}
			c.queued.Queue(t.layout.upsert(), args...)
		}
		if r.Class == classUser {
			c.queueAuthIDs(r.Key, r.Value)
		}
		return nil
	case store.KindJoin:
		return c.applyJoin(r)
	default: // store.KindMeta
		if r.Value == nil {
			c.queued.Queue("DELETE FROM "+quote(tableMeta)+` WHERE "key" = $1`, r.Key)
		} else {
			c.queued.Queue("INSERT INTO "+quote(tableMeta)+` ("key", "value") VALUES ($1, $2) ON CONFLICT ("key") DO UPDATE SET "value" = EXCLUDED."value"`,
				r.Key, r.Value)
		}
		return nil
	}
}

// table returns the state of class's table, creating a table without
// typed columns when create is set and the class has none yet.
func (c *committer) table(class string, create bool) (*tableState, error) {
	if t := c.tables[class]; t != nil && (t.exists || !create) {
		return t, nil
	}
	t := c.tables[class]
	if t == nil {
		var raw []byte
		err := c.conn.QueryRow(c.ctx, `SELECT "schema" FROM `+quote(tableSchema)+` WHERE "className" = $1`, class).Scan(&raw)
		if err != nil && err != pgx.ErrNoRows {
			return nil, err
		}
		if t, err = c.a.tableState(class, err == nil, raw); err != nil {
			return nil, err
		}
		c.tables[class] = t
	}
	if !t.exists && create {
		if err := c.createTable(t.layout); err != nil {
			return nil, err
		}
		t.exists = true
	}
	return t, nil
}

// cachedTable is a class's table as a commit last read its _SCHEMA row:
// the stored bytes, and the schema and layout parsed from them (never
// modified), reused by every commit that reads the same bytes: each
// commit group reads the row, and parsing it was a good part of a small
// commit's CPU.
type cachedTable struct {
	raw    []byte
	schema *schema.Class
	layout *layout
}

// tableState is newTableState, from the cache while raw is the bytes
// the cached state was parsed from.
func (a *Adapter) tableState(class string, exists bool, raw []byte) (*tableState, error) {
	if !exists || raw == nil {
		return newTableState(class, exists, raw)
	}
	if v, ok := a.tables.Load(class); ok {
		if ct := v.(*cachedTable); bytes.Equal(ct.raw, raw) {
			return &tableState{exists: true, schema: ct.schema, layout: ct.layout}, nil
		}
	}
	t, err := newTableState(class, exists, raw)
	if err != nil {
		return nil, err
	}
	a.tables.Store(class, &cachedTable{raw: bytes.Clone(raw), schema: t.schema, layout: t.layout})
	return t, nil
}

// newTableState is the state of class's table from its _SCHEMA row (exists
// false: none) and the schema it holds (nil: none).
func newTableState(class string, exists bool, raw []byte) (*tableState, error) {
	t := &tableState{exists: exists}
	if exists && raw != nil {
		t.schema = &schema.Class{}
		if err := json.Unmarshal(raw, t.schema); err != nil {
			return nil, fmt.Errorf("the schema of %s in %s is not valid JSON", class, tableSchema)
		}
	}
	t.layout = layoutOf(class, t.schema, true)
	return t, nil
}

func (c *committer) createTable(l *layout) error {
	cols := []string{quote(colID) + ` text COLLATE "C" PRIMARY KEY`}
	for _, col := range l.cols {
		cols = append(cols, quote(col.name)+" "+col.kind.sqlType())
	}
	cols = append(cols, quote(colExtra)+" jsonb", quote(colRaw)+" bytea")
	if _, err := c.conn.Exec(c.ctx, "CREATE TABLE "+quote(l.table)+" ("+strings.Join(cols, ", ")+")"); err != nil {
		return err
	}
	if _, err := c.conn.Exec(c.ctx, "INSERT INTO "+quote(tableSchema)+` ("className", "tableName") VALUES ($1, $2)`, l.class, l.table); err != nil {
		return err
	}
	if hasUniqueRule(l.class) {
		return c.a.ensureUnique(c.ctx, c.conn, l)
	}
	return nil
}

// applySchema stores a class's schema and reshapes its table to match: new
// fields get columns (ALTER TABLE ... ADD COLUMN); a dropped or retyped
// field's column is dropped after the values it still holds move to $extra.
func (c *committer) applySchema(r store.Record) error {
	// Reshaping reads the table's rows and changes its columns: the rows
	// queued so far must be in it, in the shape they were encoded for.
	if err := c.flush(); err != nil {
		return err
	}
	t, err := c.table(r.Class, true)
	if err != nil {
		return err
	}
	var next *schema.Class
	if r.Value != nil {
		next = &schema.Class{}
		if err := json.Unmarshal(r.Value, next); err != nil {
			return fmt.Errorf("%w: the schema of %s is not valid JSON", store.ErrInvalidRecord, r.Class)
		}
	}
	value := r.Value
	{
		merged, err := mergeSchema(c.base(r.Class), t.schema, next)
		if err != nil {
			return err
		}
		if merged != next {
			if value, err = json.Marshal(merged); err != nil {
				return err
			}
			next = merged
			c.cur.merged = append(c.cur.merged, store.Record{Kind: store.KindSchema, Class: r.Class, Value: value})
		}
	}
	c.cur.schemas = append(c.cur.schemas, store.Record{Kind: store.KindSchema, Class: r.Class, Value: value})
	nl := layoutOf(r.Class, next, true)
	if err := c.reshape(t.layout, nl); err != nil {
		return err
	}
	if hasUniqueRule(r.Class) {
		if err := c.a.ensureUnique(c.ctx, c.conn, nl); err != nil {
			return err
		}
	}
	var arg any
	if value != nil {
		arg = value
	}
	if _, err := c.conn.Exec(c.ctx, "UPDATE "+quote(tableSchema)+` SET "schema" = $2 WHERE "className" = $1`, r.Class, arg); err != nil {
		return err
	}
	t.schema, t.layout, t.dropped = next, nl, next == nil
	return nil
}

// reshape alters old's table into next's.
func (c *committer) reshape(old, next *layout) error {
	have := map[string]column{}
	for _, col := range old.cols {
		have[col.name] = col
	}
	want := map[string]column{}
	for _, col := range next.cols {
		want[col.name] = col
	}
	var gone, added []column
	for _, col := range old.cols {
		if w, ok := want[col.name]; !ok || w.kind != col.kind || w.target != col.target {
			gone = append(gone, col)
		}
	}
	for _, col := range next.cols {
		if h, ok := have[col.name]; !ok || h.kind != col.kind || h.target != col.target {
			added = append(added, col)
		}
	}
	if len(gone) == 0 && len(added) == 0 {
		return nil
	}
	// Rows holding a value in a column about to go are read back whole and
	// written again in the new shape once the table has it.
	type row struct {
		id    string
		value []byte
	}
	var moved []row
	if len(gone) > 0 {
		var cond []string
		for _, col := range gone {
			cond = append(cond, quote(col.name)+" IS NOT NULL")
		}
		rows, err := c.conn.Query(c.ctx, "SELECT "+old.selectList()+" FROM "+quote(old.table)+" WHERE "+strings.Join(cond, " OR "))
		if err != nil {
			return err
		}
		d := old.decoder()
		for rows.Next() {
			if err := rows.Scan(d.dest...); err != nil {
				rows.Close()
				return err
			}
			b, err := d.object()
			if err != nil {
				rows.Close()
				return err
			}
			moved = append(moved, row{d.id, b})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	var alter []string
	for _, col := range gone {
		alter = append(alter, "DROP COLUMN "+quote(col.name))
	}
	for _, col := range added {
		alter = append(alter, "ADD COLUMN "+quote(col.name)+" "+col.kind.sqlType())
	}
	if _, err := c.conn.Exec(c.ctx, "ALTER TABLE "+quote(old.table)+" "+strings.Join(alter, ", ")); err != nil {
		return err
	}
	for _, m := range moved {
		args, err := next.encode(m.id, m.value)
		if err != nil {
			return err
		}
		if _, err := c.conn.Exec(c.ctx, next.upsert(), args...); err != nil {
			return err
		}
	}
	return nil
}

// dropEmpty drops the tables of classes whose schema this commit deleted
// and that hold no object.
func (c *committer) dropEmpty() error {
	for class, t := range c.tables {
		if !t.dropped || !t.exists {
			continue
		}
		if err := c.flush(); err != nil { // the emptiness check must see them
			return err
		}
		var empty bool
		if err := c.conn.QueryRow(c.ctx, "SELECT NOT EXISTS (SELECT 1 FROM "+quote(t.layout.table)+")").Scan(&empty); err != nil {
			return err
		}
		if !empty {
			continue
		}
		if _, err := c.conn.Exec(c.ctx, "DROP TABLE "+quote(t.layout.table)); err != nil {
			return err
		}
		if _, err := c.conn.Exec(c.ctx, "DELETE FROM "+quote(tableSchema)+` WHERE "className" = $1`, class); err != nil {
			return err
		}
		delete(c.tables, class)
	}
	return nil
}

// applyJoin adds or removes one relation membership in the relation's
// "_Join:<key>:<class>" table (owningId, relatedId).
func (c *committer) applyJoin(r store.Record) error {
	owning, related, ok := strings.Cut(r.Key, ":")
	if !ok {
		return fmt.Errorf("%w: relation key %q is not owningId:relatedId", store.ErrInvalidRecord, r.Key)
	}
	table, err := c.joinTable(r.Class, r.Value != nil)
	if err != nil || table == "" {
		return err
	}
	if r.Value == nil {
		c.queued.Queue("DELETE FROM "+quote(table)+` WHERE "owningId" = $1 AND "relatedId" = $2`, owning, related)
	} else {
		c.queued.Queue("INSERT INTO "+quote(table)+` ("owningId", "relatedId") VALUES ($1, $2) ON CONFLICT DO NOTHING`, owning, related)
	}
	return nil
}

// joinTable names joinClass's table, creating it when create is set; ""
// when it does not exist and create is not set.
func (c *committer) joinTable(joinClass string, create bool) (string, error) {
	table, known := c.joins[joinClass]
	if known && (table != "" || !create) {
		return table, nil
	}
	var err error
	if !known {
		err = c.conn.QueryRow(c.ctx, `SELECT "tableName" FROM `+quote(tableJoins)+` WHERE "joinClass" = $1`, joinClass).Scan(&table)
	}
	switch {
	case table == "" && (err == nil || err == pgx.ErrNoRows):
		if !create {
			c.joins[joinClass] = ""
			return "", nil
		}
		table = identName("_Join:" + joinClass)
		if _, err := c.conn.Exec(c.ctx, "CREATE TABLE "+quote(table)+
			` ("owningId" text COLLATE "C" NOT NULL, "relatedId" text COLLATE "C" NOT NULL, PRIMARY KEY ("owningId", "relatedId"))`); err != nil {
			return "", err
		}
		if _, err := c.conn.Exec(c.ctx, "INSERT INTO "+quote(tableJoins)+` ("joinClass", "tableName") VALUES ($1, $2)`, joinClass, table); err != nil {
			return "", err
		}
	case err != nil:
		return "", err
	}
	c.joins[joinClass] = table
	return table, nil
}

// change is one record as _changes keeps it (JSON; Value is base64, null
// for a deletion). Previous (store.Record.Previous) is the object's JSON
// as it is, null when the object did not exist, and absent when not
// carried: rows written before it existed read as not carried.
type change struct {
	Kind     string          `json:"kind"`
	Class    string          `json:"class,omitempty"`
	Key      string          `json:"key,omitempty"`
	Value    []byte          `json:"value"`
	Previous json.RawMessage `json:"previous,omitempty"`
}

// jsonNull is a carried Previous of an object that did not exist.
var jsonNull = json.RawMessage("null")

func encodeChange(records []store.Record) ([]byte, error) {
	out := make([]change, len(records))
	for i, r := range records {
		out[i] = change{Kind: string(rune(r.Kind)), Class: r.Class, Key: r.Key, Value: r.Value}
		switch {
		case r.Previous == nil:
		case len(r.Previous) == 0:
			out[i].Previous = jsonNull
		default:
			// Kept as JSON rather than base64: a third fewer bytes.
			out[i].Previous = r.Previous
		}
	}
	return json.Marshal(out)
}

func decodeChange(b []byte) ([]store.Record, error) {
	var in []change
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	out := make([]store.Record, len(in))
	for i, c := range in {
		if len(c.Kind) != 1 {
			return nil, fmt.Errorf("change record kind %q", c.Kind)
		}
		out[i] = store.Record{Kind: store.Kind(c.Kind[0]), Class: c.Class, Key: c.Key, Value: c.Value}
		switch {
		case c.Previous == nil:
		case string(c.Previous) == "null":
			out[i].Previous = []byte{}
		default:
			out[i].Previous = c.Previous
		}
	}
	return out, nil
}

// Stats implements store.Instrumented: Groups counts transactions (each
// one WAL flush); FileBytes is 0, the database's size being PostgreSQL's.
func (a *Adapter) Stats() store.Stats {
	return store.Stats{Commits: a.commits.Load(), Groups: a.groups.Load()}
}

// ObserveGroups implements store.Instrumented.
func (a *Adapter) ObserveGroups(fn func(took time.Duration, commits int)) {
	a.observe.Store(&fn)
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store"
)

// tableCursors keeps named readers' positions in _changes
// (store.ChangeLog.SaveCursor); writing one is no change.
const tableCursors = "_cursors"

// leaseClass is the first key of the two-key advisory locks leases take
// (pg_try_advisory_lock(int, int)): PostgreSQL keeps those apart from the
// one-key locks commits take.
const leaseClass = 0x5173 // "Qs"

// leasePing is how often the lease connection is checked.
const leasePing = time.Second

// KeepChanges implements store.ChangeLog: _changes keeps every commit
// for the adapter's changeRetention already.
func (a *Adapter) KeepChanges(time.Duration) error { return nil }

// ChangesHead implements store.ChangeLog.
func (a *Adapter) ChangesHead(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	var head int64
	err := a.pool.QueryRow(ctx, `SELECT greatest(coalesce((SELECT max("id") FROM `+quote(tableChanges)+`), 0), (SELECT "upTo" FROM `+quote(tablePruned)+`))`).Scan(&head)
	return head, err
}

// ReadChanges implements store.ChangeLog. The pruning mark and the rows
// are read in one snapshot, so a change is either handed over or counted
// as skipped.
func (a *Adapter) ReadChanges(ctx context.Context, after int64, limit int, fn func(store.LoggedChange) error) (int64, error) {
	type row struct {
		id      int64
		at      time.Time
		records []byte
	}
	var rows []row
	var skipped int64
	qctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	err := pgx.BeginTxFunc(qctx, a.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var upTo int64
		if err := tx.QueryRow(qctx, `SELECT "upTo" FROM `+quote(tablePruned)).Scan(&upTo); err != nil {
			return err
		}
		from := after
		if upTo > after {
			skipped, from = upTo-after, upTo
		}
		rs, err := tx.Query(qctx, `SELECT "id", "at", "records" FROM `+quote(tableChanges)+` WHERE "id" > $1 ORDER BY "id" LIMIT $2`, from, limit)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.id, &r.at, &r.records); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	})
	if err != nil {
		return 0, logReadErr(err)
	}
	for _, r := range rows {
		records, err := decodeChange(r.records)
		if err != nil {
			return skipped, fmt.Errorf("change %d: %w", r.id, errors.Join(store.ErrDamaged, err))
		}
		kept := records[:0]
		for _, rec := range records {
			if rec.Kind == store.KindObject || rec.Kind == store.KindJoin {
				kept = append(kept, rec)
			}
		}
		if err := fn(store.LoggedChange{ID: r.id, At: r.at, Records: kept}); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

// Cursor implements store.ChangeLog.
func (a *Adapter) Cursor(ctx context.Context, name string) (int64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	var pos int64
	err := a.pool.QueryRow(ctx, `SELECT "position" FROM `+quote(tableCursors)+` WHERE "name" = $1`, name).Scan(&pos)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, logReadErr(err)
	}
	return pos, true, nil
}

// SaveCursor implements store.ChangeLog.
func (a *Adapter) SaveCursor(ctx context.Context, name string, pos int64) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	_, err := a.pool.Exec(ctx, `INSERT INTO `+quote(tableCursors)+` ("name", "position") VALUES ($1, $2)
		ON CONFLICT ("name") DO UPDATE SET "position" = EXCLUDED."position"`, name, pos)
	return logReadErr(err)
}

// logReadErr marks a failed round trip of the change log as the
// database's absence (store.ErrUnavailable).
func logReadErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

// leases are the advisory locks this adapter holds for TryLease, all on
// one connection of their own: when the process dies, PostgreSQL ends
// the session and every lease is free for another instance.
type leases struct {
	mu   sync.Mutex
	conn *pgx.Conn
	held map[string]*lease
	stop chan struct{} // ends the pinger of conn
}

type lease struct {
	a    *Adapter
	name string
	lost chan struct{}
}

func (l *lease) Lost() <-chan struct{} { return l.lost }

// Release implements store.Lease.
func (l *lease) Release() {
	ls := &l.a.leases
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.held[l.name] != l {
		return // lost already
	}
	delete(ls.held, l.name)
	ctx, cancel := context.WithTimeout(context.Background(), l.a.opts.Timeout)
	defer cancel()
	if _, err := ls.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, leaseClass, l.name); err != nil {
		// The session is in doubt: end it, which frees every lock.
		l.a.logf("postgres: releasing lease %s: %v; closing the lease connection", l.name, err)
		ls.dropLocked()
	}
}

// TryLease implements store.Leaser.
func (a *Adapter) TryLease(ctx context.Context, name string) (store.Lease, bool, error) {
	ls := &a.leases
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.held[name]; l != nil {
		return l, true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	if ls.conn == nil {
		c, err := a.pool.Acquire(ctx)
		if err != nil {
			return nil, false, logReadErr(err)
		}
		ls.conn = c.Hijack() // out of the pool: its session holds the locks
		ls.held = map[string]*lease{}
		ls.stop = make(chan struct{})
		go a.pingLeases(ls.conn, ls.stop)
	}
	var ok bool
	if err := ls.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, leaseClass, name).Scan(&ok); err != nil {
		ls.dropLocked()
		return nil, false, logReadErr(err)
	}
	if !ok {
		return nil, false, nil
	}
	l := &lease{a: a, name: name, lost: make(chan struct{})}
	ls.held[name] = l
	return l, true, nil
}

// pingLeases checks the lease connection every leasePing; a failure
// loses every lease on it.
func (a *Adapter) pingLeases(conn *pgx.Conn, stop chan struct{}) {
	t := time.NewTicker(leasePing)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ls := &a.leases
		ls.mu.Lock()
		if ls.conn != conn {
			ls.mu.Unlock()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), a.opts.Timeout)
		err := conn.Ping(ctx)
		cancel()
		if err != nil {
			a.logf("postgres: the lease connection failed: %v; its leases are lost", err)
			ls.dropLocked()
		}
		ls.mu.Unlock()
	}
}

// dropLocked closes the lease connection and tells every holder; mu is
// held.
func (ls *leases) dropLocked() {
	if ls.conn == nil {
		return
	}
	close(ls.stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = ls.conn.Close(ctx) // ending the session frees the locks
	cancel()
	for _, l := range ls.held {
		close(l.lost)
	}
	ls.conn, ls.held, ls.stop = nil, nil, nil
}

// closeLeases ends every lease (Close). The locks are given back before
// the connection closes: PostgreSQL frees a closed session's locks only
// once its backend has noticed, and another instance should not wait.
func (a *Adapter) closeLeases() {
	ls := &a.leases
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), a.opts.Timeout)
		if _, err := ls.conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
			a.logf("postgres: giving back the leases at close: %v", err)
		}
		cancel()
	}
	ls.dropLocked()
}

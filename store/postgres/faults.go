package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quarrydata/quarry/store"
)

// What the adapter does when PostgreSQL cannot be reached:
//
//   - A Commit that fails for that reason returns an error wrapping
//     store.ErrUnavailable (clients get 503 with Retry-After), and the
//     adapter reports itself unavailable (store.Checker: the readiness
//     probe) until a probe connection answers again.
//   - A Commit whose connection failed after its COMMIT was sent may or may
//     not have committed. It is not answered until that is known: once a
//     connection works again, the adapter takes the commit lock (which the
//     lost transaction held, so it has ended either way) and looks for the
//     commit's own _changes row. Found, the Commit succeeds with that id;
//     not found, it fails as unavailable. Meanwhile the caller holds the
//     object's write lock, so nothing is answered about the object that a
//     later answer could contradict.

// faultState is the adapter's view of whether PostgreSQL is reachable.
type faultState struct {
	mu      sync.Mutex
	err     error // why writes cannot commit; nil while they can
	probing bool
	// seen is the highest change id this adapter knows of (its own
	// commits and what its followers read): a lost commit's row can only
	// be after it.
	seen atomic.Int64
}

// unreachable reports whether err means the database could not be
// reached or the connection was lost, as opposed to a statement that
// failed on its own (a constraint, bad data).
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 08: connection exception; 57P: the server shuts down or is
		// starting; 53300: too many connections.
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, context.DeadlineExceeded)
}

// readFault is err of a read (a query on a class kept out of memory),
// wrapping store.ErrUnavailable when the database could not be reached.
// A read that ran out of time is not an outage: the query was slow.
func (a *Adapter) readFault(err error) error {
	if !unreachable(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	a.unavailable(err)
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

// inDoubtError is a commit whose connection failed after its COMMIT was
// sent: it may have committed.
type inDoubtError struct{ err error }

func (e *inDoubtError) Error() string { return "commit outcome unknown: " + e.err.Error() }
func (e *inDoubtError) Unwrap() error { return e.err }

// mayHaveCommitted wraps err, the failure of the round trip that carried
// COMMIT, when the transaction may have committed all the same: anything
// but PostgreSQL refusing a statement of it.
func mayHaveCommitted(err error) error {
	var pe *pgconn.PgError
	if err == nil || errors.As(err, &pe) && !unreachable(err) {
		return err
	}
	return &inDoubtError{err: err}
}

// Unavailable implements store.Checker: non-nil while the last attempt to
// reach PostgreSQL failed and no probe has succeeded since.
func (a *Adapter) Unavailable() error {
	a.faults.mu.Lock()
	defer a.faults.mu.Unlock()
	if a.faults.err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", store.ErrUnavailable, a.faults.err)
}

// unavailable marks the database unreachable because of err and starts a
// probe that marks it reachable again once a connection answers.
func (a *Adapter) unavailable(err error) {
	a.faults.mu.Lock()
	first := a.faults.err == nil
	a.faults.err = err
	probe := !a.faults.probing
	a.faults.probing = true
	a.faults.mu.Unlock()
	if first {
		a.logf("postgres: the database is unreachable; writes answer 503 and /health is not ready until it answers again: %v", err)
	}
	if probe {
		go a.probe()
	}
}

// reachable ends an outage after anything reached the database.
func (a *Adapter) reachable() {
	a.faults.mu.Lock()
	was := a.faults.err
	a.faults.err = nil
	a.faults.mu.Unlock()
	if was != nil {
		a.logf("postgres: the database answers again")
	}
}

// probe asks PostgreSQL with a growing wait until it answers or the
// adapter closes.
func (a *Adapter) probe() {
	defer func() {
		a.faults.mu.Lock()
		a.faults.probing = false
		a.faults.mu.Unlock()
	}()
	for wait := followRetryMin; a.sleep(wait); wait = min(2*wait, followRetryMax) {
		ctx, cancel := context.WithTimeout(a.pruneCtx, a.opts.Timeout)
		_, err := a.pool.Exec(ctx, "SELECT 1")
		cancel()
		if err == nil {
			a.reachable()
			return
		}
	}
}

// sleep waits d, or less when the adapter closes; it reports whether the
// caller should go on.
func (a *Adapter) sleep(d time.Duration) bool {
	select {
	case <-a.pruneCtx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// noteSeen records that change id exists.
func (a *Adapter) noteSeen(id int64) {
	for {
		cur := a.faults.seen.Load()
		if id <= cur || a.faults.seen.CompareAndSwap(cur, id) {
			return
		}
	}
}

// resolve finds out whether p, whose commit is in doubt, committed: its
// change id, or 0 when it did not. It retries until PostgreSQL answers or
// the adapter closes (then the outcome stays unknown: err).
func (a *Adapter) resolve(p *pending) (id int64, err error) {
	a.logf("postgres: a commit's connection failed after COMMIT was sent; waiting for the database to tell whether it committed")
	for wait := followRetryMin; ; wait = min(2*wait, followRetryMax) {
		id, err = a.lookUpCommit(p)
		if err == nil {
			return id, nil
		}
		if !unreachable(err) {
			// Not a fault of the connection: asking again changes nothing.
			return 0, err
		}
		a.unavailable(err)
		if !a.sleep(wait) {
			return 0, err
		}
	}
}

// lookUpCommit looks for p's _changes row under the commit lock: holding
// it means the lost transaction, which held it too, has ended.
func (a *Adapter) lookUpCommit(p *pending) (int64, error) {
	ctx, cancel := context.WithTimeout(a.pruneCtx, a.opts.Timeout)
	defer cancel()
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", commitLock); err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRow(ctx, `SELECT "id" FROM `+quote(tableChanges)+` WHERE "origin" = $1 AND "id" > $2 AND "records" = $3 ORDER BY "id" LIMIT 1`,
		a.origin, p.after, p.sent).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

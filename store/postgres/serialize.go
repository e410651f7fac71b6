package postgres

import (
	"context"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store"
)

// Guarded commits are optimistic: a write decided on a copy another
// instance changed meanwhile is refused and decided again. Under heavy
// contention on one object the same write can lose again and again, so a
// write that lost once decides again under LockKeys (store.Serializer):
//
//   - LockKeys holds a PostgreSQL advisory lock per key (exclusive, in an
//     open transaction on its own connection, taken in one order so two
//     lockers never wait on each other in a cycle), then reads the head
//     of _changes: every commit of those keys made before is in it.
//   - Every guarded commit takes the same locks shared, without waiting
//     (pg_try_advisory_xact_lock_shared) inside its transaction, for the
//     keys it writes; one another instance holds is refused as stale,
//     naming the key, and its writer queues in LockKeys in turn. Keys this
//     Adapter holds are left out: its own writes of them are decided under
//     the objects' locks in memory, after the holder's.
//
// So a locked decider decides on a copy nobody else can change before it
// commits, and every write ends in a bounded number of attempts. The fast
// path pays one statement in the commit's first round trip.

// serialState is what LockKeys holds in this Adapter.
type serialState struct {
	// slots bounds the connections LockKeys holds at once, leaving the
	// rest of the pool to commits (which the holders wait on) and reads.
	slots chan struct{}
	mu    sync.Mutex
	held  map[int64]int // lock id -> LockKeys holding it here
}

// initSerial sizes the slots from the pool: a quarter of it, at least one.
func (a *Adapter) initSerial() {
	a.serial.slots = make(chan struct{}, max(1, int(a.pool.Config().MaxConns)/4))
	a.serial.held = map[int64]int{}
}

// keyLock is the advisory lock id of a guard key (never the commit lock's).
func keyLock(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(versionKey(key)))
	id := int64(h.Sum64())
	if id == commitLock {
		id++
	}
	return id
}

// lockIDs are the lock ids of keys, sorted and without repeats.
func lockIDs(keys []string) []int64 {
	ids := make([]int64, 0, len(keys))
	for _, k := range keys {
		ids = append(ids, keyLock(k))
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// unlockTimeout bounds the ROLLBACK that releases LockKeys' locks; past it
// the connection is closed, which releases them too.
const unlockTimeout = 5 * time.Second

// LockKeys implements store.Serializer.
func (a *Adapter) LockKeys(ctx context.Context, keys []string) (int64, func(), error) {
	if a.isClosed() {
		return 0, nil, store.ErrClosed
	}
	ids := lockIDs(keys)
	select {
	case a.serial.slots <- struct{}{}:
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	}
	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		<-a.serial.slots
		return 0, nil, a.readFault(err)
	}
	var head int64
	var b pgx.Batch
	b.Queue("BEGIN")
	for _, id := range ids {
		b.Queue("SELECT pg_advisory_xact_lock($1)", id)
	}
	// A new snapshot, taken once every lock is held.
	b.Queue(`SELECT coalesce(max("id"), 0) FROM ` + quote(tableChanges)).QueryRow(func(row pgx.Row) error { return row.Scan(&head) })
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		// Release closes a connection left inside a transaction.
		conn.Release()
		<-a.serial.slots
		return 0, nil, a.readFault(err)
	}
	a.noteSeen(head)
	a.serial.mu.Lock()
	for _, id := range ids {
		a.serial.held[id]++
	}
	a.serial.mu.Unlock()
	var once sync.Once
	unlock := func() {
		once.Do(func() {
			a.serial.mu.Lock()
			for _, id := range ids {
				if a.serial.held[id]--; a.serial.held[id] == 0 {
					delete(a.serial.held, id)
				}
			}
			a.serial.mu.Unlock()
			rctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
			conn.Exec(rctx, "ROLLBACK")
			cancel()
			conn.Release()
			<-a.serial.slots
		})
	}
	return head, unlock, nil
}

// contendable are the lock ids of the keys batch's guarded commits write,
// but for those this Adapter holds: the ones to take shared.
func (a *Adapter) contendable(batch []*pending) []int64 {
	var ids []int64
	a.serial.mu.Lock()
	defer a.serial.mu.Unlock()
	for _, p := range batch {
		if len(p.guards) == 0 {
			continue
		}
		for _, k := range writtenKeys(p) {
			if id := keyLock(k); a.serial.held[id] == 0 {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// queueContended takes ids shared without waiting in the commit's first
// round trip, and records those another instance holds.
func (c *committer) queueContended(b *pgx.Batch, ids []int64) {
	if len(ids) == 0 {
		return
	}
	b.Queue(`SELECT k FROM unnest($1::bigint[]) AS k WHERE NOT pg_try_advisory_xact_lock_shared(k)`, ids).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			if c.contended == nil {
				c.contended = map[int64]bool{}
			}
			c.contended[id] = true
		}
		return rows.Err()
	})
}

var _ store.Serializer = (*Adapter)(nil)

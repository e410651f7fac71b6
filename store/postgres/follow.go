package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/store"
)

// followBatch is how many changes one catch-up query reads.
const followBatch = 500

// Backoff between reconnects of a follower.
const (
	followRetryMin = 50 * time.Millisecond
	followRetryMax = 2 * time.Second
)

// Follow implements store.Follower. One connection LISTENs on the change
// channel; each notification (and each reconnect) reads _changes after the
// last id handed over, so a lost notification or connection delays a
// change but never loses it.
func (a *Adapter) Follow(from int64, fn func([]store.Record)) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{a: a, pos: from, fn: fn}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.run(ctx)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
		})
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		stop()
		return nil, store.ErrClosed
	}
	a.stops = append(a.stops, stop)
	a.mu.Unlock()
	return stop, nil
}

type follower struct {
	a   *Adapter
	pos int64
	fn  func([]store.Record)
}

func (f *follower) run(ctx context.Context) {
	wait := followRetryMin
	failing := false
	for ctx.Err() == nil {
		progressed, err := f.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if progressed {
			wait = followRetryMin
		}
		if !failing {
			f.a.logf("postgres: following changes failed, retrying from change %d: %v", f.pos, err)
			failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, followRetryMax)
		if progressed {
			failing = false
		}
	}
}

// session listens on one connection until it fails; progressed reports
// whether it got as far as listening.
func (f *follower) session(ctx context.Context) (progressed bool, err error) {
	pooled, err := f.a.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	// A connection that listened is not handed back to the pool.
	conn := pooled.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+quote(channel)); err != nil {
		return false, err
	}
	for {
		if err := f.catchUp(ctx, conn); err != nil {
			return true, err
		}
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, err
		}
	}
}

// catchUp hands over every change after f.pos, in id order.
func (f *follower) catchUp(ctx context.Context, conn *pgx.Conn) error {
	for {
		rows, err := conn.Query(ctx, `SELECT "id", "origin", "records" FROM `+quote(tableChanges)+
			` WHERE "id" > $1 ORDER BY "id" LIMIT `+strconv.Itoa(followBatch), f.pos)
		if err != nil {
			return err
		}
		type row struct {
			id      int64
			foreign bool
			records []byte
		}
		var batch []row
		for rows.Next() {
			var r row
			var origin string
			if err := rows.Scan(&r.id, &origin, &r.records); err != nil {
				rows.Close()
				return err
			}
			r.foreign = origin != f.a.origin
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range batch {
			if r.foreign {
				records, err := decodeChange(r.records)
				if err != nil {
					return fmt.Errorf("change %d: %w", r.id, errors.Join(store.ErrDamaged, err))
				}
				f.fn(records)
			}
			f.pos = r.id
		}
		if len(batch) < followBatch {
			return nil
		}
	}
}

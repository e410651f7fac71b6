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
// channel; a notification carries the next change itself (notify.go), and
// any other notification (and each reconnect) reads _changes after the
// last id handed over, so a lost notification or connection delays a
// change but never loses it.
func (a *Adapter) Follow(from int64, fn func(store.ForeignCommit)) (func(), error) {
	return a.follow(&follower{a: a, pos: from, fn: fn})
}

// FollowWithOwn implements store.OwnFollower: Follow, handing over this
// Adapter's commits too (Own set), after the merged schemas of a commit
// whose schema was merged (merge.go).
func (a *Adapter) FollowWithOwn(from int64, fn func(store.ForeignCommit)) (func(), error) {
	return a.follow(&follower{a: a, pos: from, fn: fn, withOwn: true})
}

func (a *Adapter) follow(f *follower) (func(), error) {
	from := f.pos
	ctx, cancel := context.WithCancel(context.Background())
	a.startFollowing(from)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer a.stopFollowing()
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
	a       *Adapter
	pos     int64 // the last change handed over or skipped
	fn      func(store.ForeignCommit)
	withOwn bool // hand over own commits too (FollowWithOwn)
	failing bool // a failure was logged and no session listened since
}

func (f *follower) run(ctx context.Context) {
	wait := followRetryMin
	for ctx.Err() == nil {
		progressed, err := f.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if progressed {
			wait = followRetryMin
		}
		if unreachable(err) {
			f.a.unavailable(err)
		}
		if !f.failing {
			f.a.logf("postgres: following changes failed, retrying from change %d: %v", f.pos, err)
			f.failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, followRetryMax)
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
	if f.failing {
		f.a.logf("postgres: following changes again from change %d", f.pos)
		f.failing = false
	}
	if err := f.checkPruned(ctx, conn); err != nil {
		return true, err
	}
	for {
		if err := f.catchUp(ctx, conn); err != nil {
			return true, err
		}
		if err := f.takeCarried(ctx, conn); err != nil {
			return true, err
		}
	}
}

// ErrChangesPruned is reported (through Options.Logf) by a follower whose
// position is older than the changes still kept: the instance missed
// commits and must be restarted to load afresh.
var ErrChangesPruned = errors.New("postgres: changes this instance had not read were pruned (it was cut off longer than changeRetention); restart it to load everything afresh")

// checkPruned reports a position older than the changes still kept, and
// moves it to follow what is left rather than nothing. A session checks
// once, before it first catches up: a connected follower reads changes
// within milliseconds, long before they can be pruned.
func (f *follower) checkPruned(ctx context.Context, conn *pgx.Conn) error {
	var upTo int64
	if err := conn.QueryRow(ctx, `SELECT "upTo" FROM `+quote(tablePruned)).Scan(&upTo); err != nil {
		return err
	}
	if upTo > f.pos {
		f.a.logf("%v (position %d, pruned up to %d)", ErrChangesPruned, f.pos, upTo)
		f.pos = upTo
		f.a.advance(upTo)
	}
	return nil
}

// catchUp hands over every change after f.pos, in id order.
func (f *follower) catchUp(ctx context.Context, conn *pgx.Conn) error {
	for {
		rows, err := conn.Query(ctx, `SELECT "id", "origin", "records" FROM `+quote(tableChanges)+
			` WHERE "id" > $1 ORDER BY "id" LIMIT `+strconv.Itoa(followBatch), f.pos)
		if err != nil {
			return err
		}
		var batch []changeRow
		for rows.Next() {
			var c changeRow
			var origin string
			if err := rows.Scan(&c.id, &origin, &c.records); err != nil {
				rows.Close()
				return err
			}
			c.foreign = origin != f.a.origin
			batch = append(batch, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range batch {
			if err := f.handOver(c); err != nil {
				return err
			}
		}
		if len(batch) < followBatch {
			return nil
		}
	}
}

// changeRow is one row of _changes, read or carried by a notification.
type changeRow struct {
	id      int64
	foreign bool
	records []byte // encodeChange's bytes
}

// handOver hands change c, the one after f.pos, over and moves past it.
func (f *follower) handOver(c changeRow) error {
	records, err := decodeChange(c.records)
	if err != nil {
		return fmt.Errorf("change %d: %w", c.id, errors.Join(store.ErrDamaged, err))
	}
	id := c.id
	superseded := func(rec store.Record) bool { return f.a.superseded(rec, id) }
	if !c.foreign {
		f.a.forgetOwn(records, id)
		if merged := f.a.takeMerged(id); merged != nil {
			// Memory holds the schema as this instance sent it; the
			// database's is the merge (merge.go).
			f.fn(store.ForeignCommit{Records: merged, Superseded: superseded})
		}
		if f.withOwn {
			f.fn(store.ForeignCommit{Own: true, Records: records, Superseded: superseded})
		}
	} else {
		f.fn(store.ForeignCommit{Records: records, Superseded: superseded})
		for _, rec := range records {
			if rec.Kind == store.KindSchema && !superseded(rec) {
				f.a.noteKnown(rec.Class, rec.Value)
			}
		}
	}
	f.pos = id
	f.a.advance(id)
	f.a.noteSeen(id)
	return nil
}

// ownWrite is a commit this Adapter made or is making. Followers compare
// a foreign change of the same record with it: a foreign change older
// than this instance's own later write must not overwrite that write in
// memory.
type ownWrite struct {
	done chan struct{} // closed when the commit ended
	id   int64         // its change id; 0 when it failed (set before done closes)
}

func recordKey(r store.Record) string {
	return string(rune(r.Kind)) + "\x00" + r.Class + "\x00" + r.Key
}

// beginOwn notes that records are being committed.
func (a *Adapter) beginOwn(records []store.Record) *ownWrite {
	w := &ownWrite{done: make(chan struct{})}
	a.mu.Lock()
	if a.own == nil {
		a.own = map[string]*ownWrite{}
	}
	for _, r := range records {
		a.own[recordKey(r)] = w
	}
	a.mu.Unlock()
	return w
}

// endOwn records the commit's change id (0: it failed).
func (a *Adapter) endOwn(w *ownWrite, records []store.Record, id int64) {
	w.id = id
	close(w.done)
	if id == 0 {
		a.forget(records, w)
	}
}

// forgetOwn drops what is known of own commit id once followers passed
// it, after that commit's Commit call has noted its id.
func (a *Adapter) forgetOwn(records []store.Record, id int64) {
	for _, r := range records {
		k := recordKey(r)
		a.mu.Lock()
		w := a.own[k]
		a.mu.Unlock()
		if w == nil {
			continue
		}
		<-w.done // a commit followers already see is ending
		a.mu.Lock()
		if a.own[k] == w && w.id <= id {
			delete(a.own, k)
		}
		a.mu.Unlock()
	}
}

func (a *Adapter) forget(records []store.Record, w *ownWrite) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range records {
		if k := recordKey(r); a.own[k] == w {
			delete(a.own, k)
		}
	}
}

// superseded reports whether an own commit after foreign change id wrote
// r's record again, waiting for an own commit of it still in flight.
func (a *Adapter) superseded(r store.Record, id int64) bool {
	a.mu.Lock()
	w := a.own[recordKey(r)]
	a.mu.Unlock()
	if w == nil {
		return false
	}
	<-w.done // bounded by Options.Timeout
	return w.id > id
}

// takeMerged returns and forgets own commit id's merged schemas.
func (a *Adapter) takeMerged(id int64) []store.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.mergedOwn[id]
	delete(a.mergedOwn, id)
	return m
}

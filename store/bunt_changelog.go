package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/buntdb"
)

// The embedded store's change log: when KeepChanges was called, each
// Commit holding object or relation records adds one more record, the
// log entry (kindLog, keyed by a change id that grows by one per logged
// commit), written in the same journaled group as the commit's records,
// so a crash keeps both or neither. Readers see an entry only once its
// group is fsynced (logDurable): a change a crash could still undo is
// never handed over. Entries older than the retention are deleted once
// a minute, the newest always kept so the ids keep growing across
// restarts. Cursors (kindCursor) are single records beside it.

// logPruneEvery is how often the committer deletes expired entries.
const logPruneEvery = time.Minute

// logPruneBatch bounds the entries one pruning deletes.
const logPruneBatch = 10000

var logPrefix = string([]byte{byte(kindLog), keySep})

// openLog finds the log's first and newest ids; Open calls it.
func (a *buntAdapter) openLog() error {
	first, last := int64(0), int64(0)
	err := a.db.View(func(tx *buntdb.Tx) error {
		scan := func(k string) (int64, bool) {
			if !strings.HasPrefix(k, logPrefix) {
				return 0, false
			}
			return parseLogKey(k[len(logPrefix):])
		}
		if err := tx.AscendGreaterOrEqual("", logPrefix, func(k, _ string) bool {
			first, _ = scan(k)
			return false
		}); err != nil {
			return err
		}
		return tx.DescendLessOrEqual("", logPrefix+"\xff", func(k, _ string) bool {
			last, _ = scan(k)
			return false
		})
	})
	if err != nil {
		return err
	}
	a.logSeq = last
	a.logDurable.Store(last)
	if first > 0 {
		a.logPruned.Store(first - 1)
	}
	return nil
}

// KeepChanges implements ChangeLog.
func (a *buntAdapter) KeepChanges(retention time.Duration) error {
	if retention <= 0 {
		retention = DefaultChangeRetention
	}
	a.logRetention.Store(int64(retention))
	a.logOn.Store(true)
	return nil
}

// ChangesHead implements ChangeLog.
func (a *buntAdapter) ChangesHead(context.Context) (int64, error) { return a.logDurable.Load(), nil }

// ReadChanges implements ChangeLog.
func (a *buntAdapter) ReadChanges(ctx context.Context, after int64, limit int, fn func(LoggedChange) error) (int64, error) {
	type raw struct {
		id int64
		v  []byte
	}
	var got []raw
	var skipped int64
	durable := a.logDurable.Load()
	err := a.db.View(func(tx *buntdb.Tx) error {
		// Read under the view: pruning updates it inside its own Update.
		if pruned := a.logPruned.Load(); pruned > after {
			skipped, after = pruned-after, pruned
		}
		return tx.AscendGreaterOrEqual("", logPrefix+logKey(after+1), func(k, v string) bool {
			if !strings.HasPrefix(k, logPrefix) || len(got) >= limit {
				return false
			}
			id, ok := parseLogKey(k[len(logPrefix):])
			if !ok || id > durable {
				return false
			}
			got = append(got, raw{id, []byte(v)})
			return true
		})
	})
	if errors.Is(err, buntdb.ErrDatabaseClosed) {
		return 0, ErrClosed
	}
	if err != nil {
		return 0, err
	}
	for _, r := range got {
		if err := ctx.Err(); err != nil {
			return skipped, err
		}
		c, err := decodeLogEntry(r.id, r.v)
		if err != nil {
			return skipped, err
		}
		if err := fn(c); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

// Cursor implements ChangeLog.
func (a *buntAdapter) Cursor(_ context.Context, name string) (int64, bool, error) {
	var v string
	err := a.db.View(func(tx *buntdb.Tx) error {
		var err error
		v, err = tx.Get(recordKey(Record{Kind: kindCursor, Key: name}))
		return err
	})
	if errors.Is(err, buntdb.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	pos, err := strconv.ParseInt(v, 10, 64)
	return pos, err == nil, err
}

// SaveCursor implements ChangeLog: one record through the committer,
// durable when it returns (it shares the fsync of the writes queued with
// it).
func (a *buntAdapter) SaveCursor(_ context.Context, name string, pos int64) error {
	rec := []Record{{Kind: kindCursor, Key: name, Value: []byte(strconv.FormatInt(pos, 10))}}
	return a.commit(rec, len(name)+24+recordOverhead, nil)
}

// addLogEntries gives each request of group that carries a log entry its
// change id and the entry as one more record; the committer calls it
// before the group is journaled. It returns the group's last id.
func (a *buntAdapter) addLogEntries(group []*commitReq) int64 {
	last := int64(0)
	for _, r := range group {
		if r.logValue == nil {
			continue
		}
		a.logSeq++
		last = a.logSeq
		n := len(r.records)
		r.records = append(r.records[:n:n], Record{Kind: kindLog, Key: logKey(last), Value: r.logValue})
	}
	return last
}

// pruneLog deletes entries older than the retention, the newest kept;
// the committer calls it after a group, once a logPruneEvery.
func (a *buntAdapter) pruneLog(now time.Time) {
	every := logPruneEvery
	if a.opts.logPruneEvery > 0 {
		every = a.opts.logPruneEvery
	}
	if !a.logOn.Load() || now.Sub(a.logPrunedAt) < every {
		return
	}
	a.logPrunedAt = now
	cutoff := now.Add(-time.Duration(a.logRetention.Load())).UnixNano()
	newest := a.logDurable.Load()
	err := a.db.Update(func(tx *buntdb.Tx) error {
		var keys []string
		upTo := int64(0)
		err := tx.AscendGreaterOrEqual("", logPrefix, func(k, v string) bool {
			if !strings.HasPrefix(k, logPrefix) || len(keys) >= logPruneBatch {
				return false
			}
			id, ok := parseLogKey(k[len(logPrefix):])
			if !ok || id >= newest {
				return false
			}
			at, err := logEntryAt([]byte(v))
			if err != nil || at.UnixNano() >= cutoff {
				return false
			}
			keys, upTo = append(keys, k), id
			return true
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := tx.Delete(k); err != nil {
				return err
			}
		}
		if upTo > a.logPruned.Load() {
			a.logPruned.Store(upTo)
		}
		return nil
	})
	if err != nil {
		a.setFailed(fmt.Errorf("%w: prune the change log: %w", ErrUnwritable, err))
	}
}

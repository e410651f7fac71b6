package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// ChangeLog is implemented by adapters that keep every commit, in commit
// order, for a retention window, so that a reader that stopped (a crash,
// a consumer outage, another instance taking over) can resume after the
// last change it handled. PostgreSQL's is _changes; the embedded store
// keeps one once KeepChanges is called. Server-side subscriptions read it.
type ChangeLog interface {
	// KeepChanges starts keeping the changes of later commits (the
	// embedded store keeps none until asked, at no cost); retention 0 is
	// DefaultChangeRetention. PostgreSQL keeps them always, for its own
	// changeRetention. Call it before the first Commit that must be kept.
	KeepChanges(retention time.Duration) error
	// ChangesHead is the id of the newest change kept (0: none yet).
	ChangesHead(ctx context.Context) (int64, error)
	// ReadChanges calls fn with the changes after id after, oldest first,
	// at most limit of them. Skipped counts the changes after `after`
	// that retention removed before they were read (they are not handed
	// over): the reader lost them.
	ReadChanges(ctx context.Context, after int64, limit int, fn func(LoggedChange) error) (skipped int64, err error)
	// Cursor is the position a reader saved under name (ok false: none).
	Cursor(ctx context.Context, name string) (pos int64, ok bool, err error)
	// SaveCursor keeps name's position durably. It writes no change.
	SaveCursor(ctx context.Context, name string, pos int64) error
}

// DefaultChangeRetention is how long a change log keeps a change.
const DefaultChangeRetention = 24 * time.Hour

// LoggedChange is one commit as a ChangeLog keeps it: its object and
// relation records, each object record with its Previous version when the
// writer carried it.
type LoggedChange struct {
	ID      int64
	At      time.Time
	Records []Record
}

// Leaser is implemented by stores several instances share (PostgreSQL):
// a named lease is held by at most one instance at a time, so that one
// of them does a job for all (delivering a server-side subscription).
type Leaser interface {
	// TryLease takes the lease name if no one holds it (ok false
	// otherwise). The lease ends with Release, or when the holder's
	// connection to the store dies (then Lost is closed): another
	// instance can then take it.
	TryLease(ctx context.Context, name string) (lease Lease, ok bool, err error)
}

// Lease is a held named lease.
type Lease interface {
	// Lost is closed when the lease ended without Release.
	Lost() <-chan struct{}
	Release()
}

// loggedRecord is one record as a change log entry keeps it (JSON, the
// shape _changes uses: Value base64, null for a deletion; Previous the
// object's JSON, null when it did not exist, absent when not carried).
type loggedRecord struct {
	Kind     string          `json:"kind"`
	Class    string          `json:"class,omitempty"`
	Key      string          `json:"key,omitempty"`
	Value    []byte          `json:"value"`
	Previous json.RawMessage `json:"previous,omitempty"`
}

type loggedEntry struct {
	At      int64          `json:"at"` // unix nanoseconds
	Records []loggedRecord `json:"records"`
}

// encodeLogEntry is the log entry of a commit's records, or nil when it
// holds no object or relation record (nothing a reader of changes wants).
func encodeLogEntry(at time.Time, records []Record) ([]byte, error) {
	e := loggedEntry{At: at.UnixNano()}
	for _, r := range records {
		if r.Kind != KindObject && r.Kind != KindJoin {
			continue
		}
		lr := loggedRecord{Kind: string(rune(r.Kind)), Class: r.Class, Key: r.Key, Value: r.Value}
		switch {
		case r.Previous == nil:
		case len(r.Previous) == 0:
			lr.Previous = json.RawMessage("null")
		default:
			lr.Previous = r.Previous
		}
		e.Records = append(e.Records, lr)
	}
	if len(e.Records) == 0 {
		return nil, nil
	}
	return json.Marshal(e)
}

// logEntryAt reads only an entry's time: pruning tests up to
// logPruneBatch entries at once, inside the committer's write, and needs
// none of their records (decoding them would copy every value).
func logEntryAt(b []byte) (time.Time, error) {
	var e struct {
		At int64 `json:"at"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, e.At), nil
}

func decodeLogEntry(id int64, b []byte) (LoggedChange, error) {
	var e loggedEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return LoggedChange{}, fmt.Errorf("%w: change %d: %w", ErrDamaged, id, err)
	}
	c := LoggedChange{ID: id, At: time.Unix(0, e.At), Records: make([]Record, len(e.Records))}
	for i, lr := range e.Records {
		if len(lr.Kind) != 1 {
			return LoggedChange{}, fmt.Errorf("%w: change %d: record kind %q", ErrDamaged, id, lr.Kind)
		}
		r := Record{Kind: Kind(lr.Kind[0]), Class: lr.Class, Key: lr.Key, Value: lr.Value}
		switch {
		case lr.Previous == nil:
		case string(lr.Previous) == "null":
			r.Previous = []byte{}
		default:
			r.Previous = lr.Previous
		}
		c.Records[i] = r
	}
	return c, nil
}

// The embedded store's own record kinds: never accepted from a caller,
// never handed to Load. They sort before every caller's kind, and after
// the journal's key.
const (
	kindLog    Kind = '\x02' // Key = logKey(id), Value = encodeLogEntry
	kindCursor Kind = '\x03' // Key = the cursor's name, Value = decimal position
)

// logKey is a change id as a key that sorts in id order.
func logKey(id int64) string { return fmt.Sprintf("%016x", id) }

func parseLogKey(k string) (int64, bool) {
	id, err := strconv.ParseInt(k, 16, 64)
	return id, err == nil
}

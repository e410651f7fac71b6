// Package store owns persistence: the Adapter contract every backend
// satisfies, and Open, which picks a backend from a database URI.
//
// Adapters know nothing of queries, schemas or HTTP; they durably keep
// records and hand them back at start-up. Imports: only schema.
package store

import (
	"errors"
	"time"
)

// Kind separates the record families an adapter keeps.
type Kind byte

// Record families.
const (
	KindObject Kind = 'o' // Class = class name, Key = objectId, Value = object JSON
	KindSchema Kind = 's' // Class = class name, Key = "", Value = schema.Class JSON
	KindJoin   Kind = 'j' // Class = "<relationKey>:<owningClass>", Key = "<owningId>:<relatedId>", Value = []byte{} when present
	KindMeta   Kind = 'm' // Class = "", Key = setting name (e.g. "masterKey"), Value = bytes
)

// Record is one stored item. A nil Value in a Commit deletes the record.
type Record struct {
	Kind  Kind
	Class string
	Key   string
	Value []byte
	// Previous is, for an object of a class kept out of memory (whose
	// objects no follower holds), the object as it stood before this
	// commit, so that other instances can tell LiveQuery what changed:
	// its JSON, or a non-nil empty slice when the object did not exist.
	// nil means not carried (any other record, or an older writer). An
	// adapter others follow hands it over with the commit (Follow); the
	// others ignore it.
	Previous []byte
}

// Adapter is a persistence backend.
type Adapter interface {
	// Load calls fn for every stored record, grouped by kind and ordered by
	// (Kind, Class, Key). It is called once at start-up to rebuild memory.
	// A record's Value may be the adapter's own memory (the embedded
	// store hands out the bytes it keeps, so a loaded object is held
	// once): fn and whoever it passes Value to must never modify it.
	Load(fn func(Record) error) error
	// Commit applies all records atomically and durably: when it returns
	// nil, every record survives a crash (kill -9, power loss of the OS
	// page cache). Concurrent callers share fsyncs (group commit). Values
	// are immutable from the call on: the adapter must not modify them,
	// and may keep them as its own copy (the embedded store does), while
	// the service keeps an object's committed bytes as its reply
	// encoding, so both hold the same memory. Callers must never modify or
	// reuse a Value they committed.
	Commit(records []Record) error
	// Close flushes and releases the backend.
	Close() error
}

// ErrUnwritable is returned (wrapped, with the cause) by every Commit once
// an adapter can no longer make writes durable (its data file was deleted,
// an fsync failed): the server answers writes 503 and reports itself
// unready until it is restarted on a sound file.
var ErrUnwritable = errors.New("store: the data file cannot be written")

// Health is implemented by adapters that can tell whether they can still
// write; readiness checks call it, so it must be cheap.
type Health interface {
	// Writable is nil while writes can be made durable, else an error
	// wrapping ErrUnwritable.
	Writable() error
}

// Instrumented is implemented by adapters that report their activity (the
// on-disk buntdb adapter); operators see it as metrics.
type Instrumented interface {
	Stats() Stats
	// ObserveGroups has fn called after every durable commit group with
	// the time its write and fsync took and the Commits it held.
	ObserveGroups(fn func(took time.Duration, commits int))
}

// Stats counts an adapter's work since it opened.
type Stats struct {
	Commits   uint64 // Commit calls answered
	Groups    uint64 // fsyncs, each shared by a group of Commits
	Shrinks   uint64 // compactions of the data file
	FileBytes int64  // the data file's size after the last fsync
}

// ErrClosed is returned by Commit after Close.
var ErrClosed = errors.New("store: closed")

// Follower is implemented by adapters that several instances share (the
// PostgreSQL adapter): each instance loads once, then follows the commits
// the others make, so its memory stays in step without reloading.
type Follower interface {
	// Position is where in the change stream the last Load stood: every
	// commit after it is handed to Follow, none before it.
	Position() int64
	// Follow calls fn, from one goroutine, with each commit other
	// instances (other Adapters) made after position from, one commit per
	// call, in commit order. Commits made through this Adapter are
	// skipped: memory already holds them. After a lost connection it
	// reconnects by itself and resumes after the last commit it handed
	// over. stop ends following and waits for a call of fn in progress.
	Follow(from int64, fn func(ForeignCommit)) (stop func(), err error)
}

// ForeignCommit is one commit another instance made, as Follow hands it
// over.
type ForeignCommit struct {
	Records []Record
	// Superseded reports whether this Adapter committed r's record (same
	// Kind, Class and Key) again after this commit: memory already holds
	// the newer value, which r must not overwrite. Ask it while holding
	// the lock your own writes of the record hold across their Commit.
	Superseded func(r Record) bool
}

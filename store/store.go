// Package store owns persistence: the Adapter contract every backend
// satisfies, and Open, which picks a backend from a database URI.
//
// Adapters know nothing of queries, schemas or HTTP; they durably keep
// records and hand them back at start-up. Imports: only schema.
package store

import (
	"context"
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

// ErrUnavailable is wrapped by the errors of an adapter whose database
// cannot be reached (a shared PostgreSQL that stopped or a lost network):
// the request did not change anything and may be tried again later.
// Clients see 503 with Retry-After.
var ErrUnavailable = errors.New("store: the database is unavailable")

// Checker is implemented by adapters whose database can become
// unreachable while the process runs (PostgreSQL). Unavailable reports
// why writes cannot commit now (wrapping ErrUnavailable), or nil: the
// server's readiness probe answers 503 while it is not nil.
type Checker interface {
	Unavailable() error
}

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

// CatchUpper is implemented by followers that can tell when this
// instance holds every commit already durable (the PostgreSQL adapter):
// reads by id use it so that a client moving between instances reads its
// own writes.
type CatchUpper interface {
	// CatchUp returns once Follow has handed over every commit that was
	// durable when CatchUp was called, whichever instance made it (at once
	// when nothing follows).
	CatchUp(ctx context.Context) error
}

// OwnFollower is a Follower that can also hand over the commits made
// through this Adapter, in their place in the one commit order (Own set),
// for consumers that must see every commit in that order: LiveQuery
// events derived from the log on every instance.
type OwnFollower interface {
	// FollowWithOwn is Follow, handing over own commits too.
	FollowWithOwn(from int64, fn func(ForeignCommit)) (stop func(), err error)
}

// ForeignCommit is one commit another instance made, as Follow hands it
// over (or one of this instance's, with Own set, from FollowWithOwn).
type ForeignCommit struct {
	// Own says this Adapter made the commit: memory already holds it.
	Own     bool
	Records []Record
	// Superseded reports whether this Adapter committed r's record (same
	// Kind, Class and Key) again after this commit: memory already holds
	// the newer value, which r must not overwrite. Ask it while holding
	// the lock your own writes of the record hold across their Commit.
	Superseded func(r Record) bool
}

// ErrStale is the error (wrapped, as a *StaleError) of a guarded commit
// refused because another instance changed what the write was decided on
// after the writer's copy of it: nothing was written, and the writer must
// catch up and decide again.
var ErrStale = errors.New("store: the write was decided on a copy another instance has changed since")

// StaleError is ErrStale with the change to catch up through before
// deciding again.
type StaleError struct {
	Through int64 // the newest change of a guarded key
	// Keys are the guard keys that were changed, or that another
	// instance's Serializer lock held: what to lock before deciding again.
	Keys []string
}

func (e *StaleError) Error() string { return ErrStale.Error() }

// Is makes errors.Is(err, ErrStale) hold.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// Guard is one thing a write was decided on: Key (an object, ObjectKey,
// or a unique value such as a lower-cased username) as it stood after
// change Base. A guarded commit is refused when another instance wrote
// Key after Base.
type Guard struct {
	Key  string
	Base int64
}

// ObjectKey is the guard key of an object. Every committed object record
// counts as a write of it.
func ObjectKey(class, id string) string { return "o\x1f" + class + "\x1f" + id }

// Guarded is implemented by stores several instances share (PostgreSQL):
// a write decided on this instance's copy commits only if that copy was
// current, so N instances give the same results as one.
type Guarded interface {
	// CommitGuarded is Commit, refused with a *StaleError (nothing
	// written) when another instance wrote a guard's Key after its Base.
	// Every guard key, and every object record's ObjectKey, counts as
	// written by this commit.
	CommitGuarded(records []Record, guards []Guard) error
	// Applied is the change through which Follow's fn has returned for
	// every commit (the Load's Position before following starts): memory
	// holds every change up to it.
	Applied() int64
	// Head is the newest change in the store.
	Head(ctx context.Context) (int64, error)
	// WaitApplied waits until Applied reaches through, or ctx ends (at
	// once when nothing follows the store).
	WaitApplied(ctx context.Context, through int64) error
}

// Serializer is implemented by Guarded stores that can serialise the
// deciders of some guard keys across instances, so that a write that lost
// a race decides again without racing: while a lock on a key is held, a
// guarded commit of another instance that writes that key is refused with
// a *StaleError naming it (nothing written), and it then queues for the
// lock itself.
type Serializer interface {
	// LockKeys waits until this caller alone, among every instance's
	// LockKeys callers, holds keys, and returns the newest change
	// committed once they were held: memory caught up through head
	// decides on a copy no other instance can change under the lock.
	// unlock must be called once the write committed or failed.
	LockKeys(ctx context.Context, keys []string) (head int64, unlock func(), err error)
}

// ErrUnique is the error (wrapped, as a *UniqueError) of a commit a
// unique index of the store refused: a value that must be unique (a
// username, an email, a role name) is already held by another object.
var ErrUnique = errors.New("store: a unique value is already taken")

// UniqueError is ErrUnique naming the class and field.
type UniqueError struct {
	Class, Field string
}

func (e *UniqueError) Error() string {
	return "store: " + e.Class + "." + e.Field + " is already taken"
}

// Is makes errors.Is(err, ErrUnique) hold.
func (e *UniqueError) Is(target error) bool { return target == ErrUnique }

// Package postgres is the PostgreSQL store adapter: the shared store of
// several Quarry instances. It keeps one table per class with typed columns
// derived from the class's schema, and a change table every instance
// follows (LISTEN/NOTIFY wakes the followers). Importing it registers the
// postgres:// and postgresql:// database URIs with store.Open.
//
// It imports only store and schema, never service.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quarrydata/quarry/store"
)

// Tables of the adapter's own. Class names beginning with an underscore
// are Parse's built-in classes, none of which is named so.
const (
	tableSchema   = "_SCHEMA"         // className, tableName, schema (jsonb; NULL when a class has objects but no schema)
	tableJoins    = "_JOINS"          // joinClass ("<key>:<class>"), tableName of its "_Join:<key>:<class>" table
	tableMeta     = "_META"           // key, value (bytea)
	tableChanges  = "_changes"        // id, origin, at, records: every commit, in commit order
	tablePruned   = "_changes_pruned" // upTo: the highest change id pruning removed
	tableVersions = "_versions"       // key, id, origin: the last change that wrote each guard key (guard.go)
	channel       = "quarry_changes"
)

// commitLock is the advisory lock every Commit holds until it commits
// (pg_advisory_xact_lock): commits are serialised, so change ids are
// assigned and become visible in the same order, and a follower reading
// "after id n" never skips a commit that was still in flight.
const commitLock int64 = 0x5175_6172_7279 // "Quarry"

// ErrNoPostGIS is returned by Open when the database lacks PostGIS and it
// cannot be created; GeoPoint columns are geography(Point) columns.
var ErrNoPostGIS = errors.New("postgres: the PostGIS extension is not installed on the database server (Debian: apt-get install postgresql-15-postgis-3)")

func init() {
	open := func(uri string) (store.Adapter, error) { return Open(uri, Options{}) }
	store.Register("postgres", open)
	store.Register("postgresql", open)
}

// Options tune the adapter; the zero value is the default.
type Options struct {
	// Timeout bounds one statement round (connect, Load, Commit); 0 means
	// 30 seconds.
	Timeout time.Duration
	// Logf reports following trouble (a lost connection, its recovery);
	// nil discards it.
	Logf func(format string, args ...any)
	// ChangeRetention is how long _changes keeps a commit (0: 24 hours).
	// An instance cut off from the database for longer cannot catch up
	// and says so; restarting it loads everything afresh. The URI
	// parameter changeRetention (a Go duration, "6h") sets it too.
	ChangeRetention time.Duration
}

// pruneEvery is how often an adapter deletes changes past the retention.
const pruneEvery = time.Minute

// Adapter is a store.Adapter and store.Follower on one PostgreSQL database.
type Adapter struct {
	pool   *pgxpool.Pool
	opts   Options
	origin string // this Adapter's id in _changes.origin

	gmu        sync.Mutex // guards the group commit's queue (commit.go)
	gcond      *sync.Cond
	queue      []*pending
	stopping   bool
	groupsDone chan struct{} // closed when runGroups returned

	commits, groups atomic.Uint64
	// tables are the class tables' shapes as commits last read them from
	// _SCHEMA (class name -> *cachedTable, commit.go).
	tables  sync.Map
	faults  faultState // faults.go
	observe atomic.Pointer[func(took time.Duration, commits int)]

	pruneCtx  context.Context
	pruneStop context.CancelFunc
	pruneDone chan struct{}

	mu       sync.Mutex
	position int64                // _changes id the last Load stood at
	own      map[string]*ownWrite // record key -> this Adapter's latest commit of it (follow.go)
	// known is the schema JSON this instance's memory holds per class
	// (merge.go); mergedOwn are own commits' merged schemas, by change id,
	// until this Adapter's follower hands them to memory.
	known     map[string][]byte
	mergedOwn map[int64][]store.Record
	closed    bool
	stops     []func()
	heads     heads       // coalesced reads of the head of _changes (applied.go)
	applied   applied     // how far the follower stands (applied.go)
	serial    serialState // LockKeys (serialize.go)
	leases    leases      // TryLease (changelog.go)

	// keepOut are the classes kept out of memory (query.go).
	keepOut map[string]bool

	// warnings are what Open found wrong in the data (guard.go).
	warnings []string
}

// Open connects to the database at uri (a libpq URI), creates the
// adapter's tables when they are missing, and checks for PostGIS.
func Open(uri string, opts Options) (*Adapter, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	uri, err := ownParams(uri, &opts)
	if err != nil {
		return nil, err
	}
	if opts.ChangeRetention <= 0 {
		opts.ChangeRetention = 24 * time.Hour
	}
	cfg, err := pgxpool.ParseConfig(uri)
	if err != nil {
		return nil, fmt.Errorf("%w: the PostgreSQL URI does not parse", store.ErrUnsupportedURI)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	var id [8]byte
	rand.Read(id[:])
	a := &Adapter{pool: pool, opts: opts, origin: hex.EncodeToString(id[:]), groupsDone: make(chan struct{}), pruneDone: make(chan struct{})}
	a.gcond = sync.NewCond(&a.gmu)
	a.initSerial()
	if err := a.prepare(ctx); err != nil {
		pool.Close()
		if errors.Is(err, ErrNoPostGIS) {
			return nil, err
		}
		return nil, fmt.Errorf("postgres: preparing the database: %w", err)
	}
	go a.runGroups()
	a.pruneCtx, a.pruneStop = context.WithCancel(context.Background())
	go a.prune()
	return a, nil
}

// ownParams takes the adapter's own parameters out of a URI's query.
func ownParams(uri string, opts *Options) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("%w: the PostgreSQL URI does not parse", store.ErrUnsupportedURI)
	}
	q := u.Query()
	if v := q.Get("changeRetention"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return "", fmt.Errorf("%w: changeRetention=%q is not a positive duration (6h, 30m)", store.ErrUnsupportedURI, v)
		}
		opts.ChangeRetention = d
		q.Del("changeRetention")
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// prune deletes changes older than the retention every pruneEvery, and
// notes the highest id it deleted, so a follower that had not read them
// knows it cannot catch up.
func (a *Adapter) prune() {
	defer close(a.pruneDone)
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-a.pruneCtx.Done():
			return
		case <-t.C:
		}
		if err := a.pruneOnce(a.pruneCtx); err != nil && a.pruneCtx.Err() == nil {
			a.logf("postgres: pruning %s: %v", tableChanges, err)
		}
	}
}

func (a *Adapter) pruneOnce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	var upTo int64
	err := a.pool.QueryRow(ctx, `WITH d AS (DELETE FROM `+quote(tableChanges)+` WHERE "at" < now() - make_interval(secs => $1) RETURNING "id"),
		u AS (UPDATE `+quote(tablePruned)+` SET "upTo" = greatest("upTo", (SELECT max("id") FROM d)) WHERE EXISTS (SELECT 1 FROM d) RETURNING "upTo")
		SELECT coalesce((SELECT "upTo" FROM u), 0)`,
		a.opts.ChangeRetention.Seconds()).Scan(&upTo)
	if err != nil || upTo == 0 {
		return err
	}
	// A guard key last written at or before the pruned changes can make no
	// commit stale: every instance that follows holds those changes (one
	// that missed them must restart and load afresh). Its row can go.
	_, err = a.pool.Exec(ctx, `DELETE FROM `+quote(tableVersions)+` WHERE "id" <= $1`, upTo)
	return err
}

// prepare creates PostGIS and the adapter's tables, under the commit lock
// so that instances starting together do not race.
func (a *Adapter) prepare(ctx context.Context) error {
	return pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", commitLock); err != nil {
			return err
		}
		var avail bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'postgis')").Scan(&avail); err != nil {
			return err
		}
		if !avail {
			return ErrNoPostGIS
		}
		for _, stmt := range []string{
			"CREATE EXTENSION IF NOT EXISTS postgis",
			"CREATE TABLE IF NOT EXISTS " + quote(tableSchema) + ` ("className" text PRIMARY KEY, "tableName" text NOT NULL UNIQUE, "schema" jsonb)`,
			"CREATE TABLE IF NOT EXISTS " + quote(tableJoins) + ` ("joinClass" text PRIMARY KEY, "tableName" text NOT NULL UNIQUE)`,
			"CREATE TABLE IF NOT EXISTS " + quote(tableMeta) + ` ("key" text PRIMARY KEY, "value" bytea NOT NULL)`,
			"CREATE TABLE IF NOT EXISTS " + quote(tableChanges) + ` ("id" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "origin" text NOT NULL, "at" timestamptz NOT NULL DEFAULT now(), "records" bytea NOT NULL)`,
			"CREATE TABLE IF NOT EXISTS " + quote(tablePruned) + ` ("one" boolean PRIMARY KEY DEFAULT true CHECK ("one"), "upTo" bigint NOT NULL)`,
			"INSERT INTO " + quote(tablePruned) + ` ("upTo") VALUES (0) ON CONFLICT DO NOTHING`,
			"CREATE TABLE IF NOT EXISTS " + quote(tableVersions) + ` ("key" text COLLATE "C" PRIMARY KEY, "id" bigint NOT NULL, "origin" text NOT NULL)`,
			"CREATE TABLE IF NOT EXISTS " + quote(tableCursors) + ` ("name" text PRIMARY KEY, "position" bigint NOT NULL)`,
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		if err := migratePolygonColumns(ctx, tx); err != nil {
			return err
		}
		if err := a.ensureUniqueIndexes(ctx, tx); err != nil {
			return err
		}
		return a.ensureAuthIDs(ctx, tx)
	})
}

// Position implements store.Follower.
func (a *Adapter) Position() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.position
}

// Close stops following and closes the connections.
func (a *Adapter) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	stops := a.stops
	a.stops = nil
	a.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	a.closeLeases()
	a.pruneStop()
	<-a.pruneDone
	a.gmu.Lock()
	a.stopping = true
	a.gcond.Signal()
	a.gmu.Unlock()
	<-a.groupsDone
	a.pool.Close()
	return nil
}

func (a *Adapter) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// SetLogf sets Options.Logf after Open (store.Open gives no options).
func (a *Adapter) SetLogf(logf func(format string, args ...any)) {
	a.mu.Lock()
	a.opts.Logf = logf
	warnings := a.warnings
	a.mu.Unlock()
	if logf != nil {
		for _, w := range warnings { // found by Open, before a logger was set
			logf("%s", w)
		}
	}
}

func (a *Adapter) logf(format string, args ...any) {
	a.mu.Lock()
	logf := a.opts.Logf
	a.mu.Unlock()
	if logf != nil {
		logf(format, args...)
	}
}

var (
	_ store.Adapter      = (*Adapter)(nil)
	_ store.Follower     = (*Adapter)(nil)
	_ store.Instrumented = (*Adapter)(nil)
	_ store.Checker      = (*Adapter)(nil)
)

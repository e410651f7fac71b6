// Package service holds the operations every front end shares (REST,
// GraphQL, LiveQuery): create, get, update, delete, find and batch over
// Parse objects. It validates input, enforces type lock-in, applies update
// operators atomically, commits durably through the store, keeps the
// in-memory index current and announces every change.
//
// service never speaks HTTP; transport calls it with decoded values.
// Components around the core (jobs, accounts) call it through narrow
// interfaces of their own, and take part in its work only through hooks
// it defines (account_hooks.go); service never imports them.
package service

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/quarrydata/quarry/access"
	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/fanout"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Change is one committed write, as live queries consume it. Original is
// nil for a create, Object is nil for a delete.
type Change struct {
	Class    string
	Original schema.Object
	Object   schema.Object
	// OriginalJSON and ObjectJSON are the stored versions' JSON (what
	// encoding/json's Marshal makes of Original and Object, internal keys
	// included) when the write had them at hand, nil otherwise; shared,
	// never to be modified. LiveSharesStored says when they are also the
	// published form's.
	OriginalJSON, ObjectJSON []byte
	// Relations are the relation rows the commit wrote with this object
	// as their owner (AddRelation, RemoveRelation) when RelationsKnown:
	// set for this instance's commits, and for the changes told from the
	// store's change log (withRelations).
	Relations      []RelationEdit
	RelationsKnown bool
}

// RelationEdit is one relation row a commit added (Present) or removed:
// RelatedID in the relation Key of the change's object.
type RelationEdit struct {
	Key, RelatedID string
	Present        bool
}

// Options configure a Service.
type Options struct {
	DefaultLimit int // page size when a query gives none (100)
	MaxLimit     int // cap on limit; 0 means none
	BatchSize    int // most commands in one batch (20)
	// AllowClientClassCreation lets non-master callers create classes by
	// writing to them (schemaless, the specification's default).
	AllowClientClassCreation bool
	// MaxScan is the planner's budget of objects examined without an
	// index (error 154 beyond it); 0 means none.
	MaxScan int
	// ScanBudgetForMaster applies MaxScan to master-key callers too.
	ScanBudgetForMaster bool
	// ScanBudgetWarnOnly logs over-budget plans through Warn instead of
	// refusing them.
	ScanBudgetWarnOnly bool
	Warn               func(msg string)
	// LoadProgress, when set, is told how many objects Open has read so
	// far, every LoadProgressEvery objects (default 100,000), so that a
	// long start-up says what it is doing.
	LoadProgress      func(objects int)
	LoadProgressEvery int
	// PasswordHashCost is the bcrypt cost of password hashes.
	PasswordHashCost int
	// PrivateUsers leaves new users readable only by themselves (by
	// default everyone may read a user, as the specification says).
	PrivateUsers bool
	// SessionLength is the lifetime of new sessions (one year by default).
	SessionLength time.Duration
	// QueryReadAfterWrites makes every query on an instance following a
	// shared store wait until memory holds every commit that was durable
	// when it arrived (queryReadAfterWrites; current.go).
	QueryReadAfterWrites bool
	// LowercaseUsernames and LowercaseEmails store _User's username and
	// email lower-cased (convertUsernameToLowercase,
	// convertEmailToLowercase); log-in looks them up so.
	LowercaseUsernames, LowercaseEmails bool
	// ProtectedFields are the server's protectedFields, to which every
	// class's CLP adds (nil: Parse Server's default, users' emails hidden).
	ProtectedFields access.Protected
	// AllowCustomObjectID lets a create name its objectId
	// (allowCustomObjectId); ObjectIDSize is the length of the ids Quarry
	// makes (objectIdSize; 0 means DefaultObjectIDSize).
	AllowCustomObjectID bool
	ObjectIDSize        int
	// AllowPublicExplain lets callers without the master key explain
	// queries (databaseOptions.allowPublicExplain).
	AllowPublicExplain bool
	// AllowExpiredAuthDataToken logs a user in with authData equal to
	// the stored one without asking the provider again
	// (allowExpiredAuthDataToken; package accounts).
	AllowExpiredAuthDataToken bool
	// Denylist is requestKeywordDenylist (denylist.go); nil is Parse
	// Server's default, empty refuses nothing.
	Denylist []DeniedKeyword
	// QueryTimeout bounds one query's scans (error 124 beyond it).
	QueryTimeout time.Duration
	// NearSphereMaxDistance (radians) limits a $nearSphere that gives no
	// maximum distance: 0 means the specification's 100 miles, a negative
	// value no limit (planner.Options).
	NearSphereMaxDistance float64
	// Indexes are the operator's declared indexes ("Class.path"): standing
	// configuration, built whenever the class exists, also after it is
	// dropped and created again, and listed in its schema.
	Indexes []string
	// Hooks run cloud code (triggers, functions, jobs); nil runs none.
	Hooks Hooks
	// Files configures the files API; its zero value turns it off.
	Files FilesOptions
	// OnChange receives every committed change, in commit order, on a
	// goroutine of its own (a ChangeConsumer named "onChange" with the
	// default ring): a slow consumer never delays a write, and one that
	// falls a whole ring behind loses changes (counted in ChangeStats).
	OnChange func(Change)
	// ChangeConsumers receive committed changes too, each from its own
	// bounded ring in commit order, on its own goroutine (announce.go).
	ChangeConsumers []ChangeConsumer
	// RecordPrevious makes every object record a write commits carry the
	// object's previous version (store.Record.Previous), so that a store's
	// change log (store.ChangeLog) tells what changed without memory:
	// server-side subscriptions replay it after a restart or a takeover.
	RecordPrevious bool
	// OnSchemaChange receives the classes whose schema this process
	// changed (fields added, also by a write, or deleted; a class created
	// or dropped; permissions or indexes changed), after the change
	// released its locks and before the call that made it returns. Changes
	// followed from other instances are not passed: their writer did.
	OnSchemaChange func(classes []string)
	// Now is the clock; tests may fix it.
	Now func() time.Time
	// Accounts configure the email flows and account policies (accounts.go).
	Accounts AccountOptions
	// Auth holds the third-party sign-in providers (the auth option);
	// nil turns authData sign-in off.
	Auth *auth.Registry
	// SQLClasses are custom classes kept out of memory: served by queries
	// the store runs (store.Querier, PostgreSQL only; sqlclasses.go).
	SQLClasses []string
	// SQLClassesOver, when positive, also keeps out of memory every custom
	// class whose table PostgreSQL estimates at more rows, decided at
	// start-up.
	SQLClassesOver int
}

// Auth is who is calling.
type Auth struct {
	Master         bool
	ReadOnly       bool // read-only master key: reads as master, writes fail
	UserID         string
	SessionToken   string
	InstallationID string
	// Request describes the request (headers, ip, cloud context); nil
	// for the service's own work.
	Request *RequestInfo
	// Roles are the caller's role names ("role:Admin"), inherited ones
	// included; set by Authenticate.
	Roles []string
	// LoginAuthData is the authData sent with a login (the mfa token).
	LoginAuthData map[string]any
	// Maintenance is the maintenance key (maintenanceKey), as Parse
	// Server 9 scopes it: writes pass every CLP and ACL, reads are the
	// public's but show Parse's internal account fields and no field is
	// protected; master-key-only operations stay refused.
	Maintenance bool
	// internal marks writes the service makes on its own behalf (sessions,
	// password hashes): they may touch internal fields and classes.
	internal bool
	// ctx is the caller's context (WithContext); nil is Background.
	ctx context.Context
}

// Context is the context the caller's store work runs under: the one
// WithContext gave, else context.Background.
func (a Auth) Context() context.Context {
	if a.ctx == nil {
		return context.Background()
	}
	return a.ctx
}

// WithContext returns a copy of a whose store work (queries of classes
// kept out of memory) stops when ctx ends, as net/http's
// Request.WithContext. A context that ends early fails the call with
// ctx's error; its deadline bounds a query as QueryTimeout does (124).
func (a Auth) WithContext(ctx context.Context) Auth {
	a.ctx = ctx
	return a
}

// InternalAuth is the service's own authority, for the components that
// work on its behalf (job schedules): master, allowed internal fields and
// classes, and no find triggers run for it.
func InternalAuth() Auth { return Auth{Master: true, internal: true} }

// Service is the shared core. It is safe for concurrent use.
type Service struct {
	opts Options
	// denylist is opts.Denylist compiled (denylist.go).
	denylist []keywordRule
	// sessionUse is told of each session Authenticate resolves
	// (OnSessionUse); nil: nobody listens.
	sessionUse func(session schema.Object, expiresISO string)
	// passwordPolicy judges new passwords (SetPasswordPolicy); nil: none.
	passwordPolicy PasswordPolicy
	store          store.Adapter
	data           *index.DB

	// schemaMu serializes schema decisions (schema_lock.go). Writes that
	// add fields commit after unlocking, their classes kept in
	// schemaInFlight (guarded by schemaMu) until published.
	schemaMu       sync.Mutex
	schemaInFlight map[string]chan struct{}
	// buildLocks (class name -> *sync.Mutex) serialize a class's index
	// builds, which run outside schemaMu (buildIndexes).
	buildLocks sync.Map
	schemas    sync.Map // class name -> *schema.Class (replaced, never mutated)
	// relFields caches each class's shown Relation fields per schema
	// version (see relationFields): class name -> *relationFieldsEntry.
	relFields sync.Map
	// fileFieldsCache caches each class's File fields (see fileFields).
	fileFieldsCache sync.Map
	// policies caches each class's compiled access policy per schema
	// version (see policy): class name -> *policyEntry.
	policies sync.Map

	locks [256]chan struct{} // striped object locks for read-modify-write: one-slot channels, so a waiter can give up (lockObjectsOrOutage)
	// classLocks (class name -> *sync.RWMutex) are held shared by writes
	// and exclusively by purge and field drops (lockClass).
	classLocks sync.Map
	seed       maphash.Seed

	roles roleCache

	// foreign holds the components' callbacks for other instances'
	// changes of their classes (component_core.go).
	foreign foreignWatchers

	// metaMu serializes SetMeta's commits; readers load meta, an
	// immutable view swapped after each commit, without it (meta.go).
	metaMu sync.Mutex
	meta   atomic.Pointer[metaView]

	// changes hands committed changes to OnChange and ChangeConsumers,
	// one ring and goroutine each, in commit order (announce.go); nil
	// when there is none.
	changes *fanout.Fanout[Change]
	// schemaNews carries the classes whose schema changed to
	// OnSchemaChange (schema_news.go).
	schemaNews schemaNews

	// jobs counts the cloud code jobs under way (functions.go).
	jobs sync.WaitGroup
	// mails counts the emails under way (accounts.go).
	mails sync.WaitGroup

	// following stops following a shared store (follow.go).
	following follow
	// logOrder derives changes from a shared store's log (logorder.go).
	logOrder logOrder
	// objectQueues decide queued updates of one object in runs
	// (objectqueue.go).
	objectQueues objectQueues

	// running are the _JobStatus ids of those jobs (functions.go).
	running runningJobs

	// configIndexes are Options.Indexes by class (read-only after Open).
	configIndexes map[string][]string

	// sqlClasses are Options.SQLClasses, served through querier
	// (read-only after Open; sqlclasses.go).
	sqlClasses map[string]bool
	querier    store.Querier
}

// Open loads everything the adapter holds into memory and returns a
// ready Service.
func Open(adapter store.Adapter, opts Options) (*Service, error) {
	if opts.DefaultLimit <= 0 {
		opts.DefaultLimit = 100
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PasswordHashCost == 0 {
		opts.PasswordHashCost = bcrypt.DefaultCost
	}
	s := &Service{opts: opts, store: adapter, data: index.NewFlagging(notPublic, notPublicReads...), seed: maphash.MakeSeed(),
		configIndexes: map[string][]string{}}
	for i := range s.locks {
		s.locks[i] = make(chan struct{}, 1)
	}
	if err := s.keepOut(); err != nil {
		return nil, err
	}
	if opts.Denylist == nil {
		opts.Denylist = DefaultDenylist
	}
	rules, err := compileDenylist(opts.Denylist)
	if err != nil {
		return nil, err
	}
	s.denylist = rules
	// The load's collector target (and the GC headroom policy standing
	// aside) lasts through the index builds too: the builds' sorts make
	// garbage in bulk over a heap that is nearly all live data, and a
	// target sized for it would mark it many times over.
	defer raiseGCForLoad()()
	s.data.BeginLoad()
	if err := s.load(); err != nil {
		return nil, fmt.Errorf("loading store: %w", err)
	}
	for class, fields := range internalIndexes {
		if err := s.data.SetStandingIndexes(class, fields...); err != nil {
			return nil, err
		}
	}
	if err := s.data.SetStandingIndexes(classUser, authDataIndexes(opts.Auth)...); err != nil {
		return nil, err
	}
	for _, decl := range opts.Indexes {
		class, path, ok := strings.Cut(decl, ".")
		if !ok || !schema.ValidClassName(class) || !validIndexPath(path) {
			return nil, schema.Errorf(schema.CodeInvalidKeyName, "indexes: %q is not Class.field", decl)
		}
		if err := s.data.SetStandingIndexes(class, path); err != nil {
			return nil, err
		}
		s.configIndexes[class] = append(s.configIndexes[class], path)
		if s.Class(class) != nil {
			// Keep the declaration with a class that already exists.
			if err := s.EnsureIndex(class, path); err != nil {
				return nil, err
			}
		}
	}
	if err := s.buildDeclaredIndexes(); err != nil {
		return nil, fmt.Errorf("building indexes: %w", err)
	}
	s.data.FinishLoad()
	for class := range s.sqlClasses {
		if err := s.sqlIndexes(class); err != nil {
			return nil, fmt.Errorf("building indexes: %w", err)
		}
	}
	s.startChanges()
	return s, nil
}

// internalIndexes serve the lookups the service itself makes: sessions by
// token and by user, users by (lower-cased) name and email, roles by name.
var internalIndexes = map[string][]string{
	classSession: {"sessionToken", "user"},
	classUser:    {"username", schema.KeyUsernameLC, schema.KeyEmailLC, fieldVerifyToken, fieldResetToken},
	classRole:    {"name"},
	// installations by installationId and deviceToken (deduplication)
	classInstallation: {"installationId", "deviceToken"},
	// request ids by id, and by expiry for the sweep
	"_Idempotency": {"reqId", "expire"}, // request ids (package idempotency)
}

// Data exposes the in-memory index to the query engine.
func (s *Service) Data() *index.DB { return s.data }

// Class returns the schema of a class, or nil when it does not exist.
func (s *Service) Class(name string) *schema.Class {
	if c, ok := s.schemas.Load(name); ok {
		return c.(*schema.Class)
	}
	return nil
}

// Classes lists every class schema by name.
func (s *Service) Classes() []*schema.Class {
	var out []*schema.Class
	s.schemas.Range(func(_, v any) bool {
		out = append(out, v.(*schema.Class))
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lockObjects takes the stripe locks of the given objects in a fixed order
// so that transactions over several objects cannot deadlock.
func (s *Service) lockObjects(keys []string) (unlock func()) {
	unlock, _ = s.lockStripes(s.stripes(keys), false)
	return unlock
}

// lockObjectsOrOutage is lockObjects for a write, which gives up with the
// store's error wrapping store.ErrUnavailable (503 with Retry-After) when
// a stripe stays held while the store cannot be reached: the holder may be
// a commit in doubt, which keeps its stripe until the database tells
// whether it committed, and an unrelated write hashed to that stripe
// could not commit anyway.
func (s *Service) lockObjectsOrOutage(keys []string) (unlock func(), err error) {
	return s.lockStripes(s.stripes(keys), true)
}

// stripes are the stripe indexes of keys, in order, each once.
func (s *Service) stripes(keys []string) []int {
	idx := make([]int, 0, len(keys))
	for _, k := range keys {
		idx = append(idx, int(maphash.String(s.seed, k)%uint64(len(s.locks))))
	}
	sort.Ints(idx)
	return slices.Compact(idx) // two keys on one stripe lock it once
}

// outageCheckEvery is how often a write waiting for a held stripe asks
// whether the store is unreachable.
const outageCheckEvery = 100 * time.Millisecond

// lockStripes takes the stripes idx in order; with giveUp it stops
// waiting, releasing what it took, once the store reports an outage.
func (s *Service) lockStripes(idx []int, giveUp bool) (unlock func(), err error) {
	for n, i := range idx {
		select {
		case s.locks[i] <- struct{}{}:
			continue
		default:
		}
		if err := s.waitStripe(i, giveUp); err != nil {
			for j := n - 1; j >= 0; j-- {
				<-s.locks[idx[j]]
			}
			return nil, err
		}
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			<-s.locks[idx[j]]
		}
	}, nil
}

// waitStripe waits for stripe i, held by another write.
func (s *Service) waitStripe(i int, giveUp bool) error {
	checker, ok := s.store.(store.Checker)
	if !giveUp || !ok {
		s.locks[i] <- struct{}{}
		return nil
	}
	tick := time.NewTicker(outageCheckEvery)
	defer tick.Stop()
	for {
		select {
		case s.locks[i] <- struct{}{}:
			return nil
		case <-tick.C:
			if err := checker.Unavailable(); err != nil {
				return err
			}
		}
	}
}

func joinClass(key, owningClass string) string  { return key + ":" + owningClass }
func joinKey(owningID, relatedID string) string { return owningID + ":" + relatedID }

func cutJoinClass(s string) (key, owningClass string, ok bool)  { return cut(s) }
func cutJoinKey(s string) (owningID, relatedID string, ok bool) { return cut(s) }

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// Warn logs msg through Options.Warn, for components reporting trouble
// they cannot return (a job schedule that fails to start).
func (s *Service) Warn(msg string) { s.warn(msg) }

// Now is the service's clock (Options.Now).
func (s *Service) Now() time.Time { return s.opts.Now() }

package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Several instances sharing one store (store.Guarded, PostgreSQL) each
// decide writes on their own memory. A write names what it was decided on
// (guards: its objects and the unique values it reads or claims, each as
// of the change memory had applied), and the store refuses it when
// another instance changed one of them since. The write then waits until
// memory holds that change and is decided again from the request's
// operators: the result is that of some serial order of the writes, and
// uniqueness holds across instances. A write that lost once decides again
// under a lock that serialises the deciders of what it lost on across
// instances (store.Serializer), so it does not lose again unless it reads
// something new: every write ends after a few attempts, never refused for
// contention.

// maxDecideAttempts bounds how often one write is decided again because
// other instances kept changing what it read: a safety net, since every
// attempt after the first is serialised (the second normally commits).
const maxDecideAttempts = 25

// catchUpTimeout bounds the wait for memory to apply a change another
// instance committed before deciding again.
const catchUpTimeout = 10 * time.Second

// errKeptChanging answers a write that lost maxDecideAttempts races.
var errKeptChanging = schema.Errorf(schema.CodeInternalServerError,
	"the object was changed by other servers while this write was decided, %d times; try again", maxDecideAttempts)

// decideBase is what a write decided now is decided on: for classes in
// memory, the change through which memory holds every commit; for
// classes kept out of memory (read from the store as the write runs), the
// newest change before those reads. Callers hold the objects' locks.
type decideBase struct {
	memory, sql int64
}

// guarded is the store as store.Guarded, when it is shared.
func (s *Service) guarded() (store.Guarded, bool) {
	g, ok := s.store.(store.Guarded)
	return g, ok
}

// baseFor reads the decide base of ops; the zero base when the store is
// not shared.
func (s *Service) baseFor(ops []WriteOp) (decideBase, error) {
	g, ok := s.guarded()
	if !ok {
		return decideBase{}, nil
	}
	b := decideBase{memory: g.Applied()}
	for _, op := range ops {
		if s.isSQLClass(op.Class) {
			head, err := g.Head(context.Background())
			if err != nil {
				return b, err
			}
			b.sql = head
			break
		}
	}
	return b, nil
}

// catchUpAfterStale waits until memory holds every change through the one a stale
// write lost to.
func (s *Service) catchUpAfterStale(err error) error {
	var stale *store.StaleError
	g, ok := s.guarded()
	if !errors.As(err, &stale) || !ok {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
	defer cancel()
	return g.WaitApplied(ctx, stale.Through)
}

// writeDecided is writeLocked, decided again (after catching up) while
// the store refuses it as decided on a stale copy, at most attempts
// times.
func (s *Service) writeDecided(auth Auth, ops []WriteOp, atomic bool, attempts int) ([]WriteResult, []*draft, []userCascade, error) {
	if queueable(auth, ops, attempts) {
		return s.writeQueued(auth, ops[0]) // objectqueue.go
	}
	var results []WriteResult
	var drafts []*draft
	var users []userCascade
	err := s.decideAgain(attempts, func() (err error) {
		results, drafts, users, err = s.writeLocked(auth, ops, atomic)
		return err
	})
	return results, drafts, users, err
}

// decideAgain runs decide (a write decided and committed under its
// objects' locks) again, after catching up, while the store refuses it as
// decided on a stale copy, at most attempts times.
func (s *Service) decideAgain(attempts int, decide func() error) error {
	var serial serialised
	defer serial.release()
	return s.decideAgainHeld(attempts, &serial, decide, nil)
}

// decideAgainHeld is decideAgain whose first attempt runs under serial
// (a store lock its caller took, or none), telling lost (when not nil)
// each time an attempt was refused as stale.
func (s *Service) decideAgainHeld(attempts int, serial *serialised, decide func() error, lost func()) error {
	missedOnce := false
	for attempt := 1; ; attempt++ {
		applied := s.applied()
		err := decide()
		serial.release()
		if isNotFound(err) && !missedOnce {
			// An object another instance created a moment ago may not be
			// in memory yet: 101 is decided on a current copy too.
			missedOnce = true
			if behind, cerr := s.catchUpToHead(applied); cerr == nil && behind {
				continue
			}
		}
		if !isStale(err) {
			return err
		}
		if lost != nil {
			lost()
		}
		if attempt >= attempts {
			if attempts == 1 {
				return err // the caller decides again itself
			}
			return errKeptChanging
		}
		// The objects' locks are released: the follower applies changes
		// under them.
		if err := s.serialise(serial, err); err != nil {
			return err
		}
	}
}

// serialised is the store lock a write decided again holds (or none),
// and every key it lost on so far.
type serialised struct {
	keys   []string
	unlock func()
}

// release lets go of the lock, if held.
func (l *serialised) release() {
	if l.unlock != nil {
		l.unlock()
		l.unlock = nil
	}
}

// serialise prepares a write that stale refused to be decided again:
// when the store can, it locks every key the write lost on so far against
// the other instances' deciders and waits until memory holds every change
// made before; otherwise it only catches up through the change it lost to.
func (s *Service) serialise(l *serialised, stale error) error {
	sz, ok := s.store.(store.Serializer)
	var se *store.StaleError
	if !ok || !errors.As(stale, &se) || len(se.Keys) == 0 {
		return s.catchUpAfterStale(stale)
	}
	l.keys = append(l.keys, se.Keys...)
	ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
	defer cancel()
	head, unlock, err := sz.LockKeys(ctx, l.keys)
	if err != nil {
		return err
	}
	l.unlock = unlock
	if g, ok := s.guarded(); ok {
		if err := g.WaitApplied(ctx, max(head, se.Through)); err != nil {
			l.release()
			return err
		}
	}
	return nil
}

// isNotFound reports whether err answers 101 (no such object, or none
// the caller may write).
func isNotFound(err error) bool {
	pe, ok := schema.AsError(err)
	return ok && pe.Code == schema.CodeObjectNotFound
}

// applied is the change through which memory holds every commit (0 when
// the store is not shared).
func (s *Service) applied() int64 {
	if g, ok := s.guarded(); ok {
		return g.Applied()
	}
	return 0
}

// catchUpToHead waits until memory holds every change committed before
// now; behind reports whether a decision made on memory as of change
// applied missed any.
func (s *Service) catchUpToHead(applied int64) (behind bool, err error) {
	g, ok := s.guarded()
	if !ok {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
	defer cancel()
	head, err := g.Head(ctx)
	if err != nil || head <= applied {
		return false, err
	}
	return true, g.WaitApplied(ctx, head)
}

// isStale reports whether err refused a write decided on a stale copy.
func isStale(err error) bool { return errors.Is(err, store.ErrStale) }

// commitRecords commits records guarded by what drafts were decided on,
// when the store is shared.
func (s *Service) commitRecords(records []store.Record, drafts []*draft, base decideBase) error {
	g, ok := s.guarded()
	if !ok {
		return s.store.Commit(records)
	}
	var guards []store.Guard
	for _, d := range drafts {
		at := base.memory
		if s.isSQLClass(d.class) {
			at = base.sql
		}
		guards = append(guards, store.Guard{Key: store.ObjectKey(d.class, d.id), Base: at})
		// The values it frees and claims: a claim raced by another
		// instance, or a value freed meanwhile, is decided again.
		for _, k := range uniqueGuardKeys(d.class, d.original) {
			guards = append(guards, store.Guard{Key: k, Base: at})
		}
		for _, k := range uniqueGuardKeys(d.class, d.obj) {
			guards = append(guards, store.Guard{Key: k, Base: at})
		}
	}
	return uniqueCode(g.CommitGuarded(records, guards))
}

// uniqueGuardKeys are the guard keys of obj's values that Parse keeps
// unique, compared as Parse compares them.
func uniqueGuardKeys(class string, obj schema.Object) []string {
	if obj == nil {
		return nil
	}
	var keys []string
	add := func(kind, v string) {
		if v != "" {
			keys = append(keys, "u\x1f"+kind+"\x1f"+v)
		}
	}
	str := func(k string) string { v, _ := obj[k].(string); return v }
	switch class {
	case classUser:
		add("username", strings.ToLower(str("username")))
		add("email", strings.ToLower(str("email")))
		ad, _ := obj["authData"].(map[string]any)
		for provider, v := range ad {
			entry, _ := v.(map[string]any)
			if id, ok := entry["id"].(string); ok {
				add("auth", provider+"\x1f"+id)
			}
		}
	case classRole:
		add("role", str("name"))
	case classInstallation:
		add("installationId", strings.ToLower(str("installationId")))
		add("deviceToken", str("deviceToken"))
	}
	return keys
}

// uniqueCode gives a store's unique-index refusal Parse's code.
func uniqueCode(err error) error {
	var u *store.UniqueError
	if !errors.As(err, &u) {
		return err
	}
	switch {
	case u.Class == classUser && u.Field == "username":
		return schema.Errorf(codeUsernameTaken, "Account already exists for this username.")
	case u.Class == classUser && u.Field == "email":
		return schema.Errorf(codeEmailTaken, "Account already exists for this email address.")
	case u.Class == classUser && u.Field == "authData":
		return ErrAuthDataUsed
	case u.Class == classRole && u.Field == "name":
		return schema.Errorf(schema.CodeDuplicateValue, "A role with that name already exists.")
	default:
		return schema.Errorf(schema.CodeDuplicateValue, "A duplicate value for a field with unique values was provided")
	}
}

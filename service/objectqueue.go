package service

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Updates of one object take turns on its lock, and each holds the lock
// across its store commit (a PostgreSQL transaction: round trips and a
// WAL flush), so one hot object would commit one update at a time. Here
// the updates that queue for one object while another commit of it is
// under way are decided by one of them in a run: each, in arrival order,
// on the object as the previous one left it (as the ops of a batch with
// transaction: true are), each with its own caller's rights and its own
// outcome, then all that passed in one commit whose records keep every
// version in order. The run commits or fails as a whole: nothing of a
// failed run is written, so no answered update depended on one that was
// not kept. Every update is decided under the object's lock on memory as
// current as a lone update's (decide.go), and the store log holds each
// version, so LiveQuery and the other instances see one change per
// update, in order.

// maxRun bounds the updates one run decides and commits.
const maxRun = 64

// hotFor is how long an object another instance also writes is treated
// as contended: its runs decide holding its store lock from the start
// (store.Serializer) instead of losing a first attempt to the other
// instance's last commit.
const hotFor = 200 * time.Millisecond

// objectQueues are the updates queued per object.
type objectQueues struct {
	mu      sync.Mutex
	objects map[string]*objectQueue // "class\x00objectId"
	// hot are the objects whose last run lost to another instance, and
	// until when they count as contended.
	hot map[string]time.Time
}

// objectQueue is one object's queued updates: waiting, in arrival order;
// busy while a run of them is under way.
type objectQueue struct {
	waiting []*queuedUpdate
	busy    bool
}

// errRunFailed answers the updates of a run whose leader panicked.
var errRunFailed = errors.New("service: the run of updates this update was in failed")

// queuedUpdate is one update waiting for its run.
type queuedUpdate struct {
	auth Auth
	op   WriteOp
	// turn tells a waiting update its run is over (false) or that it
	// decides the next run (true).
	turn chan bool
	// chosen marks the waiting update told to decide the next run: it
	// can no longer leave the queue.
	chosen bool
	// The outcome: a draft and result when committed, else err.
	draft  *draft
	result UpdateResult
	err    error
}

// queueable reports whether ops is one client update the object queue
// may decide in a run with others: a plain update of a class with no
// unique values and no server-side edits, decided as often as needed.
func queueable(auth Auth, ops []WriteOp, attempts int) bool {
	if len(ops) != 1 || attempts < maxDecideAttempts || auth.internal {
		return false
	}
	op := ops[0]
	if op.Method != MethodUpdate || op.ID == "" || op.asServer || op.edit != nil || op.quiet ||
		op.hashedPassword != "" || op.authPlan != nil {
		return false
	}
	switch op.Class {
	case classUser, classRole, classInstallation, classSession:
		return false // unique values, sessions, cascades: decided alone
	}
	return true
}

// writeQueued decides and commits one update (queueable) in a run with
// the other updates of its object queued meanwhile.
func (s *Service) writeQueued(auth Auth, op WriteOp) ([]WriteResult, []*draft, []userCascade, error) {
	key := op.Class + "\x00" + op.ID
	u := &queuedUpdate{auth: auth, op: op, turn: make(chan bool, 1)}
	q := &s.objectQueues
	q.mu.Lock()
	if q.objects == nil {
		q.objects = map[string]*objectQueue{}
	}
	o := q.objects[key]
	if o == nil {
		o = &objectQueue{}
		q.objects[key] = o
	}
	o.waiting = append(o.waiting, u)
	lead := !o.busy
	o.busy = true
	q.mu.Unlock()
	if !lead {
		var err error
		if lead, err = s.awaitTurn(o, u); err != nil {
			return nil, nil, nil, err
		}
	}
	if lead {
		s.leadRun(key, o)
	}
	if u.err != nil {
		return nil, nil, nil, u.err
	}
	return []WriteResult{{Update: u.result}}, []*draft{u.draft}, nil, nil
}

// awaitTurn waits until u's run is over (lead false) or u is to decide
// the next run (lead true). While the store reports an outage, an update
// still waiting leaves the queue with the store's error (503 with
// Retry-After), as a write waiting for a lock stripe does
// (lockObjectsOrOutage): the run before it may be a commit in doubt,
// which holds the object until the database answers.
func (s *Service) awaitTurn(o *objectQueue, u *queuedUpdate) (lead bool, err error) {
	checker, ok := s.store.(store.Checker)
	if !ok {
		return <-u.turn, nil
	}
	tick := time.NewTicker(outageCheckEvery)
	defer tick.Stop()
	for {
		select {
		case lead := <-u.turn:
			return lead, nil
		case <-tick.C:
			err := checker.Unavailable()
			if err == nil {
				continue
			}
			q := &s.objectQueues
			q.mu.Lock()
			i := slices.Index(o.waiting, u)
			leave := i >= 0 && !u.chosen
			if leave {
				o.waiting = slices.Delete(o.waiting, i, i+1)
			}
			q.mu.Unlock()
			if leave {
				return false, err
			}
			// Taken into a run, or told to decide the next: its answer
			// comes through turn.
		}
	}
}

// leadRun decides a run of o's waiting updates (the leader is the first),
// tells each its outcome, and hands the object to the next waiting
// update, if any.
func (s *Service) leadRun(key string, o *objectQueue) {
	q := &s.objectQueues
	var run []*queuedUpdate
	take := func() {
		q.mu.Lock()
		n := min(len(o.waiting), maxRun-len(run))
		run = append(run, o.waiting[:n]...)
		o.waiting = o.waiting[n:]
		q.mu.Unlock()
	}
	take()
	var serial serialised
	defer serial.release()
	defer func() {
		// A bug must not leave the updates waiting and the object's
		// queue busy for good: they are answered, the next may lead.
		if r := recover(); r != nil {
			s.finishRun(key, o, run, errRunFailed)
			panic(r)
		}
	}()
	if s.isHot(key) {
		// Another instance writes it too: queue for its store lock now
		// rather than lose the first attempt (decide.go). Without the
		// lock the run is decided all the same, optimistically.
		_ = s.serialiseKey(&serial, store.ObjectKey(run[0].op.Class, run[0].op.ID))
	}
	var left []*queuedUpdate
	err := s.decideAgainHeld(maxDecideAttempts, &serial, func() error {
		// Updates that queued while this run waited join it.
		take()
		var err error
		left, err = s.decideRun(run)
		return err
	}, func() { s.markHot(key) })
	if len(left) > 0 {
		// Decided in a run of their own: put back, first in line.
		run = run[:len(run)-len(left)]
		q.mu.Lock()
		o.waiting = append(left, o.waiting...)
		q.mu.Unlock()
	}
	s.finishRun(key, o, run, err)
}

// finishRun answers the updates of run (err, when not nil, answers every
// one) and hands o to its next waiting update, or forgets it.
func (s *Service) finishRun(key string, o *objectQueue, run []*queuedUpdate, err error) {
	for _, u := range run {
		switch {
		case err == nil:
		case isNotFound(err) && u.err != nil:
			// Every update missed the object, each with its own answer.
		default:
			u.draft, u.err = nil, err
		}
	}
	q := &s.objectQueues
	q.mu.Lock()
	var next *queuedUpdate
	if len(o.waiting) > 0 {
		next = o.waiting[0]
		next.chosen = true
	} else {
		o.busy = false
		delete(q.objects, key)
	}
	q.mu.Unlock()
	// The leader (run[0]) reads its outcome when leadRun returns.
	for _, u := range run[1:] {
		u.turn <- false
	}
	if next != nil {
		next.turn <- true
	}
}

// decideRun decides run's updates under their object's lock, each on the
// object as the previous left it, and commits those that pass in one
// unit. An update that would add a field (the schema lock and the
// addField permission, decided with its caller's rights) commits alone:
// it ends the run before it, or, when no update before it passed, after
// it. left are the updates not decided, run's tail. Per-update refusals
// are set on each; the error (a lock, the store, a stale copy) is the
// whole run's, nothing written. When every update missed the object, it
// answers 101, so that decideAgain looks for the object once more.
func (s *Service) decideRun(run []*queuedUpdate) (left []*queuedUpdate, err error) {
	first := run[0].op
	key := first.Class + "\x00" + first.ID
	ops := []WriteOp{first}
	unshare := s.shareClasses(ops)
	defer unshare()
	unlock, err := s.lockObjectsOrOutage([]string{key})
	if err != nil {
		return nil, err
	}
	defer unlock()
	base, err := s.baseFor(ops)
	if err != nil {
		return nil, err
	}
	now := schema.FormatTime(s.opts.Now())
	overlay := map[string]schema.Object{}
	drafts := make([]*draft, 0, len(run))
	owners := make([]*queuedUpdate, 0, len(run))
	missed := 0
	for i, u := range run {
		u.draft, u.result, u.err = nil, UpdateResult{}, nil // a stale attempt's outcome is void
		d, err := s.prepare(u.auth, u.op, now, overlay, nil)
		alone := err == nil && s.missingFields(d)
		if alone && len(drafts) > 0 {
			return run[i:], s.commitRun(drafts, owners, base, now)
		}
		if err == nil && !alone {
			err = s.typesHold(d)
		}
		if err == nil {
			err = d.encode()
		}
		if err != nil {
			if isNotFound(err) {
				missed++
			}
			u.err = err
			continue
		}
		overlay[key] = d.obj
		drafts = append(drafts, d)
		owners = append(owners, u)
		if alone {
			return run[i+1:], s.commitRun(drafts, owners, base, now)
		}
	}
	if missed == len(run) {
		return nil, schema.ErrObjectNotFound
	}
	return nil, s.commitRun(drafts, owners, base, now)
}

// commitRun commits the drafts of a run (owners[i] decided drafts[i]) and
// sets each owner's result.
func (s *Service) commitRun(drafts []*draft, owners []*queuedUpdate, base decideBase, now string) error {
	if len(drafts) == 0 {
		return nil
	}
	if err := s.commit(owners[0].auth, drafts, base, nil); err != nil {
		return err
	}
	for i, d := range drafts {
		owners[i].draft = d
		owners[i].result = UpdateResult{UpdatedAt: now, Echo: maps.Clone(d.echo)}
	}
	return nil
}

// typesHold refuses a draft whose fields' types differ from its class's
// schema, as the commit would (decideSchema): so that one update's bad
// value fails that update alone, not its run.
func (s *Service) typesHold(d *draft) error {
	cls := s.Class(d.class)
	for key, f := range d.fields {
		if _, err := checkType(cls, d.class, key, f); err != nil {
			return err
		}
	}
	return nil
}

// isHot reports whether another instance wrote key's object lately.
func (s *Service) isHot(key string) bool {
	q := &s.objectQueues
	q.mu.Lock()
	defer q.mu.Unlock()
	until, ok := q.hot[key]
	if ok && time.Now().After(until) {
		delete(q.hot, key)
		return false
	}
	return ok
}

// maxHot bounds the objects remembered as contended.
const maxHot = 1024

// markHot notes that a run of key's object lost to another instance.
func (s *Service) markHot(key string) {
	q := &s.objectQueues
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	if q.hot == nil {
		q.hot = map[string]time.Time{}
	}
	if len(q.hot) >= maxHot {
		for k, until := range q.hot {
			if now.After(until) {
				delete(q.hot, k)
			}
		}
		if len(q.hot) >= maxHot {
			return
		}
	}
	q.hot[key] = now.Add(hotFor)
}

// serialiseKey takes the store lock of one guard key (store.Serializer)
// into l and waits until memory holds every change made before; without
// a Serializer it does nothing.
func (s *Service) serialiseKey(l *serialised, key string) error {
	sz, ok := s.store.(store.Serializer)
	if !ok {
		return nil
	}
	l.keys = append(l.keys, key)
	ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
	defer cancel()
	head, unlock, err := sz.LockKeys(ctx, l.keys)
	if err != nil {
		return err
	}
	l.unlock = unlock
	if g, ok := s.guarded(); ok {
		if err := g.WaitApplied(ctx, head); err != nil {
			l.release()
			return err
		}
	}
	return nil
}

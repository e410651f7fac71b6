package service

import "sync"

// What the components beside the core (idempotency, webhooks, files,
// installations) ask of it beyond the object operations every front end
// uses. The core never imports them; the server wires them.

// WriteAsServer commits ops as one atomic, durable unit on the server's
// own behalf: master, allowed internal fields and classes, no denylist
// check. The batch size limit does not apply.
func (s *Service) WriteAsServer(ops []WriteOp) ([]WriteResult, error) {
	return s.write(InternalAuth(), ops, true)
}

// foreignWatchers are the components' callbacks for the changes of a
// class other instances commit (WatchForeign).
type foreignWatchers struct {
	mu      sync.RWMutex
	byClass map[string][]func(Change)
}

// WatchForeign calls fn with every change of class that another instance
// sharing the store committed, once this instance has applied it. fn runs
// after the follower has released its locks, so it may take its own and
// write; it runs on the follower's goroutine, so it must be quick.
func (s *Service) WatchForeign(class string, fn func(Change)) {
	s.foreign.mu.Lock()
	defer s.foreign.mu.Unlock()
	if s.foreign.byClass == nil {
		s.foreign.byClass = map[string][]func(Change){}
	}
	s.foreign.byClass[class] = append(s.foreign.byClass[class], fn)
}

func (s *Service) watchesForeign(class string) bool {
	s.foreign.mu.RLock()
	defer s.foreign.mu.RUnlock()
	return len(s.foreign.byClass[class]) > 0
}

// tellForeign hands a change another instance made to its watchers.
func (s *Service) tellForeign(c Change) {
	s.foreign.mu.RLock()
	fns := s.foreign.byClass[c.Class]
	s.foreign.mu.RUnlock()
	for _, fn := range fns {
		fn(c)
	}
}

// CheckDenylist refuses data that holds a requestKeywordDenylist key or
// value, with the rule's error.
func (s *Service) CheckDenylist(data any) error { return s.checkDenylist(data) }

// CloudHooks is the cloud code seam (Options.Hooks), nil without.
func (s *Service) CloudHooks() Hooks { return s.opts.Hooks }

// ServerDelete is a delete the server decided on an earlier read (such as
// the other holders of a deviceToken an installation save removes): it
// runs with the master key whoever the caller is, and when its object is
// already gone from the current copy the commit is stale (store.ErrStale)
// rather than 101, for the caller to decide again.
func ServerDelete(class, id string) WriteOp {
	return WriteOp{Method: MethodDelete, Class: class, ID: id, asServer: true}
}

// CommitDecided commits ops, which the caller decided on an earlier read,
// as one atomic unit, once: a commit decided on a stale copy fails with
// store.ErrStale, for DecideUntilCurrent to decide again.
func (s *Service) CommitDecided(auth Auth, ops []WriteOp) ([]WriteResult, error) {
	return s.writeAttempts(auth, ops, true, 1)
}

// DecideUntilCurrent runs decide (a read, a decision and a CommitDecided)
// again while its commit is stale, after catching up (and, where the
// store can, serialised with the other instances' deciders of what it
// lost on), at most maxDecideAttempts times (decide.go).
func (s *Service) DecideUntilCurrent(decide func() error) error {
	var serial serialised
	defer serial.release()
	for attempt := 1; ; attempt++ {
		err := decide()
		serial.release()
		if !isStale(err) {
			return err
		}
		if attempt == maxDecideAttempts {
			return errKeptChanging
		}
		if err := s.serialise(&serial, err); err != nil {
			return err
		}
	}
}

package service

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/quarrydata/quarry/store"
)

// This file keeps reads by id current on an instance that follows a
// shared store: before answering, the instance applies every commit that
// was durable when the request arrived (store.CatchUpper), so a client
// whose write another instance answered reads it here, never 101 or an
// older version. Queries do the same only when asked
// (Options.QueryReadAfterWrites, FindParams.ReadAfterWrites).

// catchUpWait bounds how long a request waits for this instance to catch
// up. Past it, or when the store does not answer, the request is served
// from memory as it stands (reads stay available while PostgreSQL is
// away); the failure is logged once per outage.
const catchUpWait = 5 * time.Second

// catchingUp is the state of CatchUp on a following instance.
type catchingUp struct {
	on      atomic.Bool // Follow is running
	failing atomic.Bool // a failure was logged and none succeeded since
}

// CatchUp returns once memory holds every commit that was durable when it
// was called, by any instance following the same store; it returns at
// once on an instance that follows nothing.
func (s *Service) CatchUp(ctx context.Context) error {
	if !s.following.current.on.Load() {
		return nil
	}
	cu, ok := s.store.(store.CatchUpper)
	if !ok {
		return nil
	}
	return cu.CatchUp(ctx)
}

// catchUp is CatchUp for a request: bounded by catchUpWait, and never
// failing it.
func (s *Service) catchUp() {
	c := &s.following.current
	if !c.on.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), catchUpWait)
	err := s.CatchUp(ctx)
	cancel()
	switch {
	case err != nil && !c.failing.Swap(true):
		s.warn(fmt.Sprintf("reads by id may miss other instances' latest writes: cannot catch up with the shared store: %v", err))
	case err == nil && c.failing.Load() && c.failing.Swap(false):
		s.warn("reads by id catch up with the shared store again")
	}
}

// catchUpForIDs catches up before a client's write that names existing
// objects (an update or a delete): the object another instance just
// created or changed must be there, in its latest version. The service's
// own writes skip it: some run under locks the follower takes (a
// component's, such as the webhooks' lock, through WatchForeign),
// and they name objects this instance just read.
func (s *Service) catchUpForIDs(auth Auth, ops []WriteOp) {
	if auth.internal {
		return
	}
	for _, op := range ops {
		if op.Method != MethodCreate && op.ID != "" {
			s.catchUp()
			return
		}
	}
}

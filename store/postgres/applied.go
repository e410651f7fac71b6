package postgres

import (
	"context"
	"sync"
)

// This file answers "has this instance applied every commit made before
// now?" (store.CatchUpper): one read of the head of _changes, shared by
// every request that arrived before it started, then a wait for the
// follower to pass it. Reads by id on an instance use it so that a client
// moving between instances reads its own writes.

// headRead is one read of the head of _changes; done is closed when head
// and err are set.
type headRead struct {
	done chan struct{}
	head int64
	err  error
}

// heads coalesces head reads: at most one is running, and requests that
// arrive while it runs share the next one (a request needs a read that
// started after it arrived, so it cannot join the running one).
type heads struct {
	mu      sync.Mutex
	running *headRead
	next    *headRead
}

// applied is how far this Adapter's follower has handed commits over.
type applied struct {
	mu        sync.Mutex
	pos       int64
	following int           // followers running (one in practice)
	wake      chan struct{} // closed when pos moves; nil without waiters
}

// Head returns the id of the last change committed when it was called (0
// when none is kept). Concurrent callers share one query.
func (a *Adapter) Head(ctx context.Context) (int64, error) {
	h := &a.heads
	h.mu.Lock()
	var r *headRead
	if h.running == nil {
		r = &headRead{done: make(chan struct{})}
		h.running = r
		h.mu.Unlock()
		go a.readHeads(r)
	} else {
		if h.next == nil {
			h.next = &headRead{done: make(chan struct{})}
		}
		r = h.next
		h.mu.Unlock()
	}
	select {
	case <-r.done:
		return r.head, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// readHeads runs r, then the read queued meanwhile, until none is. It
// runs on its own goroutine, under the adapter's timeout rather than one
// caller's context, since the read serves every caller waiting on it.
func (a *Adapter) readHeads(r *headRead) {
	h := &a.heads
	for r != nil {
		ctx, cancel := context.WithTimeout(context.Background(), a.opts.Timeout)
		r.err = a.pool.QueryRow(ctx, `SELECT coalesce(max("id"), 0) FROM `+quote(tableChanges)).Scan(&r.head)
		cancel()
		close(r.done)
		h.mu.Lock()
		r, h.next = h.next, nil
		h.running = r
		h.mu.Unlock()
	}
}

// WaitApplied returns once the follower has handed over (or skipped as
// its own) every change up to id, or at once when nothing follows.
func (a *Adapter) WaitApplied(ctx context.Context, id int64) error {
	p := &a.applied
	for {
		p.mu.Lock()
		if p.following == 0 || p.pos >= id {
			p.mu.Unlock()
			return nil
		}
		if p.wake == nil {
			p.wake = make(chan struct{})
		}
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// CatchUp implements store.CatchUpper: it returns once this instance's
// follower has handed over every commit that was durable when CatchUp was
// called, whichever instance made it.
func (a *Adapter) CatchUp(ctx context.Context) error {
	head, err := a.Head(ctx)
	if err != nil {
		return err
	}
	return a.WaitApplied(ctx, head)
}

// advance records that the follower handed over every change up to id.
func (a *Adapter) advance(id int64) {
	p := &a.applied
	p.mu.Lock()
	if id > p.pos {
		p.pos = id
	}
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
	p.mu.Unlock()
}

// startFollowing and stopFollowing count followers; waiters are released
// when none is left, since nothing would move pos any more.
func (a *Adapter) startFollowing(from int64) {
	a.applied.mu.Lock()
	a.applied.following++
	a.applied.mu.Unlock()
	a.advance(from)
}

func (a *Adapter) stopFollowing() {
	a.applied.mu.Lock()
	a.applied.following--
	a.applied.mu.Unlock()
	a.advance(0)
}

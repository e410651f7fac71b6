package service

import (
	"fmt"
	"sync"
)

// changeQueue carries committed changes to Options.OnChange in commit
// order without anyone holding an object or schema lock while a consumer
// (LiveQuery, Redis) is slow.
//
// A write adds its changes while it still holds its objects' stripe locks,
// so the queue's order is the commit order of every object. After it
// unlocks, the write drains the queue. Only one writer drains at a time;
// a writer that finds another draining returns at once, because the active
// drainer keeps going until the queue is empty and so delivers its
// changes too, still in order.
type changeQueue struct {
	mu       sync.Mutex
	pending  []Change
	draining bool
}

// add appends changes in commit order; callers hold the changed objects'
// locks.
func (q *changeQueue) add(changes ...Change) {
	q.mu.Lock()
	q.pending = append(q.pending, changes...)
	q.mu.Unlock()
}

// drain delivers queued changes until none is left, unless another
// goroutine is already doing so. Callers hold no lock of the service.
func (q *changeQueue) drain(deliver func(Change), warn func(string)) {
	q.mu.Lock()
	if q.draining {
		q.mu.Unlock()
		return
	}
	q.draining = true
	for len(q.pending) > 0 {
		batch := q.pending
		q.pending = nil
		q.mu.Unlock()
		q.deliverAll(batch, deliver, warn)
		q.mu.Lock()
	}
	q.draining = false
	q.mu.Unlock()
}

// deliverAll hands each change over. A consumer that panics loses that
// one change, reported through warn; the drainer goes on with the rest,
// since the change is already durable and the writer's reply must not
// fail for it.
func (q *changeQueue) deliverAll(batch []Change, deliver func(Change), warn func(string)) {
	for _, c := range batch {
		func() {
			defer func() {
				if r := recover(); r != nil && warn != nil {
					warn(fmt.Sprintf("a change of %s was not delivered: its consumer panicked: %v", c.Class, r))
				}
			}()
			deliver(c)
		}()
	}
}

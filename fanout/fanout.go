// Package fanout hands a stream of items, in the order they are pushed,
// to several consumers. Each consumer owns a bounded ring and one
// goroutine that delivers from it, so a slow or stuck consumer delays
// nobody but itself: a push never waits, and a full ring drops the item
// and tells its consumer later what it lost. It does no I/O and imports
// nothing of Quarry's.
package fanout

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Limits and defaults.
const (
	// DefaultSize is a ring's capacity when Consumer.Size is 0.
	DefaultSize = 8192
	// MaxBatch is the most items one Deliver call receives.
	MaxBatch = 256
	// WarnEvery is the least time between two warnings about one
	// consumer's losses.
	WarnEvery = time.Minute
)

// Consumer is one destination of the stream.
type Consumer[T any] struct {
	// Name identifies the consumer in logs and metrics.
	Name string
	// Size is the ring's capacity (DefaultSize when 0).
	Size int
	// Wants, when set, is asked at each push (it must be cheap and must
	// not block): an item it refuses never enters the ring.
	Wants func(T) bool
	// Deliver receives items in push order, at most MaxBatch at a time,
	// on the consumer's own goroutine; the slice is reused afterwards.
	Deliver func(batch []T)
	// Lost, when set, is told on the consumer's goroutine that count
	// items of these keys (sorted, distinct) were dropped because the
	// ring was full; it comes after every item pushed before the first
	// of them and before every item pushed after the last.
	Lost func(keys []string, count int)
}

// Stats are one consumer's counters.
type Stats struct {
	Name      string
	Delivered uint64 // items handed to Deliver
	Lost      uint64 // items dropped because the ring was full
	Queued    int    // items waiting in the ring
}

// Fanout pushes items to its consumers' rings.
type Fanout[T any] struct {
	key   func(T) string
	warn  func(string)
	rings []*ring[T]

	// mu orders pushes, so that every ring receives the same sequence.
	mu     sync.Mutex
	closed bool

	// warnPending is set by a push that dropped an item, so that the next
	// Report logs it outside the pusher's locks.
	warnPending atomic.Bool
	wg          sync.WaitGroup
}

// New starts one goroutine per consumer. key names an item's kind (a
// class) in loss notices; warn receives the throttled loss warnings and
// the reports of panicking consumers (nil discards them).
func New[T any](key func(T) string, warn func(string), consumers ...Consumer[T]) *Fanout[T] {
	if warn == nil {
		warn = func(string) {}
	}
	f := &Fanout[T]{key: key, warn: warn}
	for _, c := range consumers {
		if c.Size <= 0 {
			c.Size = DefaultSize
		}
		r := &ring[T]{c: c, buf: make([]entry[T], c.Size), wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
		f.rings = append(f.rings, r)
		f.wg.Add(1)
		go f.run(r)
	}
	return f
}

// Push appends items to every ring that wants them, in order. It never
// waits for a consumer: a full ring drops the item and records its key.
// Items pushed after Close are dropped without notice.
func (f *Fanout[T]) Push(items ...T) {
	if f == nil || len(items) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	for _, r := range f.rings {
		if r.push(items, f.key) {
			f.warnPending.Store(true)
		}
	}
}

// Report logs, through warn, the consumers that dropped items since their
// last warning, at most once per WarnEvery each. Callers call it after
// releasing their own locks; without new losses it costs one atomic load.
func (f *Fanout[T]) Report() {
	if f == nil || !f.warnPending.Swap(false) {
		return
	}
	now := time.Now()
	for _, r := range f.rings {
		r.mu.Lock()
		n, keys := r.unwarned, r.unwarnedKeys
		due := n > 0 && (r.warnedAt.IsZero() || now.Sub(r.warnedAt) >= WarnEvery)
		if due {
			r.unwarned, r.unwarnedKeys, r.warnedAt = 0, nil, now
		} else if n > 0 {
			f.warnPending.Store(true) // still to tell, later
		}
		r.mu.Unlock()
		if due {
			f.warn(fmt.Sprintf("change delivery: %s falls behind; %d changes dropped (%v), its clients are told to fetch again", r.c.Name, n, slices.Sorted(maps.Keys(keys))))
		}
	}
}

// Stats returns every consumer's counters, in the order given to New.
func (f *Fanout[T]) Stats() []Stats {
	if f == nil {
		return nil
	}
	out := make([]Stats, len(f.rings))
	for i, r := range f.rings {
		r.mu.Lock()
		out[i] = Stats{Name: r.c.Name, Delivered: r.delivered.Load(), Lost: r.lost, Queued: r.n}
		r.mu.Unlock()
	}
	return out
}

// Close stops accepting items and lets each consumer deliver what its
// ring holds until deadline. It returns the consumers that had not
// finished by then (their goroutines are left to finish or stay stuck).
func (f *Fanout[T]) Close(deadline time.Time) []Stats {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	for _, r := range f.rings {
		close(r.quit)
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var late []Stats
	for _, r := range f.rings {
		select {
		case <-r.done:
		case <-timer.C:
			timer.Reset(0) // the deadline passed: look at the others without waiting
		}
		select {
		case <-r.done:
		default:
			r.mu.Lock()
			late = append(late, Stats{Name: r.c.Name, Delivered: r.delivered.Load(), Lost: r.lost, Queued: r.n})
			r.mu.Unlock()
		}
	}
	return late
}

// entry is one slot of a ring: an item, and the losses that followed it.
type entry[T any] struct {
	item      T
	lostKeys  map[string]bool
	lostCount int
}

// ring is one consumer's bounded queue.
type ring[T any] struct {
	c    Consumer[T]
	wake chan struct{} // a token when the ring went from empty to not
	quit chan struct{} // closed by Close
	done chan struct{} // closed when the goroutine ends

	delivered atomic.Uint64

	mu      sync.Mutex
	buf     []entry[T]
	head, n int
	lost    uint64

	unwarned     int
	unwarnedKeys map[string]bool
	warnedAt     time.Time
}

// push appends the items the consumer wants and reports whether one was
// dropped.
func (r *ring[T]) push(items []T, key func(T) string) bool {
	dropped := false
	r.mu.Lock()
	wasEmpty := r.n == 0
	for _, it := range items {
		if r.c.Wants != nil && !r.c.Wants(it) {
			continue
		}
		if r.n == len(r.buf) {
			// Full: the loss is told after the newest item held.
			tail := &r.buf[(r.head+r.n-1)%len(r.buf)]
			if tail.lostKeys == nil {
				tail.lostKeys = map[string]bool{}
			}
			k := key(it)
			tail.lostKeys[k] = true
			tail.lostCount++
			r.lost++
			r.unwarned++
			if r.unwarnedKeys == nil {
				r.unwarnedKeys = map[string]bool{}
			}
			r.unwarnedKeys[k] = true
			dropped = true
			continue
		}
		r.buf[(r.head+r.n)%len(r.buf)] = entry[T]{item: it}
		r.n++
	}
	r.mu.Unlock()
	if wasEmpty {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	return dropped
}

// take moves up to len(out) entries out of the ring.
func (r *ring[T]) take(out []entry[T]) []entry[T] {
	r.mu.Lock()
	defer r.mu.Unlock()
	out = out[:0]
	for r.n > 0 && len(out) < cap(out) {
		out = append(out, r.buf[r.head])
		r.buf[r.head] = entry[T]{} // let the item go
		r.head = (r.head + 1) % len(r.buf)
		r.n--
	}
	return out
}

// run is the consumer's goroutine: it delivers until Close, then empties
// the ring and ends.
func (f *Fanout[T]) run(r *ring[T]) {
	defer f.wg.Done()
	defer close(r.done)
	entries := make([]entry[T], 0, MaxBatch)
	batch := make([]T, 0, MaxBatch)
	for {
		entries = r.take(entries)
		if len(entries) == 0 {
			select {
			case <-r.wake:
				continue
			case <-r.quit:
				// Pushes stopped before quit was closed: one last look.
				if entries = r.take(entries); len(entries) == 0 {
					return
				}
			}
		}
		batch = batch[:0]
		for _, e := range entries {
			batch = append(batch, e.item)
			if e.lostCount > 0 {
				f.deliver(r, batch)
				batch = batch[:0]
				f.lose(r, e.lostKeys, e.lostCount)
			}
		}
		f.deliver(r, batch)
		clear(entries[:cap(entries)])
		clear(batch[:cap(batch)])
	}
}

// deliver hands a batch over. A consumer that panics loses that batch,
// reported through warn: the items are already committed and its
// goroutine goes on with the rest.
func (f *Fanout[T]) deliver(r *ring[T], batch []T) {
	if len(batch) == 0 {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			f.warn(fmt.Sprintf("change delivery: %s panicked; %d changes not delivered: %v", r.c.Name, len(batch), p))
		}
	}()
	r.delivered.Add(uint64(len(batch)))
	r.c.Deliver(batch)
}

func (f *Fanout[T]) lose(r *ring[T], keys map[string]bool, count int) {
	if r.c.Lost == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			f.warn(fmt.Sprintf("change delivery: %s panicked on a loss notice: %v", r.c.Name, p))
		}
	}()
	r.c.Lost(slices.Sorted(maps.Keys(keys)), count)
}

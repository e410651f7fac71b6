package email

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/textproto"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the retry queue.
const (
	DefaultQueueSize      = 1000
	DefaultMaxAttempts    = 12 // with the backoff below: about an hour of retries
	DefaultFirstRetry     = 5 * time.Second
	DefaultMaxRetryDelay  = 10 * time.Minute
	DefaultQueueSenders   = 4
	DefaultAttemptTimeout = DefaultSMTPTimeout
)

// ErrQueueFull is returned by a Queue's Send methods when its capacity is
// reached: the message is dropped (and counted).
var ErrQueueFull = errors.New("email: the retry queue is full; message dropped")

// ErrQueueClosed is returned by a Queue's Send methods after Close.
var ErrQueueClosed = errors.New("email: the queue is closed")

// QueueOptions configure a Queue; zero fields take the defaults.
type QueueOptions struct {
	// Size bounds the messages waiting or being sent.
	Size int
	// MaxAttempts bounds the tries of one message, the first included.
	MaxAttempts int
	// FirstRetry is the wait before the second try; each later wait
	// doubles, up to MaxRetryDelay, with up to 20% random spread.
	FirstRetry, MaxRetryDelay time.Duration
	// Senders is how many messages are tried at once.
	Senders int
	// AttemptTimeout bounds one try.
	AttemptTimeout time.Duration
	// Warn logs a message given up (never its text, links or credentials).
	Warn func(msg string)
}

// QueueStats are a Queue's counts, for metrics.
type QueueStats struct {
	Depth   int    // waiting or being sent
	Sent    uint64 // delivered
	Retried uint64 // tries that failed temporarily and were rescheduled
	Dropped uint64 // given up: permanent failure, tries used up, queue full or closed
}

// Queue is an Adapter that sends through another one in the background and
// retries temporary failures (relay unreachable, 4xx replies, timeouts)
// with exponential backoff. Its Send methods return at once: the caller (an
// HTTP reply) never waits for the relay. Permanent failures (5xx replies,
// bad addresses, broken templates) are dropped and logged. Messages live
// in memory only: see docs/email.md for why that is enough for the link
// emails.
type Queue struct {
	next Adapter
	opts QueueOptions

	mu      sync.Mutex
	pending jobHeap // by due time
	size    int     // pending plus being sent
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	sending sync.WaitGroup

	sent, retried, dropped atomic.Uint64
}

// job is one message and its tries so far.
type job struct {
	kind     string // for logs: "verification", "password reset", "mail"
	send     func(ctx context.Context) error
	attempts int
	due      time.Time
}

// NewQueue starts a queue sending through next. Close stops it.
func NewQueue(next Adapter, opts QueueOptions) *Queue {
	if opts.Size <= 0 {
		opts.Size = DefaultQueueSize
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.FirstRetry <= 0 {
		opts.FirstRetry = DefaultFirstRetry
	}
	if opts.MaxRetryDelay <= 0 {
		opts.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if opts.Senders <= 0 {
		opts.Senders = DefaultQueueSenders
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = DefaultAttemptTimeout
	}
	q := &Queue{next: next, opts: opts, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// SendVerificationEmail queues a verification email.
func (q *Queue) SendVerificationEmail(_ context.Context, l Link) error {
	return q.add("verification", func(ctx context.Context) error { return q.next.SendVerificationEmail(ctx, l) })
}

// SendPasswordResetEmail queues a password reset email.
func (q *Queue) SendPasswordResetEmail(_ context.Context, l Link) error {
	return q.add("password reset", func(ctx context.Context) error { return q.next.SendPasswordResetEmail(ctx, l) })
}

// SendMail queues a message.
func (q *Queue) SendMail(_ context.Context, m Message) error {
	return q.add("mail", func(ctx context.Context) error { return q.next.SendMail(ctx, m) })
}

// Stats returns the queue's counts.
func (q *Queue) Stats() QueueStats {
	q.mu.Lock()
	depth := q.size
	q.mu.Unlock()
	return QueueStats{Depth: depth, Sent: q.sent.Load(), Retried: q.retried.Load(), Dropped: q.dropped.Load()}
}

func (q *Queue) add(kind string, send func(context.Context) error) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		q.dropped.Add(1)
		return ErrQueueClosed
	case q.size >= q.opts.Size:
		q.dropped.Add(1)
		q.warn(fmt.Sprintf("email: %s email dropped: the retry queue holds %d messages already", kind, q.opts.Size))
		return ErrQueueFull
	}
	q.size++
	heap.Push(&q.pending, &job{kind: kind, send: send, due: time.Now()})
	q.signal()
	return nil
}

// signal wakes the dispatcher (q.mu held or not: the channel is buffered).
func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run hands due jobs to at most Senders goroutines and sleeps until the
// next one is due.
func (q *Queue) run() {
	defer close(q.done)
	slots := make(chan struct{}, q.opts.Senders)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		q.mu.Lock()
		var ready *job
		wait := time.Hour
		if len(q.pending) > 0 {
			if d := time.Until(q.pending[0].due); d <= 0 {
				ready = heap.Pop(&q.pending).(*job)
			} else {
				wait = d
			}
		}
		closed := q.closed
		q.mu.Unlock()
		if ready != nil {
			slots <- struct{}{}
			q.sending.Add(1)
			go func() {
				defer func() { <-slots; q.sending.Done() }()
				q.try(ready)
			}()
			continue
		}
		if closed {
			return
		}
		timer.Reset(wait)
		select {
		case <-q.wake:
		case <-timer.C:
		}
	}
}

// try sends a job once and reschedules, counts or drops it.
func (q *Queue) try(j *job) {
	ctx, cancel := context.WithTimeout(context.Background(), q.opts.AttemptTimeout)
	err := j.send(ctx)
	cancel()
	j.attempts++
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case err == nil:
		q.size--
		q.sent.Add(1)
		return
	case IsPermanent(err):
		q.size--
		q.dropped.Add(1)
		q.warn(fmt.Sprintf("email: %s email dropped after a permanent failure (%s)", j.kind, describe(err)))
		return
	case j.attempts >= q.opts.MaxAttempts || q.closed:
		q.size--
		q.dropped.Add(1)
		q.warn(fmt.Sprintf("email: %s email dropped after %d tries (last: %s)", j.kind, j.attempts, describe(err)))
		return
	}
	q.retried.Add(1)
	j.due = time.Now().Add(q.backoff(j.attempts))
	heap.Push(&q.pending, j)
	q.signal()
}

// backoff is the wait after the n-th failed try.
func (q *Queue) backoff(n int) time.Duration {
	d := q.opts.FirstRetry
	for i := 1; i < n && d < q.opts.MaxRetryDelay; i++ {
		d *= 2
	}
	d = min(d, q.opts.MaxRetryDelay)
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

func (q *Queue) warn(msg string) {
	if q.opts.Warn != nil {
		q.opts.Warn(msg)
	}
}

// Close stops taking messages and tries the waiting ones once more, until
// ctx ends; what is still unsent then is dropped and counted.
func (q *Queue) Close(ctx context.Context) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	for _, j := range q.pending {
		j.due = time.Now() // one last try each, now
	}
	heap.Init(&q.pending)
	q.mu.Unlock()
	q.signal()
	finished := make(chan struct{})
	go func() {
		<-q.done
		q.sending.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-ctx.Done():
		q.mu.Lock()
		left := q.size
		q.mu.Unlock()
		if left > 0 {
			q.warn(fmt.Sprintf("email: %d email(s) still unsent at shutdown", left))
		}
	}
}

// permanentError marks a failure that retrying cannot mend.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent marks err as a failure that retrying cannot mend; an Adapter
// written for Quarry returns it so that a Queue drops the message.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether retrying err is pointless: a 5xx SMTP reply,
// a bad address, or an error marked with Permanent. Anything else (the
// relay unreachable, a 4xx reply, a timeout) is temporary.
func IsPermanent(err error) bool {
	var p permanentError
	if errors.As(err, &p) || errors.Is(err, ErrBadAddress) {
		return true
	}
	var reply *textproto.Error
	return errors.As(err, &reply) && reply.Code >= 500
}

// describe names a failure for a log line without its text, which may hold
// addresses or the relay's echo of the message.
func describe(err error) string {
	var reply *textproto.Error
	var netErr net.Error
	switch {
	case errors.As(err, &reply):
		return fmt.Sprintf("SMTP reply %d", reply.Code)
	case errors.Is(err, ErrBadAddress):
		return "invalid address"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.As(err, &netErr):
		return "relay unreachable"
	}
	var p permanentError
	if errors.As(err, &p) {
		return "refused by the adapter"
	}
	return "failed"
}

// jobHeap orders jobs by due time.
type jobHeap []*job

func (h jobHeap) Len() int           { return len(h) }
func (h jobHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h jobHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *jobHeap) Push(x any)        { *h = append(*h, x.(*job)) }
func (h *jobHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	*h = old[:len(old)-1]
	return j
}

package subscribe

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/outbound"
	"github.com/quarrydata/quarry/schema"
)

// Event is one delivery: the body of a webhook call, the "event" field
// of a Redis stream entry. ID is unique per event and the same on every
// attempt (and after a restart), for the receiver to drop duplicates.
type Event struct {
	ID           string        `json:"id"`
	Subscription string        `json:"subscription"`
	Op           string        `json:"op"` // create, update, delete, enter, leave; lost after a drop
	ClassName    string        `json:"className,omitempty"`
	Object       schema.Object `json:"object,omitempty"`
	Original     schema.Object `json:"original,omitempty"`
	// Lost counts the events dropped before this one (op "lost"): the
	// queue was full, or the change stream fell behind.
	Lost int    `json:"lost,omitempty"`
	Time string `json:"time"`
}

// Webhook headers.
const (
	HeaderSignature = "X-Quarry-Signature" // "sha256=" + hex HMAC-SHA256 of the body with the secret
	HeaderEventID   = "X-Quarry-Event-Id"
)

// Sign is the signature header's value for body.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// sub is one subscription: its definition and matcher, its queue and the
// goroutine that delivers from it, one event at a time, in order.
type sub struct {
	m  *Manager
	id string // its _Subscription object

	mu      sync.Mutex
	d       Definition
	q       *match.Query
	queue   []Event
	lostNow int // dropped since the last event queued
	seq     uint64
	last    string // id of the last delivered event
	wake    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	redis   *redis.Client
	redisOf string

	delivered, lost, failed atomic.Uint64
}

func (m *Manager) newSub(id string, d Definition, q *match.Query) *sub {
	ctx, cancel := context.WithCancel(context.Background())
	return &sub{m: m, id: id, d: d, q: q, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

func (s *sub) def() Definition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d
}

func (s *sub) current() (Definition, *match.Query) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d, s.q
}

func (s *sub) set(d Definition, q *match.Query) {
	s.mu.Lock()
	s.d, s.q = d, q
	s.mu.Unlock()
}

// enqueue adds e with a fresh id, or drops it when the queue is full; the
// next event queued after drops is preceded by a "lost" notice.
func (s *sub) enqueue(e Event) {
	s.mu.Lock()
	if len(s.queue) >= s.m.opts.QueueSize {
		s.lostNow++
		s.mu.Unlock()
		s.lost.Add(1)
		return
	}
	if s.lostNow > 0 {
		s.queue = append(s.queue, s.lostNotice(e.Time))
	}
	e.ID = s.nextID()
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	s.signal()
}

// lose records count events of the change stream this subscription never
// saw.
func (s *sub) lose(count int) {
	if count <= 0 {
		count = 1
	}
	s.mu.Lock()
	s.lostNow += count
	s.queue = append(s.queue, s.lostNotice(time.Now().UTC().Format(time.RFC3339Nano)))
	s.mu.Unlock()
	s.lost.Add(uint64(count))
	s.signal()
}

// lostNotice is the "lost" event for the drops so far; mu is held.
func (s *sub) lostNotice(at string) Event {
	n := Event{ID: s.nextID(), Subscription: s.d.Name, Op: "lost", Lost: s.lostNow, Time: at}
	s.lostNow = 0
	return n
}

// nextID is bootID-sequence: never reused, by this process or another.
func (s *sub) nextID() string {
	s.seq++
	return s.m.bootID + "-" + strconv.FormatUint(s.seq, 10)
}

func (s *sub) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// restore queues the events a clean shutdown saved, with their ids.
func (s *sub) restore(pending any) {
	list, _ := pending.([]any)
	for _, x := range list {
		str, _ := x.(string)
		var e Event
		if err := json.Unmarshal([]byte(str), &e); err != nil || e.ID == "" {
			s.m.opts.Log.Error("server-side subscription: a saved event is unreadable; dropped", "name", s.d.Name, "err", err)
			continue
		}
		s.queue = append(s.queue, e)
	}
}

func (s *sub) snapshot() ([]Event, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.queue), s.last
}

func (s *sub) stats() Stats {
	s.mu.Lock()
	queued := len(s.queue)
	s.mu.Unlock()
	return Stats{Name: s.def().Name, Queued: queued, Delivered: s.delivered.Load(), Lost: s.lost.Load(), Attempts: s.failed.Load()}
}

// stop ends the delivery goroutine and waits for it; the event it was
// sending stays queued.
func (s *sub) stop() {
	s.cancel()
	<-s.done
	if s.redis != nil {
		s.redis.Close()
	}
}

// run delivers the queue's head until it is accepted, waiting longer
// after each failure, then the next: events arrive in queue order, so in
// commit order for each object, and a failing target holds up only its
// own subscription.
func (s *sub) run() {
	defer close(s.done)
	defer func() {
		if r := recover(); r != nil {
			s.m.opts.Log.Error("server-side subscription: delivery panicked; stopped", "name", s.def().Name, "panic", fmt.Sprint(r))
		}
	}()
	for {
		s.mu.Lock()
		var head *Event
		if len(s.queue) > 0 {
			e := s.queue[0]
			head = &e
		}
		s.mu.Unlock()
		if head == nil {
			select {
			case <-s.wake:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		wait := s.m.opts.RetryBase
		for {
			err := s.send(*head)
			if err == nil {
				break
			}
			s.failed.Add(1)
			if s.ctx.Err() != nil {
				return
			}
			s.m.opts.Log.Warn("server-side subscription: delivery failed; will retry", "name", s.def().Name, "event", head.ID, "retryIn", wait, "err", err)
			select {
			case <-time.After(wait):
			case <-s.ctx.Done():
				return
			}
			wait = min(2*wait, s.m.opts.RetryMax)
		}
		s.mu.Lock()
		s.queue = s.queue[1:]
		if len(s.queue) == 0 {
			s.queue = nil
		}
		s.last = head.ID
		s.mu.Unlock()
		s.delivered.Add(1)
	}
}

// send makes one attempt to deliver e.
func (s *sub) send(e Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	t := s.def().Target
	ctx, cancel := context.WithTimeout(s.ctx, s.m.opts.Timeout)
	defer cancel()
	switch t.Type {
	case TargetWebhook:
		return s.m.client.post(ctx, t, e.ID, body)
	case TargetRedis:
		rdb, err := s.redisFor(t.URL)
		if err != nil {
			return err
		}
		args := &redis.XAddArgs{Stream: t.Stream, Values: []any{"id", e.ID, "event", body}}
		if t.MaxLen > 0 {
			args.MaxLen, args.Approx = t.MaxLen, true
		}
		return rdb.XAdd(ctx, args).Err()
	}
	return fmt.Errorf("unknown target type %q", t.Type)
}

// redisFor is the client of the target's Redis, kept while the URL stays.
func (s *sub) redisFor(url string) (*redis.Client, error) {
	if s.redis != nil && s.redisOf == url {
		return s.redis, nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	policy := s.m.opts.Policy
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		return allowDial(policy, address)
	}}
	opts.Dialer = d.DialContext
	if s.redis != nil {
		s.redis.Close()
	}
	s.redis, s.redisOf = redis.NewClient(opts), url
	return s.redis, nil
}

func allowDial(p outbound.Policy, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !p.Allows(ap.Addr()) {
		return fmt.Errorf("%w: %s", outbound.ErrRefused, address)
	}
	return nil
}

// webhookClient posts events through the outbound policy.
type webhookClient struct{ http *http.Client }

func newWebhookClient(p outbound.Policy) *webhookClient {
	return &webhookClient{http: &http.Client{Transport: p.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// post sends body; only a 2xx answer counts as delivered.
func (c *webhookClient) post(ctx context.Context, t Target, id string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderEventID, id)
	req.Header.Set(HeaderSignature, Sign(t.Secret, body))
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook answered %d", resp.StatusCode)
	}
	return nil
}

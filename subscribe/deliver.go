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
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/outbound"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// Event is one delivery: the body of a webhook call, the "event" field
// of a Redis stream entry. ID names the change and the record in it
// ("<change>-<record>"): the same on every attempt, after a restart and
// on whichever instance delivers it, so a receiver drops duplicates by it.
type Event struct {
	ID           string        `json:"id"`
	Subscription string        `json:"subscription"`
	Op           string        `json:"op"` // create, update, delete, enter, leave; lost after a gap
	ClassName    string        `json:"className,omitempty"`
	Object       schema.Object `json:"object,omitempty"`
	Original     schema.Object `json:"original,omitempty"`
	// Lost counts the changes the subscription never saw (op "lost"):
	// the change log's retention removed them before they were read.
	Lost int64 `json:"lost,omitempty"`
	// Time is when the change was committed.
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

// readBatch is how many changes one read of the log takes.
const readBatch = 256

// saveEvery is how often a position that moved past changes without
// events is saved; one with delivered events is saved at the end of each
// batch read, and within a batch once saveWithin has passed since the
// last save. What was delivered since is what a crash or a takeover
// sends again; the bound keeps a backlog's saves (an fsync each on the
// embedded store) to a few a second.
const (
	saveEvery  = time.Second
	saveWithin = 100 * time.Millisecond
)

// sub is one subscription: its definition and matcher, and the goroutine
// that, while this instance owns the subscription, reads the change log
// from the saved position and delivers its events one at a time, in log
// order.
type sub struct {
	m          *Manager
	id         string // its _Subscription object
	startAfter int64  // the change log's head when it was created

	mu sync.Mutex
	d  Definition
	q  *match.Query

	wake    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	redis   *redis.Client // used by the delivery goroutine only
	redisOf string

	pos                     atomic.Int64 // the last change handled
	owner                   atomic.Bool  // this instance delivers it now
	delivered, lost, failed atomic.Uint64
}

func (m *Manager) newSub(id string, startAfter int64, d Definition, q *match.Query) *sub {
	ctx, cancel := context.WithCancel(context.Background())
	return &sub{m: m, id: id, startAfter: startAfter, d: d, q: q, wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
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

func (s *sub) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// cursorName is where the position is saved: by object id, so a
// subscription deleted and made again under its name starts afresh.
func (s *sub) cursorName() string { return "subscription:" + s.id }

// shown is the definition with this instance's delivery state.
func (s *sub) shown() Definition {
	d := s.def().Shown()
	d.Delivery = &Delivery{Position: s.pos.Load(), Delivering: s.owner.Load()}
	return d
}

func (s *sub) stats() Stats {
	return Stats{Name: s.def().Name, Position: s.pos.Load(), Owner: s.owner.Load(),
		Delivered: s.delivered.Load(), Lost: s.lost.Load(), Attempts: s.failed.Load()}
}

// stop ends the delivery goroutine and waits for it: the position of the
// last change fully delivered is saved, an event being sent is sent
// again by whoever resumes.
func (s *sub) stop() {
	s.cancel()
	<-s.done
	if s.redis != nil {
		s.redis.Close()
	}
}

// run owns the subscription whenever it can (always on a store of one
// instance; on a shared store, while it holds the subscription's lease)
// and delivers from the log meanwhile.
func (s *sub) run() {
	defer close(s.done)
	defer func() {
		if r := recover(); r != nil {
			s.m.opts.Log.Error("server-side subscription: delivery panicked; stopped", "name", s.def().Name, "panic", fmt.Sprint(r))
		}
	}()
	wait := s.m.opts.RetryBase
	for s.ctx.Err() == nil {
		var lease store.Lease
		if s.m.opts.Leaser != nil {
			l, ok, err := s.m.opts.Leaser.TryLease(s.ctx, "subscription:"+s.id)
			if err != nil && s.ctx.Err() == nil {
				s.m.opts.Log.Warn("server-side subscription: cannot ask for its lease", "name", s.def().Name, "err", err)
			}
			if !ok {
				s.sleep(s.m.opts.LeaseRetry, nil)
				continue
			}
			lease = l
			if !s.stillDefined() { // deleted through another instance: sync stops it
				lease.Release()
				s.sleep(s.m.opts.LeaseRetry, nil)
				continue
			}
		}
		s.owner.Store(true)
		err := s.deliverFrom(lease)
		s.owner.Store(false)
		if lease != nil {
			lease.Release()
		}
		if err == nil {
			wait = s.m.opts.RetryBase
			continue
		}
		if s.ctx.Err() != nil {
			return
		}
		s.m.opts.Log.Warn("server-side subscription: reading changes failed; will retry", "name", s.def().Name, "retryIn", wait, "err", err)
		s.sleep(wait, nil)
		wait = min(2*wait, s.m.opts.RetryMax)
	}
}

// sleep waits d, a wake-up, the end or lost being closed; it reports
// whether to go on.
func (s *sub) sleep(d time.Duration, lost <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.wake:
	case <-lost:
		return false
	case <-s.ctx.Done():
		return false
	}
	return true
}

// deliverFrom reads the log after the saved position and delivers each
// change's events, saving the position after them, until the
// subscription stops or the lease is lost (nil) or reading fails.
func (s *sub) deliverFrom(lease store.Lease) error {
	var lost <-chan struct{}
	if lease != nil {
		lost = lease.Lost()
	}
	log := s.m.opts.Changes
	pos, ok, err := log.Cursor(s.ctx, s.cursorName())
	if err != nil {
		return err
	}
	if !ok {
		pos = s.startAfter
	}
	s.pos.Store(pos)
	saved, savedAt := pos, time.Now()
	save := func() error {
		if pos == saved || isClosed(lost) {
			return nil // nothing new, or another instance owns it now
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.Timeout)
		defer cancel()
		if err := log.SaveCursor(ctx, s.cursorName(), pos); err != nil {
			return err
		}
		saved, savedAt = pos, time.Now()
		return nil
	}
	defer func() {
		if err := save(); err != nil {
			s.m.opts.Log.Warn("server-side subscription: position not saved; events after the last saved one will be sent again", "name", s.def().Name, "err", err)
		}
	}()
	for {
		var batch []store.LoggedChange
		skipped, err := log.ReadChanges(s.ctx, pos, readBatch, func(c store.LoggedChange) error {
			batch = append(batch, c)
			return nil
		})
		if err != nil {
			return err
		}
		sent := false
		if skipped > 0 {
			e := Event{ID: "lost-" + strconv.FormatInt(pos, 10), Subscription: s.def().Name, Op: "lost", Lost: skipped,
				Time: time.Now().UTC().Format(time.RFC3339Nano)}
			if !s.deliver(e, lost) {
				return nil
			}
			s.lost.Add(uint64(skipped))
			pos += skipped
			sent = true
		}
		for _, c := range batch {
			if isClosed(lost) {
				return nil
			}
			for _, e := range s.eventsOf(c) {
				if !s.deliver(e, lost) {
					return nil // pos is the last change whose events all went
				}
				s.delivered.Add(1)
				sent = true
			}
			pos = c.ID
			s.pos.Store(pos)
			if sent && time.Since(savedAt) >= saveWithin {
				if err := save(); err != nil {
					return err
				}
			}
		}
		if sent || time.Since(savedAt) >= saveEvery {
			if err := save(); err != nil {
				return err
			}
		}
		if len(batch) < readBatch && skipped == 0 && !s.sleep(s.m.opts.Poll, lost) {
			return nil
		}
	}
}

// isClosed reports whether ch (nil: never) is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// stillDefined reports whether the subscription's _Subscription object
// still exists in this instance's memory.
func (s *sub) stillDefined() bool {
	_, err := s.m.svc.Get(s.m.master, ClassName, s.id, service.ReadOptions{})
	return err == nil
}

// eventsOf decides the events change c means for the subscription. A
// record's Previous is the object before the change; a record without
// one (written by a path that does not carry it: a schema change
// rewriting objects) is told as an update when the object matches.
func (s *sub) eventsOf(c store.LoggedChange) []Event {
	d, q := s.current()
	var out []Event
	var decoded []decodedRecord
	for i, r := range c.Records {
		if r.Kind != store.KindObject || r.Class != d.ClassName {
			continue
		}
		if decoded == nil {
			decoded = s.m.decoded.of(c) // once per change for every subscription
		}
		dr := decoded[i]
		if !dr.ok {
			continue
		}
		obj, original, deleted := dr.obj, dr.original, r.Value == nil
		var ev match.Event
		if dr.known {
			before := original != nil && q.Match(original)
			after := !deleted && q.Match(obj)
			ev = match.Decide(before, after, original != nil, deleted)
		} else if !deleted && q.Match(obj) {
			ev = match.Update
		}
		if ev == match.None || !d.wants(ev) {
			continue
		}
		shown := obj
		if deleted {
			shown = original
		}
		e := Event{ID: strconv.FormatInt(c.ID, 10) + "-" + strconv.Itoa(i), Subscription: d.Name, Op: ev.String(), ClassName: r.Class,
			Object: match.Project(s.m.svc.LiveObject(r.Class, shown), d.Keys, nil), Time: c.At.UTC().Format(time.RFC3339Nano)}
		if original != nil && !deleted && ev != match.Create {
			e.Original = match.Project(s.m.svc.LiveObject(r.Class, original), d.Keys, nil)
		}
		out = append(out, e)
	}
	return out
}

// decodedRecord is a logged object record decoded: obj nil for a
// deletion, original nil when the object did not exist or is not known
// (known false), ok false when the JSON is unreadable.
type decodedRecord struct {
	obj, original schema.Object
	known, ok     bool
}

// decodeCacheSize is how many recent changes stay decoded: subscriptions
// reading near the head share one decoding of each.
const decodeCacheSize = 1024

// decodeCache keeps recent changes decoded. Its objects are shared by
// every subscription: read only.
type decodeCache struct {
	mu    sync.Mutex
	byID  map[int64][]decodedRecord
	order []int64 // oldest first
}

func (dc *decodeCache) of(c store.LoggedChange) []decodedRecord {
	dc.mu.Lock()
	if d, ok := dc.byID[c.ID]; ok {
		dc.mu.Unlock()
		return d
	}
	dc.mu.Unlock()
	d := make([]decodedRecord, len(c.Records))
	for i, r := range c.Records {
		if r.Kind != store.KindObject {
			continue
		}
		dr := &d[i]
		if dr.obj, dr.ok = decodeObject(r.Value); !dr.ok {
			continue
		}
		dr.known = r.Previous != nil
		if dr.known && len(r.Previous) > 0 {
			dr.original, dr.ok = decodeObject(r.Previous)
		}
	}
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if dc.byID == nil {
		dc.byID = map[int64][]decodedRecord{}
	}
	if _, ok := dc.byID[c.ID]; !ok {
		dc.byID[c.ID] = d
		dc.order = append(dc.order, c.ID)
		if len(dc.order) > decodeCacheSize {
			delete(dc.byID, dc.order[0])
			dc.order = dc.order[1:]
		}
	}
	return d
}

func decodeObject(b []byte) (schema.Object, bool) {
	if b == nil {
		return nil, true
	}
	var obj schema.Object
	return obj, json.Unmarshal(b, &obj) == nil
}

// deliver sends e until the target accepts it, waiting longer after each
// failure; false when the subscription stops or its lease is lost first.
// The next event waits: events arrive in log order, so in commit order
// for each object, and a failing target holds up only its own
// subscription.
func (s *sub) deliver(e Event, lost <-chan struct{}) bool {
	wait := s.m.opts.RetryBase
	for {
		err := s.send(e)
		if err == nil {
			return true
		}
		s.failed.Add(1)
		if s.ctx.Err() != nil {
			return false
		}
		s.m.opts.Log.Warn("server-side subscription: delivery failed; will retry", "name", s.def().Name, "event", e.ID, "retryIn", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return false
		case <-lost:
			t.Stop()
			return false
		}
		wait = min(2*wait, s.m.opts.RetryMax)
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

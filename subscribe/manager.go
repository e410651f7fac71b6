package subscribe

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/outbound"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Options configure a Manager.
type Options struct {
	// Max is the most subscriptions (maxServerSubscriptions); 0 turns
	// server-side subscriptions off.
	Max int
	// QueueSize is each subscription's queue (DefaultQueueSize when 0).
	QueueSize int
	// Timeout bounds one delivery attempt (10s when 0).
	Timeout time.Duration
	// RetryBase and RetryMax shape the backoff between attempts: the
	// wait doubles from RetryBase up to RetryMax (200ms and 1m when 0).
	RetryBase, RetryMax time.Duration
	// Policy decides which addresses webhooks and Redis targets may reach.
	Policy outbound.Policy
	Log    *slog.Logger
}

// Manager keeps the subscriptions and delivers their events.
type Manager struct {
	svc    *service.Service
	opts   Options
	client *webhookClient
	bootID string // makes event ids unique across restarts
	master service.Auth

	// mu guards subs and serialises the API's writes.
	mu   sync.Mutex
	subs map[string]*sub
	// byClass is the consumer's read-only view (class → subscriptions),
	// replaced whole under mu.
	byClass atomic.Pointer[map[string][]*sub]
	closed  bool
}

// Open loads the stored subscriptions and starts their deliveries,
// events left pending by the last clean shutdown first.
func Open(svc *service.Service, opts Options) (*Manager, error) {
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = 200 * time.Millisecond
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	var boot [6]byte
	if _, err := rand.Read(boot[:]); err != nil {
		return nil, err
	}
	m := &Manager{svc: svc, opts: opts, client: newWebhookClient(opts.Policy), bootID: hex.EncodeToString(boot[:]),
		master: service.Auth{Master: true}, subs: map[string]*sub{}}
	m.byClass.Store(&map[string][]*sub{})
	if opts.Max <= 0 {
		return m, nil
	}
	res, err := svc.Find(m.master, ClassName, service.FindParams{Limit: opts.Max})
	if err != nil {
		if e, ok := err.(*schema.Error); ok && e.Code == schema.CodeInvalidClassName {
			return m, nil
		}
		return nil, fmt.Errorf("server-side subscriptions: %w", err)
	}
	for _, obj := range res.Results {
		d, err := decodeDefinition(obj)
		var q *match.Query
		if err == nil {
			q, err = d.compile()
		}
		if err != nil {
			opts.Log.Error("server-side subscription not started", "name", obj["name"], "err", err)
			continue
		}
		id, _ := obj["objectId"].(string)
		s := m.newSub(id, d, q)
		s.restore(obj["pending"])
		m.subs[d.Name] = s
		go s.run()
	}
	m.publish()
	return m, nil
}

// publish replaces the consumer's view; mu is held.
func (m *Manager) publish() {
	view := map[string][]*sub{}
	for _, s := range m.subs {
		c := s.def().ClassName
		view[c] = append(view[c], s)
	}
	m.byClass.Store(&view)
}

// Wants, Deliver and Lost make the manager a service.ChangeConsumer:
// each committed change is matched against its class's subscriptions and
// the events queued, never waiting for a target. Wants is cheap.
func (m *Manager) Wants(c service.Change) bool { return len((*m.byClass.Load())[c.Class]) > 0 }

// Deliver routes a batch of committed changes, in order.
func (m *Manager) Deliver(batch []service.Change) {
	for _, c := range batch {
		m.route(c)
	}
}

// Lost tells the subscriptions of classes that count changes never
// reached them (the change ring overflowed): each sends a "lost" event.
func (m *Manager) Lost(classes []string, count int) {
	view := *m.byClass.Load()
	for _, c := range classes {
		for _, s := range view[c] {
			s.lose(count)
		}
	}
}

// route queues the events one change means to the class's subscriptions.
// A master subscription sees every object whole: no ACL, no protected
// fields; keys narrow it.
func (m *Manager) route(c service.Change) {
	subs := (*m.byClass.Load())[c.Class]
	if len(subs) == 0 {
		return
	}
	deleted := c.Object == nil
	var object, original schema.Object
	for _, s := range subs {
		d, q := s.current()
		before := c.Original != nil && q.Match(c.Original)
		after := !deleted && q.Match(c.Object)
		ev := match.Decide(before, after, c.Original != nil, deleted)
		if ev == match.None || !d.wants(ev) {
			continue
		}
		if object == nil { // presented once per change, shared by the subscriptions
			if deleted {
				object = m.svc.LiveObject(c.Class, c.Original)
			} else {
				object = m.svc.LiveObject(c.Class, c.Object)
				original = m.svc.LiveObject(c.Class, c.Original)
			}
		}
		e := Event{Subscription: d.Name, Op: ev.String(), ClassName: c.Class,
			Object: match.Project(object, d.Keys, nil), Time: time.Now().UTC().Format(time.RFC3339Nano)}
		if original != nil && ev != match.Create {
			e.Original = match.Project(original, d.Keys, nil)
		}
		s.enqueue(e)
	}
}

// Close stops every delivery (an attempt under way is abandoned and will
// be made again) and saves each subscription's undelivered events and
// last delivered event id in its _Subscription object, so that the next
// Open resends them with the same ids. Call it after the service stopped
// handing changes over (CloseChanges), before the store closes. A nil
// Manager has nothing to close.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	var first error
	for _, s := range m.subs {
		s.stop()
		if err := m.save(s); err != nil && first == nil {
			first = err
		}
	}
	m.subs = map[string]*sub{}
	m.publish()
	return first
}

// save writes s's pending events and position.
func (m *Manager) save(s *sub) error {
	pending, last := s.snapshot()
	list := make([]any, len(pending))
	for i, e := range pending {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		list[i] = string(b)
	}
	_, err := m.svc.Update(m.master, ClassName, s.id, map[string]any{"pending": list, "lastEventId": last})
	return err
}

// Definitions lists the subscriptions, by name.
func (m *Manager) Definitions() ([]Definition, error) {
	if err := m.enabled(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Definition, 0, len(m.subs))
	for _, name := range sortedKeys(m.subs) {
		out = append(out, m.subs[name].def().Shown())
	}
	return out, nil
}

// Definition is one subscription (143 when there is none of that name).
func (m *Manager) Definition(name string) (Definition, error) {
	if err := m.enabled(); err != nil {
		return Definition{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.subs[name]
	if s == nil {
		return Definition{}, schema.Errorf(CodeInvalid, "no server-side subscription named %s", name)
	}
	return s.def().Shown(), nil
}

// Create registers a subscription from a request body: 143 when it is
// malformed or its name is taken, 155 beyond the quota.
func (m *Manager) Create(body map[string]any) (Definition, error) {
	if err := m.enabled(); err != nil {
		return Definition{}, err
	}
	d, err := decodeDefinition(body)
	if err != nil {
		return d, err
	}
	q, err := d.compile()
	if err != nil {
		return d, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return d, schema.Errorf(CodeDisabled, "the server is shutting down")
	}
	if m.subs[d.Name] != nil {
		return d, schema.Errorf(CodeInvalid, "a server-side subscription named %s exists already", d.Name)
	}
	if len(m.subs) >= m.opts.Max {
		return d, schema.Errorf(CodeQuotaExceeded, "at most %d server-side subscriptions (maxServerSubscriptions)", m.opts.Max)
	}
	res, err := m.svc.Create(m.master, ClassName, d.stored())
	if err != nil {
		return d, err
	}
	s := m.newSub(res.ObjectID, d, q)
	m.subs[d.Name] = s
	m.publish()
	go s.run()
	return d.Shown(), nil
}

// Update changes a subscription's definition (its name stays); events
// already queued are delivered to the new target. A body without a
// target secret keeps the old one.
func (m *Manager) Update(name string, body map[string]any) (Definition, error) {
	if err := m.enabled(); err != nil {
		return Definition{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.subs[name]
	if s == nil {
		return Definition{}, schema.Errorf(CodeInvalid, "no server-side subscription named %s", name)
	}
	old := s.def()
	merged := old.stored()
	merged["where"] = old.Where
	maps.Copy(merged, body)
	merged["name"] = name
	if t, ok := body["target"].(map[string]any); ok && t["secret"] == nil && old.Target.Secret != "" {
		t = maps.Clone(t)
		t["secret"] = old.Target.Secret
		merged["target"] = t
	}
	d, err := decodeDefinition(jsonRoundTrip(merged))
	if err != nil {
		return d, err
	}
	q, err := d.compile()
	if err != nil {
		return d, err
	}
	if _, err := m.svc.Update(m.master, ClassName, s.id, d.stored()); err != nil {
		return d, err
	}
	s.set(d, q)
	m.publish()
	return d.Shown(), nil
}

// Delete stops a subscription and drops its undelivered events.
func (m *Manager) Delete(name string) error {
	if err := m.enabled(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.subs[name]
	if s == nil {
		return schema.Errorf(CodeInvalid, "no server-side subscription named %s", name)
	}
	if err := m.svc.Delete(m.master, ClassName, s.id); err != nil {
		return err
	}
	s.stop()
	delete(m.subs, name)
	m.publish()
	return nil
}

// Stats are one subscription's counters.
type Stats struct {
	Name      string
	Queued    int
	Delivered uint64
	Lost      uint64
	Attempts  uint64 // failed attempts (each was retried)
}

// Stats returns every subscription's counters, by name.
func (m *Manager) Stats() []Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Stats
	for _, name := range sortedKeys(m.subs) {
		out = append(out, m.subs[name].stats())
	}
	return out
}

func (m *Manager) enabled() error {
	if m.opts.Max <= 0 {
		return schema.Errorf(CodeDisabled, "server-side subscriptions are off (maxServerSubscriptions is 0)")
	}
	return nil
}

// jsonRoundTrip gives a merged body the shapes a decoded request has
// ([]any, float64).
func jsonRoundTrip(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

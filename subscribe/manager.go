package subscribe

import (
	"bytes"
	"context"
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
	"github.com/quarrydata/quarry/store"
)

// Options configure a Manager.
type Options struct {
	// Max is the most subscriptions (maxServerSubscriptions); 0 turns
	// server-side subscriptions off.
	Max int
	// Changes is the store's change log, which deliveries read from their
	// saved position (required when Max > 0). The service must record
	// previous versions (service.Options.RecordPrevious).
	Changes store.ChangeLog
	// Leaser, on a store several instances share, gives each subscription
	// to one instance at a time; nil: this instance delivers them all.
	Leaser store.Leaser
	// Timeout bounds one delivery attempt (10s when 0).
	Timeout time.Duration
	// RetryBase and RetryMax shape the backoff between attempts: the
	// wait doubles from RetryBase up to RetryMax (200ms and 1m when 0).
	RetryBase, RetryMax time.Duration
	// Poll is how often an owner reads the log when nothing woke it
	// (a write on another instance): 1s, or 100ms with a Leaser.
	Poll time.Duration
	// LeaseRetry is how often an instance that does not own a
	// subscription asks for it (1s when 0), and Sync how often the
	// definitions are read again from _Subscription (1s when 0): both
	// bound how soon another instance takes over or sees a change.
	LeaseRetry, Sync time.Duration
	// Policy decides which addresses webhooks and Redis targets may reach.
	Policy outbound.Policy
	Log    *slog.Logger
}

// Manager keeps the subscriptions and runs their deliveries.
type Manager struct {
	svc    *service.Service
	opts   Options
	client *webhookClient
	master service.Auth
	// decoded shares the decoding of recent changes (deliver.go).
	decoded decodeCache

	// mu guards subs and serialises the API's writes and the syncs.
	mu   sync.Mutex
	subs map[string]*sub
	bad  map[string]bool // objects of _Subscription already reported unusable
	// byClass is the consumer's read-only view (class → subscriptions),
	// replaced whole under mu.
	byClass  atomic.Pointer[map[string][]*sub]
	closed   bool
	stopSync chan struct{}
	syncDone chan struct{}
}

// Open starts the stored subscriptions: each resumes after the last
// change it delivered.
func Open(svc *service.Service, opts Options) (*Manager, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = 200 * time.Millisecond
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = time.Minute
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
		if opts.Leaser != nil {
			opts.Poll = 100 * time.Millisecond
		}
	}
	if opts.LeaseRetry <= 0 {
		opts.LeaseRetry = time.Second
	}
	if opts.Sync <= 0 {
		opts.Sync = time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	m := &Manager{svc: svc, opts: opts, client: newWebhookClient(opts.Policy),
		master: service.Auth{Master: true}, subs: map[string]*sub{}, bad: map[string]bool{}}
	m.byClass.Store(&map[string][]*sub{})
	if opts.Max <= 0 {
		return m, nil
	}
	if opts.Changes == nil {
		return nil, fmt.Errorf("server-side subscriptions need a store that keeps a change log (the embedded file or PostgreSQL, not %s)", store.MemoryURI)
	}
	if err := m.sync(); err != nil {
		return nil, fmt.Errorf("server-side subscriptions: %w", err)
	}
	m.stopSync, m.syncDone = make(chan struct{}), make(chan struct{})
	go m.syncLoop()
	return m, nil
}

// syncLoop reads the definitions again every opts.Sync: another instance
// (or the Dashboard) may have created, changed or deleted some.
func (m *Manager) syncLoop() {
	defer close(m.syncDone)
	t := time.NewTicker(m.opts.Sync)
	defer t.Stop()
	for {
		select {
		case <-m.stopSync:
			return
		case <-t.C:
		}
		if err := m.sync(); err != nil {
			m.opts.Log.Warn("server-side subscriptions: cannot read _Subscription", "err", err)
		}
	}
}

// sync makes the running subscriptions those _Subscription holds. It
// reads and acts under mu, so an API write is never undone by a read
// from before it.
func (m *Manager) sync() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	res, err := m.svc.Find(m.master, ClassName, service.FindParams{Limit: m.opts.Max})
	if err != nil {
		if e, ok := err.(*schema.Error); ok && e.Code == schema.CodeInvalidClassName {
			res = service.FindResult{} // none made yet
		} else {
			return err
		}
	}
	seen := map[string]bool{}
	for _, obj := range res.Results {
		id, _ := obj["objectId"].(string)
		d, err := decodeDefinition(obj)
		var q *match.Query
		if err == nil {
			q, err = d.compile()
		}
		if err != nil {
			if !m.bad[id] {
				m.bad[id] = true
				m.opts.Log.Error("server-side subscription not started", "name", obj["name"], "err", err)
			}
			continue
		}
		seen[d.Name] = true
		s := m.subs[d.Name]
		if s != nil && s.id != id { // deleted and made again elsewhere
			s.stop()
			s = nil
		}
		if s == nil {
			start, _ := obj["startAfter"].(float64)
			s = m.newSub(id, int64(start), d, q)
			m.subs[d.Name] = s
			go s.run()
			continue
		}
		if !sameDefinition(s.def(), d) {
			s.set(d, q)
		}
	}
	for name, s := range m.subs {
		if !seen[name] {
			s.stop()
			delete(m.subs, name)
		}
	}
	m.publish()
	return nil
}

func sameDefinition(a, b Definition) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
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

// Wants, Deliver and Lost make the manager a service.ChangeConsumer, used
// only to wake the deliveries of a changed class at once: they read the
// change itself from the log. Wants is cheap.
func (m *Manager) Wants(c service.Change) bool { return len((*m.byClass.Load())[c.Class]) > 0 }

// Deliver wakes the subscriptions of the batch's classes.
func (m *Manager) Deliver(batch []service.Change) {
	view := *m.byClass.Load()
	for _, c := range batch {
		for _, s := range view[c.Class] {
			s.signal()
		}
	}
}

// Lost wakes the subscriptions of classes whose changes the consumer's
// ring dropped: the log still has them.
func (m *Manager) Lost(classes []string, _ int) {
	view := *m.byClass.Load()
	for _, c := range classes {
		for _, s := range view[c] {
			s.signal()
		}
	}
}

// Close stops every delivery; each saves the position of the last change
// it delivered whole (an attempt under way is made again by whoever
// resumes). Call it after the service stopped handing changes over
// (CloseChanges), before the store closes. A nil Manager has nothing to
// close.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	subs := m.subs
	m.subs = map[string]*sub{}
	m.publish()
	m.mu.Unlock()
	if m.stopSync != nil {
		close(m.stopSync)
		<-m.syncDone
	}
	for _, s := range subs {
		s.stop()
	}
	return nil
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
		out = append(out, m.subs[name].shown())
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
	return s.shown(), nil
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
	head, err := m.opts.Changes.ChangesHead(context.Background())
	if err != nil {
		return d, err
	}
	fields := d.stored()
	fields["startAfter"] = float64(head) // what it is told: every change after its creation
	res, err := m.svc.Create(m.master, ClassName, fields)
	if err != nil {
		return d, err
	}
	s := m.newSub(res.ObjectID, head, d, q)
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

// Delete stops a subscription; events not yet delivered are not.
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

// Stats are one subscription's state and counters on this instance.
type Stats struct {
	Name      string
	Position  int64 // the last change of the log it handled
	Owner     bool  // this instance delivers it now
	Delivered uint64
	Lost      uint64 // changes the log's retention removed before they were read
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

package server

import (
	"log/slog"
	"sync/atomic"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/outbound"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/subscribe"
)

// subscriptionsConsumer hands changes to the server-side subscriptions
// (package subscribe), which exist only once the service is open: until
// then changes go nowhere, as for LiveQuery (delivery.go).
type subscriptionsConsumer struct {
	m atomic.Pointer[subscribe.Manager]
}

func (c *subscriptionsConsumer) consumer() service.ChangeConsumer {
	return service.ChangeConsumer{Name: "serverSubscriptions",
		Wants: func(ch service.Change) bool {
			m := c.m.Load()
			return m != nil && m.Wants(ch)
		},
		Deliver: func(batch []service.Change) {
			if m := c.m.Load(); m != nil {
				m.Deliver(batch)
			}
		},
		Lost: func(classes []string, count int) {
			if m := c.m.Load(); m != nil {
				m.Lost(classes, count)
			}
		}}
}

// openSubscriptions starts the stored server-side subscriptions when
// maxServerSubscriptions allows any; otherwise the Manager it returns is
// empty (and the routes, left unmounted, answer 119).
func openSubscriptions(opts *config.Options, svc *service.Service, adapter store.Adapter, policy outbound.Policy, log *slog.Logger, into *subscriptionsConsumer) (*subscribe.Manager, error) {
	changes, _ := adapter.(store.ChangeLog)
	leaser, _ := adapter.(store.Leaser)
	m, err := subscribe.Open(svc, subscribe.Options{Max: opts.MaxServerSubscriptions, Changes: changes, Leaser: leaser, Policy: policy, Log: log})
	if err != nil {
		return nil, err
	}
	into.m.Store(m)
	return m, nil
}

// keepChanges has the store keep its change log when server-side
// subscriptions are on: they replay it from their saved positions. The
// service then records each object's previous version in it
// (service.Options.RecordPrevious).
func keepChanges(opts *config.Options, adapter store.Adapter) error {
	if opts.MaxServerSubscriptions <= 0 {
		return nil
	}
	if log, ok := adapter.(store.ChangeLog); ok {
		return log.KeepChanges(0)
	}
	return nil
}

// subscriptionsAPI is transport.Subscriptions over a subscribe.Manager.
type subscriptionsAPI struct{ m *subscribe.Manager }

func (a subscriptionsAPI) List() (any, error) { return a.m.Definitions() }

func (a subscriptionsAPI) Get(name string) (any, error) { return a.m.Definition(name) }

func (a subscriptionsAPI) Create(body map[string]any) (any, error) { return a.m.Create(body) }

func (a subscriptionsAPI) Update(name string, body map[string]any) (any, error) {
	return a.m.Update(name, body)
}

func (a subscriptionsAPI) Delete(name string) error { return a.m.Delete(name) }

// Subscriptions is the server-side subscriptions' manager (its Stats).
func (s *Server) Subscriptions() *subscribe.Manager { return s.subs }

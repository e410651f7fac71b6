package server

import (
	"sync/atomic"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/metrics"
	"github.com/quarrydata/quarry/service"
)

// The service hands every committed change to each consumer below from
// that consumer's own bounded ring, on that consumer's own goroutine
// (service/announce.go): the cacheAdapter's invalidations and LiveQuery's
// publisher (to the in-process server, which also feeds GraphQL
// subscriptions, or to Redis). A write never waits for either.

// liveConsumer hands changes to LiveQuery's publisher, which exists only
// once the service is open: until it is set, changes go nowhere.
type liveConsumer struct {
	p atomic.Pointer[live.Publisher]
}

func (l *liveConsumer) consumer() service.ChangeConsumer {
	return service.ChangeConsumer{Name: "liveQuery",
		Deliver: func(batch []service.Change) {
			if p := l.p.Load(); p != nil {
				p.Deliver(batch)
			}
		},
		Lost: func(classes []string, count int) {
			if p := l.p.Load(); p != nil {
				p.Lost(classes, count)
			}
		}}
}

// changeConsumers are the service's consumers of committed changes:
// LiveQuery's when it is on (live), the server-side subscriptions' when
// they are (subs), the cacheAdapter's when there is one.
// With neither, writes gather no changes at all.
func changeConsumers(shared *sharedCache, lc *liveConsumer, live bool, sc *subscriptionsConsumer, subs bool) []service.ChangeConsumer {
	var cs []service.ChangeConsumer
	if live {
		cs = append(cs, lc.consumer())
	}
	if subs {
		cs = append(cs, sc.consumer())
	}
	if c := shared.consumer(); c != nil {
		cs = append(cs, *c)
	}
	return cs
}

// liveQueryOn reports whether the server runs LiveQuery.
func liveQueryOn(opts *config.Options) bool {
	return len(opts.LiveQuery.ClassNames) > 0 || opts.LiveQuery.AllClasses
}

// observeChanges adds each change consumer's series.
func observeChanges(m *metrics.Metrics, svc *service.Service) {
	for i, st := range svc.ChangeStats() {
		labels := map[string]string{"consumer": st.Name}
		stat := func(f func(service.ChangeStats) float64) func() float64 {
			return func() float64 {
				if all := svc.ChangeStats(); i < len(all) {
					return f(all[i])
				}
				return 0
			}
		}
		m.GaugeFuncWith("quarry_change_queue", "Committed changes waiting in a consumer's ring.", labels,
			stat(func(s service.ChangeStats) float64 { return float64(s.Queued) }))
		m.CounterFuncWith("quarry_changes_delivered_total", "Committed changes handed to a consumer.", labels,
			stat(func(s service.ChangeStats) float64 { return float64(s.Delivered) }))
		m.CounterFuncWith("quarry_changes_lost_total", "Committed changes a consumer lost because its ring was full (its clients are told to fetch again).", labels,
			stat(func(s service.ChangeStats) float64 { return float64(s.Lost) }))
	}
}

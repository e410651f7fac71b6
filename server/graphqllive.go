package server

import (
	"slices"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/graphql"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/schema"
)

// graphQLEvents feeds GraphQL subscriptions from the in-process LiveQuery
// server (graphql and live never import each other); nil when LiveQuery is
// off, and then GraphQL has no subscriptions.
func graphQLEvents(lq *liveQuery, opts *config.Options) graphql.Events {
	if lq == nil {
		return nil
	}
	return liveEvents{srv: lq.server, all: opts.LiveQuery.AllClasses, classes: opts.LiveQuery.ClassNames}
}

type liveEvents struct {
	srv     *live.Server
	all     bool
	classes []string
}

// Serves follows liveQuery.classNames: only those classes publish.
func (e liveEvents) Serves(class string) bool { return e.all || slices.Contains(e.classes, class) }

func (e liveEvents) Subscribe(req graphql.EventRequest, deliver func(graphql.Event) bool, failed func(error)) (func(), error) {
	return e.srv.SubscribeLocal(live.LocalRequest{Class: req.Class, Where: req.Where, SessionToken: req.SessionToken,
		Master: req.Master, IP: req.IP}, liveSink{deliver, failed})
}

type liveSink struct {
	deliver func(graphql.Event) bool
	failed  func(error)
}

func (s liveSink) Event(e live.LocalEvent) bool {
	return s.deliver(graphql.Event{Op: e.Op, Object: e.Object, Original: e.Original})
}

func (s liveSink) Failed(err *schema.Error) { s.failed(err) }

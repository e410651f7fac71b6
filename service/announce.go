package service

import (
	"fmt"
	"time"

	"github.com/quarrydata/quarry/fanout"
)

// Committed changes reach their consumers (LiveQuery, the Redis
// publisher, the cacheAdapter's invalidations) through a fanout: a write
// pushes its changes while it still holds its objects' stripe locks, so
// every consumer's ring receives them in commit order, and each consumer
// has one goroutine of its own that delivers from its ring. A write never
// delivers and never waits for a consumer: a consumer that falls behind
// by a whole ring loses the changes that do not fit, and is told which
// classes it lost (ChangeConsumer.Lost) in their place in its sequence.

// ChangeConsumer is one destination of committed changes: its name (for
// logs and metrics), ring size, an optional cheap filter, and the
// functions its goroutine calls (fanout.Consumer).
type ChangeConsumer = fanout.Consumer[Change]

// ChangeStats are one change consumer's counters.
type ChangeStats = fanout.Stats

// DefaultChangeCloseTimeout bounds how long CloseChanges waits for the
// consumers to deliver what they hold.
const DefaultChangeCloseTimeout = 5 * time.Second

func changeClass(c Change) string { return c.Class }

// startChanges starts the consumers' goroutines; Options.OnChange is one
// consumer among them.
func (s *Service) startChanges() {
	consumers := s.opts.ChangeConsumers
	if s.opts.OnChange != nil {
		deliver := s.opts.OnChange
		consumers = append([]ChangeConsumer{{Name: "onChange", Deliver: func(b []Change) {
			for _, c := range b {
				deliver(c)
			}
		}}}, consumers...)
	}
	if len(consumers) > 0 {
		s.changes = fanout.New(changeClass, s.opts.Warn, consumers...)
	}
}

// wantsChanges reports whether committed changes go anywhere, so that a
// write need not gather them otherwise.
func (s *Service) wantsChanges() bool { return s.changes != nil }

// ChangeStats returns the change consumers' counters.
func (s *Service) ChangeStats() []ChangeStats { return s.changes.Stats() }

// CloseChanges stops handing changes over and lets every consumer deliver
// what its ring holds, for at most timeout (DefaultChangeCloseTimeout
// when 0); consumers still busy then are named in a warning. A server
// calls it once its listeners are closed, before closing the consumers
// themselves (LiveQuery, Redis).
func (s *Service) CloseChanges(timeout time.Duration) {
	if timeout <= 0 {
		timeout = DefaultChangeCloseTimeout
	}
	for _, late := range s.changes.Close(time.Now().Add(timeout)) {
		s.warn(fmt.Sprintf("change delivery: %s did not finish within %s; %d changes not delivered", late.Name, timeout, late.Queued))
	}
}

// announce runs after a write released every lock it held (and after its
// cloud code triggers): schema changes go out first (a LiveQuery server
// hearing of an object with a new field has already been told to forget
// the class's old schema); the changes themselves are already in the
// consumers' rings, and only a pending loss warning is logged here,
// outside every lock.
func (s *Service) announce() {
	s.announceSchemas()
	s.changes.Report()
}

package service

import (
	"slices"
	"sync"
	"sync/atomic"
)

// schemaNews carries the classes whose schema this process changed to
// Options.OnSchemaChange (the cacheAdapter's invalidation) after the
// change released its locks and before the call that made it returns.
//
// A schema change marks its class while it holds the schema lock; the
// call then announces after unlocking. Announcements are serialized: a
// call whose class another call took finds the count of unannounced marks
// above zero and waits for that delivery, so no schema change is answered
// before its announcement went out. Calls that changed no schema, with
// nothing in flight, pass with one atomic load.
type schemaNews struct {
	unannounced atomic.Int64 // classes marked and not yet delivered

	mu      sync.Mutex
	classes map[string]struct{}

	deliver sync.Mutex // held across one delivery
}

// mark records a changed class; callers hold schemaMu.
func (n *schemaNews) mark(class string) {
	n.mu.Lock()
	if n.classes == nil {
		n.classes = map[string]struct{}{}
	}
	if _, ok := n.classes[class]; !ok {
		n.classes[class] = struct{}{}
		n.unannounced.Add(1)
	}
	n.mu.Unlock()
}

// announceSchemas delivers the marked classes to OnSchemaChange. Callers
// hold no lock of the service.
func (s *Service) announceSchemas() {
	n := &s.schemaNews
	if s.opts.OnSchemaChange == nil || n.unannounced.Load() == 0 {
		return
	}
	n.deliver.Lock()
	defer n.deliver.Unlock()
	n.mu.Lock()
	classes := n.classes
	n.classes = nil
	n.mu.Unlock()
	if len(classes) == 0 {
		return // delivered by the call this one waited for
	}
	// Only what was taken is uncounted: marks made meanwhile stay counted.
	defer n.unannounced.Add(-int64(len(classes)))
	names := make([]string, 0, len(classes))
	for c := range classes {
		names = append(names, c)
	}
	slices.Sort(names)
	s.opts.OnSchemaChange(names)
}

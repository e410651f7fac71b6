package service

import (
	"slices"
	"sync"

	"github.com/quarrydata/quarry/schema"
)

// The schema lock (schemaMu) covers deciding a schema change, never the
// slow work around it. A write that adds fields decides under it, marks
// the classes it changes as in flight and commits after unlocking; the
// next decision about one of those classes waits for that commit
// (lockSchema), as class records are whole and must land in the order
// they were decided. Index builds run after the unlock too
// (buildIndexes), one owner per class.

// lockSchema takes schemaMu once no schema commit of classes is in
// flight: the caller decides on their current, committed schemas.
func (s *Service) lockSchema(classes ...string) {
	for {
		s.schemaMu.Lock()
		var wait chan struct{}
		for _, c := range classes {
			if ch := s.schemaInFlight[c]; ch != nil {
				wait = ch
				break
			}
		}
		if wait == nil {
			return
		}
		s.schemaMu.Unlock()
		<-wait
	}
}

// schemaCommit is a decided schema change whose commit is under way.
type schemaCommit struct {
	next map[string]*schema.Class
	done chan struct{}
}

// beginSchemaCommit marks next's classes as in flight; the caller holds
// schemaMu (lockSchema of those classes).
func (s *Service) beginSchemaCommit(next map[string]*schema.Class) *schemaCommit {
	c := &schemaCommit{next: next, done: make(chan struct{})}
	if s.schemaInFlight == nil {
		s.schemaInFlight = map[string]chan struct{}{}
	}
	for name := range next {
		s.schemaInFlight[name] = c.done
	}
	return c
}

// endSchemaCommit publishes a committed change (committed false: its
// commit failed, and the schemas stay as they were) and lets the
// decisions waiting for its classes go on. It reports the classes the
// change created.
func (s *Service) endSchemaCommit(c *schemaCommit, committed bool) (created []string) {
	s.schemaMu.Lock()
	defer s.schemaMu.Unlock()
	for name, cls := range c.next {
		if committed {
			if s.Class(name) == nil {
				created = append(created, name)
			}
			s.schemas.Store(name, cls)
			s.schemaNews.mark(name)
		}
		delete(s.schemaInFlight, name)
	}
	close(c.done)
	return created
}

// buildLock is the mutex serializing class's index builds.
func (s *Service) buildLock(class string) *sync.Mutex {
	if mu, ok := s.buildLocks.Load(class); ok {
		return mu.(*sync.Mutex)
	}
	mu, _ := s.buildLocks.LoadOrStore(class, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

// buildIndexes builds the indexes class's schema declares, in memory or,
// for a class kept out of memory, in PostgreSQL. It runs after the
// schema lock is released: reads and writes go on meanwhile (index
// builds read a snapshot and replay the writes made since;
// index.Collection.EnsureIndex), and one build per class runs at a time.
// It reads the schema as it is when it starts, so the last build after
// a change sees it; an index whose declaration was dropped during its
// build is dropped again.
func (s *Service) buildIndexes(class string) error {
	mu := s.buildLock(class)
	mu.Lock()
	defer mu.Unlock()
	if s.isSQLClass(class) {
		return s.sqlIndexes(class)
	}
	cls := s.Class(class)
	if cls == nil {
		return nil
	}
	coll := s.data.Collection(class, true)
	for _, p := range indexedPaths(cls) {
		if err := coll.EnsureIndex(p); err != nil {
			return err
		}
		if cur := s.Class(class); cur == nil || !slices.Contains(indexedPaths(cur), p) {
			coll.DropIndex(p) // dropped meanwhile; standing ones stay
		}
	}
	return nil
}

// buildIndexesAfter is buildIndexes for a deferred call after a schema
// change, which has answered already: a failure is warned about.
func (s *Service) buildIndexesAfter(class string) {
	if err := s.buildIndexes(class); err != nil {
		s.warn(err.Error())
	}
}

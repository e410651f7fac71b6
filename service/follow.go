package service

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/quarrydata/quarry/fanout"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// FollowOptions configure Follow.
type FollowOptions struct {
	// Announce hands other instances' changes to Options.OnChange, as if
	// they were made here, so this instance's LiveQuery clients see them.
	// Leave it off when another channel (Redis) already brings every
	// instance's changes to LiveQuery.
	Announce bool
	// Events, when set, receives the changes of every commit on the shared
	// store, this instance's own included, in the store's one commit
	// order, from one goroutine (logorder.go): every instance hands the
	// same changes in the same order. Options.OnChange keeps receiving
	// this instance's own changes when it commits them. They go through a
	// bounded ring of their own (a ChangeConsumer named "events"), so a
	// slow Events never holds the follower up.
	Events func(Change)
	// EventsLost is told the classes of the changes Events lost because
	// it fell a whole ring behind (ChangeConsumer.Lost).
	EventsLost func(classes []string)
}

// follow is the state of following a shared store.
type follow struct {
	mu      sync.Mutex
	stop    func()
	events  *fanout.Fanout[Change] // Events' ring; nil without
	current catchingUp             // current.go
}

// Follow keeps memory in step with the commits other instances make to a
// shared store (store.Follower), from where the start-up load stood. It
// reports false, doing nothing, when the store is not shared.
func (s *Service) Follow(opts FollowOptions) (bool, error) {
	f, ok := s.store.(store.Follower)
	if !ok {
		return false, nil
	}
	follow := f.Follow
	var events *fanout.Fanout[Change]
	if opts.Events != nil {
		of, ok := s.store.(store.OwnFollower)
		if !ok {
			return true, fmt.Errorf("service: the store cannot hand over its own commits in order (store.OwnFollower)")
		}
		follow = of.FollowWithOwn
		s.logOrder.on.Store(true)
		events = fanout.New(changeClass, s.opts.Warn, eventsConsumer(opts))
	}
	stop, err := follow(f.Position(), func(c store.ForeignCommit) { s.applyForeign(c, opts, events) })
	if err != nil {
		s.logOrder.on.Store(false)
		events.Close(time.Now())
		return true, err
	}
	s.following.mu.Lock()
	s.following.stop = stop
	s.following.events = events
	s.following.mu.Unlock()
	s.following.current.on.Store(true)
	return true, nil
}

// StopFollowing ends Follow and waits for a commit being applied, then
// for Events to be given what its ring holds (DefaultChangeCloseTimeout
// at most); a server calls it first when it shuts down.
func (s *Service) StopFollowing() {
	s.following.mu.Lock()
	stop, events := s.following.stop, s.following.events
	s.following.stop, s.following.events = nil, nil
	s.following.mu.Unlock()
	s.logOrder.on.Store(false)
	s.following.current.on.Store(false)
	if stop != nil {
		stop()
	}
	for _, late := range events.Close(time.Now().Add(DefaultChangeCloseTimeout)) {
		s.warn(fmt.Sprintf("change delivery: %s did not finish within %s; %d changes not delivered", late.Name, DefaultChangeCloseTimeout, late.Queued))
	}
}

// eventsConsumer delivers FollowOptions.Events from its own ring.
func eventsConsumer(opts FollowOptions) ChangeConsumer {
	c := ChangeConsumer{Name: "events", Deliver: func(b []Change) {
		for _, ch := range b {
			opts.Events(ch)
		}
	}}
	if opts.EventsLost != nil {
		c.Lost = func(classes []string, _ int) { opts.EventsLost(classes) }
	}
	return c
}

// applyForeign applies one commit another instance made: schemas first
// (under the schema lock), then objects and relations under their object
// locks, as a local write would, then announces the object changes. A
// record this instance wrote again since (Superseded, asked under the
// object's lock) is left alone: memory holds the newer value. With
// opts.Events, its change is still told there, and this instance's own
// commits (Own) are told in their place in the log (logorder.go).
func (s *Service) applyForeign(c store.ForeignCommit, opts FollowOptions, toEvents *fanout.Fanout[Change]) {
	if c.Own {
		if opts.Events != nil {
			s.followOwn(c, toEvents) // logorder.go
		}
		return
	}
	announce := opts.Announce
	records := c.Records
	var keys []string
	roles := false
	for _, r := range records {
		switch r.Kind {
		case store.KindObject:
			keys = append(keys, r.Class+"\x00"+r.Key)
			roles = roles || r.Class == classRole
		case store.KindJoin:
			if _, owning, ok := cutJoinClass(r.Class); ok && owning == classRole {
				roles = true
			}
		}
	}
	s.applyForeignSchemas(c)
	unlock := s.lockObjects(keys)
	var changes, hooks, events []Change
	for _, r := range records {
		if r.Kind == store.KindObject && opts.Events != nil {
			// From the log: the change is told even when memory keeps a
			// newer own write of the object (logorder.go).
			if ch, shadowed, ok := s.shadowedChange(r, false); shadowed {
				if ok {
					events = append(events, ch)
				}
				continue
			}
			if s.isSQLClass(r.Class) {
				if ch, ok := s.foreignSQLObject(r); ok {
					events = append(events, ch)
				}
				continue
			}
		}
		if c.Superseded(r) {
			continue
		}
		switch r.Kind {
		case store.KindObject:
			c, ok := s.applyForeignObject(r)
			if ok && r.Class == ClassHooks {
				hooks = append(hooks, c) // after unlocking: /hooks takes webhookMu before object locks
			}
			if ok && announce && s.wantsChanges() {
				changes = append(changes, c)
			}
			if ok && opts.Events != nil {
				events = append(events, c)
			}
		case store.KindJoin:
			key, owning, ok1 := cutJoinClass(r.Class)
			owningID, relatedID, ok2 := cutJoinKey(r.Key)
			if !ok1 || !ok2 {
				s.warn(fmt.Sprintf("following: malformed relation record %q %q", r.Class, r.Key))
				continue
			}
			s.data.SetRelation(owning, key, owningID, relatedID, r.Value != nil)
		case store.KindMeta:
			s.putMeta(r.Key, r.Value)
		}
	}
	if roles {
		s.forgetRoles()
	}
	if len(changes) > 0 {
		s.changes.Push(changes...)
	}
	unlock()
	for _, c := range hooks {
		s.followWebhook(c)
	}
	s.announce()
	withRelations(records, events) // logorder.go
	toEvents.Push(events...)
}

// applyForeignSchemas stores the commit's schema records, then builds
// the indexes a new schema declares.
func (s *Service) applyForeignSchemas(fc store.ForeignCommit) {
	var names []string
	next := map[string]*schema.Class{}
	rec := map[string]store.Record{}
	for _, r := range fc.Records {
		if r.Kind != store.KindSchema {
			continue
		}
		var c *schema.Class
		if r.Value != nil {
			c = &schema.Class{}
			if err := json.Unmarshal(r.Value, c); err != nil {
				s.warn(fmt.Sprintf("following: the schema of %s is not valid JSON", r.Class))
				continue
			}
		}
		if _, seen := next[r.Class]; !seen {
			names = append(names, r.Class)
		}
		next[r.Class], rec[r.Class] = c, r
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	// Asked under the schema lock, with no local schema commit of these
	// classes in flight (lockSchema): none can slip in between the
	// question and the store.
	s.lockSchema(names...)
	var stored []string
	for _, name := range names {
		if fc.Superseded(rec[name]) {
			continue
		}
		c := next[name]
		if c == nil {
			s.schemas.Delete(name)
			if coll := s.data.Collection(name, false); coll != nil && coll.Len() == 0 {
				s.data.DropCollection(name)
			}
			continue
		}
		s.schemas.Store(name, c)
		stored = append(stored, name)
	}
	s.schemaMu.Unlock()
	// The indexes are built after the unlock: this instance's schema
	// decisions go on meanwhile.
	for _, name := range stored {
		if coll := s.data.Collection(name, false); coll != nil {
			if c := s.Class(name); c != nil {
				ensureGeoIndexes(coll, c.Fields)
			}
		}
		if s.isSQLClass(name) {
			continue // the instance that declared them built them in the shared database
		}
		if err := s.buildIndexes(name); err != nil {
			s.warn(fmt.Sprintf("following: indexes of %s: %v", name, err))
		}
	}
}

// applyForeignObject puts or deletes one object; callers hold its lock.
func (s *Service) applyForeignObject(r store.Record) (Change, bool) {
	if s.isSQLClass(r.Class) {
		return s.foreignSQLObject(r)
	}
	coll := s.data.Collection(r.Class, true)
	original, _ := coll.Get(r.Key)
	if r.Value == nil {
		if original == nil {
			return Change{}, false
		}
		coll.Delete(r.Key)
		return Change{Class: r.Class, Original: original}, true
	}
	// Decoded as a load decodes (index.Decode): the strings share the
	// record's bytes, which nobody modifies.
	obj, err := index.Decode(r.Value)
	if err != nil || obj == nil {
		s.warn(fmt.Sprintf("following: object %s/%s is not valid JSON", r.Class, r.Key))
		return Change{}, false
	}
	if cls := s.Class(r.Class); cls != nil {
		ensureGeoIndexes(coll, cls.Fields)
	}
	coll.Put(obj)
	return Change{Class: r.Class, Original: original, Object: obj}, true
}

// followWebhook hands a webhook another instance defined, changed or
// deleted (a _Hooks object) to this instance's host.
func (s *Service) followWebhook(c Change) {
	h, ok := s.webhookHost()
	if !ok {
		return
	}
	s.webhookMu.Lock()
	defer s.webhookMu.Unlock()
	switch {
	case c.Object == nil:
		s.webhookCount.Add(-1)
		w := webhookOf(c.Original)
		w.URL = ""
		h.SetWebhook(w)
	case c.Original == nil:
		s.webhookCount.Add(1)
		h.SetWebhook(webhookOf(c.Object))
	default:
		h.SetWebhook(webhookOf(c.Object))
	}
}

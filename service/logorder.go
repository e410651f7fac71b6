package service

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/quarrydata/quarry/fanout"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// This file derives the changes of every commit on a shared store, this
// instance's own included, from the store's one ordered log
// (FollowOptions.Events): every instance then hands LiveQuery the same
// changes in the same order, each once, whichever instance wrote them.
//
// Memory runs ahead of the log for an object this instance just wrote:
// its own write is in memory at once, while the follower may still have
// older commits of other instances to pass. For such an object the log's
// version is kept aside (a shadow) until the follower reaches the own
// write, so every change's Original is the version before it in the log.

// logOrder is the state of deriving changes from the log.
type logOrder struct {
	on     atomic.Bool // FollowOptions.Events is set and following runs
	mu     sync.Mutex
	shadow map[string]*shadowed // "class\x00objectId" -> the log's version
}

// shadowed is the log's version of an object memory holds a newer own
// write of.
type shadowed struct {
	obj     schema.Object // nil: the object did not exist
	enc     []byte        // obj's stored JSON, when known
	pending int           // own commits of it the follower has not reached
}

// noteOwn records the objects drafts wrote before memory takes them;
// commit calls it under their object locks, once the store committed.
func (l *logOrder) noteOwn(s *Service, drafts []*draft) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shadow == nil {
		l.shadow = map[string]*shadowed{}
	}
	for _, d := range drafts {
		if s.isSQLClass(d.class) {
			continue // its records carry their previous version
		}
		k := d.class + "\x00" + d.id
		if sh := l.shadow[k]; sh != nil {
			sh.pending++
			continue
		}
		l.shadow[k] = &shadowed{obj: d.original, enc: d.originalEnc, pending: 1}
	}
}

// advance moves a shadowed object to the log's next version of it (obj,
// enc), returning the version before; shadowed is false when memory holds
// the log's version (no own write of it is ahead). own says the version
// is this instance's commit, which ends the shadow once the last own
// commit of the object is reached.
func (l *logOrder) advance(k string, obj schema.Object, enc []byte, own bool) (prev schema.Object, prevEnc []byte, shadowed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sh := l.shadow[k]
	if sh == nil {
		return nil, nil, false
	}
	prev, prevEnc = sh.obj, sh.enc
	sh.obj, sh.enc = obj, enc
	if own {
		if sh.pending--; sh.pending <= 0 {
			delete(l.shadow, k)
		}
	}
	return prev, prevEnc, true
}

// shadows reports whether k is shadowed; callers hold k's object lock,
// as noteOwn's and advance's callers do, so the answer holds while they
// keep it.
func (l *logOrder) shadows(k string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shadow[k] != nil
}

// decodeRecord is an object record's new version; nil for a deletion.
func (s *Service) decodeRecord(r store.Record) (schema.Object, bool) {
	if r.Value == nil {
		return nil, true
	}
	var obj schema.Object
	if err := json.Unmarshal(r.Value, &obj); err != nil {
		s.warn(fmt.Sprintf("following: object %s/%s is not valid JSON", r.Class, r.Key))
		return nil, false
	}
	return obj, true
}

// shadowedChange is the change of record r of an object memory holds a
// newer own write of; ok is false when memory holds the log's version.
func (s *Service) shadowedChange(r store.Record, own bool) (c Change, shadowed, ok bool) {
	if !s.logOrder.shadows(r.Class + "\x00" + r.Key) {
		return Change{}, false, false // the common case: decoded once, by the caller
	}
	obj, valid := s.decodeRecord(r)
	if !valid {
		return Change{}, true, false
	}
	prev, prevEnc, shadowed := s.logOrder.advance(r.Class+"\x00"+r.Key, obj, r.Value, own)
	if !shadowed {
		return Change{}, false, false
	}
	c = Change{Class: r.Class, Original: prev, Object: obj, OriginalJSON: prevEnc, ObjectJSON: r.Value}
	return c, true, prev != nil || obj != nil
}

// followOwn hands over the changes of one of this instance's commits, in
// its place in the log: memory holds it already.
func (s *Service) followOwn(c store.ForeignCommit, events *fanout.Fanout[Change]) {
	var keys []string
	for _, r := range c.Records {
		if r.Kind == store.KindObject {
			keys = append(keys, r.Class+"\x00"+r.Key)
		}
	}
	if len(keys) == 0 {
		return
	}
	unlock := s.lockObjects(keys)
	var out []Change
	for _, r := range c.Records {
		if r.Kind != store.KindObject {
			continue
		}
		var ch Change
		var ok bool
		if s.isSQLClass(r.Class) {
			ch, ok = s.foreignSQLObject(r)
		} else {
			// No shadow: the commit was made before changes came from
			// the log (start-up); nobody could hear of it yet.
			ch, _, ok = s.shadowedChange(r, true)
		}
		if ok {
			out = append(out, ch)
		}
	}
	unlock()
	withRelations(c.Records, out)
	events.Push(out...)
}

// withRelations gives each change of a commit the relation rows the
// commit wrote with that object as their owner (Change.Relations): a
// commit's records hold all of its rows, so the list is complete.
func withRelations(records []store.Record, changes []Change) {
	var edits map[string][]RelationEdit // class\x00objectId of the owner -> rows
	for _, r := range records {
		if r.Kind != store.KindJoin {
			continue
		}
		key, owning, ok1 := cutJoinClass(r.Class)
		owningID, relatedID, ok2 := cutJoinKey(r.Key)
		if !ok1 || !ok2 {
			continue
		}
		if edits == nil {
			edits = map[string][]RelationEdit{}
		}
		k := owning + "\x00" + owningID
		edits[k] = append(edits[k], RelationEdit{Key: key, RelatedID: relatedID, Present: r.Value != nil})
	}
	for i := range changes {
		c := &changes[i]
		obj := c.Object
		if obj == nil {
			obj = c.Original
		}
		id, _ := obj["objectId"].(string)
		c.Relations, c.RelationsKnown = edits[c.Class+"\x00"+id], true
	}
}

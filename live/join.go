package live

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Limits of live joins (see docs/livequery.md#live-joins).
const (
	// MaxJoinInner bounds the inner objects one live join keeps (the
	// objects matching its subquery); a larger subquery is refused with
	// 154, like a query whose subquery is too large.
	MaxJoinInner = 10_000
	// MaxJoinResults bounds the outer objects a live-join subscription
	// matches when it starts (what it remembers having told the client).
	MaxJoinResults = 10_000
)

// JoinSource runs the queries live joins need: an authority that
// implements it (ServiceAuthority) lets subscriptions use $inQuery,
// $notInQuery, $select, $dontSelect and $relatedTo.
type JoinSource interface {
	// JoinFind runs a find of class with where for id (master: every
	// object) and returns at most limit objects in the published form.
	// token is id's session token, for an authority that asks another
	// server.
	JoinFind(id Identity, token string, master bool, class string, where map[string]any, limit int) ([]schema.Object, error)
	// JoinRelated calls fn with the members of the relation key of the
	// owner object (owningClass, owningID), in id order, until fn
	// returns false. targetClass is the relation's target (the class
	// subscribed to).
	JoinRelated(owningClass, key, owningID, targetClass string, fn func(relatedID string) bool)
}

func (a serviceAuthority) JoinFind(id Identity, _ string, master bool, class string, where map[string]any, limit int) ([]schema.Object, error) {
	auth := service.Auth{Master: master, UserID: id.UserID, Roles: id.Roles}
	res, err := a.svc.Find(auth, class, service.FindParams{Where: where, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]schema.Object, len(res.Results))
	for i, o := range res.Results {
		p := a.svc.LiveObject(class, o)
		p["className"] = class
		p["__type"] = "Object"
		out[i] = p
	}
	return out, nil
}

func (a serviceAuthority) JoinRelated(owningClass, key, owningID, _ string, fn func(string) bool) {
	a.svc.Related(owningClass, key, owningID, fn)
}

// joins runs every live-join subscription on one goroutine, in the order
// changes are published (commit order), so that the inner sets and what
// each subscriber was told move together. Live-join subscriptions are not
// in the server's main index; they are filed here by their outer query
// (the where without its joins) and each join side by its inner query, so
// a change visits only the subscriptions it could concern.
type joins struct {
	ch    chan Change
	count atomic.Int64 // live-join subscriptions: Publish feeds ch only when > 0

	mu    sync.Mutex
	outer *match.Index[*subscription]
	inner *match.Index[*joinSide]
	// ignoreRelationEdits (tests) takes every change as one without its
	// relation rows.
	ignoreRelationEdits bool
}

// joinState is a live-join subscription's state.
type joinState struct {
	sides []*joinSide
	// told holds the outer objects the subscriber was last told match
	// (the initial result, then enter/create/update minus leave/delete):
	// an event is sent only when the current answer differs from it.
	told  map[string]bool
	group *match.Group[*subscription]
}

// joinSide is one join of a subscription and the inner objects matching
// its subquery (every object, whoever may read it: visibility is the
// subscriber's, tested when an outer object is decided).
type joinSide struct {
	sub   *subscription
	join  match.Join
	group *match.Group[*joinSide]
	set   map[string]schema.Object       // inner objectId -> object ($relatedTo: the owner, when it exists)
	byVal map[string]map[string]struct{} // $select: value key -> inner ids
	// members are a $relatedTo's relation members (outer ids), as last
	// read from the relation index.
	members map[string]struct{}
}

func newJoins() *joins {
	return &joins{ch: make(chan Change, dispatchQueue), outer: match.NewIndex[*subscription](), inner: match.NewIndex[*joinSide]()}
}

func (s *Server) joinLoop() {
	defer s.workers.Done()
	for {
		select {
		case c := <-s.joins.ch:
			s.safeJoin(c)
		case <-s.done:
			return
		}
	}
}

func (s *Server) safeJoin(c Change) {
	defer func() {
		if v := recover(); v != nil {
			s.stats.panics.Add(1)
			s.log.Error("livequery: panic while dispatching a change to live joins", "class", c.Class, "panic", v)
		}
	}()
	s.joins.mu.Lock()
	defer s.joins.mu.Unlock()
	s.joinChange(c)
}

// joinChange applies one change to the live joins: first as a change of
// an inner object (the sets, and the outer objects that point at it),
// then as a change of an outer object.
func (s *Server) joinChange(c Change) {
	var before, after schema.Object
	if c.Deleted {
		before = c.Object
	} else {
		before, after = c.Original, c.Object
	}
	for _, g := range s.joins.inner.Candidates(c.Class, before, after, nil) {
		q := g.Query()
		inBefore, inAfter := q.Match(before), q.Match(after)
		if !inBefore && !inAfter {
			continue
		}
		for _, side := range g.Members() {
			s.joinInnerChange(side, &c, before, after, inBefore, inAfter)
		}
	}
	for _, g := range s.joins.outer.Candidates(c.Class, before, after, nil) {
		for _, sub := range g.Members() {
			s.joinOuterChange(sub, &c, after)
		}
	}
}

// joinInnerChange updates one side's set for a change of an inner object
// and decides the outer objects that reach it again.
func (s *Server) joinInnerChange(side *joinSide, c *Change, before, after schema.Object, inBefore, inAfter bool) {
	obj := after
	if obj == nil {
		obj = before
	}
	id, _ := obj["objectId"].(string)
	if side.join.IsRelation() {
		s.joinOwnerChange(side, c, id, before, after)
		return
	}
	var lookup []any
	if side.join.IsSelect() {
		for _, o := range [2]schema.Object{before, after} {
			if v, ok := schema.Get(o, side.join.Key); ok && o != nil {
				if arr, isArr := v.([]any); isArr {
					lookup = append(lookup, arr...)
				} else {
					lookup = append(lookup, v)
				}
			}
		}
	} else {
		lookup = []any{schema.Pointer(side.join.Inner.Class(), id)}
	}
	side.remove(id)
	if inAfter {
		side.add(id, after)
	}
	if len(lookup) == 0 {
		return
	}
	s.joinRedecide(side, lookup)
}

// joinRedecide looks up the outer objects whose value at the join's path
// is one of lookup and decides each again.
func (s *Server) joinRedecide(side *joinSide, lookup []any) {
	src := s.opts.Authority.(JoinSource)
	for len(lookup) > 0 {
		// $in is bounded like any query's: large edits go in slices.
		part := lookup[:min(len(lookup), joinLookupBatch)]
		lookup = lookup[len(part):]
		outer, err := src.JoinFind(Identity{}, "", true, side.sub.query.Class(), map[string]any{side.join.Path: map[string]any{"$in": part}}, MaxJoinResults)
		if err != nil {
			s.log.Warn("livequery: a live join could not look up its outer objects", "class", side.sub.query.Class(), "err", err)
			return
		}
		for _, o := range outer {
			s.joinDecide(side.sub, o, o, false, true)
		}
	}
}

// joinLookupBatch is the most ids one look-up of outer objects names.
const joinLookupBatch = 1000

// joinOwnerChange follows a change of a $relatedTo's owner: a relation
// edit (AddRelation, RemoveRelation) is an update of the owner, committed
// with its relation rows, so the owner's change is where the relation's
// members are read again. The outer objects that joined or left the
// relation are decided again; when the owner appeared, went, or became
// readable or unreadable to the subscriber, every member is (a find's
// $relatedTo answers nothing to whoever may not get the owner).
func (s *Server) joinOwnerChange(side *joinSide, c *Change, id string, before, after schema.Object) {
	old := side.set[id]
	side.remove(id)
	if after != nil {
		side.add(id, after)
	}
	if c.RelationsKnown && !s.joins.ignoreRelationEdits && old != nil && after != nil && s.ownerReadable(side, old) == s.ownerReadable(side, after) {
		// The commit's own relation rows: O(edits), not O(members).
		var lookup []any
		for _, e := range c.Relations {
			if e.Key != side.join.Key {
				continue
			}
			if _, was := side.members[e.RelatedID]; was != e.Present {
				if e.Present {
					side.members[e.RelatedID] = struct{}{}
				} else {
					delete(side.members, e.RelatedID)
				}
				lookup = append(lookup, e.RelatedID)
			}
		}
		s.joinRedecide(side, lookup)
		return
	}
	next := map[string]struct{}{}
	if after != nil {
		s.opts.Authority.(JoinSource).JoinRelated(side.join.Owner.ClassName, side.join.Key, id, side.sub.query.Class(), func(rel string) bool {
			next[rel] = struct{}{}
			return true
		})
	}
	everyone := (old == nil) != (after == nil) || s.ownerReadable(side, old) != s.ownerReadable(side, after)
	var lookup []any
	for rel := range next {
		if _, was := side.members[rel]; everyone || !was {
			lookup = append(lookup, rel)
		}
	}
	for rel := range side.members {
		if _, still := next[rel]; !still {
			lookup = append(lookup, rel)
		}
	}
	side.members = next
	s.joinRedecide(side, lookup)
}

// ownerReadable reports whether side's subscriber may list the relation
// of owner (nil: no owner).
func (s *Server) ownerReadable(side *joinSide, owner schema.Object) bool {
	if owner == nil {
		return false
	}
	var id Identity
	if !side.sub.master && side.sub.token != "" {
		var err error
		if id, err = s.sessions.get(context.Background(), side.sub.token); err != nil {
			return false
		}
	}
	return side.readable(s, id, owner)
}

// joinOuterChange decides a change of an outer object for sub.
func (s *Server) joinOuterChange(sub *subscription, c *Change, after schema.Object) {
	if c.Deleted {
		id, _ := c.Object["objectId"].(string)
		if sub.join.told[id] {
			delete(sub.join.told, id)
			s.sendJoin(sub, match.Delete, c.Object, nil)
		}
		return
	}
	s.joinDecide(sub, after, c.Original, c.Original == nil, false)
}

// joinDecide compares whether obj matches sub now with what the
// subscriber was told, and sends the event that mends the difference.
// original is the previous version for an outer change (obj itself for a
// change of an inner object, fromInner); created says obj is new.
func (s *Server) joinDecide(sub *subscription, obj, original schema.Object, created, fromInner bool) {
	id, _ := obj["objectId"].(string)
	now, hidden, ok := s.joinMatches(sub, obj)
	if !ok {
		return // the session did not resolve: nothing is decided
	}
	was := sub.join.told[id]
	var ev match.Event
	switch {
	case now && was:
		if fromInner || created {
			// An inner change that does not change the answer, or the
			// create of an object the subscribe-time find already counted
			// (committed before the subscription, dispatched after it).
			return
		}
		ev = match.Update
	case now && created:
		ev = match.Create
	case now:
		ev = match.Enter
	case was:
		ev = match.Leave
	default:
		return
	}
	if now {
		sub.join.told[id] = true
	} else {
		delete(sub.join.told, id)
	}
	if !fromInner && !match.WatchAllows(ev, sub.watch, original, obj) {
		return
	}
	s.sendJoinHidden(sub, ev, obj, original, hidden)
}

// joinMatches reports whether obj matches sub for its subscriber: the
// where without its joins, the subscriber's read rights on obj, and each
// join against its set with the subscriber's read rights on the inner
// objects. ok is false when the subscriber's session does not resolve.
func (s *Server) joinMatches(sub *subscription, obj schema.Object) (matches bool, hidden []string, ok bool) {
	if obj == nil {
		return false, nil, true
	}
	var id Identity
	if !sub.master && sub.token != "" {
		var err error
		if id, err = s.sessions.get(context.Background(), sub.token); err != nil {
			s.sessionFailed(sub, err)
			return false, nil, false
		}
	}
	if !sub.query.Match(obj) {
		return false, nil, true
	}
	if !sub.master {
		rf, err := s.opts.Authority.ReadFilter(id, sub.query.Class(), service.ReadFind, nil)
		if err != nil || !visible(rf, obj, sub.fields, &hidden) {
			return false, nil, true
		}
	}
	for _, side := range sub.join.sides {
		if side.holds(s, id, obj) == side.join.Negated() {
			return false, nil, true
		}
	}
	return true, hidden, true
}

// holds reports whether obj's value at the join's path reaches an inner
// object of the set that the subscriber may read.
func (side *joinSide) holds(s *Server, id Identity, obj schema.Object) bool {
	if side.join.IsRelation() {
		oid, _ := obj["objectId"].(string)
		_, member := side.members[oid]
		owner := side.set[side.join.Owner.ObjectID]
		return member && owner != nil && side.readable(s, id, owner)
	}
	v, ok := schema.Get(obj, side.join.Path)
	if !ok {
		return false
	}
	if !side.join.IsSelect() {
		p, _ := v.(map[string]any)
		if p["__type"] != "Pointer" || p["className"] != side.join.Inner.Class() {
			return false
		}
		target, _ := p["objectId"].(string)
		inner := side.set[target]
		return inner != nil && side.readable(s, id, inner)
	}
	found := false
	match.ValueKeys(v, func(k string) {
		for innerID := range side.byVal[k] {
			if !found && side.readable(s, id, side.set[innerID]) {
				found = true
			}
		}
	})
	return found
}

// readable applies the subscriber's read rights on the inner class to an
// inner object, as the subquery of a find would.
func (side *joinSide) readable(s *Server, id Identity, inner schema.Object) bool {
	if side.sub.master {
		return true
	}
	op, fields := service.ReadFind, side.join.Inner.Fields()
	if side.join.IsRelation() {
		// A find lists a relation for whoever may get its owner and
		// read the relation field.
		op, fields = service.ReadGet, []string{side.join.Key}
	}
	rf, err := s.opts.Authority.ReadFilter(id, side.join.Inner.Class(), op, nil)
	if err != nil {
		return false
	}
	var hidden []string
	return visible(rf, inner, fields, &hidden)
}

func (side *joinSide) add(id string, obj schema.Object) {
	side.set[id] = obj
	if !side.join.IsSelect() {
		return
	}
	v, ok := schema.Get(obj, side.join.Key)
	if !ok {
		return
	}
	match.ValueKeys(v, func(k string) {
		if side.byVal[k] == nil {
			side.byVal[k] = map[string]struct{}{}
		}
		side.byVal[k][id] = struct{}{}
	})
}

func (side *joinSide) remove(id string) {
	old := side.set[id]
	if old == nil {
		return
	}
	delete(side.set, id)
	if v, ok := schema.Get(old, side.join.Key); ok && side.join.IsSelect() {
		match.ValueKeys(v, func(k string) {
			delete(side.byVal[k], id)
			if len(side.byVal[k]) == 0 {
				delete(side.byVal, k)
			}
		})
	}
}

// addJoin starts a live-join subscription: it loads each join's inner
// set and the subscriber's current result (as a find with the same where
// answers it), then files the subscription. Errors carry the find's code
// (154 for a subquery that would scan too much or is too large).
func (s *Server) addJoin(sub *subscription) *protoError {
	src, ok := s.opts.Authority.(JoinSource)
	if !ok {
		return &protoError{code: schema.CodeInvalidQuery, msg: "live joins are not supported by this LiveQuery server"}
	}
	for _, j := range sub.query.Joins() {
		// A class that does not publish never tells its changes: the join
		// would silently keep its subscribe-time answer.
		if c := j.Inner.Class(); !s.classAllowed(c) {
			return &protoError{code: CodeClassDisabled, msg: fmt.Sprintf("Class %s is not enabled for LiveQuery (liveQuery.classNames): a live join on it could not follow its changes", c)}
		}
	}
	var id Identity
	if !sub.master && sub.token != "" {
		var err error
		if id, err = s.sessions.get(context.Background(), sub.token); err != nil {
			return &protoError{code: schema.CodeInvalidSessionToken, msg: "Invalid session token"}
		}
	}
	s.joins.mu.Lock()
	defer s.joins.mu.Unlock()
	// The subscriber's find first: it refuses (154) a subquery that would
	// scan too much for them before the inner sets, read as the master
	// key, are loaded.
	told := map[string]bool{}
	result, err := src.JoinFind(id, sub.token, sub.master, sub.query.Class(), sub.query.Where(), MaxJoinResults+1)
	if err != nil {
		return joinError(err)
	}
	if len(result) > MaxJoinResults {
		return &protoError{code: schema.CodeInefficientQuery, msg: fmt.Sprintf("This live join matches more than %d objects; narrow it", MaxJoinResults)}
	}
	for _, o := range result {
		oid, _ := o["objectId"].(string)
		told[oid] = true
	}
	st := &joinState{told: told}
	for _, j := range sub.query.Joins() {
		inner, err := src.JoinFind(Identity{}, "", true, j.Inner.Class(), j.Inner.Where(), MaxJoinInner+1)
		if err != nil {
			return joinError(err)
		}
		if len(inner) > MaxJoinInner {
			return &protoError{code: schema.CodeInefficientQuery, msg: fmt.Sprintf("The subquery of this live join matches more than %d objects; narrow it", MaxJoinInner)}
		}
		side := &joinSide{sub: sub, join: j, set: map[string]schema.Object{}, byVal: map[string]map[string]struct{}{}}
		for _, o := range inner {
			oid, _ := o["objectId"].(string)
			side.add(oid, o)
		}
		if j.IsRelation() {
			side.members = map[string]struct{}{}
			if len(inner) > 0 {
				var tooMany bool
				src.JoinRelated(j.Owner.ClassName, j.Key, j.Owner.ObjectID, sub.query.Class(), func(rel string) bool {
					side.members[rel] = struct{}{}
					tooMany = len(side.members) > MaxJoinInner
					return !tooMany
				})
				if tooMany {
					return &protoError{code: schema.CodeInefficientQuery, msg: fmt.Sprintf("The relation of this live join holds more than %d objects; narrow it", MaxJoinInner)}
				}
			}
		}
		st.sides = append(st.sides, side)
	}
	sub.join = st
	st.group = s.joins.outer.Add(sub.query, sub)
	for _, side := range st.sides {
		side.group = s.joins.inner.Add(side.join.Inner, side)
	}
	s.joins.count.Add(1)
	return nil
}

// removeJoin takes a live-join subscription out of the joins.
func (s *Server) removeJoin(sub *subscription) {
	s.joins.mu.Lock()
	defer s.joins.mu.Unlock()
	s.joins.outer.Remove(sub.join.group, sub)
	for _, side := range sub.join.sides {
		s.joins.inner.Remove(side.group, side)
	}
	s.joins.count.Add(-1)
}

func joinError(err error) *protoError {
	if pe, ok := err.(*schema.Error); ok {
		return &protoError{code: pe.Code, msg: pe.Message}
	}
	return &protoError{code: schema.CodeInternalServerError, msg: "the live join's query failed"}
}

// sendJoin sends one live-join event with the subscriber's hidden fields
// of obj removed.
func (s *Server) sendJoin(sub *subscription, ev match.Event, obj, original schema.Object) {
	var hidden []string
	if !sub.master {
		id, _ := s.sessions.get(context.Background(), sub.token)
		if rf, err := s.opts.Authority.ReadFilter(id, sub.query.Class(), service.ReadFind, nil); err == nil && rf.Hidden != nil {
			hidden = rf.Hidden(obj)
		}
	}
	s.sendJoinHidden(sub, ev, obj, original, hidden)
}

func (s *Server) sendJoinHidden(sub *subscription, ev match.Event, obj, original schema.Object, hidden []string) {
	// As deliver's before and after: a delete's object is the deleted
	// one, a create has no before.
	before, after := original, obj
	switch ev {
	case match.Delete:
		before, after = obj, nil
	case match.Create:
		before = nil
	}
	if t := s.opts.Triggers; t != nil && t.HasAfterEvent(sub.query.Class()) {
		var ok bool
		if before, after, ok = s.afterEvent(t, sub, &Change{Class: sub.query.Class()}, ev, before, after, hidden, hidden); !ok {
			return
		}
	}
	if sub.local != nil {
		s.deliverLocal(sub, ev, before, after, hidden, hidden)
		return
	}
	var object, orig []byte
	if ev == match.Delete {
		object, _ = json.Marshal(match.Project(before, sub.keys, hidden))
	} else {
		object, _ = json.Marshal(match.Project(after, sub.keys, hidden))
	}
	if before != nil && ev != match.Create && ev != match.Delete {
		orig, _ = json.Marshal(match.Project(before, sub.keys, hidden))
	}
	msg := make([]byte, 0, 64+len(sub.prefix)+len(object)+len(orig))
	msg = append(msg, `{"op":"`...)
	msg = append(msg, ev.String()...)
	msg = append(msg, `",`...)
	msg = append(msg, sub.prefix...)
	msg = append(msg, `,"requestId":`...)
	msg = append(msg, sub.requestID...)
	msg = append(msg, `,"object":`...)
	msg = append(msg, object...)
	if orig != nil {
		msg = append(msg, `,"original":`...)
		msg = append(msg, orig...)
	}
	msg = append(msg, '}')
	if sub.client.send(msg) {
		s.stats.delivered.Add(1)
	}
}

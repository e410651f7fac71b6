package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

func (s *Server) dispatchLoop(ch chan Change) {
	defer s.workers.Done()
	var buf []*match.Group[*subscription]
	for {
		select {
		case c := <-ch:
			buf = s.safeDispatch(c, buf[:0])
		case <-s.done:
			return
		}
	}
}

// safeDispatch is dispatch with a bug in it contained: the change is
// dropped for the subscribers it had not reached, the stack is logged, and
// the dispatcher goes on with the next change.
func (s *Server) safeDispatch(c Change, buf []*match.Group[*subscription]) (out []*match.Group[*subscription]) {
	defer func() {
		if v := recover(); v != nil {
			s.stats.panics.Add(1)
			s.log.Error("livequery: panic while dispatching a change", "class", c.Class, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out = buf[:0]
		}
	}()
	return s.dispatch(c, buf)
}

// dispatch delivers one change: the index names the queries it could
// match, each is tested once against the original and the new object,
// and each subscriber of a matching query gets its own decision (its
// access rights, watch list and keys).
func (s *Server) dispatch(c Change, buf []*match.Group[*subscription]) []*match.Group[*subscription] {
	s.stats.changes.Add(1)
	var before, after schema.Object
	if c.Deleted {
		before = c.Object
	} else {
		before, after = c.Original, c.Object
	}
	groups := s.index.Candidates(c.Class, before, after, buf)
	s.stats.tested.Add(uint64(2 * len(groups)))
	enc := encoder{stored: c.storedJSON()}
	var matched []matchedGroup
	for _, g := range groups {
		q := g.Query()
		if m := (matchedGroup{g, q.Match(before), q.Match(after)}); m.inBefore || m.inAfter {
			matched = append(matched, m)
		}
	}
	s.resolveSessions(matched)
	for _, m := range matched {
		for _, sub := range m.group.Members() {
			s.deliver(sub, &c, before, after, m.inBefore, m.inAfter, &enc)
		}
	}
	return groups
}

// matchedGroup is a query that matches the original or the new object.
type matchedGroup struct {
	group             *match.Group[*subscription]
	inBefore, inAfter bool
}

// maxParallelLookups bounds the session lookups one change runs at once.
const maxParallelLookups = 8

// resolveSessions looks up, in parallel, the sessions of the subscribers
// of matched queries that the cache does not hold, so that delivery then
// finds them all cached: after a role change a standalone server asks its
// REST server for each session concurrently instead of one after another
// inside the per-subscriber loop.
func (s *Server) resolveSessions(matched []matchedGroup) {
	missing := s.sessions.missing(func(yield func(string) bool) {
		for _, m := range matched {
			for _, sub := range m.group.Members() {
				if !sub.master && sub.token != "" && !yield(sub.token) {
					return
				}
			}
		}
	})
	if len(missing) < 2 {
		return // one lookup gains nothing from a goroutine
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxParallelLookups)
	for _, token := range missing {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			_, _ = s.sessions.get(context.Background(), token) // the answer is cached for deliver
		}()
	}
	wg.Wait()
}

// deliver decides and queues the event of one change for one
// subscription. inBefore and inAfter say whether the query matches the
// two objects; visibility to this subscriber narrows them.
func (s *Server) deliver(sub *subscription, c *Change, before, after schema.Object, inBefore, inAfter bool, enc *encoder) {
	var hideBefore, hideAfter []string
	if !sub.master {
		var id Identity
		if sub.token != "" {
			var err error
			if id, err = s.sessions.get(context.Background(), sub.token); err != nil {
				s.sessionFailed(sub, err)
				return
			}
		}
		op := service.ReadFind
		if sub.query.IsGet() {
			op = service.ReadGet
		}
		rf, err := s.opts.Authority.ReadFilter(id, c.Class, op, c.CLP)
		if err != nil {
			return // the CLP refuses this subscriber
		}
		inBefore = inBefore && visible(rf, before, sub.fields, &hideBefore)
		inAfter = inAfter && visible(rf, after, sub.fields, &hideAfter)
	}
	ev := match.Decide(inBefore, inAfter, c.Original != nil, c.Deleted)
	if ev == match.None {
		return
	}
	if !match.WatchAllows(ev, sub.watch, c.Original, c.Object) {
		return
	}
	if t := s.opts.Triggers; t != nil && t.HasAfterEvent(c.Class) {
		var ok bool
		if before, after, ok = s.afterEvent(t, sub, c, ev, before, after, hideBefore, hideAfter); !ok {
			return
		}
		enc = &encoder{} // this subscriber's objects (the trigger's copies): encoded apart
	}
	if sub.local != nil {
		s.deliverLocal(sub, ev, before, after, hideBefore, hideAfter)
		return
	}
	var object, original []byte
	switch ev {
	case match.Delete:
		object = enc.encode(0, before, sub.keys, hideBefore)
	case match.Create:
		object = enc.encode(1, after, sub.keys, hideAfter)
	default:
		object = enc.encode(1, after, sub.keys, hideAfter)
		original = enc.encode(0, before, sub.keys, hideBefore)
	}
	msg := make([]byte, 0, 64+len(sub.prefix)+len(object)+len(original))
	msg = append(msg, `{"op":"`...)
	msg = append(msg, ev.String()...)
	msg = append(msg, `",`...)
	msg = append(msg, sub.prefix...)
	msg = append(msg, `,"requestId":`...)
	msg = append(msg, sub.requestID...)
	msg = append(msg, `,"object":`...)
	msg = append(msg, object...)
	if original != nil {
		msg = append(msg, `,"original":`...)
		msg = append(msg, original...)
	}
	msg = append(msg, '}')
	if sub.client.send(msg) {
		s.stats.delivered.Add(1)
	}
}

// afterEvent runs afterLiveQueryEvent for one subscriber on copies of the
// objects it may see; false when the trigger suppressed the event or
// failed (logged).
func (s *Server) afterEvent(t Triggers, sub *subscription, c *Change, ev match.Event, before, after schema.Object,
	hideBefore, hideAfter []string) (schema.Object, schema.Object, bool) {
	req := &EventRequest{Event: ev.String(), Class: c.Class, SessionToken: sub.token, Master: sub.master}
	if after != nil && ev != match.Delete {
		req.Object = copyObject(match.Project(after, nil, hideAfter))
	}
	if before != nil {
		if ev == match.Delete {
			req.Object = copyObject(match.Project(before, nil, hideBefore))
		} else {
			req.Original = copyObject(match.Project(before, nil, hideBefore))
		}
	}
	if err := t.AfterEvent(req); err != nil {
		s.log.Warn("livequery: afterLiveQueryEvent failed; the event is not sent", "class", c.Class, "err", err)
		return nil, nil, false
	}
	if req.Suppress {
		return nil, nil, false
	}
	if ev == match.Delete {
		return req.Object, after, true
	}
	return req.Original, req.Object, true
}

// copyObject is a shallow copy: a trigger may replace fields, never the
// stored object's.
func copyObject(o schema.Object) schema.Object {
	if o == nil {
		return nil
	}
	out := make(schema.Object, len(o))
	for k, v := range o {
		out[k] = v
	}
	return out
}

// visible applies a read filter to one object: its ACL and class rules,
// and the fields hidden from the subscriber. An object that hides a field
// the query reads is not visible at all (the events would reveal it).
func visible(rf service.ReadFilter, obj schema.Object, fields []string, hidden *[]string) bool {
	if obj == nil {
		return false
	}
	if rf.Visible != nil && !rf.Visible(obj) {
		return false
	}
	if rf.Hidden != nil {
		*hidden = rf.Hidden(obj)
		if _, bad := intersects(*hidden, fields); bad {
			return false
		}
	}
	return true
}

// sessionFailed handles a subscription whose session token no longer
// resolves: it receives nothing more, and is told once (code 209).
func (s *Server) sessionFailed(sub *subscription, err error) {
	var pe *schema.Error
	if !errors.As(err, &pe) || pe.Code != schema.CodeInvalidSessionToken {
		// The authority could not answer (a standalone server's REST server
		// is down): skip the event, and log once in a while, not per event.
		now := time.Now().UnixNano()
		if last := s.lastLookupErr.Load(); now-last > int64(10*time.Second) && s.lastLookupErr.CompareAndSwap(last, now) {
			s.log.Error("livequery: session lookup failed; events for the session are skipped", "err", err)
		}
		return
	}
	if sub.revoked.CompareAndSwap(false, true) {
		if sub.local != nil {
			sub.local.Failed(pe)
			return
		}
		sub.client.sendError(&protoError{code: schema.CodeInvalidSessionToken, msg: pe.Message, requestID: json.Number(sub.requestID)})
	}
}

// encoder keeps the JSON of the change's objects per projection, so that
// many subscribers with the same keys and hidden fields share one
// encoding. The whole objects' JSON may come with the change (stored),
// and then is not encoded at all.
type encoder struct {
	stored  [2][]byte // by which: the whole objects' JSON, when known
	entries []encoded
}

// storedJSON returns the whole objects' JSON the change carries, indexed
// as encoder.encode's which: 0 the original (or deleted) object, 1 the
// new one.
func (c *Change) storedJSON() [2][]byte {
	if c.Deleted {
		return [2][]byte{c.ObjectJSON, nil}
	}
	return [2][]byte{c.OriginalJSON, c.ObjectJSON}
}

type encoded struct {
	which        int // 0 the original (or deleted) object, 1 the new one
	keys, hidden string
	data         []byte
}

func (e *encoder) encode(which int, obj schema.Object, keys, hidden []string) []byte {
	if len(keys) == 0 && len(hidden) == 0 && e.stored[which] != nil {
		return e.stored[which] // the whole object: Project would return obj itself
	}
	ks, hs := strings.Join(keys, "\x00"), strings.Join(hidden, "\x00")
	for _, x := range e.entries {
		if x.which == which && x.keys == ks && x.hidden == hs {
			return x.data
		}
	}
	data, err := json.Marshal(match.Project(obj, keys, hidden))
	if err != nil {
		data = []byte("{}")
	}
	e.entries = append(e.entries, encoded{which: which, keys: ks, hidden: hs, data: data})
	return data
}

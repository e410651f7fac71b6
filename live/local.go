package live

import (
	"sync"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
)

// LocalRequest is a subscription asked for by another front end in the
// same process (GraphQL subscriptions): the same checks, matcher and
// visibility rules as a LiveQuery client's subscribe.
type LocalRequest struct {
	Class string
	Where map[string]any // REST where
	Keys  []string       // the fields to send; empty sends all the caller may see
	// SessionToken is the caller's session ("" for none); Master reads
	// everything (the front end has checked the master key).
	SessionToken string
	Master       bool
	IP           string // for beforeSubscribe
}

// LocalEvent is one event of a local subscription. Objects are in the
// published form (REST JSON plus className), narrowed to what the
// subscriber may see; they are shared and must not be changed.
type LocalEvent struct {
	Op string // create, enter, update, leave, delete
	// Object is the new version; for a delete, the deleted object.
	Object   schema.Object
	Original schema.Object // update, enter and leave: the version before
}

// LocalSink receives a local subscription's events. The dispatchers call
// it, so it must return at once: queue, never block nor do slow work.
type LocalSink interface {
	// Event hands over one event; false means it was dropped.
	Event(LocalEvent) bool
	// Failed says the subscription's session no longer resolves (code 209
	// with its message): no event follows.
	Failed(err *schema.Error)
}

// SubscribeLocal registers an in-process subscription. The error is a
// *schema.Error carrying the code a LiveQuery client would get. cancel
// removes the subscription; it may be called more than once.
func (s *Server) SubscribeLocal(r LocalRequest, sink LocalSink) (cancel func(), err error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, schema.Errorf(schema.CodeConnectionFailed, "The LiveQuery server is shutting down")
	}
	sub, perr := s.prepare(subscribeParams{class: r.Class, where: r.Where, keys: r.Keys, token: r.SessionToken, master: r.Master, ip: r.IP})
	if perr == nil {
		perr = s.hold(sub)
	}
	if perr != nil {
		return nil, schema.Errorf(perr.code, "%s", perr.msg)
	}
	sub.local = sink
	if perr := s.file(sub); perr != nil {
		s.release(sub)
		return nil, schema.Errorf(perr.code, "%s", perr.msg)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.unfile(sub)
			s.release(sub)
		})
	}, nil
}

// deliverLocal hands one decided event to a local subscription.
func (s *Server) deliverLocal(sub *subscription, ev match.Event, before, after schema.Object, hideBefore, hideAfter []string) {
	e := LocalEvent{Op: ev.String()}
	switch ev {
	case match.Delete:
		e.Object = match.Project(before, sub.keys, hideBefore)
	case match.Create:
		e.Object = match.Project(after, sub.keys, hideAfter)
	default:
		e.Object = match.Project(after, sub.keys, hideAfter)
		e.Original = match.Project(before, sub.keys, hideBefore)
	}
	if sub.local.Event(e) {
		s.stats.delivered.Add(1)
	} else {
		s.stats.dropped.Add(1)
	}
}

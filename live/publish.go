package live

import (
	"maps"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Publisher turns the service's committed changes into LiveQuery changes
// for a Feed: only classes in liveQuery.classNames publish, as in Parse
// Server; writes to _Session and _Role also tell the feed to forget
// cached sessions, so a revoked session stops receiving and a new role
// member starts at once.
type Publisher struct {
	svc     *service.Service
	feed    Feed
	classes map[string]bool
}

// NewPublisher publishes the changes of classNames to feed; nil
// classNames publishes every class (the development start).
func NewPublisher(svc *service.Service, classNames []string, feed Feed) *Publisher {
	p := &Publisher{svc: svc, feed: feed}
	if classNames != nil {
		p.classes = map[string]bool{}
		for _, c := range classNames {
			p.classes[c] = true
		}
	}
	return p
}

// publishes reports whether changes of class go to the feed.
func (p *Publisher) publishes(class string) bool {
	if p.classes == nil {
		return schema.ValidClassName(class) // every class clients can use
	}
	return p.classes[class]
}

// OnChange is service.Options.OnChange.
func (p *Publisher) OnChange(ch service.Change) {
	switch ch.Class {
	case "_Session":
		// Any session write (logout deletes, an update may shorten it).
		obj := ch.Object
		if obj == nil {
			obj = ch.Original
		}
		user, _ := obj["user"].(map[string]any)
		if id, _ := user["objectId"].(string); id != "" {
			p.feed.ForgetSessions(id)
		}
	case "_Role":
		p.feed.ForgetSessions("") // membership of anyone may have changed
	}
	if !p.publishes(ch.Class) {
		return
	}
	c := Change{Class: ch.Class, Deleted: ch.Object == nil, Relations: ch.Relations, RelationsKnown: ch.RelationsKnown}
	if c.Deleted {
		c.Object = p.full(ch.Class, ch.Original)
		c.ObjectJSON = p.fullJSON(ch.Class, ch.Original, ch.OriginalJSON)
	} else {
		c.Object = p.full(ch.Class, ch.Object)
		c.ObjectJSON = p.fullJSON(ch.Class, ch.Object, ch.ObjectJSON)
		c.Original = p.full(ch.Class, ch.Original)
		c.OriginalJSON = p.fullJSON(ch.Class, ch.Original, ch.OriginalJSON)
	}
	if cls := p.svc.Class(ch.Class); cls != nil && len(cls.CLP) > 0 {
		c.CLP = maps.Clone(cls.CLP)
	}
	p.feed.Publish(c)
}

// Deliver is a service.ChangeConsumer's Deliver: the changes in order.
func (p *Publisher) Deliver(batch []service.Change) {
	for _, ch := range batch {
		p.OnChange(ch)
	}
}

// Lost is a service.ChangeConsumer's Lost: changes of classes never
// reached the publisher (it fell a whole ring behind). A feed that can
// tell its clients (LossNotifier: a LiveQuery server, or Redis for its
// subscribers) asks those of the classes it publishes to fetch again, and
// a lost session or role write makes every session lookup go.
func (p *Publisher) Lost(classes []string, count int) {
	var told []string
	forget := false
	for _, c := range classes {
		forget = forget || c == "_Session" || c == "_Role"
		if p.publishes(c) {
			told = append(told, c)
		}
	}
	if forget {
		p.feed.ForgetSessions("")
	}
	if len(told) == 0 {
		return
	}
	if n, ok := p.feed.(interface{ ChangesLostCount([]string, int) }); ok {
		n.ChangesLostCount(told, count)
	} else if n, ok := p.feed.(LossNotifier); ok {
		n.ChangesLost(told)
	}
}

// fullJSON is the JSON of full(class, obj) made from obj's stored JSON,
// without encoding the map: the stored bytes with className and __type put
// in front. nil when the published form is not the stored object plus
// those two keys (internal keys, relation fields or files make it differ)
// or the stored bytes are missing.
func (p *Publisher) fullJSON(class string, obj schema.Object, stored []byte) []byte {
	if len(stored) < 2 || stored[0] != '{' || !schema.ValidClassName(class) {
		return nil
	}
	if _, ok := obj["className"]; ok {
		return nil
	}
	if _, ok := obj["__type"]; ok {
		return nil
	}
	if !p.svc.LiveSharesStored(class, obj) {
		return nil
	}
	return spliceFull(class, stored)
}

// spliceFull is stored (a JSON object) with className and __type put in
// front; class must need no escaping (a valid class name).
func spliceFull(class string, stored []byte) []byte {
	const head = `{"__type":"Object","className":"`
	out := make([]byte, 0, len(head)+len(class)+len(stored)+2)
	out = append(out, head...)
	out = append(out, class...)
	out = append(out, '"')
	if len(stored) > 2 {
		out = append(out, ',') // stored holds members: its '{' gives way to the comma
	}
	return append(out, stored[1:]...)
}

// full is the published form of an object: what the master key reads,
// plus className and __type (Parse's "full JSON" of an object).
func (p *Publisher) full(class string, obj schema.Object) schema.Object {
	if obj == nil {
		return nil
	}
	out := p.svc.LiveObject(class, obj)
	out["className"] = class
	out["__type"] = "Object"
	return out
}

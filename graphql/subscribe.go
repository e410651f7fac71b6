package graphql

import (
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Events is the change feed subscriptions listen to: the LiveQuery engine,
// adapted by the server (graphql and live never import each other).
type Events interface {
	// Serves reports whether the changes of class are published.
	Serves(class string) bool
	// Subscribe starts a subscription under LiveQuery's rules (its
	// matcher, ACL, CLP and protected fields for the caller). deliver is
	// called from the engine's dispatchers and must return at once (false:
	// dropped); failed says the caller's session stopped resolving. The
	// error carries the Parse code a LiveQuery client would get.
	Subscribe(req EventRequest, deliver func(Event) bool, failed func(error)) (cancel func(), err error)
}

// EventRequest is one subscription as the feed sees it.
type EventRequest struct {
	Class        string
	Where        map[string]any // REST where
	SessionToken string
	Master       bool
	IP           string
}

// Event is one LiveQuery event: Op is create, enter, update, leave or
// delete; Object the new version (for a delete, the deleted one) as the
// subscriber may see it.
type Event struct {
	Op       string
	Object   schema.Object
	Original schema.Object
}

// subscriptionEvents name the generated fields' suffixes and the LiveQuery
// event each listens to.
var subscriptionEvents = []struct{ suffix, op string }{
	{"Created", "create"}, {"Updated", "update"}, {"Deleted", "delete"}, {"Entered", "enter"}, {"Left", "leave"},
}

// subscriptionField is a generated subscription root field.
type subscriptionField struct {
	class *classModel
	op    string // the LiveQuery event
}

// writeSubscriptions adds the Subscription type: per published class,
// <single>Created/Updated/Deleted/Entered/Left(where) returning the
// object. Without any published class there is no Subscription type.
func (m *model) writeSubscriptions(b *strings.Builder, classes []*classModel, subscribes func(string) bool) {
	if subscribes == nil {
		return
	}
	var fields strings.Builder
	for _, cm := range classes {
		if !subscribes(cm.class) {
			continue
		}
		for _, ev := range subscriptionEvents {
			name := cm.single + ev.suffix
			fmt.Fprintf(&fields, "  %s(where: %sWhereInput): %s!\n", name, cm.typ, cm.typ)
			m.subscription[name] = subscriptionField{cm, ev.op}
		}
	}
	if fields.Len() == 0 {
		return
	}
	b.WriteString("type Subscription {\n")
	b.WriteString(fields.String())
	b.WriteString("}\n\n")
}

// eventRoot is the source of a subscription's root field: the event.
type eventRoot struct {
	cm  *classModel
	obj schema.Object
}

// subscription is one running subscription operation of a socket.
type subscription struct {
	m      *model
	op     *ast.OperationDefinition
	vars   map[string]any
	field  subscriptionField
	cancel func() // set once listening, under the socket's lock
}

// newSubscription checks a subscription operation: one generated root
// field, and its where. The caller starts it on the feed (listen).
func (h *Handler) newSubscription(m *model, op *ast.OperationDefinition, vars map[string]any, auth service.Auth) (*subscription, map[string]any, error) {
	e := &executor{h: h, m: m, auth: auth, vars: vars}
	groups := e.grouped(op.SelectionSet, m.schema.Subscription)
	if len(groups) != 1 || len(groups[0].fields) != 1 {
		return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "A subscription selects exactly one root field.")
	}
	f := groups[0].fields[0]
	sf, ok := m.subscription[f.Name]
	if !ok {
		return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Unknown subscription field %q.", f.Name)
	}
	where, err := e.where(sf.class, f.ArgumentMap(vars)["where"])
	if err != nil {
		return nil, nil, err
	}
	return &subscription{m: m, op: op, vars: vars, field: sf}, where, nil
}

// listen starts s on the feed; deliver sees only the events of s's field.
func (h *Handler) listen(s *subscription, where map[string]any, auth service.Auth, ip string,
	deliver func(Event) bool, failed func(error)) (cancel func(), err error) {
	filtered := func(ev Event) bool {
		if ev.Op != s.field.op {
			return true // another event of the same query: not this field's
		}
		return deliver(ev)
	}
	return h.opts.Events.Subscribe(EventRequest{Class: s.field.class.class, Where: where, SessionToken: auth.SessionToken,
		Master: auth.Master, IP: ip}, filtered, failed)
}

// result executes the subscription's selection for one event, for auth:
// pointers and relations are read as the subscriber may read them.
func (h *Handler) result(s *subscription, auth service.Auth, ev Event) response {
	e := &executor{h: h, m: s.m, auth: auth, vars: s.vars}
	data, ok := e.selectionSet(s.op.SelectionSet, s.m.schema.Subscription, eventRoot{s.field.class, ev.Object}, nil)
	resp := response{Errors: e.errors}
	if ok {
		resp.Data = data
	} else {
		resp.Data = nullData
	}
	return resp
}

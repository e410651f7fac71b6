package match

import (
	"reflect"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// Event is what a change means to one subscription.
type Event uint8

// The events of the LiveQuery protocol; None sends nothing.
const (
	None   Event = iota
	Create       // a new object matches
	Enter        // an existing object starts to match
	Update       // a matching object changed and still matches
	Leave        // a matching object changed and no longer matches
	Delete       // a matching object was deleted
)

var eventNames = [...]string{None: "", Create: "create", Enter: "enter", Update: "update", Leave: "leave", Delete: "delete"}

// String is the event's op on the wire ("" for None).
func (e Event) String() string { return eventNames[e] }

// Decide picks the event for one subscription. before and after say
// whether the original and the new object match the query and are visible
// to the subscriber; existed whether there was an original; deleted
// whether the change is a delete (then before is about the deleted object).
func Decide(before, after, existed, deleted bool) Event {
	switch {
	case deleted:
		if before {
			return Delete
		}
	case before && after:
		return Update
	case before:
		return Leave
	case after && existed:
		return Enter
	case after:
		return Create
	}
	return None
}

// WatchAllows decides whether a subscription with a watch list receives
// ev: a create only when the new object sets a watched field; an update
// or an enter only when a watched field changed; leave and delete always.
// With no watch list every event is sent.
func WatchAllows(ev Event, watch []string, original, object schema.Object) bool {
	if len(watch) == 0 {
		return true
	}
	switch ev {
	case Create:
		for _, f := range watch {
			if v, ok := schema.Get(object, f); ok && v != nil {
				return true
			}
		}
		return false
	case Update, Enter:
		for _, f := range watch {
			a, okA := schema.Get(original, f)
			b, okB := schema.Get(object, f)
			if okA != okB || !reflect.DeepEqual(a, b) {
				return true
			}
		}
		return false
	}
	return true
}

// alwaysKept survive a keys projection, as in Parse Server.
var alwaysKept = map[string]bool{"className": true, "objectId": true, "createdAt": true, "updatedAt": true, "ACL": true, "__type": true}

// Project returns obj reduced for a subscriber: without the hidden fields
// and, when keys is not empty, with only the listed keys (their root
// names) plus className, objectId, createdAt, updatedAt and ACL. obj is
// not modified; it is returned as is when nothing is removed.
func Project(obj schema.Object, keys []string, hidden []string) schema.Object {
	if obj == nil || (len(keys) == 0 && len(hidden) == 0) {
		return obj
	}
	var keep map[string]bool
	if len(keys) > 0 {
		keep = make(map[string]bool, len(keys))
		for _, k := range keys {
			root, _, _ := strings.Cut(k, ".")
			keep[root] = true
		}
	}
	out := make(schema.Object, len(obj))
	for k, v := range obj {
		if keep != nil && !keep[k] && !alwaysKept[k] {
			continue
		}
		out[k] = v
	}
	for _, h := range hidden {
		delete(out, h)
	}
	return out
}

package fuzz

import (
	"sort"
	"strconv"
	"strings"
)

// World is the reference's copy of the data: every object of every class
// as JSON values (objectId, createdAt and updatedAt included, the dates as
// ISO strings as the REST API shows them), and the members of relations.
type World struct {
	Objects map[string][]map[string]any // class -> objects
	// Members are the ids (in the target class) of each relation value.
	Members map[RelKey][]string
	// Targets are the target classes of Relation fields.
	Targets map[ClassField]string
}

// RelKey names one relation value: the field of one object.
type RelKey struct{ Class, ID, Field string }

// ClassField names a field of a class.
type ClassField struct{ Class, Field string }

// NewWorld returns an empty World.
func NewWorld() *World {
	return &World{Objects: map[string][]map[string]any{}, Members: map[RelKey][]string{}, Targets: map[ClassField]string{}}
}

// Query is a find as the reference sees it.
type Query struct {
	Class string
	Where map[string]any
	Order []OrderKey
	Skip  int
	Limit int
	// Caller is who asks; nil is the master key, which sees everything.
	Caller *Caller
}

// Caller is a user (or the public, with no UserID) and its roles.
type Caller struct {
	UserID string
	Roles  []string // "role:<name>", inherited ones included
}

// canRead is the read ACL rule of the specification: an object without
// an ACL is public; otherwise "*", the user's id or one of its roles must
// be granted read.
func (c *Caller) canRead(o map[string]any) bool {
	if c == nil {
		return true
	}
	acl, ok := o["ACL"].(map[string]any)
	if !ok {
		return true
	}
	for _, who := range append([]string{"*", c.UserID}, c.Roles...) {
		if entry, ok := acl[who].(map[string]any); ok && who != "" && entry["read"] == true {
			return true
		}
	}
	return false
}

// OrderKey is one sort key.
type OrderKey struct {
	Path string
	Desc bool
}

// Answer is the reference's result of a Query.
type Answer struct {
	// IDs are all the matches, sorted (skip and limit not applied).
	IDs []string
	// Ranks give each of IDs its tie group: two results may come in
	// either order exactly when their ranks are equal.
	Ranks []int
	// Ambiguous is set when some value lies so close to a boundary (a
	// distance on a maximum) that floating point may decide either way:
	// the case proves nothing and is skipped.
	Ambiguous bool
}

// Page is the expected page: the ranks of the results after skip and limit.
func (a Answer) Page(skip, limit int) []int {
	lo := min(skip, len(a.Ranks))
	hi := min(lo+limit, len(a.Ranks))
	return a.Ranks[lo:hi]
}

// evaluator evaluates one query; it notes boundary cases.
type evaluator struct {
	w         *World
	caller    *Caller
	ambiguous bool
}

// Find answers q over w.
func (w *World) Find(q Query) Answer {
	ev := &evaluator{w: w, caller: q.Caller}
	var hits []map[string]any
	for _, o := range w.Objects[q.Class] {
		if q.Caller.canRead(o) && ev.matches(q.Class, o, q.Where) {
			hits = append(hits, o)
		}
	}
	keys := q.Order
	var near *nearSort
	if len(keys) == 0 {
		near = findNear(q.Where)
	}
	cmp := func(a, b map[string]any) int {
		if near != nil {
			return compareFloat(near.distance(a), near.distance(b))
		}
		for _, k := range keys {
			c := sortCompare(lookupSort(a, k.Path), lookupSort(b, k.Path))
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	sort.SliceStable(hits, func(i, j int) bool { return cmp(hits[i], hits[j]) < 0 })
	ans := Answer{Ambiguous: ev.ambiguous}
	rank := 0
	for i, o := range hits {
		if i > 0 && cmp(hits[i-1], o) != 0 {
			rank++
		}
		ans.IDs = append(ans.IDs, o["objectId"].(string))
		ans.Ranks = append(ans.Ranks, rank)
	}
	return ans
}

// matches reports whether o (of class) satisfies every key of where.
func (ev *evaluator) matches(class string, o map[string]any, where map[string]any) bool {
	ok := true
	// Every key is evaluated (no early return) so that boundary cases
	// are noticed whatever the order of the keys.
	for key, cond := range where {
		if !ev.matchKey(class, o, key, cond) {
			ok = false
		}
	}
	return ok
}

func (ev *evaluator) matchKey(class string, o map[string]any, key string, cond any) bool {
	switch key {
	case "$or":
		hit := false
		for _, w := range cond.([]any) {
			if ev.matches(class, o, w.(map[string]any)) {
				hit = true
			}
		}
		return hit
	case "$and":
		all := true
		for _, w := range cond.([]any) {
			if !ev.matches(class, o, w.(map[string]any)) {
				all = false
			}
		}
		return all
	case "$nor":
		for _, w := range cond.([]any) {
			if ev.matches(class, o, w.(map[string]any)) {
				return false
			}
		}
		return true
	case "$relatedTo":
		rt := cond.(map[string]any)
		owner := rt["object"].(map[string]any)
		ownerClass, ownerID := owner["className"].(string), owner["objectId"].(string)
		if ev.caller != nil && !ev.readable(ownerClass, ownerID) {
			// Choice (the specification is silent): the members of a
			// relation are read through its owner, so an owner the caller
			// cannot read has no members for it.
			return false
		}
		return contains(ev.w.Members[RelKey{ownerClass, ownerID, rt["key"].(string)}], o["objectId"].(string))
	}
	v, present := ev.lookup(class, o, key)
	if ops, ok := operators(cond); ok {
		all := true
		for op, arg := range ops {
			if !ev.matchOp(class, key, v, present, op, arg, ops) {
				all = false
			}
		}
		return all
	}
	return equalMatch(v, present, queryValue(key, cond))
}

// operators returns cond as an operator object: a JSON object whose keys
// all start with "$". A plain JSON object (a value) is not one.
func operators(cond any) (map[string]any, bool) {
	m, ok := cond.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, false
	}
	for k := range m {
		if !strings.HasPrefix(k, "$") {
			return nil, false
		}
	}
	return m, true
}

// lookup finds a dot path in o. A Relation field reads as the array of
// pointers to its members (the specification: a relation "behaves in
// queries like an array of pointers"); createdAt and updatedAt read as
// Dates.
func (ev *evaluator) lookup(class string, o map[string]any, path string) (any, bool) {
	if target, ok := ev.w.Targets[ClassField{class, path}]; ok {
		ids := ev.w.Members[RelKey{class, o["objectId"].(string), path}]
		arr := make([]any, len(ids))
		for i, id := range ids {
			arr[i] = pointer(target, id)
		}
		return arr, true
	}
	var cur any = o
	for _, part := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			var ok bool
			if cur, ok = c[part]; !ok {
				return nil, false
			}
		case []any:
			// A segment of up to 9 digits is a position in an array.
			i, err := strconv.Atoi(part)
			if err != nil || len(part) > 9 || strings.Trim(part, "0123456789") != "" || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	if path == "createdAt" || path == "updatedAt" {
		if s, ok := cur.(string); ok {
			return date(s), true
		}
	}
	return cur, true
}

// queryValue normalises an operand: createdAt and updatedAt may be
// compared with an ISO string as well as a Date.
func queryValue(path string, v any) any {
	if s, ok := v.(string); ok && (path == "createdAt" || path == "updatedAt") {
		return date(s)
	}
	return v
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func pointer(class, id string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": class, "objectId": id}
}

func date(iso string) map[string]any { return map[string]any{"__type": "Date", "iso": iso} }

// readable reports whether the caller may read an existing object.
func (ev *evaluator) readable(class, id string) bool {
	for _, o := range ev.w.Objects[class] {
		if o["objectId"] == id {
			return ev.caller.canRead(o)
		}
	}
	return false
}

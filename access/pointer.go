package access

import (
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// pointerRule is a pointer permission compiled once per policy: "some
// listed field points to the caller". Its where form (what a query ANDs
// in) is checked by where.Parse and matcher.Compile once, here; the check
// of one object is then a direct look at the listed fields, with the
// matcher's equality, and allocates nothing.
type pointerRule struct {
	fields []string
	// never is set when the where form does not compile (a field name the
	// where language refuses, a Relation field, too many fields): such a
	// rule matches no object, as the query it stands for would fail.
	never bool
}

// placeholderID stands for the caller when the rule's where form is
// validated: only its shape matters, and no user id changes the shape.
const placeholderID = "placeholder"

func compilePointer(fields []string, types FieldTypes) *pointerRule {
	r := &pointerRule{fields: fields}
	opts := where.Options{FieldType: types}
	tree, err := where.Parse(pointerWhere(fields, placeholderID), opts)
	if err == nil {
		_, err = matcher.Compile(tree, nil)
	}
	r.never = err != nil
	return r
}

// pointerWhere is the where a pointer permission adds to a query.
func pointerWhere(fields []string, userID string) map[string]any {
	if userID == "" {
		return map[string]any{"objectId": map[string]any{"$in": []any{}}}
	}
	me := schema.Pointer(ClassUser, userID)
	if len(fields) == 1 {
		return map[string]any{fields[0]: me}
	}
	branches := make([]any, len(fields))
	for i, f := range fields {
		branches[i] = map[string]any{f: me}
	}
	return map[string]any{"$or": branches}
}

// Scope is what a CLP check leaves of a class: everything (the zero
// Scope), or only the objects a pointer permission ties to the caller.
type Scope struct {
	rule   *pointerRule
	userID string
}

// Restricted reports whether the caller reaches only some objects.
func (s Scope) Restricted() bool { return s.rule != nil }

// Fields names the pointer-permission fields of a restricted scope.
func (s Scope) Fields() []string {
	if s.rule == nil {
		return nil
	}
	return s.rule.fields
}

// Where is the constraint a query must AND in to stay in scope; nil when
// the scope is not restricted.
func (s Scope) Where() map[string]any {
	if s.rule == nil {
		return nil
	}
	return pointerWhere(s.rule.fields, s.userID)
}

// Unrestricted reports whether every object is in scope (no pointer
// permission narrows the operation), so Allows need not read any.
func (s Scope) Unrestricted() bool { return s.rule == nil }

// Allows reports whether obj is in scope, exactly as the query Where
// would: a listed field holds a Pointer (or an expanded Object) to the
// caller's _User, or is an array holding one.
func (s Scope) Allows(obj schema.Object) bool {
	if s.rule == nil {
		return true
	}
	if s.rule.never || s.userID == "" {
		return false
	}
	for _, f := range s.rule.fields {
		v, ok := schema.Get(obj, f)
		if ok && refersTo(v, s.userID) {
			return true
		}
	}
	return false
}

// refersTo is matcher equality of v against a Pointer to the user.
func refersTo(v any, userID string) bool {
	if isUserRef(v, userID) {
		return true
	}
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if isUserRef(e, userID) {
				return true
			}
		}
	}
	return false
}

func isUserRef(v any, userID string) bool {
	m, ok := v.(map[string]any)
	if !ok || (m["__type"] != "Pointer" && m["__type"] != "Object") {
		return false
	}
	c, _ := m["className"].(string)
	id, _ := m["objectId"].(string)
	return c == ClassUser && id == userID
}

// PointsToUser reports whether one of fields of obj points to the user: a
// map with the user's className and objectId (with or without __type) or
// an array holding one. It is the write-side test (update, delete,
// addField), looser than Scope.Allows, as it has always been.
func PointsToUser(obj schema.Object, fields []string, userID string) bool {
	for _, f := range fields {
		if fieldPointsTo(obj, f, userID) {
			return true
		}
	}
	return false
}

// fieldPointsTo is PointsToUser for one field.
func fieldPointsTo(obj schema.Object, field, userID string) bool {
	switch v := obj[field].(type) {
	case map[string]any:
		return pointsTo(v, ClassUser, userID)
	case []any:
		for _, e := range v {
			if pointsTo(e, ClassUser, userID) {
				return true
			}
		}
	}
	return false
}

func pointsTo(v any, class, id string) bool {
	p, ok := v.(map[string]any)
	return ok && id != "" && p["className"] == class && p["objectId"] == id
}

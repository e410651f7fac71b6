package service

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// draft is one object write being prepared: a private copy of the object
// with the body applied, the field types the write implies, relation
// changes, and what the reply echoes back (results of operators).
type draft struct {
	class    string
	id       string
	original schema.Object // nil when creating
	obj      schema.Object
	fields   map[string]schema.Field
	joins    []joinChange
	echo     map[string]any // nil until setEcho
	// passwordChanged marks a _User write that set a new password.
	passwordChanged bool
	// hashedPassword is the body's password already hashed (WriteOp).
	hashedPassword string
	// authPlan is the body's checked authData (WriteOp).
	authPlan *AuthPlan
	// enc is obj's JSON as committed: the stored version's reply bytes.
	enc []byte
	// originalEnc is original's kept JSON, when it was at hand as the
	// write replaced it (index.Collection.KeptEncoding); nil otherwise.
	originalEnc []byte
}

type joinChange struct {
	key          string
	relatedClass string
	relatedID    string
	present      bool
}

func newDraft(class, id string, original schema.Object) *draft {
	obj := make(schema.Object, len(original)+4)
	for k, v := range original {
		obj[k] = v
	}
	return &draft{class: class, id: id, original: original, obj: obj,
		fields: map[string]schema.Field{}}
}

// setEcho adds a value to the reply (echo is made on first use: most
// writes echo nothing).
func (d *draft) setEcho(key string, v any) {
	if d.echo == nil {
		d.echo = map[string]any{}
	}
	d.echo[key] = v
}

// apply writes a client body into the draft. Keys are applied in sorted
// order so that the outcome never depends on map iteration.
func (d *draft) apply(body map[string]any, creating bool) error {
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if err := d.applyKey(key, body[key], creating); err != nil {
			return err
		}
	}
	return nil
}

func (d *draft) applyKey(key string, val any, creating bool) error {
	if schema.IsReservedKey(key) || key == "id" && creating {
		return schema.Errorf(schema.CodeInvalidKeyName, "%s is an invalid field name.", key)
	}
	if key == "ACL" {
		if isDeleteOp(val) {
			delete(d.obj, "ACL")
			return nil
		}
		acl, err := normalizeACL(val)
		if err != nil {
			return err
		}
		d.obj["ACL"] = acl
		return nil
	}
	if root, rest, dotted := strings.Cut(key, "."); dotted {
		if creating {
			return schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", key)
		}
		return d.applyNested(root, rest, val)
	}
	if !schema.ValidKeyName(key) || schema.IsForbiddenFieldName(key) {
		return schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", key)
	}
	if op, ok := val.(map[string]any); ok {
		if name, isOp := op["__op"]; isOp {
			return d.applyOp(key, name, op)
		}
	}
	v, err := normalizeValue(val, 1)
	if err != nil {
		return err
	}
	return d.set(key, v)
}

// set stores a plain value and records the type it implies.
func (d *draft) set(key string, v any) error {
	f, typed, err := schema.TypeOf(v)
	if err != nil {
		return err
	}
	if f.Type == schema.TypeRelation {
		// A Relation value declares the field; memberships come from ops.
		d.fields[key] = f
		delete(d.obj, key)
		return nil
	}
	if typed {
		d.fields[key] = f
	}
	d.obj[key] = v
	return nil
}

func isDeleteOp(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["__op"] == "Delete"
}

func (d *draft) applyOp(key string, name any, op map[string]any) error {
	switch name {
	case "Delete":
		delete(d.obj, key)
		return nil
	case "Increment", "Add", "AddUnique", "Remove":
		next, implied, err := d.valueOp(key, name.(string), d.obj[key], op)
		if err != nil {
			return err
		}
		d.obj[key] = next
		d.fields[key] = schema.Field{Type: implied}
		d.setEcho(key, next)
		return nil
	case "AddRelation", "RemoveRelation":
		return d.relationOp(key, name.(string), op)
	case "Batch":
		ops, ok := op["ops"].([]any)
		if !ok {
			return schema.Errorf(schema.CodeInvalidJSON, "Batch ops must be an array")
		}
		for _, o := range ops {
			m, ok := o.(map[string]any)
			if !ok || (m["__op"] != "AddRelation" && m["__op"] != "RemoveRelation") {
				return schema.Errorf(schema.CodeInvalidJSON, "Batch may only hold AddRelation and RemoveRelation")
			}
			if err := d.relationOp(key, m["__op"].(string), m); err != nil {
				return err
			}
		}
		return nil
	}
	return schema.Errorf(schema.CodeCommandUnavailable, "The %v operator is not supported yet.", name)
}

// valueOp applies an operator that computes a new value from the current
// one (Increment; Add, AddUnique, Remove on arrays) and returns it with the
// type it implies. key names the field in errors (a dotted path for a
// nested key).
func (d *draft) valueOp(key, name string, cur any, op map[string]any) (any, schema.Type, error) {
	if name == "Increment" {
		amount, ok := op["amount"].(float64)
		if !ok {
			return nil, "", schema.Errorf(schema.CodeInvalidJSON, "incrementing must provide a number")
		}
		var n float64
		switch c := cur.(type) {
		case nil:
		case float64:
			n = c
		default:
			return nil, "", d.mismatch(key, c, schema.TypeNumber)
		}
		sum := n + amount
		if math.IsInf(sum, 0) {
			return nil, "", schema.Errorf(schema.CodeIncorrectType, "incrementing %s.%s by %v overflows", d.class, key, amount)
		}
		return sum, schema.TypeNumber, nil
	}
	items, err := opObjects(op, name)
	if err != nil {
		return nil, "", err
	}
	var list []any
	switch c := cur.(type) {
	case nil:
	case []any:
		list = c
	default:
		return nil, "", d.mismatch(key, c, schema.TypeArray)
	}
	return arrayOp(name, list, items), schema.TypeArray, nil
}

// mismatch is the 111 for an operator whose implied type differs from the
// field's current value, as Parse reports it (an Increment implies Number,
// Add/AddUnique/Remove imply Array).
func (d *draft) mismatch(key string, cur any, implied schema.Type) error {
	have := "an incompatible value"
	if f, ok, err := schema.TypeOf(cur); ok && err == nil {
		have = describe(f)
	}
	return schema.Errorf(schema.CodeIncorrectType, "schema mismatch for %s.%s; expected %s but got %s",
		d.class, key, have, implied)
}

func opObjects(op map[string]any, name string) ([]any, error) {
	raw, ok := op["objects"].([]any)
	if !ok {
		verb := "add"
		if name == "Remove" || name == "RemoveRelation" {
			verb = "remove"
		}
		return nil, schema.Errorf(schema.CodeInvalidJSON, "objects to %s must be an array", verb)
	}
	v, err := normalizeValue(raw, 1)
	if err != nil {
		return nil, err
	}
	return v.([]any), nil
}

// arrayOp never appends into cur's backing array: cur may be shared with
// readers of the committed object.
func arrayOp(name string, cur, items []any) []any {
	out := make([]any, 0, len(cur)+len(items))
	switch name {
	case "Add":
		out = append(append(out, cur...), items...)
	case "AddUnique":
		out = append(out, cur...)
		for _, it := range items {
			if !containsEqual(out, it) {
				out = append(out, it)
			}
		}
	case "Remove":
		for _, c := range cur {
			if !containsEqual(items, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

func containsEqual(list []any, v any) bool {
	for _, e := range list {
		if schema.Equal(e, v) {
			return true
		}
	}
	return false
}

func (d *draft) relationOp(key, name string, op map[string]any) error {
	items, err := opObjects(op, name)
	if err != nil {
		return err
	}
	target := ""
	for _, it := range items {
		p, ok := it.(map[string]any)
		if !ok || p["__type"] != "Pointer" {
			return schema.Errorf(schema.CodeInvalidPointer, "%s needs an array of pointers", name)
		}
		c := p["className"].(string)
		if target != "" && c != target {
			return schema.Errorf(schema.CodeInvalidPointer, "All objects in a relation must have the same class.")
		}
		target = c
		d.joins = append(d.joins, joinChange{key: key, relatedClass: c, relatedID: p["objectId"].(string),
			present: name == "AddRelation"})
	}
	if target != "" {
		d.fields[key] = schema.Field{Type: schema.TypeRelation, TargetClass: target}
	}
	return nil
}

// cannotCreateProperty is Parse Server's message for a dotted key whose
// parent is a string, number or boolean (JavaScript's own TypeError, which
// Parse passes on and the JS SDK's specs expect word for word).
func cannotCreateProperty(key string, parent any) (string, bool) {
	var kind, text string
	switch v := parent.(type) {
	case string:
		kind, text = "string", v
	case float64:
		kind, text = "number", strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		kind, text = "boolean", strconv.FormatBool(v)
	default:
		return "", false
	}
	return fmt.Sprintf("Cannot create property '%s' on %s '%s'", key, kind, text), true
}

// applyNested handles "root.a.b" keys inside an Object field: plain
// values, Delete, Increment and the array operators. Missing objects along
// the path are created; a segment of digits inside an array is a position
// in it (MongoDB's rule, which Parse Server's queries share): past the
// end the array grows with nulls, and Delete leaves a null there. A root
// that is an Array field is Parse Server's schema mismatch (the dotted key
// says Object); any other value on the path that is neither an object nor
// an array is a 111. The reply echoes an operator's result under the
// dotted key, which the SDKs apply at that path.
func (d *draft) applyNested(root, rest string, val any) error {
	if !schema.ValidKeyName(root) {
		return schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", root)
	}
	path := strings.Split(rest, ".")
	for _, p := range path {
		if p == "" || strings.Contains(p, "$") {
			return schema.Errorf(schema.CodeInvalidNestedKey, "Nested keys should not contain the '$' or '.' characters")
		}
	}
	cur, exists := d.obj[root]
	switch cur.(type) {
	case []any:
		return d.mismatch(root, cur, schema.TypeObject)
	case map[string]any, nil:
	default:
		if exists {
			return d.notObject(root, root, rest, path[0], cur)
		}
	}
	leafFn, err := d.nestedLeaf(root+"."+rest, val, len(path)+1)
	if err != nil {
		return err
	}
	out, err := d.setNested(cur, path, root, root, rest, leafFn)
	if err != nil {
		return err
	}
	d.obj[root] = out
	d.fields[root] = schema.Field{Type: schema.TypeObject}
	return nil
}

// maxArrayGrowth bounds how far past an array's end a dotted key may set
// a position (the array grows with nulls up to it), so that one key
// cannot make a huge array.
const maxArrayGrowth = 1000

// nestedLeaf is what a dotted key does at its end: from the old value
// (and whether there was one), the new one, or delete.
type nestedLeaf func(old any, exists bool) (next any, del bool, err error)

func (d *draft) nestedLeaf(full string, val any, depth int) (nestedLeaf, error) {
	op, isMap := val.(map[string]any)
	if isMap && op["__op"] != nil {
		switch name := op["__op"]; name {
		case "Delete":
			return func(any, bool) (any, bool, error) { return nil, true, nil }, nil
		case "Increment", "Add", "AddUnique", "Remove":
			return func(old any, _ bool) (any, bool, error) {
				next, _, err := d.valueOp(full, name.(string), old, op)
				if err != nil {
					return nil, false, err
				}
				d.setEcho(full, next)
				return next, false, nil
			}, nil
		default:
			return nil, schema.Errorf(schema.CodeCommandUnavailable, "The %v operator is not supported on nested keys.", name)
		}
	}
	v, err := normalizeValue(val, depth)
	if err != nil {
		return nil, err
	}
	return func(any, bool) (any, bool, error) { return v, false, nil }, nil
}

// setNested returns a copy of cur (an object, an array, or nil for a new
// object) with leaf applied at path; at names cur for errors. Every map and
// array along the path is copied: the originals may be read concurrently.
func (d *draft) setNested(cur any, path []string, at, root, rest string, leaf nestedLeaf) (any, error) {
	key := path[0]
	switch c := cur.(type) {
	case nil, map[string]any:
		m, _ := c.(map[string]any)
		if m = schema.CopyObject(m); m == nil {
			m = map[string]any{}
		}
		old, exists := m[key]
		next, del, err := d.nestedStep(old, exists, path, at, root, rest, leaf)
		if err != nil {
			return nil, err
		}
		if del {
			delete(m, key)
		} else {
			m[key] = next
		}
		return m, nil
	case []any:
		i, isIndex := schema.ArrayIndex(key)
		if !isIndex {
			return nil, d.notObject(at, root, rest, key, cur)
		}
		if i >= len(c)+maxArrayGrowth {
			return nil, schema.Errorf(schema.CodeInvalidNestedKey, "Position %d of %s.%s is more than %d past the end of its %d elements.",
				i, d.class, at, maxArrayGrowth, len(c))
		}
		s := make([]any, max(len(c), i+1))
		copy(s, c)
		next, del, err := d.nestedStep(s[i], i < len(c), path, at, root, rest, leaf)
		if err != nil {
			return nil, err
		}
		if del {
			next = nil // a position deleted stays, as null
		}
		s[i] = next
		return s, nil
	}
	return nil, d.notObject(at, root, rest, key, cur)
}

// nestedStep is the new value at path[0] of the container at, whose old
// value there is old: leaf's answer at the path's end, else the copy
// setNested makes of old with the rest of the path applied.
func (d *draft) nestedStep(old any, exists bool, path []string, at, root, rest string, leaf nestedLeaf) (any, bool, error) {
	if len(path) == 1 {
		return leaf(old, exists)
	}
	at += "." + path[0]
	switch old.(type) {
	case nil, map[string]any, []any:
	default:
		return nil, false, d.notObject(at, root, rest, path[1], old)
	}
	child, err := d.setNested(old, path[1:], at, root, rest, leaf)
	return child, false, err
}

// notObject is the 111 for a dotted key through cur, a value that holds
// no keys: Parse Server's words for a string, number or boolean.
func (d *draft) notObject(at, root, rest, key string, cur any) error {
	if msg, ok := cannotCreateProperty(key, cur); ok {
		return schema.Errorf(schema.CodeIncorrectType, "%s", msg)
	}
	return schema.Errorf(schema.CodeIncorrectType, "%s.%s is not an Object: the key %s.%s cannot be set inside it", d.class, at, root, rest)
}

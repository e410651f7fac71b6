package where

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// Options tell Parse about the queried class and the caller.
type Options struct {
	// FieldType reports the locked type of a top-level field of the queried
	// class. Nil means nothing is known (schemaless). Types change the
	// meaning of some constraints: a Pointer on a Relation field is a
	// membership test, and $relativeTime is refused on non-Date fields.
	FieldType func(name string) (schema.Type, bool)
	// Now is the clock for $relativeTime; nil means time.Now.
	Now func() time.Time
	// Internal lets the caller query internal keys (leading underscore,
	// e.g. _email_verify_token) and any authData sub-key: master and
	// maintenance callers only.
	Internal bool
}

var (
	internalKeyPattern = regexp.MustCompile(`^_[a-zA-Z0-9_][a-zA-Z0-9_.]*$`)
	authDataIDPattern  = regexp.MustCompile(`^authData\.[a-zA-Z0-9_]+\.id$`)
)

// orParamKeys are query parameters (not fields) that clients sometimes
// put into $or branches; the specification says subqueries of $or must
// not use them.
var orParamKeys = map[string]bool{"limit": true, "skip": true, "order": true, "include": true}

// Parse validates where and builds its constraint tree: an And node whose
// children are, in key order, one node per field (plus one per subquery
// operator) and the $and/$nor/$or/$relatedTo nodes.
//
// A nil or empty where gives an empty And, which matches every object.
// Errors are *schema.Error with Parse's codes and messages. When the JSON
// had the same key twice, encoding/json kept the last one; Parse Server
// behaves the same way (the specification's "only one of colliding
// constraints is applied").
func Parse(where map[string]any, opts Options) (*Node, error) {
	p := &parser{opts: opts}
	if p.opts.Now == nil {
		p.opts.Now = time.Now
	}
	return p.where(where, 1, "")
}

type parser struct {
	opts  Options
	count int // nodes and operators so far, against MaxConstraints
	nears int // $nearSphere operators so far
}

// where parses one where object at the given depth; inOr names the
// enclosing $or/$nor, where geo constraints are refused.
func (p *parser) where(w map[string]any, depth int, inOr string) (*Node, error) {
	if depth > MaxDepth {
		return nil, ErrTooDeep
	}
	if err := p.tick(); err != nil {
		return nil, err
	}
	root := &Node{Kind: KindAnd}
	// Checks run in phases like Parse Server's, so a where with several
	// mistakes reports the same one: ACL, compound formats, key names,
	// then the constraints themselves in key order.
	for k := range w {
		if k == "ACL" || strings.HasPrefix(k, "ACL.") {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "Cannot query on ACL.")
		}
	}
	for _, op := range [...]string{"$or", "$and", "$nor"} {
		if v, ok := w[op]; ok {
			if err := checkCompound(op, v); err != nil {
				return nil, err
			}
		}
	}
	var room [8]string
	keys := sortedKeys(room[:0], w)
	for _, k := range keys {
		if err := p.checkKey(k, inOr); err != nil {
			return nil, err
		}
	}
	for _, k := range keys {
		v := w[k]
		switch k {
		case "$or", "$and", "$nor":
			n, err := p.compound(k, v.([]any), depth, inOr)
			if err != nil {
				return nil, err
			}
			root.Children = append(root.Children, n)
		case "$relatedTo":
			n, err := p.relatedTo(v)
			if err != nil {
				return nil, err
			}
			root.Children = append(root.Children, n)
		default:
			nodes, err := p.field(k, v, inOr)
			if err != nil {
				return nil, err
			}
			root.Children = append(root.Children, nodes...)
		}
	}
	return root, nil
}

func (p *parser) tick() error {
	p.count++
	if p.count > MaxConstraints {
		return ErrTooManyConstraints
	}
	return nil
}

// checkCompound validates the shape of $or/$and/$nor before anything
// inside them is looked at.
func checkCompound(op string, v any) error {
	arr, ok := v.([]any)
	if !ok {
		if op == "$nor" {
			return schema.Errorf(schema.CodeInvalidQuery, "Bad $nor format - use an array of at least 1 value.")
		}
		return schema.Errorf(schema.CodeInvalidQuery, "Bad %s format - use an array value.", op)
	}
	// Parse Server lets an empty $or/$and through to MongoDB, which then
	// fails with an internal error; Quarry refuses it as a bad query.
	if len(arr) == 0 {
		return schema.Errorf(schema.CodeInvalidQuery, "Bad %s format - use an array of at least 1 value.", op)
	}
	if len(arr) > MaxBranches {
		return ErrTooManyBranches
	}
	for _, item := range arr {
		if _, ok := item.(map[string]any); !ok {
			return schema.Errorf(schema.CodeInvalidQuery, "Bad %s format - use an array of objects.", op)
		}
	}
	return nil
}

// checkKey applies Parse's key-name rule plus Quarry's refusals of keys
// that would leak data the storage layout of Parse Server never exposed.
func (p *parser) checkKey(k, inOr string) error {
	switch k {
	case "$or", "$and", "$nor", "$relatedTo", "_rperm", "_wperm":
		return nil
	}
	if !schema.IsName(k, true) && !(p.opts.Internal && internalKeyPattern.MatchString(k)) {
		return schema.Errorf(schema.CodeInvalidKeyName, "Invalid key name: %s", k)
	}
	// Parse Server stores authData apart, so only authData.<provider>.id
	// can ever match there; Quarry keeps authData inside the object and
	// refuses the other paths instead of answering questions about tokens.
	if !p.opts.Internal && (k == "authData" || strings.HasPrefix(k, "authData.")) && !authDataIDPattern.MatchString(k) {
		return schema.Errorf(schema.CodeInvalidQuery, "Cannot query on %s.", k)
	}
	// Query parameters misplaced into $or branches. A class that really has
	// such a field may still query it.
	if inOr == "$or" && orParamKeys[k] {
		if _, known := p.fieldType(k); !known {
			return schema.Errorf(schema.CodeInvalidQuery, "$or subqueries cannot use limit, skip, order or include: %s", k)
		}
	}
	return nil
}

func (p *parser) fieldType(path string) (schema.Type, bool) {
	if p.opts.FieldType == nil || strings.Contains(path, ".") {
		return "", false
	}
	return p.opts.FieldType(path)
}

func (p *parser) compound(op string, branches []any, depth int, inOr string) (*Node, error) {
	kind := KindAnd
	switch op {
	case "$or":
		kind = KindOr
	case "$nor":
		kind = KindNor
	}
	if op != "$and" {
		inOr = op
	}
	n := &Node{Kind: kind}
	for _, b := range branches {
		child, err := p.where(b.(map[string]any), depth+1, inOr)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, child)
	}
	return n, nil
}

func (p *parser) relatedTo(v any) (*Node, error) {
	bad := schema.Errorf(schema.CodeInvalidQuery, "improper usage of $relatedTo")
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad
	}
	obj, _ := m["object"].(map[string]any)
	key, _ := m["key"].(string)
	if key == "" || obj == nil {
		return nil, bad
	}
	ref, ok := pointerRef(obj)
	if !ok {
		class, _ := obj["className"].(string)
		switch id, has := obj["objectId"]; {
		case obj["__type"] != "Pointer" || class == "":
			return nil, bad
		case has && id != nil:
			// An operator or a number where an id goes ({"$ne": null}) would
			// reach every parent's members.
			return nil, schema.Errorf(schema.CodeInvalidQuery, "$relatedTo needs a pointer whose objectId is a string")
		}
		// A parent not saved yet (the SDK's relation query on a new or
		// cloned object) has no members: the query matches nothing.
		ref = PointerRef{ClassName: class}
	}
	if err := p.tick(); err != nil {
		return nil, err
	}
	return &Node{Kind: KindRelatedTo, Related: &RelatedTo{Object: ref, Key: key}}, nil
}

// pointerRef reads a Pointer (or an expanded object) value.
func pointerRef(m map[string]any) (PointerRef, bool) {
	if m == nil || (m["__type"] != "Pointer" && m["__type"] != "Object") {
		return PointerRef{}, false
	}
	c, ok1 := m["className"].(string)
	id, ok2 := m["objectId"].(string)
	if !ok1 || !ok2 || c == "" || id == "" {
		return PointerRef{}, false
	}
	return PointerRef{ClassName: c, ObjectID: id}, true
}

// sortedKeys appends m's keys to dst in order: the parse's order does not
// depend on map iteration. A where's maps are small, so dst's room (on
// the caller's stack) usually holds them.
func sortedKeys(dst []string, m map[string]any) []string {
	for k := range m {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}

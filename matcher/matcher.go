package matcher

import (
	"errors"
	"fmt"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// ErrNoResolver is returned by Compile for a tree with subqueries,
// $relatedTo or relation membership when no Resolver was given (LiveQuery).
var ErrNoResolver = schema.Errorf(schema.CodeInvalidQuery, "subqueries are not supported here")

// Resolver answers the parts of a where that need other objects. Compile
// calls it once per subquery or relation constraint and keeps the answer,
// so a Matcher sees a snapshot taken at compile time.
type Resolver interface {
	// InQuery returns the objects matching sub (no limit, the caller's
	// access rights) as the class and ids that pointers to them carry.
	// The class differs from sub.ClassName when RedirectClassNameForKey
	// is set.
	InQuery(sub *where.Subquery) (className string, ids []string, err error)
	// Select returns the values at sub.Key of the objects matching sub,
	// skipping objects without the key. Array values are spread, as
	// Parse Server does.
	Select(sub *where.Subquery) ([]any, error)
	// RelatedTo returns the objectIds in relation key of the owner object.
	RelatedTo(ownerClass, ownerID, key string) ([]string, error)
	// RelationOwners returns the objectIds of the queried class's objects
	// whose relation key holds at least one of relatedIDs. The Resolver
	// knows the queried class; the matcher does not.
	RelationOwners(key string, relatedIDs []string) ([]string, error)
}

// Matcher is a compiled where. The zero Matcher matches every object. It
// is immutable and safe for concurrent use.
type Matcher struct {
	pred func(schema.Object) bool
}

// Match reports whether obj satisfies the where. obj is a stored object in
// its REST encoding (timestamps as strings are read as Dates).
func (m Matcher) Match(obj schema.Object) bool {
	if m.pred == nil {
		return true
	}
	return m.pred(obj)
}

// Compile builds the predicate for n. A nil n matches everything. r may be
// nil when n has no subqueries, $relatedTo or relation membership; with
// one of them Compile returns ErrNoResolver. Resolver errors are returned
// as they are.
func Compile(n *where.Node, r Resolver) (Matcher, error) {
	if n == nil {
		return Matcher{}, nil
	}
	c := compiler{r: r}
	p, err := c.node(n)
	if err != nil {
		return Matcher{}, err
	}
	return Matcher{pred: p}, nil
}

type compiler struct {
	r Resolver
}

type pred = func(schema.Object) bool

// valuePred tests the value at a field's path; present is false when the
// path is missing. obj is passed for tests that need the objectId.
type valuePred = func(obj schema.Object, v any, present bool) bool

func (c *compiler) node(n *where.Node) (pred, error) {
	switch n.Kind {
	case where.KindAnd, where.KindOr, where.KindNor:
		preds := make([]pred, len(n.Children))
		for i, ch := range n.Children {
			p, err := c.node(ch)
			if err != nil {
				return nil, err
			}
			preds[i] = p
		}
		return combine(n.Kind, preds), nil
	case where.KindField:
		return c.field(n)
	case where.KindRelatedTo:
		if c.r == nil {
			return nil, ErrNoResolver
		}
		if n.Related == nil {
			return nil, malformed(n)
		}
		rel := n.Related
		ids, err := c.r.RelatedTo(rel.Object.ClassName, rel.Object.ObjectID, rel.Key)
		if err != nil {
			return nil, err
		}
		set := idSet(ids)
		return func(obj schema.Object) bool { return set.hasID(obj) }, nil
	case where.KindInQuery, where.KindNotInQuery, where.KindSelect, where.KindDontSelect:
		if c.r == nil {
			return nil, ErrNoResolver
		}
		if n.Sub == nil {
			return nil, malformed(n)
		}
		var vals []any
		if n.Kind == where.KindInQuery || n.Kind == where.KindNotInQuery {
			class, ids, err := c.r.InQuery(n.Sub)
			if err != nil {
				return nil, err
			}
			vals = make([]any, len(ids))
			for i, id := range ids {
				vals[i] = schema.Pointer(class, id)
			}
		} else {
			var err error
			if vals, err = c.r.Select(n.Sub); err != nil {
				return nil, err
			}
			vals = Spread(vals)
		}
		set := newValueSet(vals)
		path := n.Path
		negate := n.Kind == where.KindNotInQuery || n.Kind == where.KindDontSelect
		return func(obj schema.Object) bool {
			v, ok := schema.Get(obj, path)
			return set.in(v, ok) != negate
		}, nil
	}
	return nil, malformed(n)
}

func malformed(n *where.Node) error {
	return fmt.Errorf("matcher: malformed %s node", n.Kind)
}

func combine(kind where.Kind, preds []pred) pred {
	switch kind {
	case where.KindOr:
		return func(obj schema.Object) bool {
			for _, p := range preds {
				if p(obj) {
					return true
				}
			}
			return false
		}
	case where.KindNor:
		return func(obj schema.Object) bool {
			for _, p := range preds {
				if p(obj) {
					return false
				}
			}
			return true
		}
	}
	if len(preds) == 1 {
		return preds[0]
	}
	return func(obj schema.Object) bool {
		for _, p := range preds {
			if !p(obj) {
				return false
			}
		}
		return true
	}
}

func (c *compiler) field(n *where.Node) (pred, error) {
	preds := make([]valuePred, 0, len(n.Ops))
	for i := range n.Ops {
		p, err := c.op(n.Path, &n.Ops[i])
		if err != nil {
			return nil, err
		}
		preds = append(preds, p)
	}
	path := n.Path
	return func(obj schema.Object) bool {
		v, ok := schema.Get(obj, path)
		for _, p := range preds {
			if !p(obj, v, ok) {
				return false
			}
		}
		return true
	}, nil
}

var errOperand = errors.New("operand missing")

func (c *compiler) op(path string, op *where.Op) (valuePred, error) {
	bad := func() (valuePred, error) {
		return nil, fmt.Errorf("matcher: %s on %s: %w", op.Code, path, errOperand)
	}
	switch op.Code {
	case where.OpEq, where.OpNe:
		q := op.Value
		negate := op.Code == where.OpNe
		return func(_ schema.Object, v any, ok bool) bool { return equalAny(v, ok, q) != negate }, nil
	case where.OpLt, where.OpLte, where.OpGt, where.OpGte:
		return rangePred(op.Code, op.Value), nil
	case where.OpIn, where.OpNin:
		set := newValueSet(op.Values)
		negate := op.Code == where.OpNin
		return func(_ schema.Object, v any, ok bool) bool { return set.in(v, ok) != negate }, nil
	case where.OpAll:
		return allPred(op.Values), nil
	case where.OpAllRegex:
		for _, re := range op.Regexes {
			if re == nil || re.Regexp() == nil {
				return bad()
			}
		}
		res := op.Regexes
		return func(_ schema.Object, v any, ok bool) bool {
			if !ok || len(res) == 0 {
				return false
			}
			for _, re := range res {
				if !regexAny(v, re) {
					return false
				}
			}
			return true
		}, nil
	case where.OpContainedBy:
		set := newValueSet(op.Values)
		return func(_ schema.Object, v any, ok bool) bool {
			// Parse sends this to MongoDB as $nor of $elemMatch $nin: only
			// an array with an element outside the list fails.
			arr, isArr := v.([]any)
			if !ok || !isArr {
				return true
			}
			for _, e := range arr {
				if !set.has(e) {
					return false
				}
			}
			return true
		}, nil
	case where.OpExists:
		want := op.Exists
		return func(_ schema.Object, _ any, ok bool) bool { return ok == want }, nil
	case where.OpRegex:
		if op.Regex == nil || op.Regex.Regexp() == nil {
			return bad()
		}
		re := op.Regex
		return func(_ schema.Object, v any, ok bool) bool { return ok && regexAny(v, re) }, nil
	case where.OpText:
		if op.Text == nil {
			return bad()
		}
		t := compileText(op.Text)
		return func(_ schema.Object, v any, ok bool) bool { return ok && t.match(v) }, nil
	case where.OpNearSphere, where.OpWithinBox, where.OpWithinPolygon, where.OpWithinSphere, where.OpGeoIntersects:
		test, err := geoTest(op)
		if err != nil {
			return bad()
		}
		return func(_ schema.Object, v any, ok bool) bool { return ok && test(v) }, nil
	case where.OpRelationIn, where.OpRelationNin:
		if c.r == nil {
			return nil, ErrNoResolver
		}
		ids := make([]string, 0, len(op.Values))
		for _, v := range op.Values {
			if m, ok := v.(map[string]any); ok {
				if id, ok := m["objectId"].(string); ok {
					ids = append(ids, id)
				}
			}
		}
		owners, err := c.r.RelationOwners(path, ids)
		if err != nil {
			return nil, err
		}
		set := idSet(owners)
		negate := op.Code == where.OpRelationNin
		return func(obj schema.Object, _ any, _ bool) bool { return set.hasID(obj) != negate }, nil
	}
	return bad()
}

// Spread flattens array values one level, as Parse Server flattens the
// $in it builds from $select results (the SQL translation does the same).
func Spread(vals []any) []any {
	out := make([]any, 0, len(vals))
	for _, v := range vals {
		if arr, ok := v.([]any); ok {
			out = append(out, arr...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

type ids map[string]struct{}

func idSet(list []string) ids {
	s := make(ids, len(list))
	for _, id := range list {
		s[id] = struct{}{}
	}
	return s
}

func (s ids) hasID(obj schema.Object) bool {
	id, ok := obj["objectId"].(string)
	if !ok {
		return false
	}
	_, in := s[id]
	return in
}

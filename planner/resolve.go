package planner

import (
	"sort"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// resolve runs every subquery and relation lookup once and rewrites the
// tree so that only plain field constraints remain: $inQuery becomes $in
// of pointers, $select $in of values, $relatedTo objectId $in, and a
// pointer on a Relation field becomes objectId $in of the owners. The
// matcher then needs no resolver, and the access chooser sees id sets
// (valueSet: ids kept as strings, a relation's read as the plan goes).
func (p *planner) resolve(class string, n *where.Node, depth int) (*where.Node, error) {
	if depth > MaxSubqueryDepth {
		return nil, ErrSubqueryTooDeep
	}
	switch n.Kind {
	case where.KindAnd, where.KindOr, where.KindNor:
		out := &where.Node{Kind: n.Kind, Children: make([]*where.Node, len(n.Children))}
		for i, c := range n.Children {
			r, err := p.resolve(class, c, depth)
			if err != nil {
				return nil, err
			}
			out.Children[i] = r
		}
		return out, nil
	case where.KindRelatedTo:
		rel := n.Related
		owner, key, id := rel.Object.ClassName, rel.Key, rel.Object.ObjectID
		if p.q.RelatedVisible != nil && !p.q.RelatedVisible(owner, key, id) {
			return p.setNode("objectId", where.OpIn, newValueSet("", nil)), nil
		}
		size := p.src.RelatedCount(owner, key, id)
		if size > p.subqueryCap() {
			return nil, p.errSubqueryTooLarge()
		}
		// The members stream from the relation index in id order when the
		// plan reads them; most plans stop after skip+limit of them.
		return p.setNode("objectId", where.OpIn, &valueSet{size: size, stream: func(fn func(string) bool) {
			p.src.Related(owner, key, id, fn)
		}}), nil
	case where.KindInQuery, where.KindNotInQuery:
		cls, objs, err := p.subquery(n.Sub, depth)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(objs))
		for i, o := range objs {
			ids[i], _ = o["objectId"].(string)
		}
		code := where.OpIn
		if n.Kind == where.KindNotInQuery {
			code = where.OpNin
		}
		return p.setNode(n.Path, code, newValueSet(cls, ids)), nil
	case where.KindSelect, where.KindDontSelect:
		_, objs, err := p.subquery(n.Sub, depth)
		if err != nil {
			return nil, err
		}
		vals := make([]any, 0, len(objs))
		for _, o := range objs {
			v, ok := schema.Get(o, n.Sub.Key)
			if !ok {
				continue
			}
			// An array value contributes its elements, as Parse flattens
			// $select results one level.
			if arr, isArr := v.([]any); isArr {
				vals = append(vals, arr...)
			} else {
				vals = append(vals, v)
			}
		}
		code := where.OpIn
		if n.Kind == where.KindDontSelect {
			code = where.OpNin
		}
		return inNode(n.Path, code, vals), nil
	case where.KindField:
		return p.resolveField(class, n)
	}
	return n, nil
}

// resolveField turns relation-membership operators into objectId sets.
func (p *planner) resolveField(class string, n *where.Node) (*where.Node, error) {
	var rest []where.Op
	var extra []*where.Node
	for _, op := range n.Ops {
		if op.Code != where.OpRelationIn && op.Code != where.OpRelationNin {
			rest = append(rest, op)
			continue
		}
		var ids []string
		for _, v := range op.Values {
			ptr, _ := v.(map[string]any)
			id, _ := ptr["objectId"].(string)
			got := 0
			p.src.Owners(class, n.Path, id, func(owner string) bool {
				ids = append(ids, owner)
				got++
				return got <= p.subqueryCap()
			})
			if len(ids) > p.subqueryCap() {
				// Owners of several values overlap: count them once.
				sort.Strings(ids)
				if ids = dedupe(ids); len(ids) > p.subqueryCap() {
					return nil, p.errSubqueryTooLarge()
				}
			}
		}
		set := newValueSet("", ids)
		code := where.OpIn
		if op.Code == where.OpRelationNin {
			code = where.OpNin
		}
		extra = append(extra, p.setNode("objectId", code, set))
	}
	if len(extra) == 0 {
		return n, nil
	}
	and := &where.Node{Kind: where.KindAnd, Children: extra}
	if len(rest) > 0 {
		field := *n
		field.Ops = rest
		and.Children = append(and.Children, &field)
	}
	return and, nil
}

// valueSet is the operand of an $in or $nin that resolve built from a
// subquery or a relation: objectIds (of class's objects when class is set,
// so the values are Pointers to them), kept as strings, or streamed from a
// relation, rather than boxed into values. The access chooser looks them up
// as ids or index keys; only a set left in the residual (or shown by
// explain) is boxed, by fillSets.
type valueSet struct {
	class string
	// ids are sorted and unique; nil when stream yields them instead, in
	// the same order.
	ids    []string
	stream func(fn func(id string) bool)
	size   int
}

// newValueSet sorts and dedupes ids in place.
func newValueSet(class string, ids []string) *valueSet {
	if !sort.StringsAreSorted(ids) {
		sort.Strings(ids)
	}
	ids = dedupe(ids)
	return &valueSet{class: class, ids: ids, size: len(ids)}
}

// each calls fn with the ids in order until it returns false.
func (s *valueSet) each(fn func(id string) bool) {
	if s.ids == nil && s.stream != nil {
		s.stream(fn)
		return
	}
	for _, id := range s.ids {
		if !fn(id) {
			return
		}
	}
}

// values are the set's members as where values: ids, or Pointers.
func (s *valueSet) values() []any {
	if s.class == "" {
		return s.mapIDs(func(id string) any { return id })
	}
	return s.mapIDs(func(id string) any { return schema.Pointer(s.class, id) })
}

// keys are the set's members as index keys on a field holding them.
func (s *valueSet) keys() []any {
	switch {
	case s.class == "":
		return s.mapIDs(func(id string) any { return id })
	case s.ids != nil:
		return index.PointerKeys(s.class, s.ids)
	}
	return s.mapIDs(func(id string) any { return index.PointerKey(s.class, id) })
}

func (s *valueSet) mapIDs(f func(id string) any) []any {
	out := make([]any, 0, s.size)
	s.each(func(id string) bool {
		out = append(out, f(id))
		return true
	})
	return out
}

// setNode is path $in (or $nin) set, with set's values boxed only when
// needed (see valueSet).
func (p *planner) setNode(path string, code where.OpCode, set *valueSet) *where.Node {
	n := &where.Node{Kind: where.KindField, Path: path, Ops: []where.Op{{Code: code}}}
	if p.sets == nil {
		p.sets = map[*where.Op]*valueSet{}
	}
	p.sets[&n.Ops[0]] = set
	return n
}

// fillSets gives every set operator under n its boxed values.
func (p *planner) fillSets(n *where.Node) {
	n.Walk(func(c *where.Node) bool {
		for i := range c.Ops {
			if set, ok := p.sets[&c.Ops[i]]; ok && c.Ops[i].Values == nil {
				c.Ops[i].Values = set.values()
			}
		}
		return true
	})
}

func inNode(path string, code where.OpCode, values []any) *where.Node {
	if values == nil {
		values = []any{}
	}
	return &where.Node{Kind: where.KindField, Path: path, Ops: []where.Op{{Code: code, Values: values}}}
}

// subquery runs a nested query with no limit, capped by MaxSubqueryResults,
// and returns the class it ran on with its results, in no particular order.
func (p *planner) subquery(sub *where.Subquery, depth int) (string, []schema.Object, error) {
	cls := sub.ClassName
	if key := sub.RedirectClassNameForKey; key != "" {
		// Parse's relation queries name the owning class and the relation
		// key; the objects queried are the relation's targets.
		t, ok := p.src.FieldType(cls, key)
		target := p.src.RelationTarget(cls, key)
		if !ok || t != schema.TypeRelation || target == "" {
			return "", nil, schema.Errorf(schema.CodeInvalidQuery, "redirectClassNameForKey %q is not a relation of %s", key, cls)
		}
		cls = target
	}
	q := Query{Class: cls, Where: sub.Where, Limit: p.subqueryCap() + 1, Exempt: p.q.Exempt, Guard: p.q.Guard, RelatedVisible: p.q.RelatedVisible,
		FlagDecides: p.q.FlagDecides}
	if ext, ok := p.src.(External); ok {
		if objs, handled, err := ext.External(q); handled {
			if err == nil && len(objs) > p.subqueryCap() {
				err = p.errSubqueryTooLarge()
			}
			return cls, objs, err
		}
	}
	child := &planner{src: p.src, opts: p.opts, q: q, deadline: p.deadline}
	plan, err := child.plan(depth + 1)
	if err != nil {
		return "", nil, err
	}
	objs, err := plan.collectSet(p.subqueryCap() + 1)
	if err != nil {
		return "", nil, err
	}
	if len(objs) > p.subqueryCap() {
		return "", nil, p.errSubqueryTooLarge()
	}
	return cls, objs, nil
}

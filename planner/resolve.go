package planner

import (
	"github.com/quarrydata/quarry/planner/where"
	"github.com/quarrydata/quarry/schema"
)

// resolve runs every subquery and relation lookup once and rewrites the
// tree so that only plain field constraints remain: $inQuery becomes $in
// of pointers, $select $in of values, $relatedTo objectId $in, and a
// pointer on a Relation field becomes objectId $in of the owners. The
// matcher then needs no resolver, and the access chooser sees id sets.
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
		var ids []string
		var err error
		p.src.Related(rel.Object.ClassName, rel.Key, rel.Object.ObjectID, func(id string) bool {
			if len(ids) >= p.subqueryCap() {
				err = p.errSubqueryTooLarge()
				return false
			}
			ids = append(ids, id)
			return true
		})
		if err != nil {
			return nil, err
		}
		return p.idSetNode(ids), nil
	case where.KindInQuery, where.KindNotInQuery:
		cls, objs, err := p.subquery(n.Sub, depth)
		if err != nil {
			return nil, err
		}
		ptrs := make([]any, len(objs))
		for i, o := range objs {
			ptrs[i] = schema.Pointer(cls, o["objectId"].(string))
		}
		code := where.OpIn
		if n.Kind == where.KindNotInQuery {
			code = where.OpNin
		}
		return inNode(n.Path, code, ptrs), nil
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
		owners := map[string]bool{}
		for _, v := range op.Values {
			ptr, _ := v.(map[string]any)
			id, _ := ptr["objectId"].(string)
			p.src.Owners(class, n.Path, id, func(owner string) bool {
				owners[owner] = true
				return len(owners) <= p.subqueryCap()
			})
		}
		if len(owners) > p.subqueryCap() {
			return nil, p.errSubqueryTooLarge()
		}
		ids := make([]any, 0, len(owners))
		for id := range owners {
			ids = append(ids, id)
		}
		code := where.OpIn
		if op.Code == where.OpRelationNin {
			code = where.OpNin
		}
		extra = append(extra, inNode("objectId", code, ids))
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

// idSetNode is objectId $in ids, with the ids kept as strings: boxing
// thousands of ids into []any is wasted when the id access (exact) takes
// the constraint out of the residual. fillIDSets boxes them only for a node
// that stays in the residual, or for explain.
func (p *planner) idSetNode(ids []string) *where.Node {
	n := &where.Node{Kind: where.KindField, Path: "objectId", Ops: []where.Op{{Code: where.OpIn}}}
	if p.idSets == nil {
		p.idSets = map[*where.Op][]string{}
	}
	p.idSets[&n.Ops[0]] = ids
	return n
}

// fillIDSets gives every id-set operator under n its boxed values.
func (p *planner) fillIDSets(n *where.Node) {
	n.Walk(func(c *where.Node) bool {
		for i := range c.Ops {
			if ids, ok := p.idSets[&c.Ops[i]]; ok && c.Ops[i].Values == nil {
				vals := make([]any, len(ids))
				for j, id := range ids {
					vals[j] = id
				}
				c.Ops[i].Values = vals
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
// and returns the class it ran on with its results.
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
	q := Query{Class: cls, Where: sub.Where, Limit: p.subqueryCap() + 1, Exempt: p.q.Exempt, Guard: p.q.Guard}
	child := &planner{src: p.src, opts: p.opts, q: q, deadline: p.deadline}
	plan, err := child.plan(depth + 1)
	if err != nil {
		return "", nil, err
	}
	res, err := plan.Run()
	if err != nil {
		return "", nil, err
	}
	if len(res.Objects) > p.subqueryCap() {
		return "", nil, p.errSubqueryTooLarge()
	}
	return cls, res.Objects, nil
}

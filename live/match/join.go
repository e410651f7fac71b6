package match

import (
	"strings"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Join is one live join of a subscription: a top-level $inQuery,
// $notInQuery, $select, $dontSelect or $relatedTo. The subscribed (outer)
// object matches when the value at Path is (or, negated, is not) a
// pointer to an object of the inner class matching Inner ($inQuery), or
// equal to the value at Key of such an object ($select). For $relatedTo,
// Inner matches the relation's owner alone ({objectId: Owner.ObjectID} on
// its class), Key is the owner's Relation field and Path is "objectId":
// the outer object matches when its id is a member of that relation.
// Package live keeps the set of inner objects matching Inner (and a
// relation's members) and tests it; this package only compiles.
type Join struct {
	Kind  where.Kind       // where.KindInQuery, KindNotInQuery, KindSelect, KindDontSelect or KindRelatedTo
	Path  string           // the outer field
	Key   string           // $select's key in the inner objects; $relatedTo's relation field
	Inner *Query           // the subquery, compiled on its class
	Owner where.PointerRef // $relatedTo: the relation's owner
}

// IsRelation reports whether the join is a $relatedTo: the outer objects
// are the members of the relation Key of Owner.
func (j Join) IsRelation() bool { return j.Kind == where.KindRelatedTo }

// Negated reports whether the join keeps outer objects that do not
// reach the inner set ($notInQuery, $dontSelect).
func (j Join) Negated() bool {
	return j.Kind == where.KindNotInQuery || j.Kind == where.KindDontSelect
}

// IsSelect reports whether the join compares values ($select,
// $dontSelect) rather than pointers.
func (j Join) IsSelect() bool { return j.Kind == where.KindSelect || j.Kind == where.KindDontSelect }

// Joins are the query's live joins; Match tests only the rest of the
// where, so an object matches the whole query when Match holds and every
// join holds.
func (q *Query) Joins() []Join { return q.joins }

// ValueKeys calls fn with the equality keys of v (matcher.HashKey) and,
// for an array, of each element: how a $select compares values.
func ValueKeys(v any, fn func(string)) { valueKeys(v, fn) }

// splitJoins takes the top-level subqueries out of tree as joins and
// returns the rest. A subquery anywhere else ($or, $nor), a nested one,
// or one with redirectClassNameForKey stays in the tree and is refused.
func (q *Query) splitJoins(tree *where.Node, roots map[string]bool) (*where.Node, error) {
	if tree.Kind == where.KindRelatedTo {
		tree = &where.Node{Kind: where.KindAnd, Children: []*where.Node{tree}}
	}
	if tree.Kind != where.KindAnd {
		return tree, nil
	}
	rest := &where.Node{Kind: where.KindAnd}
	for _, ch := range tree.Children {
		switch ch.Kind {
		case where.KindInQuery, where.KindNotInQuery, where.KindSelect, where.KindDontSelect:
		case where.KindRelatedTo:
			j, err := q.relationJoin(ch)
			if err != nil {
				return nil, err
			}
			q.joins = append(q.joins, j)
			continue
		default:
			rest.Children = append(rest.Children, ch)
			continue
		}
		if ch.Sub == nil || ch.Sub.RedirectClassNameForKey != "" {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "%s with redirectClassNameForKey is not supported in LiveQuery subscriptions", ch.Kind)
		}
		inner, err := Compile(ch.Sub.ClassName, ch.Sub.Where, Options{Now: q.opts.Now, NearSphereMax: q.opts.NearSphereMax})
		if err != nil {
			if pe, ok := err.(*schema.Error); ok && strings.Contains(pe.Message, "not supported in LiveQuery") {
				what, _, _ := strings.Cut(pe.Message, " is not supported in LiveQuery")
				return nil, schema.Errorf(schema.CodeInvalidQuery, "a live join's subquery may not hold %s", what)
			}
			return nil, err
		}
		if len(inner.joins) > 0 && inner.joins[0].IsRelation() {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "a live join's subquery may not hold $relatedTo")
		}
		if len(inner.joins) > 0 {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "nested subqueries are not supported in LiveQuery subscriptions")
		}
		if inner.relative {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "$relativeTime in a live join's subquery is not supported")
		}
		root, _, _ := strings.Cut(ch.Path, ".")
		roots[root] = true
		q.joins = append(q.joins, Join{Kind: ch.Kind, Path: ch.Path, Key: ch.Sub.Key, Inner: inner})
	}
	return rest, nil
}

// relationJoin compiles a top-level $relatedTo: its inner query is the
// owner itself, so a change of the owner (where a relation edit shows, as
// the owner's update) reaches the join through the inner index.
func (q *Query) relationJoin(n *where.Node) (Join, error) {
	rel := n.Related
	if rel == nil || !schema.ValidClassName(rel.Object.ClassName) || rel.Key == "" {
		return Join{}, schema.Errorf(schema.CodeInvalidQuery, "improper usage of $relatedTo")
	}
	for _, j := range q.joins {
		if j.IsRelation() {
			return Join{}, schema.Errorf(schema.CodeInvalidQuery, "one $relatedTo per LiveQuery subscription")
		}
	}
	owner, err := Compile(rel.Object.ClassName, map[string]any{"objectId": rel.Object.ObjectID}, Options{Now: q.opts.Now})
	if err != nil {
		return Join{}, err
	}
	return Join{Kind: where.KindRelatedTo, Path: "objectId", Key: rel.Key, Inner: owner, Owner: rel.Object}, nil
}

// HashKey is matcher.HashKey: the equality key of a value.
func HashKey(v any) (string, bool) { return matcher.HashKey(v) }

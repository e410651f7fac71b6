package planner

// Planning: Compile chooses a query's access (which index scan, lookup,
// union or join), the residual filter the access leaves, whether an index
// serves the order, and refuses plans over the scan budget.

import (
	"fmt"
	"time"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

type planner struct {
	src      Source
	opts     Options
	q        Query
	coll     Collection
	deadline time.Time
	// sets holds the operands of the $in/$nin operators that resolve built
	// from subqueries and relations (see valueSet), keyed by the operator.
	sets map[*where.Op]*valueSet
}

// Compile parses, resolves and plans a query. Subqueries run here, once.
func Compile(src Source, q Query, opts Options) (*Plan, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// The deadline is wall-clock time, as the scans check it: opts.Now is
	// the clock of $relativeTime and may be fixed (tests, replays).
	p := &planner{src: src, opts: opts, q: q, deadline: time.Now().Add(opts.Timeout)}
	return p.plan(0)
}

func (p *planner) plan(depth int) (*Plan, error) {
	q := p.q
	var visible func(schema.Object) bool
	if q.Guard != nil {
		vis, extra, err := q.Guard(q.Class, q.Where, depth > 0)
		if err != nil {
			return nil, err
		}
		visible = vis
		if extra != nil {
			if len(q.Where) == 0 {
				q.Where = extra
			} else {
				q.Where = map[string]any{"$and": []any{q.Where, extra}}
			}
		}
	}
	tree, err := where.Parse(q.Where, where.Options{
		FieldType: func(name string) (schema.Type, bool) { return p.src.FieldType(q.Class, name) },
		Now:       p.opts.Now,
		Internal:  q.Exempt,
	})
	if err != nil {
		return nil, err
	}
	// A $nearSphere without a maximum gets the configured one (geo.go);
	// LiveQuery applies the same limit, so both agree.
	matcher.LimitNearSphere(tree, p.nearSphereMax())
	p.coll = p.src.Collection(q.Class)
	if p.coll == nil {
		return &Plan{q: q, access: &access{kind: accessEmpty, why: "the class has no objects"}, root: tree,
			match: func(schema.Object) bool { return false }}, nil
	}
	resolved, err := p.resolve(q.Class, tree, depth)
	if err != nil {
		return nil, err
	}
	pl := &Plan{q: q, coll: p.coll, root: resolved, deadline: p.deadline}
	pl.access = p.chooseAccess(resolved)
	for _, k := range q.Order {
		key := matcher.SortKey{Path: k.Path, Desc: k.Desc}
		if k.Path == "$score" {
			if pl.scorer == nil {
				pl.scorer = matcher.NewTextScorer(resolved)
			}
			if pl.scorer != nil {
				key.Score = pl.scorer.Score
			}
		}
		pl.sortKeys = append(pl.sortKeys, key)
	}
	pl.residual = residual(resolved, pl.access)
	p.fillSets(pl.residual)
	pl.filler = p
	m, err := matcher.Compile(pl.residual, nil)
	if err != nil {
		return nil, err
	}
	pl.match = m.Match
	if visible != nil {
		// Objects the caller may not see are filtered like any residual
		// constraint, so the access path (and its indexes) stays the same.
		pl.visible = true
		pl.guard = visible // geo.go combines it with its own residual
		pl.flagDecides = q.FlagDecides != nil && q.FlagDecides(q.Class)
		pl.match = func(o schema.Object) bool { return visible(o) && m.Match(o) }
	}
	pl.near = nearOf(resolved)
	pl.orderIndex = p.orderServed(pl.access)
	if pl.access.kind != accessGeo {
		// Candidates the residual drops are dropped on their bytes
		// (bytes.go); runGeo makes its own test of what the covering
		// leaves.
		pl.bytes = newByteTest(pl.residual, m.Match)
	}
	pl.undecoded = q.Undecoded && visible == nil && pl.near == nil && (len(q.Order) == 0 || pl.orderIndex) &&
		(pl.residual.Kind == where.KindAnd && len(pl.residual.Children) == 0 || pl.bytes != nil)
	if err := p.checkBudget(pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// residual is the part of the where the access does not already decide:
// a top-level constraint whose access is tight (exactly its matches) is
// dropped; everything else stays for the matcher.
func residual(root *where.Node, a *access) *where.Node {
	if w := a.within; w != nil && w.tight {
		// The intersected side is decided by the scan too.
		root = residual(root, w)
	}
	if !a.tight || a.op == nil && a.node == nil {
		return root
	}
	for i, c := range root.Children {
		if c == a.node || c.Kind == where.KindField && len(c.Ops) == 1 && &c.Ops[0] == a.op {
			out := &where.Node{Kind: where.KindAnd, Children: make([]*where.Node, 0, len(root.Children)-1)}
			out.Children = append(append(out.Children, root.Children[:i]...), root.Children[i+1:]...)
			return out
		}
	}
	return root
}

// orderServed reports whether candidates can stream in the requested
// order from one index scan, so the plan may stop at skip+limit.
func (p *planner) orderServed(a *access) bool {
	if len(p.q.Order) != 1 {
		return false
	}
	path := p.q.Order[0].Path
	if !p.coll.HasIndex(path) || p.coll.Multikey(path) || !index.IndexesMissing {
		return false
	}
	return a.kind == accessFull || (a.kind == accessRanges && a.path == path && len(a.ranges) == 1 && a.within == nil)
}

// streaming reports whether results arrive already in their final order,
// so the plan may stop at skip+limit. Without an order the final order is
// objectId ascending (or distance for $nearSphere): full scans walk the
// objectId index and id sets are sorted, other accesses need the heap.
func (pl *Plan) streaming() bool {
	if len(pl.q.Order) == 0 {
		if pl.near != nil {
			return false
		}
		return pl.access.kind == accessFull || pl.access.kind == accessIDs
	}
	return pl.orderIndex
}

// checkBudget refuses, before any work, a plan that must examine more
// objects than the budget allows with no index to narrow it.
func (p *planner) checkBudget(pl *Plan) error {
	if p.q.Exempt || p.opts.MaxScan <= 0 {
		return nil
	}
	if pl.access.kind != accessFull {
		return p.checkIndexBudget(pl)
	}
	n := p.coll.Len()
	trivial := len(pl.root.Children) == 0
	examined := n
	if trivial && !p.q.Count && pl.streaming() {
		examined = min(p.q.Skip+p.q.Limit, n)
	}
	if trivial && p.q.Count && p.q.Limit == 0 {
		examined = 0 // answered from the collection's size
	}
	if examined <= p.opts.MaxScan {
		return nil
	}
	reason, suggest := p.blame(pl.root)
	if trivial && len(p.q.Order) > 0 {
		reason = fmt.Sprintf("order by %q is not served by an index", p.q.Order[0].Path)
		suggest = p.q.Order[0].Path
	}
	msg := fmt.Sprintf("This query on %s would examine %d objects (more than maxScan %d) because %s.",
		p.q.Class, n, p.opts.MaxScan, reason)
	if suggest != "" {
		msg += fmt.Sprintf(" Add an index on %q or narrow the query with an indexed constraint.", suggest)
	} else {
		msg += " Narrow the query with an indexed constraint."
	}
	return p.refuse(msg)
}

func (p *planner) refuse(msg string) error {
	if p.opts.WarnOnly {
		if p.opts.Warn != nil {
			p.opts.Warn(msg)
		}
		return nil
	}
	return schema.Errorf(schema.CodeInefficientQuery, "%s", msg)
}

// checkIndexBudget refuses an index plan whose ranges still hold more than
// the budget when the plan must read them all: no early stop (an order the
// index does not serve, a count that is not answered from the index).
func (p *planner) checkIndexBudget(pl *Plan) error {
	a := pl.access
	if a.kind == accessEmpty || a.estimate <= p.opts.MaxScan {
		return nil
	}
	stops := !p.q.Count && (pl.streaming() || len(p.q.Order) == 0 && pl.near == nil && pl.idOrdered(a))
	if stops || p.q.Count && p.q.Limit == 0 && pl.tightCount() {
		return nil
	}
	return p.refuse(fmt.Sprintf("This query on %s would examine more than %d objects (maxScan): its best index access, %s, "+
		"narrows it only to that many and the results cannot stop early. Add a more selective constraint, "+
		"or order by the indexed field.", p.q.Class, p.opts.MaxScan, a))
}

// blame names the first constraint that kept the plan from an index, and
// the field whose index would help ("" when none would: $ne, $exists and
// unanchored regexes gain nothing from an index, and an indexed field
// already has one). Constraints that can use an index are not blamed.
func (p *planner) blame(n *where.Node) (reason, suggest string) {
	reason = "no constraint can use an index"
	found, indexedSeen := false, false
	n.Walk(func(c *where.Node) bool {
		if found {
			return false
		}
		if c.Kind != where.KindField || len(c.Ops) == 0 {
			return true
		}
		if p.accessFor(c) != nil {
			indexedSeen = true
			return true
		}
		found = true
		op := &c.Ops[0]
		switch {
		case indexUsable(op) && !p.coll.HasIndex(c.Path):
			reason = fmt.Sprintf("%s on %q has no index", op.Code, c.Path)
			suggest = c.Path
		case op.Code == where.OpRegex:
			reason = fmt.Sprintf("$regex on %q is unanchored or case-insensitive and cannot use an index", c.Path)
		case op.Code == where.OpNe || op.Code == where.OpNin || op.Code == where.OpExists:
			reason = fmt.Sprintf("%s on %q cannot use an index on its own", op.Code, c.Path)
		default:
			reason = fmt.Sprintf("%s on %q cannot use an index", op.Code, c.Path)
		}
		return false
	})
	if !found && indexedSeen {
		reason = "its indexed constraints do not narrow the scan"
	}
	return reason, suggest
}

// indexUsable reports whether an index on the operator's path would give
// it an access (see accessForOp).
func indexUsable(op *where.Op) bool {
	switch op.Code {
	case where.OpEq:
		return indexable(op.Value)
	case where.OpIn:
		for _, v := range op.Values {
			if !indexable(v) {
				return false
			}
		}
		return true
	case where.OpAll:
		return len(op.Values) > 0 && indexable(op.Values[0])
	case where.OpLt, where.OpLte, where.OpGt, where.OpGte:
		return true
	case where.OpRegex:
		_, ok := op.Regex.Prefix()
		return ok
	}
	return false
}

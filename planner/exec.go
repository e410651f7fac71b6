package planner

import (
	"container/heap"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/planner/where"
	"github.com/quarrydata/quarry/schema"
)

type planner struct {
	src      Source
	opts     Options
	q        Query
	coll     Collection
	deadline time.Time
}

// Compile parses, resolves and plans a query. Subqueries run here, once.
func Compile(src Source, q Query, opts Options) (*Plan, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	p := &planner{src: src, opts: opts, q: q, deadline: opts.Now().Add(opts.Timeout)}
	return p.plan(0)
}

func (p *planner) plan(depth int) (*Plan, error) {
	q := p.q
	tree, err := where.Parse(q.Where, where.Options{
		FieldType: func(name string) (schema.Type, bool) { return p.src.FieldType(q.Class, name) },
		Now:       p.opts.Now,
		Internal:  q.Exempt,
	})
	if err != nil {
		return nil, err
	}
	p.coll = p.src.Collection(q.Class)
	if p.coll == nil {
		return &Plan{q: q, access: &access{kind: accessEmpty, why: "the class has no objects"}, root: tree,
			match: func(schema.Object) bool { return false }}, nil
	}
	resolved, err := p.resolve(q.Class, tree, depth)
	if err != nil {
		return nil, err
	}
	m, err := matcher.Compile(resolved, nil)
	if err != nil {
		return nil, err
	}
	pl := &Plan{q: q, coll: p.coll, root: resolved, match: m.Match, deadline: p.deadline}
	pl.access = p.chooseAccess(resolved)
	pl.near = nearOf(resolved)
	pl.orderIndex = p.orderServed(pl.access)
	if err := p.checkBudget(pl); err != nil {
		return nil, err
	}
	return pl, nil
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
	return a.kind == accessFull || (a.kind == accessRanges && a.path == path && len(a.ranges) == 1)
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
	if p.q.Exempt || p.opts.MaxScan <= 0 || pl.access.kind != accessFull {
		return nil
	}
	n := p.coll.Len()
	trivial := len(pl.root.Children) == 0
	examined := n
	if trivial && !p.q.Count && pl.streaming() {
		examined = p.q.Skip + p.q.Limit
	}
	if trivial && p.q.Count && p.q.Limit == 0 {
		examined = 0 // answered from the collection's size
	}
	if examined <= p.opts.MaxScan {
		return nil
	}
	reason, suggest := blame(pl.root)
	if trivial && len(p.q.Order) > 0 {
		reason = fmt.Sprintf("order by %q is not served by an index", p.q.Order[0].Path)
		suggest = p.q.Order[0].Path
	}
	msg := fmt.Sprintf("This query on %s would examine %d objects (more than maxScan %d) because %s.",
		p.q.Class, n, p.opts.MaxScan, reason)
	if suggest != "" {
		msg += fmt.Sprintf(" Add an index on %q or narrow the query with an indexed constraint.", suggest)
	}
	if p.opts.WarnOnly {
		if p.opts.Warn != nil {
			p.opts.Warn(msg)
		}
		return nil
	}
	return schema.Errorf(schema.CodeInefficientQuery, "%s", msg)
}

// blame names the first constraint that kept the plan from an index.
func blame(n *where.Node) (reason, suggest string) {
	reason = "no constraint can use an index"
	n.Walk(func(c *where.Node) bool {
		if c.Kind != where.KindField || len(c.Ops) == 0 {
			return suggest == ""
		}
		op := c.Ops[0]
		suggest = c.Path
		switch op.Code {
		case where.OpRegex:
			reason = fmt.Sprintf("$regex on %q is unanchored or case-insensitive and cannot use an index", c.Path)
		case where.OpNe, where.OpNin:
			reason = fmt.Sprintf("%s on %q cannot use an index on its own", op.Code, c.Path)
		case where.OpExists:
			reason = fmt.Sprintf("$exists on %q cannot use an index on its own", c.Path)
		default:
			reason = fmt.Sprintf("%s on %q has no index", op.Code, c.Path)
		}
		return false
	})
	return reason, suggest
}

// Result is a query's page and, when counted, the total.
type Result struct {
	Objects  []schema.Object
	Count    int
	Examined int
}

var errStop = errors.New("stop")

// Run executes the plan.
func (pl *Plan) Run() (Result, error) {
	q := pl.q
	if pl.access.kind == accessEmpty {
		return Result{Objects: []schema.Object{}}, nil
	}
	if q.Count && q.Limit == 0 && len(pl.root.Children) == 0 {
		return Result{Objects: []schema.Object{}, Count: pl.coll.Len()}, nil
	}
	need := q.Skip + q.Limit
	var res Result
	counted := false
	if q.Count && pl.tightCount() {
		res.Count, counted = pl.exactCount(), true
	}
	if len(q.Order) == 0 && pl.near == nil && (!q.Count || counted) && pl.idOrdered(pl.access) {
		objs, examined, err := pl.collectByID(pl.access, need)
		if err != nil {
			return Result{}, err
		}
		res.Examined = examined
		res.Objects = page(objs, q.Skip)
		return res, nil
	}
	collect := newCollector(pl, need)
	stream := pl.streaming()
	matched := 0
	err := pl.iterate(pl.access, func(obj schema.Object) bool {
		res.Examined++
		if !pl.match(obj) {
			return true
		}
		matched++
		collect.add(obj)
		return (q.Count && !counted) || !stream || collect.len() < need
	})
	if errors.Is(err, index.ErrDeadline) {
		return Result{}, ErrTimeout
	}
	if err != nil {
		return Result{}, err
	}
	if !counted {
		res.Count = matched
	}
	res.Objects = page(collect.sorted(), q.Skip)
	return res, nil
}

func page(all []schema.Object, skip int) []schema.Object {
	if skip < len(all) {
		return all[skip:]
	}
	return []schema.Object{}
}

// tightCount reports whether the count is the access's exact size: a
// single constraint whose access yields exactly its matches.
func (pl *Plan) tightCount() bool {
	if !pl.access.tight || len(pl.root.Children) != 1 {
		return false
	}
	c := pl.root.Children[0]
	return c.Kind == where.KindField && len(c.Ops) == 1
}

func (pl *Plan) exactCount() int {
	a := pl.access
	n := 0
	switch a.kind {
	case accessRanges:
		for _, r := range a.ranges {
			n += pl.coll.EstimateRange(a.path, r, 0)
		}
	case accessIDs:
		for _, id := range a.ids {
			if _, ok := pl.coll.Get(id); ok {
				n++
			}
		}
	}
	return n
}

// idOrdered reports whether an access yields candidates in objectId
// order per source: full scans, id sets, and point ranges (entries of one
// key are ordered by objectId). Unions of such sources merge cheaply.
func (pl *Plan) idOrdered(a *access) bool {
	switch a.kind {
	case accessFull, accessIDs:
		return true
	case accessRanges:
		for _, r := range a.ranges {
			if !r.HasLo || !r.HasHi || !r.LoInclusive || !r.HiInclusive || schema.Compare(r.Lo, r.Hi) != 0 {
				return false
			}
		}
		return true
	case accessUnion:
		for _, b := range a.branches {
			if !pl.idOrdered(b) {
				return false
			}
		}
		return true
	}
	return false
}

// collectByID returns the first `need` matches in objectId order: each
// source stops at `need` matches of its own, and the sources merge. The
// global first `need` are always among each source's first `need`.
func (pl *Plan) collectByID(a *access, need int) ([]schema.Object, int, error) {
	if need <= 0 {
		return nil, 0, nil
	}
	examined := 0
	take := func(feed func(fn func(schema.Object) bool) error) ([]schema.Object, error) {
		var out []schema.Object
		err := feed(func(obj schema.Object) bool {
			examined++
			if pl.match(obj) {
				out = append(out, obj)
			}
			return len(out) < need
		})
		if errors.Is(err, index.ErrDeadline) {
			err = ErrTimeout
		}
		return out, err
	}
	var lists [][]schema.Object
	switch a.kind {
	case accessFull:
		l, err := take(func(fn func(schema.Object) bool) error {
			return pl.coll.ScanRange("objectId", index.Range{}, false, pl.deadline, fn)
		})
		return l, examined, err
	case accessIDs:
		l, err := take(func(fn func(schema.Object) bool) error {
			for i, id := range a.ids {
				if i%256 == 255 && time.Now().After(pl.deadline) {
					return index.ErrDeadline
				}
				if obj, ok := pl.coll.Get(id); ok && !fn(obj) {
					return nil
				}
			}
			return nil
		})
		return l, examined, err
	case accessRanges:
		for _, r := range a.ranges {
			l, err := take(func(fn func(schema.Object) bool) error {
				return pl.coll.ScanRange(a.path, r, false, pl.deadline, fn)
			})
			if err != nil {
				return nil, examined, err
			}
			lists = append(lists, l)
		}
	case accessUnion:
		for _, b := range a.branches {
			l, n, err := pl.collectByID(b, need)
			examined += n
			if err != nil {
				return nil, examined, err
			}
			lists = append(lists, l)
		}
	}
	return mergeByID(lists, need), examined, nil
}

func mergeByID(lists [][]schema.Object, need int) []schema.Object {
	if len(lists) == 1 {
		return lists[0]
	}
	var all []schema.Object
	for _, l := range lists {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i]["objectId"].(string) < all[j]["objectId"].(string) })
	out := all[:0]
	for i, o := range all {
		if i > 0 && o["objectId"] == all[i-1]["objectId"] {
			continue
		}
		out = append(out, o)
		if len(out) == need {
			break
		}
	}
	return out
}

// iterate feeds candidates from an access. Objects may come twice from a
// union or a multikey index; seen filters those.
func (pl *Plan) iterate(a *access, fn func(schema.Object) bool) error {
	seen := map[string]bool(nil)
	if a.kind == accessUnion || (a.kind == accessRanges && (len(a.ranges) > 1 && pl.coll.Multikey(a.path))) {
		seen = map[string]bool{}
	}
	stopped := false
	emit := func(obj schema.Object) bool {
		if seen != nil {
			id, _ := obj["objectId"].(string)
			if seen[id] {
				return true
			}
			seen[id] = true
		}
		if !fn(obj) {
			stopped = true
			return false
		}
		return true
	}
	return pl.feed(a, emit, &stopped)
}

func (pl *Plan) feed(a *access, emit func(schema.Object) bool, stopped *bool) error {
	switch a.kind {
	case accessFull:
		path, desc := "objectId", false
		if pl.orderIndex {
			path, desc = pl.q.Order[0].Path, pl.q.Order[0].Desc
		}
		return pl.coll.ScanRange(path, index.Range{}, desc, pl.deadline, emit)
	case accessRanges:
		desc := pl.orderIndex && pl.q.Order[0].Desc
		for _, r := range a.ranges {
			if err := pl.coll.ScanRange(a.path, r, desc, pl.deadline, emit); err != nil || *stopped {
				return err
			}
		}
	case accessIDs:
		for i, id := range a.ids {
			if i%256 == 255 && time.Now().After(pl.deadline) {
				return index.ErrDeadline
			}
			if obj, ok := pl.coll.Get(id); ok && !emit(obj) {
				return nil
			}
		}
	case accessUnion:
		for _, b := range a.branches {
			if err := pl.feed(b, emit, stopped); err != nil || *stopped {
				return err
			}
		}
	}
	return nil
}

// collector keeps the first `need` results in final order: a bounded
// max-heap (top-k) when results arrive unordered, a slice otherwise.
type collector struct {
	pl     *Plan
	need   int
	stream bool
	items  []schema.Object
}

func newCollector(pl *Plan, need int) *collector {
	return &collector{pl: pl, need: need, stream: pl.streaming()}
}

func (c *collector) len() int { return len(c.items) }

func (c *collector) Len() int           { return len(c.items) }
func (c *collector) Less(i, j int) bool { return c.pl.less(c.items[j], c.items[i]) } // max-heap
func (c *collector) Swap(i, j int)      { c.items[i], c.items[j] = c.items[j], c.items[i] }
func (c *collector) Push(x any)         { c.items = append(c.items, x.(schema.Object)) }
func (c *collector) Pop() any {
	last := c.items[len(c.items)-1]
	c.items = c.items[:len(c.items)-1]
	return last
}

func (c *collector) add(obj schema.Object) {
	if c.need <= 0 {
		return
	}
	if c.stream {
		if len(c.items) < c.need {
			c.items = append(c.items, obj)
		}
		return
	}
	if len(c.items) < c.need {
		heap.Push(c, obj)
		return
	}
	if c.pl.less(obj, c.items[0]) {
		c.items[0] = obj
		heap.Fix(c, 0)
	}
}

func (c *collector) sorted() []schema.Object {
	if c.stream {
		return c.items
	}
	out := make([]schema.Object, len(c.items))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(c).(schema.Object)
	}
	return out
}

// less is the final result order: the order keys, then objectId in the
// direction of the last key (so an index scanned backwards agrees). With
// no order, a $nearSphere sorts by distance; otherwise objectId ascending.
func (pl *Plan) less(a, b schema.Object) bool {
	desc := false
	for _, k := range pl.q.Order {
		va, _ := schema.Get(a, k.Path)
		vb, _ := schema.Get(b, k.Path)
		if c := schema.Compare(va, vb); c != 0 {
			return (c < 0) != k.Desc
		}
		desc = k.Desc
	}
	if len(pl.q.Order) == 0 && pl.near != nil {
		da, db := pl.near.distance(a), pl.near.distance(b)
		if da != db {
			return da < db
		}
	}
	ia, _ := a["objectId"].(string)
	ib, _ := b["objectId"].(string)
	return (ia < ib) != desc
}

// Explain describes the chosen plan for the master key's explain option.
func (pl *Plan) Explain(res Result) map[string]any {
	out := map[string]any{
		"class":    pl.q.Class,
		"where":    pl.root.String(),
		"access":   pl.access.String(),
		"reason":   pl.access.why,
		"estimate": pl.access.estimate,
		"examined": res.Examined,
		"matched":  res.Count,
	}
	switch {
	case len(pl.q.Order) == 0 && pl.near != nil:
		out["sort"] = "by distance (top-k heap)"
	case len(pl.q.Order) == 0 && (pl.streaming() || pl.idOrdered(pl.access)):
		out["sort"] = "objectId (access order)"
	case len(pl.q.Order) == 0:
		out["sort"] = "objectId (top-k heap)"
	case pl.orderIndex:
		out["sort"] = "index " + pl.q.Order[0].Path
	default:
		out["sort"] = "top-k heap"
	}
	return out
}

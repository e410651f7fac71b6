package planner

import (
	"math"
	"strings"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// chooseAccess picks the cheapest candidate source for a resolved tree.
// Every access it returns yields a superset of the matches.
func (p *planner) chooseAccess(n *where.Node) *access {
	full := &access{kind: accessFull, estimate: p.size(), why: "no constraint can use an index"}
	best := p.accessFor(n)
	if best == nil || best.estimate >= full.estimate && best.kind != accessEmpty {
		return full
	}
	return best
}

func (p *planner) size() int {
	if p.coll == nil {
		return 0
	}
	return p.coll.Len()
}

// accessFor returns the best access for a node, or nil if it has none.
func (p *planner) accessFor(n *where.Node) *access {
	switch n.Kind {
	case where.KindAnd:
		var best *access
		var points []*access
		for _, c := range n.Children {
			a := p.accessFor(c)
			if best = cheaper(best, a); best.isEmpty() {
				return best
			}
			if a != nil && a.kind == accessRanges && a.points != nil && a.within == nil {
				points = append(points, a)
			}
		}
		return p.intersect(best, points)
	case where.KindOr:
		// An $or uses indexes only when every branch can; otherwise one
		// scan with the whole $or as residual is cheaper than several.
		u := &access{kind: accessUnion, why: "every $or branch can use an index", tight: true, node: n}
		for _, c := range n.Children {
			a := p.accessFor(c)
			if a == nil {
				return nil
			}
			if a.kind == accessEmpty {
				continue
			}
			u.branches = append(u.branches, a)
			u.estimate += a.estimate
			// The union yields each object once (iterate), so when every
			// branch yields exactly its matches the $or leaves the residual.
			u.tight = u.tight && decides(a, c)
		}
		if len(u.branches) == 0 {
			return &access{kind: accessEmpty, why: "every $or branch is empty"}
		}
		if len(u.branches) == 1 {
			return u.branches[0]
		}
		return u
	case where.KindField:
		best := p.intersectedRange(n)
		for i := range n.Ops {
			if best != nil && isComparison(n.Ops[i].Code) {
				continue // the intersected range lies within each bound's own
			}
			if best = cheaper(best, p.accessForOp(n.Path, &n.Ops[i])); best.isEmpty() {
				return best
			}
		}
		return best
	}
	return nil
}

// intersect narrows best, a point access, by the most selective other
// point access of the same $and (points): candidates of best whose key on
// the other's path is none of its keys are skipped before they are read
// (ScanEqualWithin). An $inQuery on an indexed pointer with an indexed
// equality beside it reads only the objects matching both, not every
// object of the cheaper side. The other side must be tight (it then
// leaves the residual) and select under half of the class, or reading
// one field of each candidate would cost more than it saves.
func (p *planner) intersect(best *access, points []*access) *access {
	if best == nil || best.kind != accessRanges || best.points == nil || best.within != nil {
		return best
	}
	var with *access
	for _, a := range points {
		if a == best || a.path == best.path || !a.tight || a.estimate*2 >= p.size() {
			continue
		}
		if with == nil || a.estimate < with.estimate {
			with = a
		}
	}
	if with == nil {
		return best
	}
	out := *best
	out.within = with
	// Entries of best are still visited; the count of both is unknown.
	out.exact = false
	out.why = best.reason() + " within " + with.reason()
	return &out
}

// decides reports whether a, the access of an $or branch c, yields exactly
// c's matches: a tight access of c's one field constraint.
func decides(a *access, c *where.Node) bool {
	if !a.tight {
		return false
	}
	if c.Kind == where.KindAnd && len(c.Children) == 1 {
		c = c.Children[0]
	}
	return c.Kind == where.KindField && (c == a.node || len(c.Ops) == 1 && &c.Ops[0] == a.op)
}

// cheaper returns the access with the smaller estimate (either may be
// nil); an empty access wins outright, as nothing can match.
func cheaper(best, a *access) *access {
	switch {
	case a == nil:
		return best
	case best == nil || a.kind == accessEmpty || best.kind != accessEmpty && a.estimate < best.estimate:
		return a
	}
	return best
}

func (a *access) isEmpty() bool { return a != nil && a.kind == accessEmpty }

// intersectedRange folds every comparison on one field into a single
// range when the field's index is not multikey (on arrays MongoDB lets a
// different element meet each bound, so only single bounds are supersets
// there). Bounds of different ranks cannot hold together: empty.
func (p *planner) intersectedRange(n *where.Node) *access {
	if p.coll == nil || !p.coll.HasIndex(n.Path) || p.coll.Multikey(n.Path) {
		return nil
	}
	var r index.Range
	var rank schema.Rank = -1
	bounds := 0
	for _, op := range n.Ops {
		switch op.Code {
		case where.OpLt, where.OpLte, where.OpGt, where.OpGte:
		default:
			continue
		}
		if rk := schema.RankOf(op.Value); rank == -1 {
			rank = rk
		} else if rk != rank {
			return &access{kind: accessEmpty, why: "comparisons on " + n.Path + " with values of different types"}
		}
		bounds++
		b := bounded(&op)
		if op.Code == where.OpGt || op.Code == where.OpGte {
			if c := compareNil(b.Lo, r.Lo, r.HasLo); !r.HasLo || c > 0 || c == 0 && !b.LoInclusive {
				r.Lo, r.HasLo, r.LoInclusive = b.Lo, true, b.LoInclusive
			}
			if !r.HasHi && b.HasHi {
				r.Hi, r.HasHi, r.HiInclusive = b.Hi, true, b.HiInclusive
			}
		} else {
			if c := compareNil(b.Hi, r.Hi, r.HasHi); !r.HasHi || c < 0 || c == 0 && !b.HiInclusive {
				r.Hi, r.HasHi, r.HiInclusive = b.Hi, true, b.HiInclusive
			}
			if !r.HasLo && b.HasLo {
				r.Lo, r.HasLo, r.LoInclusive = b.Lo, true, b.LoInclusive
			}
		}
	}
	if bounds < 2 {
		return nil
	}
	if r.Empty() {
		return &access{kind: accessEmpty, why: "an empty range on " + n.Path}
	}
	est := p.coll.EstimateRange(n.Path, r, p.budgetCap())
	a := &access{kind: accessRanges, path: n.Path, ranges: []index.Range{r}, estimate: est, why: "range on " + n.Path}
	if bounds == len(n.Ops) && p.exactComparison(n.Path, r.Lo) {
		a.tight, a.node = true, n
	}
	return a
}

// exactComparison reports whether a range scan for a comparison with
// operand v on path yields exactly the objects the comparison matches, so
// the constraint can leave the residual and a count can come from the
// index's ranks: a plain top-level field whose index holds no arrays (on
// arrays one object may sit under several keys), and a number or string
// operand, whose rank-bounded range orders as the matcher compares.
func (p *planner) exactComparison(path string, v any) bool {
	switch v.(type) {
	case float64, string:
	default:
		return false
	}
	return p.coll != nil && !strings.Contains(path, ".") && p.coll.HasIndex(path) && !p.coll.Multikey(path)
}

func isComparison(c where.OpCode) bool {
	return c == where.OpLt || c == where.OpLte || c == where.OpGt || c == where.OpGte
}

func compareNil(a, b any, hasB bool) int {
	if !hasB {
		return 0
	}
	return schema.Compare(a, b)
}

// indexable reports whether a value can be looked up by a point scan:
// plain values whose index key is the value itself.
func indexable(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case []any:
		return false
	case map[string]any:
		t := x["__type"]
		return t == "Pointer" || t == "Date"
	}
	return true
}

func (p *planner) accessForOp(path string, op *where.Op) *access {
	if op.Code.IsGeo() {
		if p.coll == nil {
			return nil
		}
		return p.geoAccessFor(path, op) // geo.go
	}
	if set, ok := p.sets[op]; ok {
		return p.setAccess(path, op, set)
	}
	if path == "objectId" {
		switch op.Code {
		case where.OpEq:
			if id, ok := op.Value.(string); ok {
				return &access{kind: accessIDs, ids: newValueSet("", []string{id}), estimate: 1, tight: true, op: op, why: "objectId equality"}
			}
			return &access{kind: accessEmpty, why: "objectId compared with a non-string"}
		case where.OpIn:
			ids := make([]string, 0, len(op.Values))
			for _, v := range op.Values {
				if id, ok := v.(string); ok {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				return &access{kind: accessEmpty, why: "objectId $in of nothing"}
			}
			set := newValueSet("", ids)
			return &access{kind: accessIDs, ids: set, estimate: set.size, tight: true, op: op, why: "objectId $in"}
		}
	}
	if op.Code == where.OpIn && len(op.Values) == 0 {
		// Nothing is in the empty set, indexed or not.
		return &access{kind: accessEmpty, why: "$in of nothing"}
	}
	if p.coll == nil || !p.coll.HasIndex(path) {
		return nil
	}
	var ranges []index.Range
	switch op.Code {
	case where.OpEq:
		if !indexable(op.Value) {
			return nil
		}
		return p.pointAccess(path, op, []any{op.Value})
	case where.OpIn:
		if len(op.Values) == 0 {
			return &access{kind: accessEmpty, why: "$in of nothing"}
		}
		seen := make(map[string]bool, len(op.Values))
		points := make([]any, 0, len(op.Values))
		for _, v := range op.Values {
			if !indexable(v) {
				return nil // null or arrays in $in also match missing/whole values
			}
			if k, _ := matcher.HashKey(v); seen[k] {
				continue // a repeated key would be counted twice by estimates
			} else {
				seen[k] = true
			}
			points = append(points, v)
		}
		return p.pointAccess(path, op, points)
	case where.OpAll:
		if len(op.Values) == 0 || !indexable(op.Values[0]) {
			return nil
		}
		ranges = []index.Range{point(op.Values[0])}
	case where.OpLt, where.OpLte, where.OpGt, where.OpGte:
		ranges = []index.Range{bounded(op)}
		return &access{kind: accessRanges, path: path, ranges: ranges, estimate: p.estimate(path, ranges), op: op,
			tight: p.exactComparison(path, op.Value)}
	case where.OpRegex:
		prefix, ok := op.Regex.Prefix()
		if !ok {
			return nil
		}
		r := index.Range{Lo: prefix, HasLo: true, LoInclusive: true}
		if end, ok := prefixEnd(prefix); ok {
			r.Hi, r.HasHi = end, true
		}
		ranges = []index.Range{r}
	default:
		return nil
	}
	// These ranges are supersets: the residual keeps the constraint.
	return &access{kind: accessRanges, path: path, ranges: ranges, estimate: p.estimate(path, ranges), op: op}
}

// setAccess is the access for a subquery's or relation's set (valueSet):
// an id lookup for objectIds, else point scans of the field's index keyed
// directly by the set's members.
func (p *planner) setAccess(path string, op *where.Op, set *valueSet) *access {
	if op.Code != where.OpIn {
		return nil
	}
	if set.size == 0 && path == "objectId" {
		return &access{kind: accessEmpty, why: "objectId $in of nothing"}
	}
	if set.size == 0 {
		return &access{kind: accessEmpty, why: "$in of nothing"}
	}
	if path == "objectId" && set.class == "" {
		return &access{kind: accessIDs, ids: set, estimate: set.size, tight: true, op: op,
			why: "objectId $in (relation)"}
	}
	if p.coll == nil || !p.coll.HasIndex(path) {
		return nil
	}
	return p.pointAccess(path, op, set.keys())
}

// pointAccess scans the index on path at each of the distinct keys: the
// objects equal to one of them, or, on an array field, containing one.
func (p *planner) pointAccess(path string, op *where.Op, keys []any) *access {
	var ranges []index.Range
	if len(keys) == 1 {
		ranges = []index.Range{point(keys[0])} // also a range an order can use
	}
	// Distinct point scans yield exactly the matches of $eq/$in (multikey
	// entries are per distinct element, so "contains" is exact too). On a
	// multikey index one object may sit under several of the keys: the
	// scans deliver it once, but the entry count (an exact count's source)
	// would count it again, so the constraint is not tight there.
	tight := len(keys) == 1 || !p.coll.Multikey(path)
	est, exact := p.estimatePoints(path, keys)
	return &access{kind: accessRanges, path: path, ranges: ranges, points: keys, estimate: est, exact: exact,
		tight: tight, op: op}
}

// sampledRanges is how many ranges of a long $in are estimated exactly;
// the rest are extrapolated, so planning stays cheap for large lists.
// Up to maxCountedPoints equality keys are all counted instead.
const (
	sampledRanges    = 4
	maxCountedPoints = 16
)

func (p *planner) estimate(path string, ranges []index.Range) int {
	budget := p.budgetCap()
	est := 0
	for i, r := range ranges {
		if i == sampledRanges {
			return est * len(ranges) / sampledRanges
		}
		est += p.coll.EstimateRange(path, r, budget)
	}
	return est
}

// estimatePoints is estimate for the point ranges of keys, and whether it
// is exact (every key counted, none cut off at the budget). Declared
// indexes count equal keys in O(1), so every key is counted when that is
// cheap: up to maxCountedPoints of them.
func (p *planner) estimatePoints(path string, keys []any) (est int, exact bool) {
	budget := p.budgetCap()
	sampled := len(keys)
	if sampled > maxCountedPoints {
		sampled = sampledRanges
	}
	exact = sampled == len(keys)
	for _, k := range keys[:sampled] {
		n := p.coll.EstimateRange(path, index.Equal(k), budget)
		exact = exact && n < budget
		est += n
	}
	if sampled < len(keys) {
		est = est * len(keys) / sampled
	}
	return est, exact
}

func (p *planner) budgetCap() int {
	if p.opts.MaxScan > 0 {
		return p.opts.MaxScan + 1
	}
	return math.MaxInt32
}

func point(v any) index.Range {
	return index.Range{Lo: v, Hi: v, HasLo: true, HasHi: true, LoInclusive: true, HiInclusive: true}
}

// bounded turns one comparison into a range limited to the operand's rank:
// $gt 5 scans numbers above 5 and never walks on into strings.
func bounded(op *where.Op) index.Range {
	v := op.Value
	r := index.RankRange(schema.RankOf(v))
	switch op.Code {
	case where.OpGt, where.OpGte:
		r.Lo, r.HasLo, r.LoInclusive = v, true, op.Code == where.OpGte
	default:
		r.Hi, r.HasHi, r.HiInclusive = v, true, op.Code == where.OpLte
	}
	return r
}

// prefixEnd is the least string greater than every string with prefix.
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xFF {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

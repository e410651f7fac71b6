package match

import (
	"encoding/binary"
	"math"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/where"
)

// Limits of the subscription index.
const (
	// MaxCoverKeys bounds the buckets one subscription is filed under (the
	// values of an $in, the branches of an $or, geo cells). A query that
	// would need more goes to its class's fallback list, tested on every
	// change of the class.
	MaxCoverKeys = 64
	// MaxGeoCells bounds the cells one geo constraint is filed under
	// (package geo picks the finest S2 level whose covering fits).
	MaxGeoCells = geo.CoverMaxCells
	// maxCellLevel is the finest S2 level (leaf cells).
	maxCellLevel = 30
)

// bucketKey names one bucket of a class's subscription index: an equality
// value (matcher.HashKey) or a geo cell (cellKey) of one field path.
type bucketKey struct {
	field string
	val   string
}

// cover is a set of buckets such that every object the query matches has
// a value in at least one of them. A query without a cover is tested on
// every change of its class.
type cover []bucketKey

// coverOf computes a cover of the tree. ok is false when none exists.
// It follows the planner's OR rule: an $or is covered only when every
// branch is; an AND is covered by its cheapest covered child.
func coverOf(n *where.Node) (cover, bool) {
	switch n.Kind {
	case where.KindAnd:
		var best cover
		bestCost := math.MaxInt
		for _, ch := range n.Children {
			c, ok := coverOf(ch)
			if !ok {
				continue
			}
			if cost := c.cost(); cost < bestCost {
				best, bestCost = c, cost
			}
		}
		return best, best != nil
	case where.KindOr:
		var all cover
		for _, ch := range n.Children {
			c, ok := coverOf(ch)
			if !ok {
				return nil, false
			}
			all = append(all, c...)
		}
		all = all.dedupe()
		return all, len(all) > 0 && len(all) <= MaxCoverKeys
	case where.KindField:
		var best cover
		bestCost := math.MaxInt
		for i := range n.Ops {
			c, ok := opCover(n.Path, &n.Ops[i])
			if ok && c.cost() < bestCost {
				best, bestCost = c, c.cost()
			}
		}
		return best, best != nil
	}
	return nil, false
}

// cost ranks covers: fewer buckets first; a geo cell counts as several
// equality values, since cells are coarse.
func (c cover) cost() int {
	n := 0
	for _, k := range c {
		if isCell(k.val) {
			n += 4
		} else {
			n++
		}
	}
	return n
}

func (c cover) dedupe() cover {
	seen := make(map[bucketKey]bool, len(c))
	out := c[:0]
	for _, k := range c {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// opCover covers one operator on path.
func opCover(path string, op *where.Op) (cover, bool) {
	switch op.Code {
	case where.OpEq:
		if k, ok := matcher.HashKey(op.Value); ok {
			return cover{{path, k}}, true
		}
	case where.OpIn:
		if len(op.Values) == 0 || len(op.Values) > MaxCoverKeys {
			return nil, false
		}
		c := make(cover, 0, len(op.Values))
		for _, v := range op.Values {
			k, ok := matcher.HashKey(v)
			if !ok {
				return nil, false // null or a value without a key: no cover
			}
			c = append(c, bucketKey{path, k})
		}
		return c.dedupe(), true
	case where.OpAll:
		// Every item must be the value or one of its elements, so the
		// first keyed item alone covers the query.
		for _, v := range op.Values {
			if k, ok := matcher.HashKey(v); ok {
				return cover{{path, k}}, true
			}
		}
	case where.OpNearSphere, where.OpWithinSphere, where.OpWithinBox, where.OpWithinPolygon:
		// The region the matcher tests, covered by package geo's cells:
		// the covering holds every point the exact test accepts.
		region, ok := matcher.RegionOf(op)
		if !ok {
			return nil, false
		}
		cells := geo.CoverCells(region, MaxGeoCells)
		if len(cells) == 0 || len(cells) > MaxCoverKeys {
			return nil, false
		}
		c := make(cover, len(cells))
		for i, id := range cells {
			c[i] = bucketKey{path, cellKey(id)}
		}
		return c, true
	}
	return nil, false
}

// valueKeys calls fn with the key of v and, for an array, of each
// element: the buckets an object with this value can match through
// equality (equality on an array field means "contains").
func valueKeys(v any, fn func(string)) {
	if k, ok := matcher.HashKey(v); ok {
		fn(k)
		return
	}
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if k, ok := matcher.HashKey(e); ok {
				fn(k)
			}
		}
	}
}

// A geo cell key is a 0 byte (no matcher.HashKey starts with one) followed by
// the S2 cell id.

func cellKey(id uint64) string {
	var b [9]byte
	binary.BigEndian.PutUint64(b[1:], id)
	return string(b[:])
}

func isCell(val string) bool { return len(val) == 9 && val[0] == 0 }

func cellLevel(val string) int { return geo.CellLevel(binary.BigEndian.Uint64([]byte(val[1:]))) }

// pointCell is the key of the cell holding p at level.
func pointCell(p geo.Point, level int) string { return cellKey(geo.CellParent(geo.LeafCell(p), level)) }

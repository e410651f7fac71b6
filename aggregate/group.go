package aggregate

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/quarrydata/quarry/schema"
)

// $group: {objectId: <key expression>, <name>: {<accumulator>: <expr>}, …}.

type accumulator int

const (
	accSum accumulator = iota
	accAvg
	accMin
	accMax
	accFirst
	accLast
	accPush
	accAddToSet
)

var accumulators = map[string]accumulator{
	"$sum": accSum, "$avg": accAvg, "$min": accMin, "$max": accMax, "$first": accFirst,
	"$last": accLast, "$push": accPush, "$addToSet": accAddToSet,
}

type groupField struct {
	name string
	acc  accumulator
	arg  expr
}

type groupSpec struct {
	key    expr
	keyRef bool // the key is one field reference: a Pointer groups by its objectId
	fields []groupField
}

func compileGroup(spec any) (*groupSpec, error) {
	m, ok := spec.(map[string]any)
	if !ok {
		return nil, errorf("$group needs an object")
	}
	keySpec, hasID := m["objectId"]
	if alt, hasAlt := m["_id"]; hasAlt {
		if hasID {
			return nil, errorf("$group takes objectId or _id as its key, not both")
		}
		keySpec, hasID = alt, true
	}
	if !hasID {
		return nil, errorf("Invalid parameter for query: group. Missing key objectId")
	}
	key, err := compileExpr(keySpec, 1)
	if err != nil {
		return nil, err
	}
	_, keyRef := key.(fieldRef)
	g := &groupSpec{key: key, keyRef: keyRef}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if name == "objectId" || name == "_id" {
			continue
		}
		if !pathSegment.MatchString(name) {
			return nil, errorf("Invalid $group field name %s", name)
		}
		spec, ok := m[name].(map[string]any)
		if !ok || len(spec) != 1 {
			return nil, errorf("$group field %s must be an object with one accumulator", name)
		}
		for op, arg := range spec {
			acc, known := accumulators[op]
			if !known {
				return nil, errorf("Unsupported $group accumulator %s", op)
			}
			e, err := compileExpr(arg, 1)
			if err != nil {
				return nil, err
			}
			g.fields = append(g.fields, groupField{name: name, acc: acc, arg: e})
		}
	}
	return g, nil
}

// bucket is one group's running state.
type bucket struct {
	key    any
	values [][]any // per field: the values seen, for the accumulators that keep them
	sums   []float64
	counts []int
	first  []any
	last   []any
	seen   []bool
}

func (r *runner) runGroup(g *groupSpec, docs []schema.Object) ([]schema.Object, error) {
	buckets := map[string]*bucket{}
	var order []*bucket
	nf := len(g.fields)
	for _, d := range docs {
		if err := r.tick(); err != nil {
			return nil, err
		}
		k, ok := g.key.eval(d)
		if !ok {
			k = nil
		}
		if g.keyRef {
			if p, isMap := k.(map[string]any); isMap && p["__type"] == "Pointer" {
				k = p["objectId"]
			}
		}
		h := hashKey(k)
		b := buckets[h]
		if b == nil {
			if len(order) >= r.opts.MaxDocuments {
				return nil, ErrTooManyDocuments
			}
			b = &bucket{key: k, values: make([][]any, nf), sums: make([]float64, nf), counts: make([]int, nf),
				first: make([]any, nf), last: make([]any, nf), seen: make([]bool, nf)}
			buckets[h] = b
			order = append(order, b)
		}
		for i, f := range g.fields {
			v, present := f.arg.eval(d)
			if !present {
				v = nil
			}
			switch f.acc {
			case accSum, accAvg:
				if x, isNum := v.(float64); isNum {
					b.sums[i] += x
					b.counts[i]++
				}
			case accMin, accMax:
				if v == nil {
					continue
				}
				c := 0
				if b.seen[i] {
					c = schema.Compare(v, b.first[i])
				}
				if !b.seen[i] || (f.acc == accMin && c < 0) || (f.acc == accMax && c > 0) {
					b.first[i] = v
				}
				b.seen[i] = true
			case accFirst:
				if !b.seen[i] {
					b.first[i], b.seen[i] = v, true
				}
			case accLast:
				b.last[i] = v
			case accPush:
				if present {
					b.values[i] = append(b.values[i], v)
				}
			case accAddToSet:
				if present && !containsEqual(b.values[i], v) {
					b.values[i] = append(b.values[i], v)
				}
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return schema.Compare(order[i].key, order[j].key) < 0 })
	out := make([]schema.Object, len(order))
	for n, b := range order {
		doc := schema.Object{"objectId": b.key}
		for i, f := range g.fields {
			switch f.acc {
			case accSum:
				doc[f.name] = b.sums[i]
			case accAvg:
				if b.counts[i] == 0 {
					doc[f.name] = nil
				} else {
					doc[f.name] = b.sums[i] / float64(b.counts[i])
				}
			case accMin, accMax, accFirst:
				doc[f.name] = b.first[i]
			case accLast:
				doc[f.name] = b.last[i]
			case accPush, accAddToSet:
				vals := b.values[i]
				if vals == nil {
					vals = []any{}
				}
				doc[f.name] = vals
			}
		}
		out[n] = doc
	}
	return out, nil
}

// hashKey is a canonical text for a group key: equal keys (numbers by
// value, objects whatever their key order) share it.
func hashKey(v any) string {
	if f, ok := v.(float64); ok && f == 0 && math.Signbit(f) {
		v = 0.0 // -0 groups with 0
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

func containsEqual(list []any, v any) bool {
	for _, e := range list {
		if schema.Equal(e, v) {
			return true
		}
	}
	return false
}

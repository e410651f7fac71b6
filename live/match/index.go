package match

import (
	"sync"
	"sync/atomic"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/schema"
)

// Index files subscriptions so that a change visits only those it could
// match. Subscriptions with the same class and where share a Group (one
// matcher run per change for all of them). Each group is filed under the
// buckets of its query's cover (equality values, geo cells) or, without a
// cover, in its class's fallback list.
//
// T is the caller's handle of one subscription. An Index is safe for
// concurrent use.
type Index[T comparable] struct {
	mu      sync.RWMutex
	classes map[string]*classIndex[T]
	groups  map[string]*Group[T]
	members int
}

// Group is the subscriptions of one query.
type Group[T comparable] struct {
	query   *Query
	members atomic.Pointer[[]T] // replaced on change, never mutated
	multi   bool                // filed under more than one bucket
}

// Query is the group's query.
func (g *Group[T]) Query() *Query { return g.query }

// Members returns the group's subscriptions at this instant. The slice
// must not be modified.
func (g *Group[T]) Members() []T {
	if p := g.members.Load(); p != nil {
		return *p
	}
	return nil
}

type classIndex[T comparable] struct {
	buckets  map[bucketKey][]*Group[T]
	fields   map[string]*fieldUse
	fallback []*Group[T]
	groups   int
}

// fieldUse counts the buckets of one field path, so a change looks a
// field up only when some subscription is filed under it, and only at
// the geo levels in use.
type fieldUse struct {
	eq  int
	geo [maxCellLevel + 1]int
}

// NewIndex returns an empty index.
func NewIndex[T comparable]() *Index[T] {
	return &Index[T]{classes: map[string]*classIndex[T]{}, groups: map[string]*Group[T]{}}
}

// Add files member under q and returns its group.
func (ix *Index[T]) Add(q *Query, member T) *Group[T] {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.members++
	if g, ok := ix.groups[q.key]; ok {
		old := g.Members()
		next := make([]T, len(old), len(old)+1)
		copy(next, old)
		next = append(next, member)
		g.members.Store(&next)
		return g
	}
	g := &Group[T]{query: q, multi: len(q.cover) > 1}
	g.members.Store(&[]T{member})
	ix.groups[q.key] = g
	ci := ix.classes[q.class]
	if ci == nil {
		ci = &classIndex[T]{buckets: map[bucketKey][]*Group[T]{}, fields: map[string]*fieldUse{}}
		ix.classes[q.class] = ci
	}
	ci.groups++
	if len(q.cover) == 0 {
		ci.fallback = append(ci.fallback, g)
		return g
	}
	for _, k := range q.cover {
		ci.buckets[k] = append(ci.buckets[k], g)
		use := ci.fields[k.field]
		if use == nil {
			use = &fieldUse{}
			ci.fields[k.field] = use
		}
		if isCell(k.val) {
			use.geo[cellLevel(k.val)]++
		} else {
			use.eq++
		}
	}
	return g
}

// Remove takes member out of g; the group leaves the index with its last
// member. It reports whether member was in g.
func (ix *Index[T]) Remove(g *Group[T], member T) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old := g.Members()
	at := -1
	for i, m := range old {
		if m == member {
			at = i
			break
		}
	}
	if at < 0 {
		return false
	}
	ix.members--
	next := make([]T, 0, len(old)-1)
	next = append(append(next, old[:at]...), old[at+1:]...)
	g.members.Store(&next)
	if len(next) > 0 || ix.groups[g.query.key] != g {
		return true
	}
	delete(ix.groups, g.query.key)
	ci := ix.classes[g.query.class]
	ci.groups--
	if len(g.query.cover) == 0 {
		ci.fallback = without(ci.fallback, g)
	}
	for _, k := range g.query.cover {
		if rest := without(ci.buckets[k], g); len(rest) > 0 {
			ci.buckets[k] = rest
		} else {
			delete(ci.buckets, k)
		}
		use := ci.fields[k.field]
		if isCell(k.val) {
			use.geo[cellLevel(k.val)]--
		} else {
			use.eq--
		}
		if use.eq == 0 && use.geo == ([maxCellLevel + 1]int{}) {
			delete(ci.fields, k.field)
		}
	}
	if ci.groups == 0 {
		delete(ix.classes, g.query.class)
	}
	return true
}

func without[T comparable](list []*Group[T], g *Group[T]) []*Group[T] {
	for i, x := range list {
		if x == g {
			out := make([]*Group[T], 0, len(list)-1)
			return append(append(out, list[:i]...), list[i+1:]...)
		}
	}
	return list
}

// Candidates appends to dst every group of class that could match
// original or object (either may be nil), each once: the groups filed
// under a bucket one of them falls in, and the class's fallback list.
// Groups not returned cannot match either object.
func (ix *Index[T]) Candidates(class string, original, object schema.Object, dst []*Group[T]) []*Group[T] {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ci := ix.classes[class]
	if ci == nil {
		return dst
	}
	dst = append(dst, ci.fallback...)
	if len(ci.buckets) == 0 {
		return dst
	}
	var keys []bucketKey
	var scratch [8]bucketKey
	keys = scratch[:0]
	for field, use := range ci.fields {
		for _, obj := range [2]schema.Object{original, object} {
			if obj == nil {
				continue
			}
			v, ok := schema.Get(obj, field)
			if !ok {
				continue
			}
			if use.eq > 0 {
				valueKeys(v, func(k string) { keys = appendKey(keys, bucketKey{field, k}) })
			}
			if p, ok := geo.PointFromValue(v); ok {
				for level, n := range use.geo {
					if n > 0 {
						keys = appendKey(keys, bucketKey{field, pointCell(p, level)})
					}
				}
			}
		}
	}
	var seen map[*Group[T]]bool
	for _, k := range keys {
		for _, g := range ci.buckets[k] {
			if g.multi {
				if seen == nil {
					seen = map[*Group[T]]bool{}
				}
				if seen[g] {
					continue
				}
				seen[g] = true
			}
			dst = append(dst, g)
		}
	}
	return dst
}

func appendKey(keys []bucketKey, k bucketKey) []bucketKey {
	for _, x := range keys {
		if x == k {
			return keys
		}
	}
	return append(keys, k)
}

// All appends every group of class to dst: the brute-force alternative to
// Candidates, for tests and benchmarks.
func (ix *Index[T]) All(class string, dst []*Group[T]) []*Group[T] {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, g := range ix.groups {
		if g.query.class == class {
			dst = append(dst, g)
		}
	}
	return dst
}

// Stats counts what the index holds.
type Stats struct {
	Members int // subscriptions
	Groups  int // distinct queries
	Classes int
}

// Stats returns the current counts.
func (ix *Index[T]) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return Stats{Members: ix.members, Groups: len(ix.groups), Classes: len(ix.classes)}
}

package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Collection is what the planner needs from one class's objects. Scans
// and lookups hand out index.Refs, the stored versions they read: the plan
// decodes what it tests and hands the versions on with its results.
type Collection interface {
	Len() int
	Lookup(id string) (index.Ref, bool)
	HasIndex(path string) bool
	Multikey(path string) bool
	EstimateRange(path string, r index.Range, limit int) int
	ScanRange(path string, r index.Range, desc bool, deadline time.Time, fn func(index.Ref) bool) error
	// ScanEqual yields, in objectId order and once each, the objects whose
	// key on path equals one of keys (the union of their point ranges).
	ScanEqual(path string, keys []any, deadline time.Time, fn func(index.Ref) bool) error
	// ScanEqualWithin is ScanEqual keeping only the objects whose key on
	// within equals one of among, tested on the same version of each
	// candidate before it is decoded (an intersection of point scans).
	ScanEqualWithin(path string, keys []any, within string, among []any, deadline time.Time, fn func(index.Ref) bool) error
	// GeoCollection serves geo constraints from S2 cell indexes (geo.go).
	GeoCollection
}

// Source gives the planner the classes and relations of the data.
type Source interface {
	// Collection returns a class's objects, or nil when it has none.
	Collection(class string) Collection
	// Related calls fn for each id in the relation key of owningClass/owningID,
	// in ascending order, until fn returns false.
	Related(owningClass, key, owningID string, fn func(relatedID string) bool)
	// RelatedCount is the number of ids Related would yield.
	RelatedCount(owningClass, key, owningID string) int
	// Owners calls fn for each owning id whose relation key holds relatedID.
	Owners(owningClass, key, relatedID string, fn func(owningID string) bool)
	// FieldType reports a class field's locked type.
	FieldType(class, field string) (schema.Type, bool)
	// RelationTarget names the class a Relation field points to ("" if none).
	RelationTarget(class, field string) string
}

// External is implemented by Sources some of whose classes are kept out of
// memory (served by SQL): a subquery on such a class runs there.
type External interface {
	// External runs q (a subquery) when its class is kept out of memory;
	// handled is false for a class in memory.
	External(q Query) (objs []schema.Object, handled bool, err error)
}

// SortKey is one element of an order.
type SortKey struct {
	Path string
	Desc bool
}

// Query is everything a plan needs to know about one request.
type Query struct {
	Class string
	Where map[string]any
	Order []SortKey
	Skip  int
	Limit int
	Count bool
	// Exempt skips the scan budget (master-key callers by default).
	Exempt bool
	// Undecoded lets the plan leave a result undecoded (Result.Objects[i]
	// nil, Result.Refs[i] its version) when nothing in the plan reads it:
	// no residual filter, no visibility guard, and an order the scans
	// give. A caller that only sends the stored bytes decodes nothing.
	Undecoded bool
	// Guard, when set, authorizes reading class (the queried class, or a
	// subquery's when sub is set) with the given where: it may refuse, and
	// returns the filter of objects the caller may see and a where to AND
	// with the query (pointer permissions). Nil means everything is visible.
	Guard Guard
	// RelatedVisible, when set, says whether the caller may list the
	// members of an owner's relation field ($relatedTo): an owner the
	// caller cannot read, or a field hidden from it, lists none. Nil
	// allows every relation.
	RelatedVisible func(ownerClass, key, ownerID string) bool
	// FlagDecides, when set, reports whether in class the Guard's filter
	// passes every object the index does not flag (index.Ref.Flagged):
	// then a count tests only the flagged candidates, decoding no other.
	FlagDecides func(class string) bool
}

// Guard authorizes a read; see Query.Guard.
type Guard func(class string, where map[string]any, sub bool) (visible func(schema.Object) bool, extra map[string]any, err error)

// Options tune planning.
type Options struct {
	// MaxScan is the most objects a plan may examine without an index to
	// narrow it; 0 means no budget.
	MaxScan int
	// WarnOnly logs instead of refusing plans over the budget.
	WarnOnly bool
	Warn     func(msg string)
	// Timeout bounds a query's scans (error 124 beyond it).
	Timeout time.Duration
	// SubqueryCap overrides MaxSubqueryResults (tests use a small one).
	SubqueryCap int
	// Now is the clock for $relativeTime.
	Now func() time.Time
	// NearSphereMaxDistance (radians) limits a $nearSphere that gives no
	// maximum distance: 0 means the specification's 100 miles
	// (geo.DefaultNearSphereMaxDistance), a negative value no limit.
	NearSphereMaxDistance float64
}

// Limits the planner enforces.
const (
	// MaxSubqueryResults caps how many objects one $inQuery, $notInQuery,
	// $select or $dontSelect subquery may yield: their results are held in
	// memory as a set.
	MaxSubqueryResults = 100_000
	// MaxSubqueryDepth bounds subqueries nested inside subqueries.
	MaxSubqueryDepth = 8
	// DefaultTimeout bounds a query when Options.Timeout is zero.
	DefaultTimeout = 30 * time.Second
)

// Errors of the planner's own limits.
var (
	ErrSubqueryTooDeep = schema.Errorf(schema.CodeInvalidQuery,
		"subqueries are nested more than %d levels deep", MaxSubqueryDepth)
	ErrTimeout = schema.Errorf(schema.CodeTimeout, "the query took too long")
)

// subqueryCap is the cap in force and the error for going past it.
func (p *planner) subqueryCap() int {
	if p.opts.SubqueryCap > 0 {
		return p.opts.SubqueryCap
	}
	return MaxSubqueryResults
}

func (p *planner) errSubqueryTooLarge() error {
	return schema.Errorf(schema.CodeInefficientQuery, "a subquery matched more than %d objects; narrow it", p.subqueryCap())
}

// accessKind is how candidates are produced.
type accessKind int

const (
	accessEmpty  accessKind = iota // nothing can match
	accessFull                     // every object, in objectId order
	accessRanges                   // ranges of one index
	accessIDs                      // a set of objectIds
	accessUnion                    // union of sub-accesses ($or)
	accessGeo                      // S2 cell scans of a geo index (geo.go)
)

// accessNames are the access kinds as operators see them (metrics, logs).
var accessNames = [...]string{
	accessEmpty:  "empty",
	accessFull:   "full_scan",
	accessRanges: "index_range",
	accessIDs:    "id_lookup",
	accessUnion:  "index_union",
	accessGeo:    "geo_cover",
}

// Kind names how the plan finds its candidates: empty, full_scan,
// index_range, id_lookup, index_union or geo_cover.
func (pl *Plan) Kind() string { return accessNames[pl.access.kind] }

// access is a candidate source with its estimated size. It may yield a
// superset of the matches; the residual matcher checks what it leaves open.
type access struct {
	kind   accessKind
	path   string
	ranges []index.Range
	// points, when set, are the keys of an equality or $in: the access
	// scans their point ranges merged by objectId (ScanEqual), so it stops
	// after the first matches. ranges then holds the one point range of a
	// single key, for an order the index can serve, and is nil otherwise.
	points []any
	// ids are an accessIDs's objectIds (a relation's members stream
	// from the index as the plan reads them).
	ids      *valueSet
	branches []*access
	// within, on an accessRanges with points, is the point access of
	// another constraint of the same $and whose keys each candidate must
	// hold too (ScanEqualWithin): only objects matching both are read.
	within   *access
	geo      *geoAccess // accessGeo
	estimate int
	// exact is set when estimate is the exact number of index entries.
	exact bool
	// tight is set when the access yields exactly the objects matching
	// the constraint it came from (no residual work for that constraint).
	tight bool
	// op is the constraint a single-constraint access came from; when the
	// access is tight, that constraint leaves the residual filter.
	op *where.Op
	// node is the field constraint a tight access decides whole (all of
	// its comparisons folded into one range); it leaves the residual.
	node *where.Node
	// why describes the access for explain and for 154 messages; when
	// empty, reason makes it from op and path (made only when asked).
	why string
}

func (a *access) String() string {
	switch a.kind {
	case accessEmpty:
		return "empty"
	case accessFull:
		return "full scan"
	case accessRanges:
		n := len(a.ranges)
		if a.points != nil {
			n = len(a.points)
		}
		s := fmt.Sprintf("index %s (%d range%s)", a.path, n, plural(n))
		if a.within != nil {
			s += fmt.Sprintf(" within %s (%d key%s)", a.within.path, len(a.within.points), plural(len(a.within.points)))
		}
		return s
	case accessIDs:
		return fmt.Sprintf("objectId lookup (%d id%s)", a.estimate, plural(a.estimate))
	case accessUnion:
		parts := make([]string, len(a.branches))
		for i, b := range a.branches {
			parts[i] = b.String()
		}
		return "union(" + strings.Join(parts, ", ") + ")"
	case accessGeo:
		return a.geo.describe(a.path)
	}
	return "?"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Plan is a compiled query, ready to run.
type Plan struct {
	q    Query
	coll Collection
	root *where.Node
	// residual is what the matcher still checks after the access.
	residual *where.Node
	match    func(schema.Object) bool
	// sortKeys is q.Order in the matcher's terms.
	sortKeys []matcher.SortKey
	// scorer rates $text matches when the order names "$score".
	scorer *matcher.TextScorer
	// filler boxes the values of set operators (fillSets, for explain);
	// a pointer, not a method value, which would cost every plan an
	// allocation.
	filler *planner
	// visible is set when a guard filters objects the caller may not see.
	visible bool
	// guard is the guard's visibility test when visible is set.
	guard func(schema.Object) bool
	// flagDecides: an object the index does not flag passes guard
	// (Query.FlagDecides).
	flagDecides bool
	access      *access
	// orderIndex is set when the order is served by scanning that index.
	orderIndex bool
	// undecoded: the plan reads no result's fields (Query.Undecoded)
	// beyond what bytes tests.
	undecoded bool
	// bytes, when set, tests the residual on each candidate's stored
	// bytes before it is decoded (bytes.go).
	bytes    *byteTest
	near     *nearSort
	deadline time.Time
}

// reason describes the access for explain and for 154 messages.
func (a *access) reason() string {
	if a.why == "" && a.op != nil {
		return a.op.Code.String() + " on " + a.path
	}
	return a.why
}

// TextScore is obj's "$score" for the query's $text (false when the query
// has none).
func (pl *Plan) TextScore(obj schema.Object) (float64, bool) {
	if pl.scorer == nil {
		pl.scorer = matcher.NewTextScorer(pl.root)
	}
	if pl.scorer == nil {
		return 0, false
	}
	return pl.scorer.Score(obj), true
}

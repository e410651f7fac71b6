package match

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Options tell Compile about the subscribed class.
type Options struct {
	// FieldType reports the locked type of a top-level field (nil:
	// schemaless). It matters as it does for REST: a Pointer on a Relation
	// field is a membership test, $relativeTime needs a Date field.
	FieldType func(field string) (schema.Type, bool)
	// Now is the clock of $relativeTime; nil means time.Now.
	Now func() time.Time
	// NearSphereMax limits a $nearSphere without a maximum distance
	// (radians), as the planner's option of the same name does for find:
	// 0 means the specification's 100 miles, a negative value no limit.
	NearSphereMax float64
}

func (o Options) nearMax() float64 {
	switch {
	case o.NearSphereMax < 0:
		return 0
	case o.NearSphereMax == 0:
		return geo.DefaultNearSphereMaxDistance
	}
	return o.NearSphereMax
}

// parse builds the tree the matcher compiles, with the same $nearSphere
// limit a find applies.
func (o Options) parse(w map[string]any) (*where.Node, error) {
	tree, err := where.Parse(w, where.Options{FieldType: o.FieldType, Now: o.Now})
	if err != nil {
		return nil, err
	}
	matcher.LimitNearSphere(tree, o.nearMax())
	return tree, nil
}

// Query is a compiled subscription query: the where of one class, its
// matcher and its index cover. It is immutable and safe for concurrent use.
type Query struct {
	class    string
	key      string
	where    map[string]any
	opts     Options
	m        matcher.Matcher
	relative bool     // $relativeTime: recompiled against the clock at each test
	fields   []string // root fields the where reads
	cover    cover
	get      bool   // where is exactly {objectId: <string>}
	joins    []Join // live joins at the top level; m matches the rest
}

// unsupported names the constraints a subscription cannot hold where
// they stand: $relatedTo and subqueries other than live joins (top-level
// $inQuery, $notInQuery, $select, $dontSelect, $relatedTo; see Join).
// Their answer depends on other objects, which change without an event
// for the subscribed class, so a snapshot taken at subscribe time would
// silently go wrong; they are refused instead.
var unsupported = map[where.Kind]string{
	where.KindRelatedTo:  "$relatedTo",
	where.KindInQuery:    "$inQuery",
	where.KindNotInQuery: "$notInQuery",
	where.KindSelect:     "$select",
	where.KindDontSelect: "$dontSelect",
}

// Compile parses and compiles a subscription's where for class. Errors are
// *schema.Error with Parse's codes: what REST would refuse is refused the
// same way, and subqueries and relation membership tests are refused with
// 102 (see unsupported).
func Compile(class string, w map[string]any, opts Options) (*Query, error) {
	if !schema.ValidClassName(class) {
		return nil, schema.ClassNameError(class)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	tree, err := opts.parse(w)
	if err != nil {
		return nil, err
	}
	q := &Query{class: class, where: w, opts: opts}
	roots := map[string]bool{}
	tree, err = q.splitJoins(tree, roots)
	if err != nil {
		return nil, err
	}
	var refused error
	tree.Walk(func(n *where.Node) bool {
		if name, bad := unsupported[n.Kind]; bad && refused == nil {
			refused = schema.Errorf(schema.CodeInvalidQuery, "%s is not supported in LiveQuery subscriptions but at the top level of the where", name)
		}
		if n.Path != "" {
			root, _, _ := strings.Cut(n.Path, ".")
			roots[root] = true
		}
		for _, op := range n.Ops {
			switch {
			case op.Code == where.OpRelationIn || op.Code == where.OpRelationNin:
				if refused == nil {
					refused = schema.Errorf(schema.CodeInvalidQuery,
						"relation membership (%s on Relation field %s) is not supported in LiveQuery subscriptions", op.Code, n.Path)
				}
			case op.Relative != "":
				q.relative = true
			}
		}
		return true
	})
	if refused == nil && q.relative && len(q.joins) > 0 {
		refused = schema.Errorf(schema.CodeInvalidQuery, "a live join with $relativeTime is not supported in LiveQuery subscriptions")
	}
	if refused != nil {
		return nil, refused
	}
	if q.m, err = matcher.Compile(tree, nil); err != nil {
		return nil, err
	}
	for r := range roots {
		q.fields = append(q.fields, r)
	}
	sort.Strings(q.fields)
	if !q.relative {
		q.cover, _ = coverOf(tree)
	}
	if len(w) == 1 {
		_, q.get = w["objectId"].(string)
	}
	norm, err := json.Marshal(w) // map keys sorted: equal wheres, equal text
	if err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "where is not JSON")
	}
	q.key = class + "\x00" + string(norm)
	if q.relative {
		q.key += "\x00relative" // the value moves with the clock; never shared
	}
	return q, nil
}

// Class is the subscribed class.
func (q *Query) Class() string { return q.class }

// Where is the where as the client sent it.
func (q *Query) Where() map[string]any { return q.where }

// Key identifies the query: equal class and where give equal keys, so
// identical subscriptions share one matcher run.
func (q *Query) Key() string { return q.key }

// Fields are the top-level fields the where reads, sorted.
func (q *Query) Fields() []string { return q.fields }

// IsGet reports whether the where is exactly {objectId: "<id>"}: such a
// subscription is checked against the CLP's get rather than find.
func (q *Query) IsGet() bool { return q.get }

// Match reports whether obj satisfies the where. A nil obj never matches.
func (q *Query) Match(obj schema.Object) bool {
	if obj == nil {
		return false
	}
	if q.relative {
		tree, err := q.opts.parse(q.where)
		if err != nil {
			return false
		}
		m, err := matcher.Compile(tree, nil)
		return err == nil && m.Match(obj)
	}
	return q.m.Match(obj)
}

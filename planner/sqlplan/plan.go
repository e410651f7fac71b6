package sqlplan

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/where"
)

// Query is one find on a class kept out of memory.
type Query struct {
	Class string
	// Where is the query's where, with any constraint the caller's
	// pointer permissions add already ANDed in.
	Where map[string]any
	Order []SortKey
	Skip  int
	Limit int // < 0: no limit
	// Readers are the ACL entries that let the caller read ("*", the
	// user's id, "role:Name"); nil reads every object (master key).
	Readers []string
	// FieldType reports the class's locked field types.
	FieldType func(field string) (schema.Type, bool)
	// Now is the clock of $relativeTime; nil means time.Now.
	Now func() time.Time
	// Internal allows the internal keys in the where (where.Options).
	Internal bool
	// Resolver answers relations and subqueries; nil refuses them.
	Resolver Resolver
	// NearSphereMax (radians) limits a $nearSphere without a maximum; 0
	// or less leaves it unlimited (the caller resolves the default).
	NearSphereMax float64
}

// SortKey is one element of an order.
type SortKey struct {
	Path string
	Desc bool
}

// Statement is a find translated for PostgreSQL: what SQL runs, and what
// Go does with its rows when SQL cannot answer exactly.
type Statement struct {
	// Select is the statement. When Exact, it is the whole answer with
	// its order and page; else it is a prefilter (a superset of the
	// answer), ordered when SQL can order it, without a page.
	Select store.Select
	// Residual is the part of the where SQL only approximates, decided
	// over each row of the prefilter by the matcher the in-memory path
	// compiles; nil when SQL decides the whole where.
	Residual *where.Node
	// Order is the order Go sorts the matching rows by (matcher.Compare),
	// when SQL cannot give it; nil when the rows come ordered.
	Order []matcher.SortKey
	// Skip and Limit are the page Go cuts when the statement is not exact.
	Skip, Limit int
	match       matcher.Matcher
	root        *where.Node         // the parsed where, for its $text's rating
	scorer      *matcher.TextScorer // made from root when first asked
	scorerMade  bool
}

// TextScore is obj's "$score" for the query's $text (false when the query
// has none), rated in Go as the in-memory planner rates it.
func (st *Statement) TextScore(obj schema.Object) (float64, bool) {
	scorer := st.textScorer()
	if scorer == nil {
		return 0, false
	}
	return scorer.Score(obj), true
}

// textScorer rates objects for the where's $text (nil without one).
func (st *Statement) textScorer() *matcher.TextScorer {
	if !st.scorerMade {
		st.scorer, st.scorerMade = matcher.NewTextScorer(st.root), true
	}
	return st.scorer
}

// Exact reports whether SQL answers the whole query: rows, order, page
// and count.
func (st *Statement) Exact() bool { return st.Residual == nil && st.Order == nil }

// Translate builds the statement of q over table t: the where, the ACL
// filter, the order (objectId last, in the direction of the last key, as
// matcher.Compare breaks ties) and the page. What SQL cannot decide
// exactly is left to Go (Residual, Order).
func Translate(t store.Table, q Query) (*Statement, error) {
	tree, err := where.Parse(q.Where, where.Options{FieldType: q.FieldType, Now: q.Now, Internal: q.Internal})
	if err != nil {
		return nil, err
	}
	// A $nearSphere without a maximum gets the configured one, as in memory.
	matcher.LimitNearSphere(tree, q.NearSphereMax)
	b := &builder{class: q.Class, t: t}
	var answers *memo
	if q.Resolver != nil {
		answers = &memo{r: q.Resolver, class: q.Class}
		b.res = answers
	}
	cond, err := b.node(tree)
	if err != nil {
		return nil, err
	}
	st := &Statement{Skip: q.Skip, Limit: q.Limit, root: tree}
	if len(b.loose) > 0 {
		st.Residual = b.residual(tree)
		var r matcher.Resolver
		if answers != nil {
			r = matcherResolver{answers}
		}
		// The residual's subqueries (inside an $or or $nor) were answered
		// for the statement: the memo hands the matcher the same answers.
		if st.match, err = matcher.Compile(st.Residual, r); err != nil {
			return nil, err
		}
	}
	if q.Readers != nil {
		cond = "(" + cond + " AND " + b.acl(q.Readers) + ")"
	}
	order, inGo := b.orderBy(q.Order, b.nearOf(tree))
	if inGo {
		order = ""
		for _, k := range q.Order {
			key := matcher.SortKey{Path: k.Path, Desc: k.Desc}
			if k.Path == "$score" {
				// The $text's rating, computed in Go as the in-memory
				// planner does, so both stores page alike.
				if scorer := st.textScorer(); scorer != nil {
					key.Score = scorer.Score
				}
			}
			st.Order = append(st.Order, key)
		}
	}
	if cond == "(TRUE)" || cond == "TRUE" {
		cond = ""
	}
	cond, args := compact(cond, b.args, 0)
	order, orderArgs := compact(order, b.args, len(args))
	st.Select = store.Select{Where: cond, Args: args, OrderBy: order, OrderArgs: orderArgs, Limit: q.Limit, Offset: q.Skip}
	if !st.Exact() {
		st.Select.Limit, st.Select.Offset = -1, 0
	}
	return st, nil
}

// residual is the part of n SQL left to Go: the loose operators of each
// field, and whole every $or and $nor holding one (their SQL is only a
// superset of their answer). nil when SQL decides all of n.
func (b *builder) residual(n *where.Node) *where.Node {
	switch n.Kind {
	case where.KindAnd:
		var kids []*where.Node
		for _, c := range n.Children {
			if r := b.residual(c); r != nil {
				kids = append(kids, r)
			}
		}
		if len(kids) == 0 {
			return nil
		}
		return &where.Node{Kind: where.KindAnd, Children: kids}
	case where.KindOr, where.KindNor:
		for _, c := range n.Children {
			if b.residual(c) != nil {
				return n
			}
		}
	case where.KindField:
		var ops []where.Op
		for i := range n.Ops {
			if b.loose[&n.Ops[i]] {
				ops = append(ops, n.Ops[i])
			}
		}
		if len(ops) == 0 {
			return nil
		}
		field := *n
		field.Ops = ops
		return &field
	}
	return nil
}

var placeholder = regexp.MustCompile(`\$[0-9]+`)

// compact renumbers the placeholders sql uses, from after+1 on, and drops
// the arguments it does not: a constraint decided without its operands (a type mismatch,
// an empty list) leaves arguments PostgreSQL could not type. Only arg
// writes "$<n>": identifiers are quoted and no key holds a '$'.
func compact(sql string, args []any, after int) (string, []any) {
	renum := map[string]string{}
	var out []any
	sql = placeholder.ReplaceAllStringFunc(sql, func(p string) string {
		if r, ok := renum[p]; ok {
			return r
		}
		n, _ := strconv.Atoi(p[1:])
		out = append(out, args[n-1])
		renum[p] = "$" + strconv.Itoa(after+len(out))
		return renum[p]
	})
	return sql, out
}

// acl is Parse's read rule over the ACL key: no ACL (or not an object)
// lets everyone read; else one of the readers must hold "read": true. An
// object kept whole as bytes shows SQL no ACL: only the master key reads
// it here, rather than everyone.
func (b *builder) acl(readers []string) string {
	j := b.jsonValue("ACL")
	raw := ""
	if b.t.Raw != "" {
		raw = quote(b.t.Raw) + " IS NULL AND "
	}
	return "(" + raw + "CASE WHEN jsonb_typeof(" + j + ") = 'object' THEN EXISTS (SELECT 1 FROM jsonb_each(" + j +
		") AS a(k, v) WHERE a.k = ANY(" + b.arg(readers) + "::text[]) AND a.v -> 'read' = 'true'::jsonb) ELSE TRUE END)"
}

// orderBy is the ORDER BY list: each key's typed column (strings byte-wise;
// missing and null first when ascending, as the matcher's ranks put them),
// then objectId. A $nearSphere without an order sorts by distance. inGo
// is set when a key has no typed column (Object, Array and GeoPoint
// fields, dot paths): Go sorts the rows then.
func (b *builder) orderBy(keys []SortKey, near string) (sql string, inGo bool) {
	if len(keys) == 0 && near != "" {
		return near + ", " + quote(b.t.ID), false
	}
	out := ""
	desc := false
	for _, k := range keys {
		var expr string
		switch col, ok := b.t.Columns[k.Path]; {
		case k.Path == "objectId":
			expr = quote(b.t.ID) + ` COLLATE "C"`
		case ok && col.Kind != store.ColumnJSON && col.Kind != store.ColumnGeoPoint && col.Kind != store.ColumnPolygon:
			expr = collated(typed{expr: quote(col.Name), kind: col.Kind})
		default:
			return "", true
		}
		if k.Desc {
			expr += " DESC NULLS LAST"
		} else {
			expr += " ASC NULLS FIRST"
		}
		out += expr + ", "
		desc = k.Desc
	}
	out += quote(b.t.ID)
	if desc {
		out += " DESC"
	}
	return out, false
}

// CheckBudget applies the 154 rule with PostgreSQL's own estimate of the
// rows the statement reads: over maxScan, the query is refused before it
// runs, as the in-memory planner refuses a plan over its budget.
func CheckBudget(ctx context.Context, qr store.Querier, class string, sel store.Select, maxScan int) error {
	if maxScan <= 0 {
		return nil
	}
	rows, seq, err := qr.Explain(ctx, class, sel)
	if err != nil {
		return err
	}
	if rows <= float64(maxScan) {
		return nil
	}
	why := "PostgreSQL estimates its index scans read that many rows"
	if seq {
		why = "PostgreSQL plans a sequential scan of its table"
	}
	return schema.Errorf(schema.CodeInefficientQuery,
		"This query on %s would examine %s objects (more than maxScan %d) because %s. Add an index on a constrained field or narrow the query with an indexed constraint.",
		class, estimate(rows), maxScan, why)
}

func estimate(rows float64) string { return fmt.Sprintf("about %.0f", rows) }

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

// Translate builds the statement of q over table t: the where, the ACL
// filter, the order (objectId last, in the direction of the last key, as
// matcher.Compare breaks ties) and the page.
func Translate(t store.Table, q Query) (store.Select, error) {
	tree, err := where.Parse(q.Where, where.Options{FieldType: q.FieldType, Now: q.Now, Internal: q.Internal})
	if err != nil {
		return store.Select{}, err
	}
	// A $nearSphere without a maximum gets the configured one, as in memory.
	matcher.LimitNearSphere(tree, q.NearSphereMax)
	b := &builder{class: q.Class, t: t, res: q.Resolver}
	cond, err := b.node(tree)
	if err != nil {
		return store.Select{}, err
	}
	if q.Readers != nil {
		cond = "(" + cond + " AND " + b.acl(q.Readers) + ")"
	}
	order, err := b.orderBy(q.Order, b.nearOf(tree))
	if err != nil {
		return store.Select{}, err
	}
	if cond == "(TRUE)" || cond == "TRUE" {
		cond = ""
	}
	cond, args := compact(cond, b.args, 0)
	order, orderArgs := compact(order, b.args, len(args))
	return store.Select{Where: cond, Args: args, OrderBy: order, OrderArgs: orderArgs, Limit: q.Limit, Offset: q.Skip}, nil
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
// then objectId. A $nearSphere without an order sorts by distance.
func (b *builder) orderBy(keys []SortKey, near string) (string, error) {
	if len(keys) == 0 && near != "" {
		return near + ", " + quote(b.t.ID), nil
	}
	out := ""
	desc := false
	for _, k := range keys {
		var expr string
		switch col, ok := b.t.Columns[k.Path]; {
		case k.Path == "objectId":
			expr = quote(b.t.ID) + ` COLLATE "C"`
		case ok && col.Kind != store.ColumnJSON && col.Kind != store.ColumnGeoPoint:
			expr = collated(typed{expr: quote(col.Name), kind: col.Kind})
		default:
			return "", unsupported(b.class, "an order by %q (only String, Number, Boolean, Date and Pointer fields order in SQL)", k.Path)
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
	return out, nil
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

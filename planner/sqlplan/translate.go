package sqlplan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/where"
)

// Resolver answers the parts of a where that read other objects: the
// relations (kept in memory by every store) and subqueries, which run
// with the caller's rights through the service.
type Resolver interface {
	// RelatedTo lists the objectIds in relation key of the owner object.
	RelatedTo(ownerClass, ownerID, key string) ([]string, error)
	// RelationOwners lists the objectIds of class's objects whose
	// relation key holds one of relatedIDs.
	RelationOwners(class, key string, relatedIDs []string) ([]string, error)
	// InQuery lists the class and ids of the objects matching sub.
	InQuery(sub *where.Subquery) (className string, ids []string, err error)
	// Select lists the values at sub.Key of the objects matching sub.
	Select(sub *where.Subquery) ([]any, error)
}

// Unsupported refuses what has no exact SQL translation (102).
func unsupported(class, format string, args ...any) error {
	return schema.Errorf(schema.CodeInvalidQuery, "class %s is kept out of memory and its queries run in PostgreSQL, which cannot run %s",
		class, fmt.Sprintf(format, args...))
}

// looseError marks a construct SQL cannot decide exactly but can leave
// to Go: the operator becomes TRUE in the statement (a superset) and runs
// in the residual matcher over its rows. Where it cannot be left to Go (a
// subquery's own operator), it is the 102 it wraps.
type looseError struct {
	refused *schema.Error
	// prefilter, when set, is a superset of what the operator matches
	// that SQL can test (the key holds a value): it narrows the rows Go
	// examines.
	prefilter string
}

func (e *looseError) Error() string { return e.refused.Error() }
func (e *looseError) Unwrap() error { return e.refused }

// inexact is unsupported for a construct the residual matcher can decide.
func inexact(class, format string, args ...any) error {
	return &looseError{refused: unsupported(class, format, args...).(*schema.Error)}
}

// inexactWhere is inexact with a prefilter SQL can test.
func inexactWhere(prefilter, class, format string, args ...any) error {
	return &looseError{refused: unsupported(class, format, args...).(*schema.Error), prefilter: prefilter}
}

// builder collects one statement's text and arguments.
type builder struct {
	class string
	t     store.Table
	args  []any
	res   Resolver
	// loose are the operators left to the residual matcher.
	loose map[*where.Op]bool
}

func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

// node is n as a boolean SQL expression; NULL means false (see not).
func (b *builder) node(n *where.Node) (string, error) {
	switch n.Kind {
	case where.KindAnd, where.KindOr, where.KindNor:
		if len(n.Children) == 0 {
			if n.Kind == where.KindOr {
				return "FALSE", nil
			}
			return "TRUE", nil
		}
		looseBefore := len(b.loose)
		parts := make([]string, len(n.Children))
		for i, c := range n.Children {
			s, err := b.node(c)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		switch n.Kind {
		case where.KindAnd:
			return "(" + strings.Join(parts, " AND ") + ")", nil
		case where.KindOr:
			return "(" + strings.Join(parts, " OR ") + ")", nil
		}
		if len(b.loose) > looseBefore {
			// The negation of a superset is no superset: the whole
			// $nor runs in Go.
			return "TRUE", nil
		}
		return not("(" + strings.Join(parts, " OR ") + ")"), nil
	case where.KindField:
		parts := make([]string, 0, len(n.Ops))
		for i := range n.Ops {
			s, err := b.op(n.Path, &n.Ops[i])
			var le *looseError
			if errors.As(err, &le) {
				if b.loose == nil {
					b.loose = map[*where.Op]bool{}
				}
				b.loose[&n.Ops[i]] = true
				if le.prefilter != "" {
					parts = append(parts, le.prefilter)
				}
				continue
			}
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		if len(parts) == 0 {
			return "TRUE", nil
		}
		return "(" + strings.Join(parts, " AND ") + ")", nil
	case where.KindRelatedTo:
		if n.Related == nil || b.res == nil {
			return "", unsupported(b.class, "$relatedTo here")
		}
		ids, err := b.res.RelatedTo(n.Related.Object.ClassName, n.Related.Object.ObjectID, n.Related.Key)
		if err != nil {
			return "", err
		}
		return b.idIn(ids), nil
	case where.KindInQuery, where.KindNotInQuery, where.KindSelect, where.KindDontSelect:
		if n.Sub == nil || b.res == nil {
			return "", unsupported(b.class, "%s here", n.Kind)
		}
		var vals []any
		if n.Kind == where.KindInQuery || n.Kind == where.KindNotInQuery {
			class, ids, err := b.res.InQuery(n.Sub)
			if err != nil {
				return "", err
			}
			for _, id := range ids {
				vals = append(vals, schema.Pointer(class, id))
			}
		} else {
			got, err := b.res.Select(n.Sub)
			if err != nil {
				return "", err
			}
			vals = matcher.Spread(got)
		}
		code := where.OpIn
		if n.Kind == where.KindNotInQuery || n.Kind == where.KindDontSelect {
			code = where.OpNin
		}
		s, err := b.op(n.Path, &where.Op{Code: code, Values: vals})
		var le *looseError
		if errors.As(err, &le) {
			return "", le.refused // no operator of the where to leave to Go
		}
		return s, err
	}
	return "", fmt.Errorf("sqlplan: malformed %s node", n.Kind)
}

func (b *builder) idIn(ids []string) string {
	if ids == nil {
		ids = []string{}
	}
	return "(" + quote(b.t.ID) + " = ANY(" + b.arg(ids) + "::text[]))"
}

// op translates one operator on path.
func (b *builder) op(path string, op *where.Op) (string, error) {
	root, rest, dotted := strings.Cut(path, ".")
	if op.Code == where.OpRelationIn || op.Code == where.OpRelationNin {
		if b.res == nil {
			return "", unsupported(b.class, "relation membership here")
		}
		var ids []string
		for _, v := range op.Values {
			if m, ok := v.(map[string]any); ok {
				if id, ok := m["objectId"].(string); ok {
					ids = append(ids, id)
				}
			}
		}
		owners, err := b.res.RelationOwners(b.class, path, ids)
		if err != nil {
			return "", err
		}
		s := b.idIn(owners)
		if op.Code == where.OpRelationNin {
			s = not(s)
		}
		return s, nil
	}
	if root == "objectId" && !dotted {
		return b.scalarOp(path, typed{expr: quote(b.t.ID), kind: store.ColumnText}, op)
	}
	if col, ok := b.t.Columns[root]; ok && col.Kind == store.ColumnPolygon {
		t := typed{expr: quote(col.Name), kind: col.Kind, key: root}
		switch {
		case !dotted && op.Code == where.OpExists && op.Exists:
			return b.present(t), nil
		case !dotted && op.Code == where.OpExists:
			return not(b.present(t)), nil
		case !dotted && op.Code == where.OpGeoIntersects:
			// Decided in Go by geo's own edge rule, on the Polygons there.
			return "", inexactWhere(b.present(t), b.class, "%s on the Polygon field %q", op.Code, path)
		}
		return "", inexact(b.class, "%s on the Polygon field %q", op.Code, path)
	}
	if col, ok := b.t.Columns[root]; ok && col.Kind != store.ColumnJSON {
		if dotted {
			return "", inexact(b.class, "a constraint on %q inside a %s field", path, kindName(col.Kind))
		}
		return b.scalarOp(path, typed{expr: quote(col.Name), kind: col.Kind, target: col.Target, key: root}, op)
	}
	j := b.jsonValue(root)
	if dotted {
		j = "(" + j + " #> " + b.arg(strings.Split(rest, ".")) + "::text[])"
	}
	return b.jsonOp(path, j, op)
}

// jsonValue is the jsonb expression of a top-level key held as jsonb: its
// column, or its entry in the extra column (where a null lands too).
func (b *builder) jsonValue(key string) string {
	extra := "(" + quote(b.t.Extra) + " -> " + b.arg(key) + "::text)"
	if col, ok := b.t.Columns[key]; ok {
		return "COALESCE(" + quote(col.Name) + ", " + extra + ")"
	}
	return extra
}

func kindName(k store.ColumnKind) string {
	switch k {
	case store.ColumnText:
		return "String"
	case store.ColumnNumber:
		return "Number"
	case store.ColumnBoolean:
		return "Boolean"
	case store.ColumnDate, store.ColumnStamp:
		return "Date"
	case store.ColumnPointer:
		return "Pointer"
	case store.ColumnGeoPoint:
		return "GeoPoint"
	case store.ColumnPolygon:
		return "Polygon"
	}
	return "Object"
}

// jsonText is v as the text of a jsonb argument.
func jsonText(v any) (string, error) {
	raw, err := json.Marshal(v)
	return string(raw), err
}

// timeOf is a Date operand as a time, when it is one.
func timeOf(v any) (time.Time, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["__type"] != "Date" {
		return time.Time{}, false
	}
	iso, _ := m["iso"].(string)
	return schema.ParseTime(iso)
}

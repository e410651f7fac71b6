package sqlplan

import (
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/where"
)

// typed is a key kept in a typed column.
type typed struct {
	expr   string // the column, quoted
	kind   store.ColumnKind
	target string // a Pointer column's class
	key    string // the object key ("" for objectId, always present)
}

// present is whether the object has the key: a value in the column, or
// one (a null) left in the extra column.
func (b *builder) present(t typed) string {
	if t.key == "" {
		return "TRUE"
	}
	return "(" + t.expr + " IS NOT NULL OR COALESCE(" + quote(b.t.Extra) + " ? " + b.arg(t.key) + "::text, FALSE))"
}

// isNull is the matcher's "equals null": missing, or null (which never
// fills a typed column).
func (b *builder) isNull(t typed) string {
	if t.key == "" {
		return "FALSE"
	}
	return "(" + t.expr + " IS NULL)"
}

// param is q as an argument comparable with the column, when it has the
// column's type; other values never equal or order against the column's.
func (b *builder) param(t typed, q any) (string, bool) {
	switch t.kind {
	case store.ColumnText:
		if s, ok := q.(string); ok {
			return b.arg(s) + "::text", true
		}
	case store.ColumnNumber:
		if f, ok := q.(float64); ok {
			return b.arg(f) + "::float8", true
		}
	case store.ColumnBoolean:
		if v, ok := q.(bool); ok {
			return b.arg(v) + "::boolean", true
		}
	case store.ColumnDate, store.ColumnStamp:
		if tm, ok := timeOf(q); ok {
			return b.arg(tm) + "::timestamptz", true
		}
	case store.ColumnPointer:
		if m, ok := q.(map[string]any); ok && m["__type"] == "Pointer" && m["className"] == t.target {
			if id, ok := m["objectId"].(string); ok {
				return b.arg(id) + "::text", true
			}
		}
	}
	return "", false
}

// collated is the column as it compares and orders: strings byte-wise, as
// Go does (and as the indexes EnsureIndexes makes are built).
func collated(t typed) string {
	if t.kind == store.ColumnText || t.kind == store.ColumnPointer {
		return t.expr + ` COLLATE "C"`
	}
	return t.expr
}

var comparisons = map[where.OpCode]string{where.OpLt: "<", where.OpLte: "<=", where.OpGt: ">", where.OpGte: ">="}

// not negates a predicate. Predicates may be NULL (a comparison with a
// missing column), which a WHERE treats as false; they are not wrapped in
// COALESCE, which would hide them from PostgreSQL's index matching and
// estimates, so the negation is where NULL becomes false.
func not(s string) string { return "(" + s + " IS NOT TRUE)" }

// scalarOp translates op on a typed column.
func (b *builder) scalarOp(path string, t typed, op *where.Op) (string, error) {
	if t.kind == store.ColumnGeoPoint && (op.Code.IsGeo() || op.Code == where.OpExists) {
		return b.geoOp(path, t, op)
	}
	if t.kind == store.ColumnGeoPoint {
		return b.pointOp(path, t, op)
	}
	switch op.Code {
	case where.OpEq, where.OpNe:
		s := b.scalarEq(t, op.Value)
		if op.Code == where.OpNe {
			s = not(s)
		}
		return s, nil
	case where.OpLt, where.OpLte, where.OpGt, where.OpGte:
		if op.Value == nil {
			if op.Code == where.OpLte || op.Code == where.OpGte {
				return b.isNull(t), nil
			}
			return "FALSE", nil
		}
		if t.kind == store.ColumnPointer {
			return b.pointerRange(path, t, op)
		}
		p, ok := b.param(t, op.Value)
		if !ok {
			return "FALSE", nil // another type rank: no value compares
		}
		return "(" + collated(t) + " " + comparisons[op.Code] + " " + p + ")", nil
	case where.OpIn, where.OpNin:
		s := b.scalarIn(t, op.Values)
		if op.Code == where.OpNin {
			s = not(s)
		}
		return s, nil
	case where.OpAll:
		if len(op.Values) == 0 {
			return "FALSE", nil
		}
		parts := []string{b.present(t)}
		for _, v := range op.Values {
			parts = append(parts, b.scalarEq(t, v))
		}
		return and(parts), nil
	case where.OpContainedBy:
		return "TRUE", nil // only an array can hold an element outside the list
	case where.OpExists:
		if op.Exists {
			return b.present(t), nil
		}
		return not(b.present(t)), nil
	case where.OpRegex, where.OpAllRegex:
		if t.kind != store.ColumnText {
			return "FALSE", nil // a regex matches strings only
		}
		return b.regexes(path, t.expr, false, op)
	case where.OpText:
		if t.kind != store.ColumnText {
			return "FALSE", nil // $text searches strings only
		}
		// Words, case and diacritic folds are Go's: decided there, on
		// the strings.
		return "", inexactWhere("("+t.expr+" IS NOT NULL)", b.class, "%s on %q", op.Code, path)
	case where.OpNearSphere, where.OpWithinBox, where.OpWithinPolygon, where.OpWithinSphere, where.OpGeoIntersects:
		return "FALSE", nil // only a GeoPoint (or Polygon) is near or within
	}
	return "", inexact(b.class, "%s on %q", op.Code, path)
}

func and(parts []string) string {
	out := "("
	for i, p := range parts {
		if i > 0 {
			out += " AND "
		}
		out += p
	}
	return out + ")"
}

func (b *builder) scalarEq(t typed, q any) string {
	if q == nil {
		return b.isNull(t)
	}
	p, ok := b.param(t, q)
	if !ok {
		return "FALSE"
	}
	return "(" + collated(t) + " = " + p + ")"
}

// scalarIn is $in on a typed column: one = ANY of the values of its type.
func (b *builder) scalarIn(t typed, values []any) string {
	var (
		texts []string
		nums  []float64
		bools []bool
		times []time.Time
		null  bool
	)
	for _, v := range values {
		if v == nil {
			null = true
			continue
		}
		switch t.kind {
		case store.ColumnText:
			if s, ok := v.(string); ok {
				texts = append(texts, s)
			}
		case store.ColumnPointer:
			if m, ok := v.(map[string]any); ok && m["__type"] == "Pointer" && m["className"] == t.target {
				if id, ok := m["objectId"].(string); ok {
					texts = append(texts, id)
				}
			}
		case store.ColumnNumber:
			if f, ok := v.(float64); ok {
				nums = append(nums, f)
			}
		case store.ColumnBoolean:
			if x, ok := v.(bool); ok {
				bools = append(bools, x)
			}
		case store.ColumnDate, store.ColumnStamp:
			if tm, ok := timeOf(v); ok {
				times = append(times, tm)
			}
		}
	}
	var parts []string
	switch {
	case len(texts) > 0:
		parts = append(parts, "("+collated(t)+" = ANY("+b.arg(texts)+"::text[]))")
	case len(nums) > 0:
		parts = append(parts, "("+t.expr+" = ANY("+b.arg(nums)+"::float8[]))")
	case len(bools) > 0:
		parts = append(parts, "("+t.expr+" = ANY("+b.arg(bools)+"::boolean[]))")
	case len(times) > 0:
		parts = append(parts, "("+t.expr+" = ANY("+b.arg(times)+"::timestamptz[]))")
	}
	if null {
		parts = append(parts, b.isNull(t))
	}
	if len(parts) == 0 {
		return "FALSE"
	}
	return "(" + join(parts, " OR ") + ")"
}

func join(parts []string, sep string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += sep
		}
		out += p
	}
	return out
}

// pointOp is equality on a GeoPoint column: the same coordinates.
func (b *builder) pointOp(path string, t typed, op *where.Op) (string, error) {
	eq := func(q any) string {
		if q == nil {
			return b.isNull(t)
		}
		m, ok := q.(map[string]any)
		lat, ok1 := m["latitude"].(float64)
		lng, ok2 := m["longitude"].(float64)
		if !ok || len(m) != 3 || m["__type"] != "GeoPoint" || !ok1 || !ok2 {
			return "FALSE"
		}
		x, y := coords(t.expr)
		return "(" + x + " = " + b.arg(lng) + "::float8 AND " + y + " = " + b.arg(lat) + "::float8)"
	}
	var parts []string
	switch op.Code {
	case where.OpEq, where.OpNe:
		parts = []string{eq(op.Value)}
	case where.OpIn, where.OpNin:
		parts = []string{"FALSE"}
		for _, v := range op.Values {
			parts = append(parts, eq(v))
		}
	case where.OpAll:
		if len(op.Values) == 0 {
			return "FALSE", nil
		}
		all := []string{b.present(t)}
		for _, v := range op.Values {
			all = append(all, eq(v))
		}
		return and(all), nil
	case where.OpContainedBy:
		return "TRUE", nil
	case where.OpRegex, where.OpAllRegex:
		return "FALSE", nil
	default:
		return "", inexact(b.class, "%s on the GeoPoint field %q", op.Code, path)
	}
	s := "(" + join(parts, " OR ") + ")"
	if op.Code == where.OpNe || op.Code == where.OpNin {
		s = not(s)
	}
	return s, nil
}

// pointerRange orders a Pointer column's values against a Pointer as
// schema.Compare does: by class, then by objectId. Every value has the
// column's class, so only an operand of that class compares by id.
func (b *builder) pointerRange(path string, t typed, op *where.Op) (string, error) {
	q, ok := op.Value.(map[string]any)
	if !ok || schema.RankOf(op.Value) != schema.RankObject {
		return "FALSE", nil // another type rank: no value compares
	}
	class, _ := q["className"].(string)
	id, _ := q["objectId"].(string)
	if q["__type"] != "Pointer" {
		return "", inexact(b.class, "%s with an Object operand on the Pointer field %q", op.Code, path)
	}
	below := op.Code == where.OpLt || op.Code == where.OpLte
	switch c := strings.Compare(t.target, class); {
	case c == 0:
		return "(" + collated(t) + " " + comparisons[op.Code] + " " + b.arg(id) + "::text)", nil
	case (c < 0) == below:
		return "(" + t.expr + " IS NOT NULL)", nil
	}
	return "FALSE", nil
}

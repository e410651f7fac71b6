package sqlplan

import (
	"fmt"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Values held as jsonb (Object, Array, ACL and File fields, keys without a
// column, dot paths) are tested with the matcher's rules spelled out in
// SQL: equality and ranges reach into arrays, ranges stay within one type
// rank, and CASE guards keep each jsonb function on the type it takes.

// anyElem is test on the value or, for an array, on one of its elements:
// the matcher's reach into arrays. test must give a boolean for any
// jsonb; the CASE keeps jsonb_array_elements from seeing a non-array.
func anyElem(j string, test func(x string) string) string {
	return "(" + test(j) + " OR CASE WHEN jsonb_typeof(" + j + ") = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(" + j +
		") AS e(v) WHERE " + test("e.v") + ") ELSE FALSE END)"
}

// jsonNull is the matcher's "equals null" on a jsonb value: missing, null,
// or an array holding null.
func jsonNull(j string) string {
	return "(" + j + " IS NULL OR " + j + " = 'null'::jsonb OR (jsonb_typeof(" + j + ") = 'array' AND " + j + " @> '[null]'::jsonb))"
}

// jsonOp translates op on a value kept as jsonb.
func (b *builder) jsonOp(path, j string, op *where.Op) (string, error) {
	switch op.Code {
	case where.OpEq, where.OpNe:
		s, err := b.jsonEq(j, op.Value)
		if err != nil {
			return "", err
		}
		if op.Code == where.OpNe {
			s = not(s)
		}
		return s, nil
	case where.OpLt, where.OpLte, where.OpGt, where.OpGte:
		return b.jsonRange(path, j, op)
	case where.OpIn, where.OpNin:
		s, err := b.jsonIn(j, op.Values)
		if err != nil {
			return "", err
		}
		if op.Code == where.OpNin {
			s = not(s)
		}
		return s, nil
	case where.OpAll:
		if len(op.Values) == 0 {
			return "FALSE", nil
		}
		parts := []string{"(" + j + " IS NOT NULL)"}
		for _, v := range op.Values {
			s, err := b.jsonEq(j, v)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return and(parts), nil
	case where.OpContainedBy:
		test, err := b.jsonMember(op.Values)
		if err != nil {
			return "", err
		}
		return "(NOT CASE WHEN jsonb_typeof(" + j + ") = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(" + j +
			") AS e(v) WHERE " + not(test("e.v")) + ") ELSE FALSE END)", nil
	case where.OpExists:
		if op.Exists {
			return "(" + j + " IS NOT NULL)", nil
		}
		return "(" + j + " IS NULL)", nil
	case where.OpRegex, where.OpAllRegex:
		return b.regexes(path, j, true, op)
	case where.OpNearSphere:
		// Its distance order would have to be computed in Go too.
		return "", unsupported(b.class, "%s on %q, which has no GeoPoint column", op.Code, path)
	}
	// $text, $geoIntersects on a Polygon, the other geo tests on a key
	// without a GeoPoint column: decided in Go, on the values there.
	return "", inexactWhere("("+j+" IS NOT NULL)", b.class, "%s on %q", op.Code, path)
}

func (b *builder) jsonEq(j string, q any) (string, error) {
	if q == nil {
		return jsonNull(j), nil
	}
	test, err := b.jsonMember([]any{q})
	if err != nil {
		return "", err
	}
	return "(" + anyElem(j, test) + ")", nil
}

// jsonMember is the test "x equals one of values" (schema.Equal) on one
// jsonb value: Files are equal by name and Pointers by class and id
// (schema.Equal ignores the rest), everything else structurally, as
// jsonb's = compares.
func (b *builder) jsonMember(values []any) (func(x string) string, error) {
	var plain []string
	var special []func(x string) string
	for _, v := range values {
		if m, ok := v.(map[string]any); ok {
			switch m["__type"] {
			case "File":
				name := b.arg(fmt.Sprint(m["name"])) + "::text"
				special = append(special, func(x string) string {
					return "(" + x + " ->> '__type' = 'File' AND " + x + " ->> 'name' = " + name + ")"
				})
				continue
			case "Pointer", "Object":
				class, id := b.arg(fmt.Sprint(m["className"]))+"::text", b.arg(fmt.Sprint(m["objectId"]))+"::text"
				special = append(special, func(x string) string {
					return "(" + x + " ->> '__type' IN ('Pointer', 'Object') AND " + x + " ->> 'className' = " + class +
						" AND " + x + " ->> 'objectId' = " + id + ")"
				})
				continue
			}
		}
		text, err := jsonText(v)
		if err != nil {
			return nil, err
		}
		plain = append(plain, text)
	}
	var set string
	switch len(plain) {
	case 0:
	case 1:
		set = " = " + b.arg(plain[0]) + "::jsonb"
	default:
		set = " = ANY(" + b.arg(plain) + "::text[]::jsonb[])"
	}
	return func(x string) string {
		var parts []string
		if set != "" {
			parts = append(parts, "("+x+set+")")
		}
		for _, t := range special {
			parts = append(parts, t(x))
		}
		if len(parts) == 0 {
			return "FALSE"
		}
		return "(" + join(parts, " OR ") + ")"
	}, nil
}

func (b *builder) jsonIn(j string, values []any) (string, error) {
	if len(values) == 0 {
		return "FALSE", nil
	}
	test, err := b.jsonMember(values)
	if err != nil {
		return "", err
	}
	s := "(" + anyElem(j, test) + ")"
	for _, v := range values {
		if v == nil {
			s = "(" + s + " OR " + j + " IS NULL)"
			break
		}
	}
	return s, nil
}

// jsonRange compares within the operand's type rank, as the matcher does.
func (b *builder) jsonRange(path, j string, op *where.Op) (string, error) {
	cmp := comparisons[op.Code]
	var test func(x string) string
	switch q := op.Value.(type) {
	case nil:
		if op.Code == where.OpLte || op.Code == where.OpGte {
			return jsonNull(j), nil
		}
		return "FALSE", nil
	case float64:
		p := b.arg(q) + "::float8"
		test = func(x string) string {
			return "CASE WHEN jsonb_typeof(" + x + ") = 'number' THEN (" + x + ")::float8 " + cmp + " " + p + " ELSE FALSE END"
		}
	case string:
		p := b.arg(q) + "::text"
		test = func(x string) string {
			return "CASE WHEN jsonb_typeof(" + x + ") = 'string' THEN (" + x + ` #>> '{}') COLLATE "C" ` + cmp + " " + p + " ELSE FALSE END"
		}
	case bool:
		p := b.arg(q) + "::boolean"
		test = func(x string) string {
			return "CASE WHEN jsonb_typeof(" + x + ") = 'boolean' THEN (" + x + ")::boolean " + cmp + " " + p + " ELSE FALSE END"
		}
	default:
		if schema.RankOf(q) != schema.RankDate {
			return "", inexact(b.class, "%s with a %T operand on %q", op.Code, q, path)
		}
		iso, _ := q.(map[string]any)["iso"].(string)
		p := b.arg(iso) + "::text"
		test = func(x string) string {
			return "CASE WHEN jsonb_typeof(" + x + ") = 'object' AND " + x + " ->> '__type' = 'Date' THEN (" + x +
				` ->> 'iso') COLLATE "C" ` + cmp + " " + p + " ELSE FALSE END"
		}
	}
	return "(" + anyElem(j, test) + ")", nil
}

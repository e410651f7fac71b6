package aggregate

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// expr is a compiled aggregation expression: a field reference, a literal,
// an operator, or an object or array of expressions. eval's ok is false
// when the value is missing (a reference to an absent field).
type expr interface {
	eval(doc schema.Object) (v any, ok bool)
}

type fieldRef struct{ path string }

func (f fieldRef) eval(doc schema.Object) (any, bool) { return schema.Get(doc, f.path) }

type literal struct{ v any }

func (l literal) eval(schema.Object) (any, bool) { return l.v, true }

type objectExpr struct {
	keys  []string
	exprs []expr
}

func (o objectExpr) eval(doc schema.Object) (any, bool) {
	out := make(map[string]any, len(o.keys))
	for i, k := range o.keys {
		if v, ok := o.exprs[i].eval(doc); ok {
			out[k] = v
		}
	}
	return out, true
}

type arrayExpr []expr

func (a arrayExpr) eval(doc schema.Object) (any, bool) {
	out := make([]any, len(a))
	for i, e := range a {
		v, ok := e.eval(doc)
		if !ok {
			v = nil
		}
		out[i] = v
	}
	return out, true
}

// dateExpr extracts a part of a Date (UTC); null for anything else.
type dateExpr struct {
	arg  expr
	part func(time.Time) int
}

func (d dateExpr) eval(doc schema.Object) (any, bool) {
	v, ok := d.arg.eval(doc)
	if !ok {
		return nil, true
	}
	t, isDate := dateOf(v)
	if !isDate {
		return nil, true
	}
	return float64(d.part(t)), true
}

func dateOf(v any) (time.Time, bool) {
	m, ok := v.(map[string]any)
	if !ok || m["__type"] != "Date" {
		return time.Time{}, false
	}
	iso, _ := m["iso"].(string)
	return schema.ParseTime(iso)
}

// dateParts are the date operators, MongoDB's numbering (dayOfWeek 1 =
// Sunday).
var dateParts = map[string]func(time.Time) int{
	"$year":        func(t time.Time) int { return t.Year() },
	"$month":       func(t time.Time) int { return int(t.Month()) },
	"$dayOfMonth":  func(t time.Time) int { return t.Day() },
	"$dayOfWeek":   func(t time.Time) int { return int(t.Weekday()) + 1 },
	"$dayOfYear":   func(t time.Time) int { return t.YearDay() },
	"$hour":        func(t time.Time) int { return t.Hour() },
	"$minute":      func(t time.Time) int { return t.Minute() },
	"$second":      func(t time.Time) int { return t.Second() },
	"$millisecond": func(t time.Time) int { return t.Nanosecond() / int(time.Millisecond) },
	// $week: weeks start on Sunday; days before the year's first Sunday
	// are week 0.
	"$week": func(t time.Time) int { return (t.YearDay() + 6 - int(t.Weekday())) / 7 },
}

var pathSegment = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// refPath validates the path of a "$path" reference. MongoDB's _id is
// objectId here.
func refPath(ref string) (string, error) {
	path := strings.TrimPrefix(ref, "$")
	if strings.HasPrefix(path, "$") {
		return "", errorf("Unsupported aggregate variable %s", ref)
	}
	if path == "_id" || strings.HasPrefix(path, "_id.") {
		path = "objectId" + path[len("_id"):]
	}
	// Parse's storage names of the date fields, as apps ported from
	// MongoDB pipelines write them.
	for stored, field := range map[string]string{"_created_at": "createdAt", "_updated_at": "updatedAt"} {
		if path == stored || strings.HasPrefix(path, stored+".") {
			path = field + path[len(stored):]
		}
	}
	// "_p_<field>" is where Parse's MongoDB storage keeps a Pointer: apps
	// group by it, and Parse answers with the pointed object's id, as a
	// reference to the Pointer field does here.
	if rest, ok := strings.CutPrefix(path, "_p_"); ok && rest != "" {
		path = rest
	}
	for _, seg := range strings.Split(path, ".") {
		if !pathSegment.MatchString(seg) {
			return "", errorf("Invalid field reference %s", ref)
		}
	}
	return path, nil
}

// compileExpr compiles an expression as MongoDB reads one: "$path" is a
// reference, {"$op": arg} an operator, other objects and arrays hold
// expressions, anything else is a literal.
func compileExpr(v any, depth int) (expr, error) {
	if depth > maxExprDepth {
		return nil, errorf("aggregate expression nested deeper than %d levels", maxExprDepth)
	}
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "$") {
			p, err := refPath(x)
			if err != nil {
				return nil, err
			}
			return fieldRef{p}, nil
		}
		return literal{x}, nil
	case []any:
		out := make(arrayExpr, len(x))
		for i, e := range x {
			c, err := compileExpr(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		if op, arg, isOp := operator(x); isOp {
			if op == "" {
				return nil, errorf("an aggregate operator object must have exactly one key")
			}
			if op == "$literal" {
				return literal{arg}, nil
			}
			if part, ok := dateParts[op]; ok {
				a, err := compileExpr(arg, depth+1)
				if err != nil {
					return nil, err
				}
				return dateExpr{a, part}, nil
			}
			if spec, ok := valueOps[op]; ok {
				return compileValueOp(op, spec, arg, depth)
			}
			return nil, errorf("Unsupported aggregate operator %s", op)
		}
		if _, special := x["__type"]; special {
			return literal{x}, nil // a Parse value (Date, Pointer, …) as such
		}
		keys := slices.Sorted(maps.Keys(x))
		out := objectExpr{keys: keys, exprs: make([]expr, len(keys))}
		for i, k := range keys {
			if strings.ContainsAny(k, ".$") || k == "" {
				return nil, errorf("Invalid field name %q in an aggregate expression", k)
			}
			c, err := compileExpr(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			out.exprs[i] = c
		}
		return out, nil
	}
	return literal{v}, nil
}

// operator reports whether m is an operator object ({"$name": arg}); op is
// "" when m mixes a $ key with others.
func operator(m map[string]any) (op string, arg any, ok bool) {
	for k, v := range m {
		if strings.HasPrefix(k, "$") {
			if len(m) != 1 {
				return "", nil, true
			}
			return k, v, true
		}
	}
	return "", nil, false
}

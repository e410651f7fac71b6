package aggregate

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quarrydata/quarry/schema"
)

// valueOp is a string, arithmetic or array operator over the values of its
// arguments. Missing and null arguments make the result null (except where
// MongoDB says otherwise, noted per operator); an argument of the wrong
// type is a 102 error naming the operator.
type valueOp struct {
	name string
	args []expr
	spec opSpec
}

type opSpec struct {
	minArgs, maxArgs int // maxArgs < 0: any number
	apply            func(name string, vals []any) (any, error)
}

var valueOps = map[string]opSpec{
	"$concat":      {0, -1, concat},
	"$toLower":     {1, 1, caseOp(strings.ToLower)},
	"$toUpper":     {1, 1, caseOp(strings.ToUpper)},
	"$substr":      {3, 3, substrBytes},
	"$substrBytes": {3, 3, substrBytes},
	"$substrCP":    {3, 3, substrCP},
	"$strLenCP":    {1, 1, strLenCP},
	"$add":         {0, -1, add},
	"$subtract":    {2, 2, subtract},
	"$multiply":    {0, -1, multiply},
	"$divide":      {2, 2, divide},
	"$mod":         {2, 2, mod},
	"$size":        {1, 1, size},
}

func compileValueOp(name string, spec opSpec, arg any, depth int) (expr, error) {
	list, isList := arg.([]any)
	if !isList {
		list = []any{arg} // {$toUpper: "$name"}: a single argument
	}
	if len(list) < spec.minArgs || spec.maxArgs >= 0 && len(list) > spec.maxArgs {
		if spec.minArgs == spec.maxArgs {
			return nil, errorf("%s takes %d arguments, got %d", name, spec.minArgs, len(list))
		}
		return nil, errorf("%s takes at least %d arguments, got %d", name, spec.minArgs, len(list))
	}
	op := valueOp{name: name, spec: spec, args: make([]expr, len(list))}
	for i, a := range list {
		c, err := compileExpr(a, depth+1)
		if err != nil {
			return nil, err
		}
		op.args[i] = c
	}
	return op, nil
}

// evalErr carries a type error out of eval, which has no error result; the
// pipeline turns it into the 102 it holds (see Pipeline.Run).
type evalErr struct{ err error }

func (o valueOp) eval(doc schema.Object) (any, bool) {
	vals := make([]any, len(o.args))
	for i, a := range o.args {
		if v, ok := a.eval(doc); ok {
			vals[i] = v
		}
	}
	v, err := o.spec.apply(o.name, vals)
	if err != nil {
		panic(evalErr{err})
	}
	return v, true
}

func typeError(name, want string, v any) error {
	return errorf("%s needs %s, got %s", name, want, typeName(v))
}

func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		if t, ok := x["__type"].(string); ok {
			return "a " + t
		}
		return "an object"
	}
	return "a value"
}

func hasNull(vals []any) bool {
	for _, v := range vals {
		if v == nil {
			return true
		}
	}
	return false
}

func concat(name string, vals []any) (any, error) {
	if hasNull(vals) {
		return nil, nil
	}
	var b strings.Builder
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			return nil, typeError(name, "strings", v)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// caseOp: null becomes "" (MongoDB), numbers are printed.
func caseOp(f func(string) string) func(string, []any) (any, error) {
	return func(name string, vals []any) (any, error) {
		switch v := vals[0].(type) {
		case nil:
			return "", nil
		case string:
			return f(v), nil
		case float64:
			return f(formatNumber(v)), nil
		}
		return nil, typeError(name, "a string", vals[0])
	}
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// substrArgs reads (string, start, length); a null string gives "".
func substrArgs(name string, vals []any) (s string, start, length int, err error) {
	switch v := vals[0].(type) {
	case nil:
	case string:
		s = v
	case float64:
		s = formatNumber(v)
	default:
		return "", 0, 0, typeError(name, "a string", vals[0])
	}
	a, ok1 := vals[1].(float64)
	n, ok2 := vals[2].(float64)
	if !ok1 || !ok2 || a != math.Trunc(a) || n != math.Trunc(n) || a < 0 {
		return "", 0, 0, errorf("%s needs a whole, non-negative start and a whole length", name)
	}
	return s, int(a), int(n), nil
}

// substrBytes counts in UTF-8 bytes, as MongoDB's $substr does; a cut
// inside a character is an error there, here the string is cut at the
// character boundary before it.
func substrBytes(name string, vals []any) (any, error) {
	s, start, n, err := substrArgs(name, vals)
	if err != nil {
		return nil, err
	}
	if start >= len(s) {
		return "", nil
	}
	end := len(s)
	if n >= 0 && start+n < end {
		end = start + n
	}
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	for end < len(s) && end > start && !utf8.RuneStart(s[end]) {
		end--
	}
	if start >= end {
		return "", nil
	}
	return s[start:end], nil
}

// substrCP counts in code points.
func substrCP(name string, vals []any) (any, error) {
	s, start, n, err := substrArgs(name, vals)
	if err != nil {
		return nil, err
	}
	r := []rune(s)
	if start >= len(r) {
		return "", nil
	}
	end := len(r)
	if n >= 0 && start+n < end {
		end = start + n
	}
	return string(r[start:end]), nil
}

func strLenCP(name string, vals []any) (any, error) {
	s, ok := vals[0].(string)
	if !ok {
		return nil, typeError(name, "a string", vals[0])
	}
	return float64(utf8.RuneCountInString(s)), nil
}

// add sums numbers; one Date among them is moved by the others as
// milliseconds.
func add(name string, vals []any) (any, error) {
	if hasNull(vals) {
		return nil, nil
	}
	sum := 0.0
	var date *time.Time
	for _, v := range vals {
		if t, ok := dateOf(v); ok {
			if date != nil {
				return nil, errorf("%s takes at most one date", name)
			}
			date = &t
			continue
		}
		n, ok := v.(float64)
		if !ok {
			return nil, typeError(name, "numbers", v)
		}
		sum += n
	}
	if date != nil {
		return schema.Date(schema.FormatTime(date.Add(time.Duration(sum * float64(time.Millisecond))))), nil
	}
	return sum, nil
}

// subtract: number - number, date - number (a date), date - date (ms).
func subtract(name string, vals []any) (any, error) {
	if hasNull(vals) {
		return nil, nil
	}
	a, aDate := dateOf(vals[0])
	b, bDate := dateOf(vals[1])
	switch {
	case aDate && bDate:
		return float64(a.Sub(b).Milliseconds()), nil
	case aDate:
		n, ok := vals[1].(float64)
		if !ok {
			return nil, typeError(name, "a number or a date to subtract from a date", vals[1])
		}
		return schema.Date(schema.FormatTime(a.Add(-time.Duration(n * float64(time.Millisecond))))), nil
	}
	x, ok1 := vals[0].(float64)
	y, ok2 := vals[1].(float64)
	if !ok1 {
		return nil, typeError(name, "numbers", vals[0])
	}
	if !ok2 {
		return nil, typeError(name, "numbers", vals[1])
	}
	return x - y, nil
}

func numbers(name string, vals []any) ([]float64, bool, error) {
	if hasNull(vals) {
		return nil, true, nil
	}
	out := make([]float64, len(vals))
	for i, v := range vals {
		n, ok := v.(float64)
		if !ok {
			return nil, false, typeError(name, "numbers", v)
		}
		out[i] = n
	}
	return out, false, nil
}

func multiply(name string, vals []any) (any, error) {
	ns, null, err := numbers(name, vals)
	if null || err != nil {
		return nil, err
	}
	p := 1.0
	for _, n := range ns {
		p *= n
	}
	return p, nil
}

func divide(name string, vals []any) (any, error) {
	ns, null, err := numbers(name, vals)
	if null || err != nil {
		return nil, err
	}
	if ns[1] == 0 {
		return nil, errorf("%s by zero", name)
	}
	return ns[0] / ns[1], nil
}

func mod(name string, vals []any) (any, error) {
	ns, null, err := numbers(name, vals)
	if null || err != nil {
		return nil, err
	}
	if ns[1] == 0 {
		return nil, errorf("%s by zero", name)
	}
	return math.Mod(ns[0], ns[1]), nil
}

// size counts an array's elements; anything else, null included, is an
// error (as in MongoDB).
func size(name string, vals []any) (any, error) {
	a, ok := vals[0].([]any)
	if !ok {
		return nil, typeError(name, "an array", vals[0])
	}
	return float64(len(a)), nil
}

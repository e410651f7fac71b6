package where

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// field parses the value of one key: a plain value (equality) or an
// object of operators. Subquery operators become sibling nodes so that a
// planner can see them as semi-joins; the other operators stay together on
// one KindField node.
func (p *parser) field(key string, raw any, inOr string) ([]*Node, error) {
	ftype, _ := p.fieldType(key)
	node := &Node{Kind: KindField, Path: key, Type: ftype}
	m, isMap := raw.(map[string]any)
	if !isMap || !isConstraint(m) {
		op, err := p.plainEq(key, ftype, raw)
		if err != nil {
			return nil, err
		}
		node.Ops = []Op{op}
		return []*Node{node}, p.tick()
	}

	c := &constraint{key: key, ftype: ftype, m: m, inOr: inOr}
	plain := map[string]any{}
	var room [8]string
	for _, k := range sortedKeys(room[:0], m) {
		parse, known := fieldOps[k]
		if !known {
			if strings.HasPrefix(k, "$") {
				return nil, schema.Errorf(schema.CodeInvalidJSON, "bad constraint: %s", k)
			}
			plain[k] = m[k]
			continue
		}
		op, add, err := parse(p, c, k, m[k])
		if err != nil {
			return nil, err
		}
		if !add {
			continue
		}
		if err := p.tick(); err != nil {
			return nil, err
		}
		if ftype == schema.TypeRelation && op.Code == OpAll {
			// A relation holds all the pointers: one membership test each
			// (an empty list holds nothing, as for arrays).
			ops, err := relationAll(key, op.Values)
			if err != nil {
				return nil, err
			}
			node.Ops = append(node.Ops, ops...)
			continue
		}
		node.Ops = append(node.Ops, op)
	}
	// Plain keys next to operators are an equality on an object made of
	// them (Parse folds them into $eq).
	if len(plain) > 0 {
		op, err := p.plainEq(key, ftype, plain)
		if err != nil {
			return nil, err
		}
		if err := p.tick(); err != nil {
			return nil, err
		}
		node.Ops = append([]Op{op}, node.Ops...)
	}
	nodes := c.subs
	if len(node.Ops) > 0 {
		nodes = append([]*Node{node}, nodes...)
	}
	return nodes, nil
}

// plainEq is the equality a plain value (not an operator object) means.
func (p *parser) plainEq(key string, ftype schema.Type, raw any) (Op, error) {
	v, err := p.atom(key, raw)
	if err != nil {
		return Op{}, err
	}
	return p.eqOp(key, ftype, OpEq, v)
}

// constraint is one key's operator object while its operators are parsed.
type constraint struct {
	key   string
	ftype schema.Type
	m     map[string]any // the whole object: some operators read siblings
	inOr  string         // "$or"/"$nor" when inside one, else ""
	subs  []*Node        // subqueries, which become sibling nodes
}

// opParser parses operator name with value v. add is false when the
// operator contributes no Op of its own: it is read by a sibling ($options,
// $maxDistance*) or became a sibling node (subqueries).
type opParser func(p *parser, c *constraint, name string, v any) (op Op, add bool, err error)

// fieldOps is every operator a field's constraint object may hold. Any
// other $ key is refused with "bad constraint"; other keys are plain.
var fieldOps = map[string]opParser{
	"$eq": parseEquality, "$ne": parseEquality, "$exists": parseExists,
	"$lt": parseRange, "$lte": parseRange, "$gt": parseRange, "$gte": parseRange,
	"$in": parseIn, "$nin": parseIn,
	"$all":         parseAll,
	"$containedBy": parseContainedBy,
	"$regex":       parseRegex, "$options": parseOptions,
	"$text":       parseTextOp,
	"$nearSphere": parseGeo, "$within": parseGeo, "$geoWithin": parseGeo, "$geoIntersects": parseGeo,
	"$maxDistance": parseMaxDistance, "$maxDistanceInRadians": parseMaxDistance,
	"$maxDistanceInMiles": parseMaxDistance, "$maxDistanceInKilometers": parseMaxDistance,
	"$inQuery": parseSubquery, "$notInQuery": parseSubquery,
	"$select": parseSubquery, "$dontSelect": parseSubquery,
}

// errRelativeTimeOp is made fresh each time: a *schema.Error is not shared.
func errRelativeTimeOp() error {
	return schema.Errorf(schema.CodeInvalidJSON, "$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators")
}

func parseEquality(p *parser, c *constraint, name string, v any) (Op, bool, error) {
	if isRelativeTime(v) {
		return Op{}, false, errRelativeTimeOp()
	}
	val, err := p.atom(c.key, v)
	if err != nil {
		return Op{}, false, err
	}
	code := OpEq
	if name == "$ne" {
		code = OpNe
	}
	op, err := p.eqOp(c.key, c.ftype, code, val)
	return op, err == nil, err
}

func parseExists(_ *parser, _ *constraint, _ string, v any) (Op, bool, error) {
	if isRelativeTime(v) {
		return Op{}, false, errRelativeTimeOp()
	}
	b, ok := v.(bool)
	if !ok {
		return Op{}, false, schema.Errorf(schema.CodeInvalidQuery, "bad $exists value: %s, should be boolean", truncated(v))
	}
	return Op{Code: OpExists, Exists: b}, true, nil
}

func parseRange(p *parser, c *constraint, name string, v any) (Op, bool, error) {
	op := Op{Code: rangeOps[name]}
	if isRelativeTime(v) {
		if c.ftype != "" && c.ftype != schema.TypeDate {
			return Op{}, false, schema.Errorf(schema.CodeInvalidJSON, "$relativeTime can only be used with Date field")
		}
		text, val, err := p.relativeTime(name, v.(map[string]any)["$relativeTime"])
		if err != nil {
			return Op{}, false, err
		}
		op.Value, op.Relative = val, text
		return op, true, nil
	}
	val, err := p.atom(c.key, v)
	if err != nil {
		return Op{}, false, err
	}
	op.Value = val
	return op, true, nil
}

func parseIn(p *parser, c *constraint, name string, v any) (Op, bool, error) {
	arr, ok := v.([]any)
	if !ok {
		return Op{}, false, schema.Errorf(schema.CodeInvalidJSON, "bad %s value", name)
	}
	vals, err := p.list(c.key, flatten(arr))
	if err != nil {
		return Op{}, false, err
	}
	code := OpIn
	if name == "$nin" {
		code = OpNin
	}
	if c.ftype == schema.TypeRelation {
		op, err := relationOp(c.key, code, vals)
		return op, err == nil, err
	}
	return Op{Code: code, Values: vals}, true, nil
}

func parseAll(p *parser, c *constraint, _ string, v any) (Op, bool, error) {
	op, err := p.all(c.key, v)
	return op, err == nil, err
}

func parseContainedBy(p *parser, c *constraint, _ string, v any) (Op, bool, error) {
	arr, ok := v.([]any)
	if !ok {
		return Op{}, false, schema.Errorf(schema.CodeInvalidJSON, "bad $containedBy: should be an array")
	}
	vals, err := p.list(c.key, arr)
	if err != nil {
		return Op{}, false, err
	}
	return Op{Code: OpContainedBy, Values: vals}, true, nil
}

func parseRegex(_ *parser, c *constraint, _ string, v any) (Op, bool, error) {
	opts, hasOpts := c.m["$options"]
	re, err := compileRegex(v, opts, hasOpts)
	if err != nil {
		return Op{}, false, err
	}
	return Op{Code: OpRegex, Regex: re}, true, nil
}

// parseOptions only checks that $regex is there to read $options.
func parseOptions(_ *parser, c *constraint, _ string, _ any) (Op, bool, error) {
	if _, hasRegex := c.m["$regex"]; !hasRegex {
		return Op{}, false, schema.Errorf(schema.CodeInvalidQuery, "$options needs $regex")
	}
	return Op{}, false, nil
}

func parseTextOp(_ *parser, _ *constraint, _ string, v any) (Op, bool, error) {
	t, err := parseText(v)
	if err != nil {
		return Op{}, false, err
	}
	return Op{Code: OpText, Text: t}, true, nil
}

func parseGeo(p *parser, c *constraint, name string, v any) (Op, bool, error) {
	if c.inOr != "" {
		return Op{}, false, schema.Errorf(schema.CodeInvalidQuery, "%s is not allowed inside %s", name, c.inOr)
	}
	op, err := p.geo(name, v, c.m)
	return op, err == nil, err
}

// parseMaxDistance only checks that $nearSphere is there to read it.
func parseMaxDistance(_ *parser, c *constraint, name string, _ any) (Op, bool, error) {
	if _, hasNear := c.m["$nearSphere"]; !hasNear {
		return Op{}, false, schema.Errorf(schema.CodeInvalidQuery, "%s needs $nearSphere", name)
	}
	return Op{}, false, nil
}

// parseSubquery adds a sibling node rather than an Op.
func parseSubquery(p *parser, c *constraint, name string, v any) (Op, bool, error) {
	n, err := subquery(c.key, name, v)
	if err != nil {
		return Op{}, false, err
	}
	if err := p.tick(); err != nil {
		return Op{}, false, err
	}
	c.subs = append(c.subs, n)
	return Op{}, false, nil
}

var rangeOps = map[string]OpCode{"$lt": OpLt, "$lte": OpLte, "$gt": OpGt, "$gte": OpGte}

// isConstraint tells an operator object from a plain value: special values
// (with __type) are values even if they carry $ keys, as in Parse Server.
func isConstraint(m map[string]any) bool {
	if _, special := m["__type"]; special {
		return false
	}
	for k := range m {
		if strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}

func isRelativeTime(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m["$relativeTime"]
	return ok
}

// eqOp builds $eq/$ne, turning a Pointer on a Relation field into the
// membership test Parse derives from it.
func (p *parser) eqOp(key string, ftype schema.Type, code OpCode, v any) (Op, error) {
	if ftype != schema.TypeRelation {
		return Op{Code: code, Value: v}, nil
	}
	if code == OpEq {
		return relationOp(key, OpIn, []any{v})
	}
	return relationOp(key, OpNin, []any{v})
}

func relationOp(key string, code OpCode, vals []any) (Op, error) {
	for _, v := range vals {
		m, _ := v.(map[string]any)
		if _, ok := pointerRef(m); !ok {
			return Op{}, schema.Errorf(schema.CodeInvalidQuery, "Relation field %s can only be queried with Pointers", key)
		}
	}
	if code == OpIn {
		return Op{Code: OpRelationIn, Values: vals}, nil
	}
	return Op{Code: OpRelationNin, Values: vals}, nil
}

// relationAll is $all on a Relation field (the specification: a relation
// takes every operation valid on an array of pointers): the relation
// holds each of the pointers.
func relationAll(key string, vals []any) ([]Op, error) {
	if len(vals) == 0 {
		op, err := relationOp(key, OpIn, []any{})
		return []Op{op}, err
	}
	ops := make([]Op, len(vals))
	for i, v := range vals {
		op, err := relationOp(key, OpIn, []any{v})
		if err != nil {
			return nil, err
		}
		ops[i] = op
	}
	return ops, nil
}

// flatten spreads nested arrays one level, as Parse Server does for $in
// and $nin.
func flatten(arr []any) []any {
	nested := false
	for _, v := range arr {
		if _, ok := v.([]any); ok {
			nested = true
			break
		}
	}
	if !nested {
		return arr
	}
	out := make([]any, 0, len(arr))
	for _, v := range arr {
		if inner, ok := v.([]any); ok {
			out = append(out, inner...)
		} else {
			out = append(out, v)
		}
	}
	return out
}

func (p *parser) list(key string, arr []any) ([]any, error) {
	if len(arr) > MaxListSize {
		return nil, ErrListTooLong
	}
	out := make([]any, len(arr))
	for i, v := range arr {
		val, err := p.atom(key, v)
		if err != nil {
			return nil, err
		}
		out[i] = val
	}
	return out, nil
}

// all parses $all: plain values, or only {$regex, $options} objects (the
// SDK's containsAllStartingWith).
func (p *parser) all(key string, v any) (Op, error) {
	arr, ok := v.([]any)
	if !ok {
		return Op{}, schema.Errorf(schema.CodeInvalidJSON, "bad $all value")
	}
	if len(arr) > MaxListSize {
		return Op{}, ErrListTooLong
	}
	regexes := 0
	for _, item := range arr {
		if m, ok := item.(map[string]any); ok {
			if _, ok := m["$regex"]; ok {
				regexes++
			}
		}
	}
	if regexes == 0 {
		vals, err := p.list(key, arr)
		return Op{Code: OpAll, Values: vals}, err
	}
	if regexes != len(arr) {
		return Op{}, schema.Errorf(schema.CodeInvalidJSON, "All $all values must be of regex type or none: %s", truncated(arr))
	}
	op := Op{Code: OpAllRegex, Regexes: make([]*Regex, len(arr))}
	for i, item := range arr {
		m := item.(map[string]any)
		for k := range m {
			if k != "$regex" && k != "$options" {
				return Op{}, schema.Errorf(schema.CodeInvalidJSON, "bad constraint: %s", k)
			}
		}
		opts, hasOpts := m["$options"]
		re, err := compileRegex(m["$regex"], opts, hasOpts)
		if err != nil {
			return Op{}, err
		}
		op.Regexes[i] = re
	}
	return op, nil
}

func parseText(v any) (*Text, error) {
	bad := func(what string) error {
		return schema.Errorf(schema.CodeInvalidJSON, "bad $text: %s", what)
	}
	m, _ := v.(map[string]any)
	search, ok := m["$search"].(map[string]any)
	if !ok {
		return nil, bad("$search, should be object")
	}
	for k := range m {
		if k != "$search" {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "bad constraint: %s", k)
		}
	}
	t := &Text{}
	if t.Term, ok = search["$term"].(string); !ok {
		return nil, bad("$term, should be string")
	}
	if l, has := search["$language"]; has {
		if t.Language, ok = l.(string); !ok {
			return nil, bad("$language, should be string")
		}
	}
	if c, has := search["$caseSensitive"]; has {
		if t.CaseSensitive, ok = c.(bool); !ok {
			return nil, bad("$caseSensitive, should be boolean")
		}
	}
	if d, has := search["$diacriticSensitive"]; has {
		if t.DiacriticSensitive, ok = d.(bool); !ok {
			return nil, bad("$diacriticSensitive, should be boolean")
		}
	}
	return t, nil
}

// subquery checks the shapes Parse Server's RestQuery demands and keeps
// the subquery raw.
func subquery(path, op string, v any) (*Node, error) {
	bad := schema.Errorf(schema.CodeInvalidQuery, "improper usage of %s", op)
	m, ok := v.(map[string]any)
	if !ok {
		return nil, bad
	}
	n := &Node{Path: path, Sub: &Subquery{}}
	q := m
	switch op {
	case "$inQuery", "$notInQuery":
		n.Kind = KindInQuery
		if op == "$notInQuery" {
			n.Kind = KindNotInQuery
		}
		// The SDK sends the whole sub-query JSON; only where, className and
		// redirectClassNameForKey matter, and where is required (below).
	default:
		n.Kind = KindSelect
		if op == "$dontSelect" {
			n.Kind = KindDontSelect
		}
		key, _ := m["key"].(string)
		q, _ = m["query"].(map[string]any)
		if len(m) != 2 || key == "" || q == nil {
			return nil, bad
		}
		n.Sub.Key = key
	}
	className, _ := q["className"].(string)
	if className == "" {
		return nil, bad
	}
	n.Sub.ClassName = className
	switch w := q["where"].(type) {
	case map[string]any:
		n.Sub.Where = w
	case nil:
		// $select's query may omit where; $inQuery's null where is as
		// improper as a missing one.
		if n.Kind == KindInQuery || n.Kind == KindNotInQuery {
			return nil, bad
		}
		n.Sub.Where = map[string]any{}
	default:
		return nil, bad
	}
	if r, has := q["redirectClassNameForKey"]; has {
		if n.Sub.RedirectClassNameForKey, ok = r.(string); !ok {
			return nil, bad
		}
	}
	return n, nil
}

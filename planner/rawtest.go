package planner

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/where"
)

// Deciding on the raw member text. The byte test (bytes.go) reads a few
// members of each candidate into a map and runs the matcher on it: a
// parse, a boxed value and a map write per member, and the matcher's
// closures. For the residuals a scan over many candidates usually has,
// equalities to a string or a number and numeric ranges on top-level
// fields joined by $and/$or/$nor, a rawTest decides on the members' JSON
// text itself (index.Ref.RawMembers): a string compared as written, a
// number parsed in place. Anything it cannot decide exactly (an array, an
// object, an escaped string, a value of another type where the answer
// would need the matcher's rules) is "unknown", and the candidate goes to
// the byte test as before, so the answer is always the matcher's.

// tri is a three-valued answer: a rawTest's leaf may not know.
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triUnknown
)

// rawNode is one node of a compiled rawTest.
type rawNode struct {
	kind     where.Kind // KindAnd, KindOr, KindNor or KindField
	children []rawNode
	member   int     // KindField: index of the member in rawTest.keys
	ops      []rawOp // KindField: all must hold
}

// rawOp is an operator a rawTest decides: equality to a string or a
// number, or a numeric bound.
type rawOp struct {
	code     where.OpCode
	isString bool
	str      string
	num      float64
	// strReplacement: the operand holds U+FFFD, which a stored string
	// with invalid UTF-8 also decodes to, so an unequal text may still be
	// an equal value: unknown rather than false.
	strReplacement bool
}

// rawTest decides a residual on its members' raw JSON.
type rawTest struct {
	keys []string
	root rawNode
	raw  []string
}

// newRawTest compiles n over the members keys (the byte test's), or nil
// when some part of n is outside what a rawTest decides.
func newRawTest(n *where.Node, keys []string) *rawTest {
	t := &rawTest{keys: keys, raw: make([]string, len(keys))}
	root, ok := t.compile(n)
	if !ok {
		return nil
	}
	t.root = root
	return t
}

func (t *rawTest) compile(n *where.Node) (rawNode, bool) {
	switch n.Kind {
	case where.KindAnd, where.KindOr, where.KindNor:
		out := rawNode{kind: n.Kind, children: make([]rawNode, 0, len(n.Children))}
		for _, c := range n.Children {
			rc, ok := t.compile(c)
			if !ok {
				return rawNode{}, false
			}
			out.children = append(out.children, rc)
		}
		return out, true
	case where.KindField:
		if strings.IndexByte(n.Path, '.') >= 0 || len(n.Ops) == 0 {
			return rawNode{}, false
		}
		member := -1
		for i, k := range t.keys {
			if k == n.Path {
				member = i
			}
		}
		if member < 0 {
			return rawNode{}, false
		}
		out := rawNode{kind: where.KindField, member: member}
		for i := range n.Ops {
			op := &n.Ops[i]
			var r rawOp
			r.code = op.Code
			switch op.Code {
			case where.OpEq:
				switch v := op.Value.(type) {
				case string:
					r.isString, r.str = true, v
					r.strReplacement = strings.ContainsRune(v, utf8.RuneError)
				case float64:
					r.num = v
				default:
					return rawNode{}, false
				}
			case where.OpLt, where.OpLte, where.OpGt, where.OpGte:
				v, ok := op.Value.(float64)
				if !ok {
					return rawNode{}, false
				}
				r.num = v
			default:
				return rawNode{}, false
			}
			out.ops = append(out.ops, r)
		}
		return out, true
	}
	return rawNode{}, false
}

// test decides the residual on ref's bytes, or says it cannot.
func (t *rawTest) test(ref index.Ref) tri {
	if !ref.RawMembers(t.keys, t.raw) {
		return triUnknown
	}
	return t.eval(&t.root)
}

func (t *rawTest) eval(n *rawNode) tri {
	switch n.kind {
	case where.KindAnd:
		out := triTrue
		for i := range n.children {
			switch t.eval(&n.children[i]) {
			case triFalse:
				return triFalse
			case triUnknown:
				out = triUnknown
			}
		}
		return out
	case where.KindOr, where.KindNor:
		out := triFalse
		for i := range n.children {
			r := t.eval(&n.children[i])
			if r == triTrue {
				out = triTrue
				break
			}
			if r == triUnknown {
				out = triUnknown
			}
		}
		if n.kind == where.KindNor && out != triUnknown {
			out = triTrue - out // not
		}
		return out
	}
	raw := t.raw[n.member]
	out := triTrue
	for i := range n.ops {
		switch rawOpHolds(&n.ops[i], raw) {
		case triFalse:
			return triFalse
		case triUnknown:
			out = triUnknown
		}
	}
	return out
}

// rawOpHolds decides op on a member's JSON text ("" when it is missing),
// as the matcher decides it on the decoded value: equality of a string or
// number never matches a missing member or one of another type, and a
// numeric bound compares numbers only (matcher.rangePred).
func rawOpHolds(op *rawOp, raw string) tri {
	if raw == "" {
		return triFalse
	}
	switch c := raw[0]; {
	case c == '"':
		if !op.isString {
			return triFalse // a string against a number: another type
		}
		inner := raw[1 : len(raw)-1]
		if strings.IndexByte(inner, '\\') >= 0 {
			return triUnknown
		}
		if inner == op.str {
			return triTrue
		}
		if op.strReplacement {
			return triUnknown
		}
		return triFalse
	case c == '-' || '0' <= c && c <= '9':
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return triUnknown
		}
		if op.isString {
			return triFalse
		}
		var holds bool
		switch op.code {
		case where.OpEq:
			holds = f == op.num
		case where.OpLt:
			holds = f < op.num
		case where.OpLte:
			holds = f <= op.num
		case where.OpGt:
			holds = f > op.num
		case where.OpGte:
			holds = f >= op.num
		}
		if holds {
			return triTrue
		}
		return triFalse
	}
	// An array (equality is "contains"), an object (Date, Pointer), a
	// boolean or null: the matcher's rules.
	return triUnknown
}

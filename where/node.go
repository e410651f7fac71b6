package where

import (
	"encoding/json"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/schema"
)

// Kind tells what a Node stands for.
type Kind uint8

// The node kinds. And, Or and Nor combine Children; the others are leaves.
const (
	// KindAnd matches when every child matches; an empty And matches all.
	// The root of every parsed where is an And, and so is each branch of
	// $or/$and/$nor.
	KindAnd Kind = iota + 1
	// KindOr matches when at least one child matches ($or).
	KindOr
	// KindNor matches when no child matches ($nor).
	KindNor
	// KindField holds the operators on one key path; all must hold.
	KindField
	// KindRelatedTo keeps objects in the relation Related.Key of
	// Related.Object ($relatedTo).
	KindRelatedTo
	// KindInQuery keeps objects whose Path holds a pointer to an object
	// matching Sub ($inQuery).
	KindInQuery
	// KindNotInQuery is the negation of KindInQuery ($notInQuery).
	KindNotInQuery
	// KindSelect keeps objects whose Path equals the value at Sub.Key of
	// some object matching Sub ($select).
	KindSelect
	// KindDontSelect is the negation of KindSelect ($dontSelect).
	KindDontSelect
)

var kindNames = [...]string{
	KindAnd: "and", KindOr: "or", KindNor: "nor", KindField: "field", KindRelatedTo: "$relatedTo",
	KindInQuery: "$inQuery", KindNotInQuery: "$notInQuery", KindSelect: "$select", KindDontSelect: "$dontSelect",
}

// String names the kind as the tree printer spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind" + strconv.Itoa(int(k))
}

// Node is one node of a parsed where. Which fields are set depends on Kind.
type Node struct {
	// Kind tells which of the fields below are set.
	Kind Kind
	// Children are the operands of KindAnd, KindOr and KindNor.
	Children []*Node
	// Path is the key (a dot path into Object fields) of KindField and of
	// the subquery kinds.
	Path string
	// Type is the field's locked type for KindField when the class schema
	// knows it (top-level keys only), else "".
	Type schema.Type
	// Ops are the operators of KindField, in the order of their $names.
	Ops []Op
	// Sub is the subquery of KindInQuery, KindNotInQuery, KindSelect and
	// KindDontSelect, kept raw: it is parsed against its own class when it
	// is resolved.
	Sub *Subquery
	// Related is the operand of KindRelatedTo.
	Related *RelatedTo
}

// Subquery is the operand of $inQuery/$notInQuery ({className, where}) and
// of $select/$dontSelect ({key, query:{className, where}}).
type Subquery struct {
	// ClassName is the class the subquery runs on.
	ClassName string
	// Where is the subquery's where as the client sent it (never nil).
	Where map[string]any
	// Key is the key whose values $select/$dontSelect collect (a dot path
	// is allowed); empty for $inQuery/$notInQuery.
	Key string
	// RedirectClassNameForKey, when set, runs the subquery on the target
	// class of that relation key of ClassName (Parse's relation queries).
	RedirectClassNameForKey string
}

// RelatedTo is the operand of $relatedTo: the relation Key of Object.
type RelatedTo struct {
	Object PointerRef // the owner of the relation
	Key    string     // the owner's Relation field
}

// PointerRef names one object.
type PointerRef struct {
	ClassName string // the object's class
	ObjectID  string // the object's objectId
}

// OpCode tells which operator an Op is.
type OpCode uint8

// The operator codes. The comment says which Op fields carry the operand.
const (
	OpEq            OpCode = iota + 1 // Value; equality, and "contains" on arrays
	OpNe                              // Value
	OpLt                              // Value
	OpLte                             // Value
	OpGt                              // Value
	OpGte                             // Value
	OpIn                              // Values (flattened)
	OpNin                             // Values (flattened)
	OpAll                             // Values: the array holds every one
	OpAllRegex                        // Regexes: every regex matches some element
	OpContainedBy                     // Values: every element is one of them
	OpExists                          // Exists
	OpRegex                           // Regex
	OpText                            // Text
	OpNearSphere                      // Near
	OpWithinBox                       // Box
	OpWithinPolygon                   // Polygon
	OpWithinSphere                    // Sphere ($geoWithin.$centerSphere)
	OpGeoIntersects                   // Point: a Polygon field contains it
	OpRelationIn                      // Values (Pointers): the object's relation Path holds one of them
	OpRelationNin                     // Values (Pointers): the object's relation Path holds none of them
)

var opNames = [...]string{
	OpEq: "$eq", OpNe: "$ne", OpLt: "$lt", OpLte: "$lte", OpGt: "$gt", OpGte: "$gte",
	OpIn: "$in", OpNin: "$nin", OpAll: "$all", OpAllRegex: "$all", OpContainedBy: "$containedBy",
	OpExists: "$exists", OpRegex: "$regex", OpText: "$text", OpNearSphere: "$nearSphere",
	OpWithinBox: "$within.$box", OpWithinPolygon: "$geoWithin.$polygon", OpWithinSphere: "$geoWithin.$centerSphere",
	OpGeoIntersects: "$geoIntersects.$point", OpRelationIn: "$relationIn", OpRelationNin: "$relationNin",
}

// String is the wire name of the operator ($relationIn/$relationNin for
// the membership tests Parse derives from Pointers on Relation fields).
func (c OpCode) String() string {
	if int(c) < len(opNames) && opNames[c] != "" {
		return opNames[c]
	}
	return "op" + strconv.Itoa(int(c))
}

// IsGeo reports whether the operator is a geo constraint.
func (c OpCode) IsGeo() bool { return c >= OpNearSphere && c <= OpGeoIntersects }

// Op is one operator on a field; Code tells which field holds the
// operand. Operand values are normalized so the matcher can compare them
// with stored values directly: Dates carry the canonical TimeLayout iso,
// expanded objects became Pointers, Go integers became float64, and ISO
// strings on createdAt/updatedAt became Dates.
type Op struct {
	Code OpCode
	// Value is the operand of $eq, $ne, $lt, $lte, $gt and $gte.
	Value any
	// Values are the operands of $in, $nin (flattened one level), $all,
	// $containedBy and the relation membership tests.
	Values []any
	// Exists is the operand of $exists.
	Exists bool
	// Regex is the operand of $regex with its $options.
	Regex *Regex
	// Regexes are the items of an $all made of {$regex} objects.
	Regexes []*Regex
	// Text is the operand of $text.
	Text *Text
	// Near is $nearSphere with its $maxDistance*.
	Near *Near
	// Box is the operand of $within.$box.
	Box *Box
	// Polygon holds the vertices of $geoWithin.$polygon (at least 3; the
	// path is closed implicitly).
	Polygon []geo.Point
	// Sphere is the operand of $geoWithin.$centerSphere.
	Sphere *Sphere
	// Point is the operand of $geoIntersects.$point.
	Point *geo.Point
	// Relative is the $relativeTime text Value was computed from, kept for
	// explain output; empty otherwise.
	Relative string
}

// Regex is a compiled $regex with the pattern and options as sent.
type Regex struct {
	// Pattern is the $regex string as the client sent it.
	Pattern string
	// Options are the $options flags (a subset of "imsx").
	Options string
	re      *regexp.Regexp
	prefix  string
}

// MatchString reports whether s contains a match.
func (r *Regex) MatchString(s string) bool { return r.re.MatchString(s) }

// Regexp is the compiled RE2 program (after \Q..\E and x-flag rewriting).
func (r *Regex) Regexp() *regexp.Regexp { return r.re }

// Prefix returns the literal every matching string starts with when the
// pattern is anchored at the start and case-sensitive (e.g. the SDK's
// startsWith), so a planner can scan an index range. ok is false when no
// such prefix exists.
func (r *Regex) Prefix() (prefix string, ok bool) { return r.prefix, r.prefix != "" }

// anchoredPrefix finds the literal after a leading ^ (start of text, not of
// line) in a parsed expression, ignoring case-folded literals.
func anchoredPrefix(expr string) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText {
		return ""
	}
	lit := re.Sub[1]
	if lit.Op != syntax.OpLiteral || lit.Flags&syntax.FoldCase != 0 {
		return ""
	}
	return string(lit.Rune)
}

// Text is the operand of $text: {$search: {$term, $language, $caseSensitive,
// $diacriticSensitive}}.
type Text struct {
	Term               string // $term: words, "phrases" and -negations
	Language           string // $language, accepted and not used
	CaseSensitive      bool   // $caseSensitive
	DiacriticSensitive bool   // $diacriticSensitive
}

// Near is $nearSphere with its optional maximum distance.
type Near struct {
	Point geo.Point // the center distances are measured from
	// MaxDistance is in radians of a great circle; it applies only when
	// HasMax is set (0 is a valid maximum: the point itself).
	MaxDistance float64
	HasMax      bool
}

// Box is $within.$box, corners as sent. geo.NewBox reads them: a
// northeast corner west of the southwest one crosses the antimeridian, and
// corners reversed on both axes are swapped back.
type Box struct {
	SouthWest, NorthEast geo.Point // the corners as sent
}

// Sphere is $geoWithin.$centerSphere: a cap of Radius radians around Center.
type Sphere struct {
	Center geo.Point // the cap's center
	Radius float64   // radians of a great circle
}

// Walk calls fn for n and, while fn returns true, for its descendants in
// order.
func (n *Node) Walk(fn func(*Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for _, c := range n.Children {
		c.Walk(fn)
	}
}

// String prints the tree in one deterministic line, e.g.
// `and(field(a $gt 1 $lt 5), or(and(field(b $eq "x"))))`, for tests,
// explain output and logs.
func (n *Node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *Node) write(b *strings.Builder) {
	if n == nil {
		b.WriteString("nil")
		return
	}
	switch n.Kind {
	case KindAnd, KindOr, KindNor:
		b.WriteString(n.Kind.String())
		b.WriteByte('(')
		for i, c := range n.Children {
			if i > 0 {
				b.WriteString(", ")
			}
			c.write(b)
		}
		b.WriteByte(')')
	case KindField:
		b.WriteString("field(")
		b.WriteString(n.Path)
		for _, op := range n.Ops {
			b.WriteByte(' ')
			op.write(b)
		}
		b.WriteByte(')')
	case KindRelatedTo:
		b.WriteString("$relatedTo(")
		if r := n.Related; r != nil {
			b.WriteString(r.Object.ClassName + "/" + r.Object.ObjectID + "." + r.Key)
		}
		b.WriteByte(')')
	default:
		b.WriteString(n.Kind.String())
		b.WriteByte('(')
		b.WriteString(n.Path)
		if s := n.Sub; s != nil {
			b.WriteString(" " + s.ClassName)
			if s.Key != "" {
				b.WriteString("." + s.Key)
			}
			b.WriteByte(' ')
			b.WriteString(jsonText(s.Where))
		}
		b.WriteByte(')')
	}
}

func (op *Op) write(b *strings.Builder) {
	b.WriteString(op.Code.String())
	b.WriteByte(' ')
	switch op.Code {
	case OpIn, OpNin, OpAll, OpContainedBy, OpRelationIn, OpRelationNin:
		b.WriteString(jsonText(op.Values))
	case OpExists:
		b.WriteString(strconv.FormatBool(op.Exists))
	case OpRegex:
		b.WriteString(jsonText(op.Regex.Pattern) + "/" + op.Regex.Options)
	case OpAllRegex:
		for i, r := range op.Regexes {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(jsonText(r.Pattern) + "/" + r.Options)
		}
	case OpText:
		b.WriteString(jsonText(op.Text))
	case OpNearSphere:
		b.WriteString(jsonText(op.Near))
	case OpWithinBox:
		b.WriteString(jsonText(op.Box))
	case OpWithinPolygon:
		b.WriteString(jsonText(op.Polygon))
	case OpWithinSphere:
		b.WriteString(jsonText(op.Sphere))
	case OpGeoIntersects:
		b.WriteString(jsonText(op.Point))
	default:
		b.WriteString(jsonText(op.Value))
	}
}

// jsonText renders a value compactly; maps come out with sorted keys, so
// the text is deterministic.
func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(data)
}

// truncated shortens a value's JSON for error messages, which must stay
// small whatever the client sent.
func truncated(v any) string {
	s := jsonText(v)
	if len(s) > 100 {
		s = strings.ToValidUTF8(s[:100], "") + "…"
	}
	return s
}

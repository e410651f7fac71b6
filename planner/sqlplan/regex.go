package sqlplan

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode"

	"github.com/quarrydata/quarry/where"
)

// regexes translates $regex (and $all of regexes) on a text expression or
// a jsonb value (isJSON): as a LIKE when the regex is literal text,
// optionally anchored (the SDKs' startsWith, endsWith and contains, \Q...\E
// quoted), which a C-collated index can serve; else as PostgreSQL's ~ with
// the RE2 program rewritten in PostgreSQL's dialect (arePattern). What has
// no exact rewrite is refused rather than answered differently.
func (b *builder) regexes(path, expr string, isJSON bool, op *where.Op) (string, error) {
	res := op.Regexes
	if op.Code == where.OpRegex {
		res = []*where.Regex{op.Regex}
	}
	if len(res) == 0 {
		return "FALSE", nil
	}
	parts := make([]string, 0, len(res))
	for _, re := range res {
		if re == nil || re.Regexp() == nil {
			return "", unsupported(b.class, "a malformed $regex on %q", path)
		}
		var like func(text string) string
		if pattern, fold, ok := likePattern(re); ok {
			p := b.arg(pattern) + "::text"
			like = func(text string) string {
				text = "(" + text + `) COLLATE "C"`
				if fold {
					text = "lower(" + text + ")"
				}
				return "(" + text + " LIKE " + p + ")"
			}
		} else if are, ok := arePattern(re); ok {
			p := b.arg(are) + "::text"
			like = func(text string) string { return "((" + text + `) COLLATE "C" ~ ` + p + ")" }
		} else {
			return "", inexactWhere("("+expr+" IS NOT NULL)", b.class,
				"the $regex %q on %q (word boundaries and multi-line anchors have no exact PostgreSQL form)", re.Pattern, path)
		}
		if !isJSON {
			parts = append(parts, "("+like(expr)+")")
			continue
		}
		parts = append(parts, "("+anyElem(expr, func(x string) string {
			return "CASE WHEN jsonb_typeof(" + x + ") = 'string' THEN " + like(x+" #>> '{}'") + " ELSE FALSE END"
		})+")")
	}
	return and(parts), nil
}

// likePattern is re as a LIKE pattern (backslash escapes) when it is a
// literal, ^literal, literal$ or ^literal$; fold is set for a
// case-insensitive literal, which translates only when it is ASCII without
// k or s (Go folds the Kelvin sign into k and the long s into s; lower()
// under the C collation folds ASCII alone).
func likePattern(re *where.Regex) (pattern string, fold, ok bool) {
	parsed, err := syntax.Parse(re.Regexp().String(), syntax.Perl)
	if err != nil {
		return "", false, false
	}
	parsed = parsed.Simplify()
	subs := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpConcat {
		subs = parsed.Sub
	}
	begin, end := false, false
	if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		begin, subs = true, subs[1:]
	}
	if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		end, subs = true, subs[:len(subs)-1]
	}
	var lit []rune
	switch {
	case len(subs) == 0:
	case len(subs) == 1 && subs[0].Op == syntax.OpEmptyMatch:
	case len(subs) == 1 && subs[0].Op == syntax.OpLiteral:
		lit = subs[0].Rune
		fold = subs[0].Flags&syntax.FoldCase != 0
	default:
		return "", false, false
	}
	var b strings.Builder
	if !begin {
		b.WriteByte('%')
	}
	for _, r := range lit {
		if fold {
			if r > unicode.MaxASCII || strings.ContainsRune("kKsS", r) {
				return "", false, false
			}
			r = unicode.ToLower(r)
		}
		if r == '%' || r == '_' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	if !end {
		b.WriteByte('%')
	}
	return b.String(), fold, true
}

// arePattern rewrites re's RE2 syntax tree as a PostgreSQL advanced regular
// expression that matches the same strings. Only whether a match exists
// matters (not which), so leftmost-first against leftmost-longest makes no
// difference; everything else is spelled out: each character as an escape,
// case-insensitive letters as the set of their simple case folds (Go's
// rule), classes as explicit code point ranges, "." as PostgreSQL's "." or
// "[^\n]" by the s flag, ^ and $ of the whole text (PostgreSQL's defaults).
// Word boundaries (ASCII in RE2, the locale's in PostgreSQL) and the m
// flag's line anchors are refused; Simplify has already unrolled counted
// repeats, so PostgreSQL's limit of 255 is never met.
func arePattern(re *where.Regex) (string, bool) {
	parsed, err := syntax.Parse(re.Regexp().String(), syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !writeARE(&b, parsed.Simplify()) {
		return "", false
	}
	return b.String(), true
}

func writeARE(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		b.WriteString("(?:)")
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase == 0 || unicode.SimpleFold(r) == r {
				writeRune(b, r)
				continue
			}
			b.WriteByte('[')
			for f := r; ; {
				writeRune(b, f)
				if f = unicode.SimpleFold(f); f == r {
					break
				}
			}
			b.WriteByte(']')
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return false // matches nothing; PostgreSQL has no empty class
		}
		b.WriteByte('[')
		for i := 0; i+1 < len(re.Rune); i += 2 {
			writeRune(b, re.Rune[i])
			if re.Rune[i+1] != re.Rune[i] {
				b.WriteByte('-')
				writeRune(b, re.Rune[i+1])
			}
		}
		b.WriteByte(']')
	case syntax.OpAnyChar:
		b.WriteByte('.') // PostgreSQL's "." takes a newline too
	case syntax.OpAnyCharNotNL:
		b.WriteString(`[^\u000a]`)
	case syntax.OpBeginText:
		b.WriteByte('^')
	case syntax.OpEndText:
		b.WriteByte('$')
	case syntax.OpCapture:
		return writeGroup(b, re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		if !writeGroup(b, re.Sub[0]) {
			return false
		}
		b.WriteString(map[syntax.Op]string{syntax.OpStar: "*", syntax.OpPlus: "+", syntax.OpQuest: "?"}[re.Op])
	case syntax.OpRepeat:
		if re.Min > 255 || re.Max > 255 {
			return false
		}
		if !writeGroup(b, re.Sub[0]) {
			return false
		}
		if re.Max < 0 {
			fmt.Fprintf(b, "{%d,}", re.Min)
		} else {
			fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !writeARE(b, sub) {
				return false
			}
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, sub := range re.Sub {
			if i > 0 {
				b.WriteByte('|')
			}
			if !writeARE(b, sub) {
				return false
			}
		}
		b.WriteByte(')')
	default: // OpNoMatch, line anchors, word boundaries
		return false
	}
	return true
}

func writeGroup(b *strings.Builder, re *syntax.Regexp) bool {
	b.WriteString("(?:")
	if !writeARE(b, re) {
		return false
	}
	b.WriteByte(')')
	return true
}

// writeRune writes r as itself when it is an ASCII letter or digit, and
// as a character-entry escape otherwise (valid in and out of brackets).
func writeRune(b *strings.Builder, r rune) {
	switch {
	case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
		b.WriteRune(r)
	case r <= 0xFFFF:
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		fmt.Fprintf(b, `\U%08x`, r)
	}
}

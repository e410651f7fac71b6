package sqlplan

import (
	"regexp/syntax"
	"strings"
	"unicode"

	"github.com/quarrydata/quarry/where"
)

// regexes translates $regex (and $all of regexes) on a text expression or
// a jsonb value (isJSON): each one as a LIKE, which exists only for
// the regexes that are literal text, optionally anchored (the SDKs'
// startsWith, endsWith and contains, \Q...\E quoted). Anything else would
// need PostgreSQL's own regex dialect, whose semantics differ from RE2's,
// so it is refused rather than answered differently.
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
		pattern, fold, ok := likePattern(re)
		if !ok {
			return "", unsupported(b.class, "the $regex %q on %q (only literal text, optionally anchored with ^ or $, translates exactly)", re.Pattern, path)
		}
		p := b.arg(pattern) + "::text"
		like := func(text string) string {
			text = "(" + text + `) COLLATE "C"`
			if fold {
				text = "lower(" + text + ")"
			}
			return "(" + text + " LIKE " + p + ")"
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

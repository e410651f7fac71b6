package matcher

import (
	"strings"
	"unicode"

	"github.com/quarrydata/quarry/where"
)

// $text follows MongoDB's $search syntax without a text index's language
// rules:
//
//   - The term and the field's text are split into words: maximal runs of
//     letters, digits and combining marks; everything else separates.
//   - Words compare case-insensitively (lower-cased) unless $caseSensitive,
//     and diacritic-insensitively (Latin letters with accents fold to the
//     base letter, combining marks are dropped) unless $diacriticSensitive.
//   - "a phrase" in double quotes must appear as consecutive words; with
//     several phrases all must appear. -word excludes objects holding word.
//   - Without phrases, an object matches when it holds any plain word.
//   - No stemming and no stop words: $language is accepted and ignored.
//
// A string field is one text; an array's string elements are texts each.

type textQuery struct {
	words   []string
	phrases [][]string
	negated []string
	fold    func(string) string
}

func compileText(t *where.Text) *textQuery {
	q := &textQuery{fold: folder(t.CaseSensitive, t.DiacriticSensitive)}
	term := t.Term
	for term != "" {
		if term[0] == '"' {
			phrase := term[1:]
			if end := strings.IndexByte(phrase, '"'); end >= 0 {
				phrase, term = phrase[:end], phrase[end+1:]
			} else {
				term = ""
			}
			if ws := q.split(phrase); len(ws) > 0 {
				q.phrases = append(q.phrases, ws)
			}
			continue
		}
		// One whitespace-separated token (stopping at a quote).
		end := strings.IndexFunc(term, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		tok := term
		if end >= 0 {
			tok, term = term[:end], term[end:]
			term = strings.TrimLeftFunc(term, unicode.IsSpace)
		} else {
			term = ""
		}
		if strings.HasPrefix(tok, "-") {
			q.negated = append(q.negated, q.split(tok[1:])...)
		} else {
			q.words = append(q.words, q.split(tok)...)
		}
	}
	return q
}

func (q *textQuery) split(s string) []string {
	var out []string
	for _, w := range splitWords(s) {
		if w = q.fold(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

func (q *textQuery) match(v any) bool {
	var texts [][]string
	switch x := v.(type) {
	case string:
		texts = append(texts, q.split(x))
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				texts = append(texts, q.split(s))
			}
		}
	}
	has := func(w string) bool {
		for _, t := range texts {
			for _, tw := range t {
				if tw == w {
					return true
				}
			}
		}
		return false
	}
	for _, w := range q.negated {
		if has(w) {
			return false
		}
	}
	if len(q.phrases) > 0 {
		for _, ph := range q.phrases {
			found := false
			for _, t := range texts {
				if containsRun(t, ph) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	for _, w := range q.words {
		if has(w) {
			return true
		}
	}
	return false
}

func containsRun(text, run []string) bool {
outer:
	for i := 0; i+len(run) <= len(text); i++ {
		for j, w := range run {
			if text[i+j] != w {
				continue outer
			}
		}
		return true
	}
	return false
}

func splitWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.M, r)
	})
}

func folder(caseSensitive, diacriticSensitive bool) func(string) string {
	return func(w string) string {
		if !diacriticSensitive {
			w = strings.Map(func(r rune) rune {
				if unicode.Is(unicode.Mn, r) {
					return -1
				}
				if b, ok := diacriticBase[r]; ok {
					return b
				}
				return r
			}, w)
		}
		if !caseSensitive {
			w = strings.ToLower(w)
		}
		return w
	}
}

// diacriticBase maps accented Latin letters (U+00C0-U+024F and a few
// letters with strokes) to their base letter; the table is built once from
// diacriticPairs (letter, base, letter, base, ...) and never changes.
var diacriticBase = func() map[rune]rune {
	rs := []rune(diacriticPairs)
	m := make(map[rune]rune, len(rs)/2)
	for i := 0; i+1 < len(rs); i += 2 {
		m[rs[i]] = rs[i+1]
	}
	return m
}()

const diacriticPairs = "" +
	"ÀAÁAÂAÃAÄAÅAÇCÈEÉEÊEËEÌIÍIÎIÏIÑNÒOÓOÔOÕOÖOÙUÚUÛUÜUÝYàaáaâaãaäaåa" +
	"çcèeéeêeëeìiíiîiïiñnòoóoôoõoöoùuúuûuüuýyÿyĀAāaĂAăaĄAąaĆCćcĈCĉcĊC" +
	"ċcČCčcĎDďdĒEēeĔEĕeĖEėeĘEęeĚEěeĜGĝgĞGğgĠGġgĢGģgĤHĥhĨIĩiĪIīiĬIĭiĮI" +
	"įiİIĴJĵjĶKķkĹLĺlĻLļlĽLľlŃNńnŅNņnŇNňnŌOōoŎOŏoŐOőoŔRŕrŖRŗrŘRřrŚSśs" +
	"ŜSŝsŞSşsŠSšsŢTţtŤTťtŨUũuŪUūuŬUŭuŮUůuŰUűuŲUųuŴWŵwŶYŷyŸYŹZźzŻZżzŽZ" +
	"žzƠOơoƯUưuǍAǎaǏIǐiǑOǒoǓUǔuǕUǖuǗUǘuǙUǚuǛUǜuǞAǟaǠAǡaǦGǧgǨKǩkǪOǫoǬO" +
	"ǭoǰjǴGǵgǸNǹnǺAǻaȀAȁaȂAȃaȄEȅeȆEȇeȈIȉiȊIȋiȌOȍoȎOȏoȐRȑrȒRȓrȔUȕuȖUȗu" +
	"ȘSșsȚTțtȞHȟhȦAȧaȨEȩeȪOȫoȬOȭoȮOȯoȰOȱoȲYȳyØOøoĐDđdĦHħhŁLłlıiŦTŧt"

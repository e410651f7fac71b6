package matcher

import (
	"sync"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// TextScorer rates how well an object matches a query's $text, for the
// "$score" a client sorts by or selects. The rating is term frequency:
// for each word and phrase of the search, how often it occurs in the
// field's text relative to the text's length in words, plus one for
// each that occurs at all, so an object holding more of the searched
// words ranks above one repeating a single word. Its numbers are not
// MongoDB's; its order is what a client relies on.
type TextScorer struct {
	path string
	q    *textQuery
	mu   sync.Mutex
	memo map[string]float64 // objectId -> score: a sort compares each object many times
}

// NewTextScorer finds the $text of a where tree (at its top, or among the
// operands of its top-level $and), or returns nil when it has none.
func NewTextScorer(root *where.Node) *TextScorer {
	if root == nil {
		return nil
	}
	fields := []*where.Node{root}
	if root.Kind == where.KindAnd {
		fields = root.Children
	}
	for _, n := range fields {
		if n.Kind != where.KindField {
			continue
		}
		for i := range n.Ops {
			if op := &n.Ops[i]; op.Code == where.OpText && op.Text != nil {
				return &TextScorer{path: n.Path, q: compileText(op.Text), memo: map[string]float64{}}
			}
		}
	}
	return nil
}

// Score is obj's rating; 0 when the searched field holds none of the
// words.
func (s *TextScorer) Score(obj schema.Object) float64 {
	id, _ := obj["objectId"].(string)
	if id != "" {
		s.mu.Lock()
		v, ok := s.memo[id]
		s.mu.Unlock()
		if ok {
			return v
		}
	}
	v := s.rate(schema.Get(obj, s.path))
	if id != "" {
		s.mu.Lock()
		s.memo[id] = v
		s.mu.Unlock()
	}
	return v
}

func (s *TextScorer) rate(v any, _ bool) float64 {
	var texts [][]string
	switch x := v.(type) {
	case string:
		texts = append(texts, s.q.split(x))
	case []any:
		for _, e := range x {
			if str, ok := e.(string); ok {
				texts = append(texts, s.q.split(str))
			}
		}
	}
	terms := make([][]string, 0, len(s.q.words)+len(s.q.phrases))
	for _, w := range s.q.words {
		terms = append(terms, []string{w})
	}
	terms = append(terms, s.q.phrases...)
	score := 0.0
	for _, term := range terms {
		found := false
		for _, t := range texts {
			if len(t) == 0 {
				continue
			}
			if n := countRuns(t, term); n > 0 {
				found = true
				score += float64(n) / float64(len(t))
			}
		}
		if found {
			score++
		}
	}
	return score
}

// countRuns counts where run stands in text as consecutive words.
func countRuns(text, run []string) int {
	n := 0
outer:
	for i := 0; i+len(run) <= len(text); i++ {
		for j, w := range run {
			if text[i+j] != w {
				continue outer
			}
		}
		n++
	}
	return n
}

package graphql

import (
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// docStats measures a selection with its fragments expanded.
type docStats struct {
	depth, aliases, fields int
}

// checkLimits refuses an operation deeper, wider or with more aliases than
// the options allow, before any resolver runs.
func (h *Handler) checkLimits(op *ast.OperationDefinition) error {
	var st docStats
	// The budget stops the walk early: fragments spread many times could
	// otherwise make the measuring itself expensive.
	budget := h.opts.MaxFields
	if budget < 0 {
		budget = 1 << 30
	}
	measure(op.SelectionSet, 1, &st, budget+1)
	switch {
	case h.opts.MaxDepth > 0 && st.depth > h.opts.MaxDepth:
		return fmt.Errorf("The query is nested %d levels deep; the limit is %d (graphQLMaxDepth).", st.depth, h.opts.MaxDepth)
	case h.opts.MaxAliases > 0 && st.aliases > h.opts.MaxAliases:
		return fmt.Errorf("The query uses %d aliases; the limit is %d (graphQLMaxAliases).", st.aliases, h.opts.MaxAliases)
	case h.opts.MaxFields > 0 && st.fields > h.opts.MaxFields:
		return fmt.Errorf("The query selects more than %d fields (graphQLMaxFields).", h.opts.MaxFields)
	}
	return nil
}

func measure(set ast.SelectionSet, depth int, st *docStats, budget int) {
	for _, sel := range set {
		if st.fields > budget {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			st.fields++
			if s.Alias != "" && s.Alias != s.Name {
				st.aliases++
			}
			if depth > st.depth {
				st.depth = depth
			}
			if len(s.SelectionSet) > 0 {
				measure(s.SelectionSet, depth+1, st, budget)
			}
		case *ast.InlineFragment:
			measure(s.SelectionSet, depth, st, budget)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				measure(s.Definition.SelectionSet, depth, st, budget)
			}
		}
	}
}

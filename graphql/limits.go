package graphql

import (
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// docStats measures a selection with its fragments expanded.
type docStats struct {
	depth, aliases, fields int
	// complexity counts the fields a reply can hold: each field once per
	// object its enclosing connections can return (their first or last,
	// else a page's default size).
	complexity int
}

// assumedPageSize is what a connection without first or last counts for:
// the default page size of a find.
const assumedPageSize = 100

// saturated caps complexity arithmetic: nested connections multiply.
const saturated = 1 << 40

// checkLimits refuses an operation deeper, wider or with more aliases than
// the options allow, before any resolver runs.
func (h *Handler) checkLimits(op *ast.OperationDefinition, vars map[string]any) error {
	st := docStats{}
	// The budget stops the walk early: fragments spread many times could
	// otherwise make the measuring itself expensive.
	budget := h.opts.MaxFields
	if budget < 0 {
		budget = 1 << 30
	}
	measure(op.SelectionSet, 1, 1, vars, &st, budget+1)
	switch {
	case h.opts.MaxDepth > 0 && st.depth > h.opts.MaxDepth:
		return fmt.Errorf("The query is nested %d levels deep; the limit is %d (graphQLMaxDepth).", st.depth, h.opts.MaxDepth)
	case h.opts.MaxAliases > 0 && st.aliases > h.opts.MaxAliases:
		return fmt.Errorf("The query uses %d aliases; the limit is %d (graphQLMaxAliases).", st.aliases, h.opts.MaxAliases)
	case h.opts.MaxFields > 0 && st.fields > h.opts.MaxFields:
		return fmt.Errorf("The query selects more than %d fields (graphQLMaxFields).", h.opts.MaxFields)
	case h.opts.MaxComplexity > 0 && st.complexity > h.opts.MaxComplexity:
		return fmt.Errorf("The query could return %d fields in all, counting each connection's page size; the limit is %d (graphQLMaxComplexity).",
			st.complexity, h.opts.MaxComplexity)
	}
	return nil
}

// measure walks set at depth, each of its fields returned per times.
func measure(set ast.SelectionSet, depth, per int, vars map[string]any, st *docStats, budget int) {
	for _, sel := range set {
		if st.fields > budget {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			st.fields++
			st.complexity = min(st.complexity+per, saturated)
			if s.Alias != "" && s.Alias != s.Name {
				st.aliases++
			}
			if depth > st.depth {
				st.depth = depth
			}
			if len(s.SelectionSet) > 0 {
				measure(s.SelectionSet, depth+1, min(per*pageSize(s, vars), saturated), vars, st, budget)
			}
		case *ast.InlineFragment:
			measure(s.SelectionSet, depth, per, vars, st, budget)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				measure(s.Definition.SelectionSet, depth, per, vars, st, budget)
			}
		}
	}
}

// pageSize is how many objects field f can return per parent: its first or
// last argument (a literal or a variable), the default page size for a
// connection without them (a field selecting edges), else one.
func pageSize(f *ast.Field, vars map[string]any) int {
	size, counted := 0, false
	for _, name := range []string{"first", "last"} {
		arg := f.Arguments.ForName(name)
		if arg == nil || arg.Value == nil {
			continue
		}
		v, err := arg.Value.Value(vars)
		if n, ok := intArg(v); err == nil && ok && n >= 0 {
			size, counted = max(size, n), true
		}
	}
	if counted {
		return max(size, 1)
	}
	for _, sel := range f.SelectionSet {
		if e, ok := sel.(*ast.Field); ok && e.Name == "edges" {
			return assumedPageSize
		}
	}
	return 1
}

// tokensPerField is how many lexical tokens a document may hold per field
// graphQLMaxFields allows: room for an alias, arguments and directives on
// every field, while a document that is mostly one huge argument value is
// refused before it is parsed whole.
const tokensPerField = 30

// fieldsPerSpread: a document may spread fragments a quarter as many times
// as it may select fields. Validating spreads of distinct fragments costs
// about the cube of their number (999 took a second of CPU, 250 take
// about 20 ms), and apps spread far fewer fragments than they select
// fields.
const fieldsPerSpread = 4

// countSelections counts the fields and the fragment spreads of a parsed,
// not yet validated document: its operations, spreads expanded, and the
// fragments they never spread (validation visits those too). A spread
// naming a fragment the document does not define counts as a spread only.
// The counts stop at stopFields and stopSpreads, so the walk's cost is
// bounded whatever the document, cycles and fragments spread many times
// included.
func countSelections(doc *ast.QueryDocument, stopFields, stopSpreads int) (fields, spreads int) {
	byName := make(map[string]*ast.FragmentDefinition, len(doc.Fragments))
	for _, f := range doc.Fragments {
		byName[f.Name] = f
	}
	spread := map[string]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			if fields >= stopFields || spreads >= stopSpreads {
				return
			}
			switch s := sel.(type) {
			case *ast.Field:
				fields++
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				spreads++
				spread[s.Name] = true
				if def := byName[s.Name]; def != nil {
					walk(def.SelectionSet)
				}
			}
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		if !spread[f.Name] {
			walk(f.SelectionSet)
		}
	}
	return fields, spreads
}

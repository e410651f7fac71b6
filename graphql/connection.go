package graphql

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// DefaultPageSize is a connection's page size when neither first, last
// nor before bound it (Parse Server's default limit).
const DefaultPageSize = 100

// connValue is one page of a class connection.
type connValue struct {
	cm      *classModel
	results []schema.Object
	start   int // absolute offset of results[0]
	count   int
	hasNext bool
}

func (c *connValue) field(name string) any {
	switch name {
	case "count":
		return c.count
	case "edges":
		edges := make([]any, len(c.results))
		for i, obj := range c.results {
			edges[i] = map[string]any{"node": &objectValue{c.cm, obj}, "cursor": cursor(c.start + i)}
		}
		return edges
	case "pageInfo":
		info := map[string]any{"hasPreviousPage": c.start > 0, "hasNextPage": c.hasNext}
		if len(c.results) > 0 {
			info["startCursor"] = cursor(c.start)
			info["endCursor"] = cursor(c.start + len(c.results) - 1)
		}
		return info
	}
	return nil
}

// intArg reads an optional Int argument.
func intArg(v any) (int, bool) {
	switch n := v.(type) {
	case int64:
		return int(n), true
	case int:
		return n, true
	case float64:
		return int(n), true
	}
	return 0, false
}

// page runs a connection query: skip, first, after, last and before turn
// into one Find's skip and limit; count runs only when selected.
func (e *executor) page(cm *classModel, where map[string]any, args map[string]any, sel ast.SelectionSet) (*connValue, error) {
	skip, _ := intArg(args["skip"])
	first, hasFirst := intArg(args["first"])
	last, hasLast := intArg(args["last"])
	switch {
	case skip < 0:
		return nil, schema.Errorf(schema.CodeInvalidQuery, "Skip should be a positive number")
	case first < 0:
		return nil, schema.Errorf(schema.CodeInvalidQuery, "First should be a positive number")
	case last < 0:
		return nil, schema.Errorf(schema.CodeInvalidQuery, "Last should be a positive number")
	}
	start, end := skip, -1
	if a, ok := args["after"].(string); ok {
		off, valid := fromCursor(a)
		if !valid {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "After is not a valid cursor")
		}
		start = max(start, off+1)
	}
	if b, ok := args["before"].(string); ok {
		off, valid := fromCursor(b)
		if !valid {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "Before is not a valid cursor")
		}
		end = off
	}
	order, err := orderArg(args["order"])
	if err != nil {
		return nil, err
	}
	wantCount := selects(sel, "count")
	if hasFirst && (end < 0 || start+first < end) {
		end = start + first
	}
	if hasLast {
		if end < 0 {
			res, err := e.h.svc.Find(e.auth, cm.class, service.FindParams{Where: where, Limit: 0, Count: true})
			if err != nil {
				return nil, err
			}
			end = res.Count
		}
		start = max(start, end-last)
	}
	limit := DefaultPageSize
	bounded := end >= 0
	if bounded {
		limit = max(end-start, 0)
	}
	fetch := limit + 1 // one more tells whether there is a next page
	if !selects(sel, "edges") && !selects(sel, "pageInfo") {
		fetch = 0 // count alone reads no objects
	}
	read := service.ReadOptions{Include: includes(cm, nodeSelection(sel), "", 0, nil)}
	res, err := e.h.svc.Find(e.auth, cm.class, service.FindParams{Where: where, Order: order, Skip: start, Limit: fetch,
		Count: wantCount, Read: read})
	if err != nil {
		return nil, err
	}
	c := &connValue{cm: cm, results: res.Results, start: start, count: res.Count}
	if len(c.results) > limit {
		c.results, c.hasNext = c.results[:limit], true
	}
	return c, nil
}

// orderArg turns [field_ASC, other_DESC] into sort keys.
func orderArg(v any) ([]service.SortKey, error) {
	var keys []service.SortKey
	for _, o := range asList(v) {
		s := str(o)
		field, desc := strings.CutSuffix(s, "_DESC")
		if !desc {
			field, _ = strings.CutSuffix(s, "_ASC")
		}
		if field == "id" {
			field = "objectId"
		}
		keys = append(keys, service.SortKey{Path: field, Desc: desc})
	}
	return keys, nil
}

// selects reports whether a selection asks for a field (fragments included).
func selects(set ast.SelectionSet, name string) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == name {
				return true
			}
		case *ast.InlineFragment:
			if selects(s.SelectionSet, name) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && selects(s.Definition.SelectionSet, name) {
				return true
			}
		}
	}
	return false
}

// MaxIncludeDepth bounds the pointer paths a query fetches with its
// objects; deeper pointers are read one by one.
const MaxIncludeDepth = 4

// includes lists the pointer paths a selection on cm's objects reads
// beyond the id, so one Find brings them along (as REST's include does,
// with the same access checks) instead of one Get per pointer.
func includes(cm *classModel, set ast.SelectionSet, prefix string, depth int, out []string) []string {
	if depth >= MaxIncludeDepth {
		return out
	}
	forFields(set, func(f *ast.Field) {
		fm, ok := cm.byName[f.Name]
		if !ok || fm.Type != schema.TypePointer || !readsBeyondID(f.SelectionSet) {
			return
		}
		path := prefix + f.Name
		out = append(out, path)
		out = includes(fm.target, f.SelectionSet, path+".", depth+1, out)
	})
	return out
}

// nodeSelection is the selection on a connection's nodes.
func nodeSelection(set ast.SelectionSet) ast.SelectionSet {
	var nodes ast.SelectionSet
	forFields(set, func(f *ast.Field) {
		if f.Name == "edges" {
			forFields(f.SelectionSet, func(n *ast.Field) {
				if n.Name == "node" {
					nodes = append(nodes, n.SelectionSet...)
				}
			})
		}
	})
	return nodes
}

func readsBeyondID(set ast.SelectionSet) bool {
	beyond := false
	forFields(set, func(f *ast.Field) {
		switch f.Name {
		case "id", "objectId", "__typename":
		default:
			beyond = true
		}
	})
	return beyond
}

// forFields calls fn for each field of a selection, fragments expanded
// whatever their type condition.
func forFields(set ast.SelectionSet, fn func(*ast.Field)) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			fn(s)
		case *ast.InlineFragment:
			forFields(s.SelectionSet, fn)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				forFields(s.Definition.SelectionSet, fn)
			}
		}
	}
}

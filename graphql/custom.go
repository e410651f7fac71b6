package graphql

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// customFor fits graphQLCustomTypeDefs to a generated schema: it drops
// the extensions of types the schema does not hold (a class extended
// before its first object, or since deleted), so that one missing class
// does not take GraphQL down, and names them. Anything else that does not
// fit is left for the schema loader to report.
func customFor(generated, custom string) (string, []string) {
	doc, err := parser.ParseSchema(&ast.Source{Name: "graphQLCustomTypeDefs", Input: custom})
	if err != nil || len(doc.Extensions) == 0 {
		return custom, nil
	}
	gen, err := parser.ParseSchema(&ast.Source{Input: generated})
	if err != nil {
		return custom, nil
	}
	have := map[string]bool{}
	for _, d := range gen.Definitions {
		have[d.Name] = true
	}
	for _, d := range doc.Definitions {
		have[d.Name] = true
	}
	var dropped []string
	kept := doc.Extensions[:0]
	for _, d := range doc.Extensions {
		if have[d.Name] {
			kept = append(kept, d)
			continue
		}
		dropped = append(dropped, d.Name)
	}
	if len(dropped) == 0 {
		return custom, nil
	}
	doc.Extensions = kept
	var b strings.Builder
	formatter.NewFormatter(&b).FormatSchemaDocument(doc)
	return b.String(), dropped
}

package graphql

import (
	"maps"
	"slices"

	"github.com/vektah/gqlparser/v2/ast"
)

// introSchema is the source of __schema.
type introSchema struct{ s *ast.Schema }

// wrapType is a list or non-null __Type; named types are their
// *ast.Definition.
type wrapType struct {
	s *ast.Schema
	t *ast.Type
}

// inputValue is an argument or input field as __InputValue.
type inputValue struct {
	s    *ast.Schema
	name string
	desc string
	typ  *ast.Type
	def  *ast.Value
	dirs ast.DirectiveList
}

type enumValue struct{ v *ast.EnumValueDefinition }

type directive struct {
	s *ast.Schema
	d *ast.DirectiveDefinition
}

// introspectField resolves the fields of the introspection types.
func (e *executor) introspectField(src any, f *ast.Field, args map[string]any) (any, error) {
	s := e.m.schema
	switch x := src.(type) {
	case introSchema:
		return schemaField(s, f.Name), nil
	case *ast.Definition:
		return typeField(s, x, f.Name, args), nil
	case wrapType:
		return wrapField(s, x, f.Name), nil
	case *ast.FieldDefinition:
		return fieldDefField(s, x, f.Name), nil
	case inputValue:
		return inputValueField(s, x, f.Name), nil
	case enumValue:
		switch f.Name {
		case "name":
			return x.v.Name, nil
		case "description":
			return nilIfEmpty(x.v.Description), nil
		case "isDeprecated":
			return x.v.Directives.ForName("deprecated") != nil, nil
		case "deprecationReason":
			return deprecation(x.v.Directives), nil
		}
	case directive:
		return directiveField(s, x, f.Name), nil
	}
	return nil, nil
}

// schemaField resolves a field of __Schema.
func schemaField(s *ast.Schema, name string) any {
	switch name {
	case "description":
		return nilIfEmpty(s.Description)
	case "types":
		names := slices.Sorted(maps.Keys(s.Types))
		out := make([]any, len(names))
		for i, n := range names {
			out[i] = s.Types[n]
		}
		return out
	case "queryType":
		return s.Query
	case "mutationType":
		return defOrNil(s.Mutation)
	case "subscriptionType":
		return defOrNil(s.Subscription)
	case "directives":
		names := slices.Sorted(maps.Keys(s.Directives))
		out := make([]any, len(names))
		for i, n := range names {
			out[i] = directive{s, s.Directives[n]}
		}
		return out
	}
	return nil
}

// wrapField resolves a field of a list or non-null __Type.
func wrapField(s *ast.Schema, x wrapType, name string) any {
	switch name {
	case "kind":
		if x.t.NonNull {
			return "NON_NULL"
		}
		return "LIST"
	case "ofType":
		if x.t.NonNull {
			inner := *x.t
			inner.NonNull = false
			return typeRef(s, &inner)
		}
		return typeRef(s, x.t.Elem)
	}
	return nil
}

// fieldDefField resolves a field of __Field.
func fieldDefField(s *ast.Schema, x *ast.FieldDefinition, name string) any {
	switch name {
	case "name":
		return x.Name
	case "description":
		return nilIfEmpty(x.Description)
	case "args":
		return argValues(s, x.Arguments)
	case "type":
		return typeRef(s, x.Type)
	case "isDeprecated":
		return x.Directives.ForName("deprecated") != nil
	case "deprecationReason":
		return deprecation(x.Directives)
	}
	return nil
}

func argValues(s *ast.Schema, args ast.ArgumentDefinitionList) []any {
	out := make([]any, 0, len(args))
	for _, a := range args {
		out = append(out, inputValue{s, a.Name, a.Description, a.Type, a.DefaultValue, a.Directives})
	}
	return out
}

// inputValueField resolves a field of __InputValue.
func inputValueField(s *ast.Schema, x inputValue, name string) any {
	switch name {
	case "name":
		return x.name
	case "description":
		return nilIfEmpty(x.desc)
	case "type":
		return typeRef(s, x.typ)
	case "defaultValue":
		if x.def == nil {
			return nil
		}
		return x.def.String()
	case "isDeprecated":
		return x.dirs.ForName("deprecated") != nil
	case "deprecationReason":
		return deprecation(x.dirs)
	}
	return nil
}

// directiveField resolves a field of __Directive.
func directiveField(s *ast.Schema, x directive, name string) any {
	switch name {
	case "name":
		return x.d.Name
	case "description":
		return nilIfEmpty(x.d.Description)
	case "isRepeatable":
		return x.d.IsRepeatable
	case "locations":
		out := make([]any, len(x.d.Locations))
		for i, l := range x.d.Locations {
			out[i] = string(l)
		}
		return out
	case "args":
		return argValues(s, x.d.Arguments)
	}
	return nil
}

// typeField resolves a field of a named __Type.
func typeField(s *ast.Schema, d *ast.Definition, name string, args map[string]any) any {
	includeDeprecated, _ := args["includeDeprecated"].(bool)
	switch name {
	case "kind":
		return string(d.Kind)
	case "name":
		return d.Name
	case "description":
		return nilIfEmpty(d.Description)
	case "specifiedByURL":
		if sb := d.Directives.ForName("specifiedBy"); sb != nil {
			if a := sb.Arguments.ForName("url"); a != nil {
				return a.Value.Raw
			}
		}
		return nil
	case "fields":
		if d.Kind != ast.Object && d.Kind != ast.Interface {
			return nil
		}
		out := []any{}
		for _, f := range d.Fields {
			if len(f.Name) > 1 && f.Name[:2] == "__" || !includeDeprecated && f.Directives.ForName("deprecated") != nil {
				continue
			}
			out = append(out, f)
		}
		return out
	case "interfaces":
		if d.Kind != ast.Object && d.Kind != ast.Interface {
			return nil
		}
		out := []any{}
		for _, n := range d.Interfaces {
			out = append(out, s.Types[n])
		}
		return out
	case "possibleTypes":
		if d.Kind != ast.Interface && d.Kind != ast.Union {
			return nil
		}
		out := []any{}
		for _, p := range s.PossibleTypes[d.Name] {
			out = append(out, p)
		}
		return out
	case "enumValues":
		if d.Kind != ast.Enum {
			return nil
		}
		out := []any{}
		for _, v := range d.EnumValues {
			if !includeDeprecated && v.Directives.ForName("deprecated") != nil {
				continue
			}
			out = append(out, enumValue{v})
		}
		return out
	case "inputFields":
		if d.Kind != ast.InputObject {
			return nil
		}
		out := []any{}
		for _, f := range d.Fields {
			out = append(out, inputValue{s, f.Name, f.Description, f.Type, f.DefaultValue, f.Directives})
		}
		return out
	case "isOneOf":
		if d.Kind != ast.InputObject {
			return nil
		}
		return d.Directives.ForName("oneOf") != nil
	}
	return nil
}

func typeRef(s *ast.Schema, t *ast.Type) any {
	if t == nil {
		return nil
	}
	if t.NonNull || t.Elem != nil {
		return wrapType{s, t}
	}
	return s.Types[t.NamedType]
}

func defOrNil(d *ast.Definition) any {
	if d == nil {
		return nil
	}
	return d
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func deprecation(dirs ast.DirectiveList) any {
	d := dirs.ForName("deprecated")
	if d == nil {
		return nil
	}
	if a := d.Arguments.ForName("reason"); a != nil && a.Value != nil {
		return a.Value.Raw
	}
	return "No longer supported"
}

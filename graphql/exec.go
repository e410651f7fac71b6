package graphql

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// ordered is a JSON object whose keys keep the order of the selection,
// as GraphQL responses must.
type ordered struct {
	keys []string
	vals []any
}

func (o *ordered) set(k string, v any) {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

// MarshalJSON writes the keys in order.
func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeValue(&b, o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeValue encodes a result tree in one pass: encoding/json would
// re-validate the bytes of every nested Marshaler, a cost that grows with
// the depth of the result.
func writeValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case *ordered:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := writeValue(b, x.vals[i]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case string:
		writeString(b, x)
		return nil
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
		return nil
	case nil:
		b.WriteString("null")
		return nil
	case int:
		b.WriteString(strconv.Itoa(x))
		return nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(enc)
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s)
			b.Write(enc)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// gqlError is one entry of a response's errors.
type gqlError struct {
	Message    string         `json:"message"`
	Locations  []location     `json:"locations,omitempty"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

type location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// rootValue is the source of the root query and mutation fields.
type rootValue struct{}

// executor runs one operation of a validated document.
type executor struct {
	h      *Handler
	m      *model
	auth   service.Auth
	ip     string // the client's address: rate limits count by it
	vars   map[string]any
	errors []gqlError
	// clientGone, when set, is done once the client has hung up: the
	// fields left are then not resolved.
	clientGone context.Context
	abandoned  bool
	// collected caches the grouped fields of a selection on a type: every
	// object of a list shares its selection, so it is grouped once.
	collected map[collectKey][]fieldGroup
}

type collectKey struct {
	first ast.Selection // identifies the selection set
	n     int
	typ   string
}

// fieldGroup is the fields sharing one response key.
type fieldGroup struct {
	key    string
	fields []*ast.Field
}

// fail records an error at path and turns any error into a Parse-coded one
// whose message never leaks internals.
func (e *executor) fail(f *ast.Field, path []any, err error) {
	code, msg := schema.CodeInternalServerError, "Internal server error."
	if pe, ok := schema.AsError(err); ok {
		code, msg = pe.Code, pe.Message
	} else {
		e.h.log.Error("graphql: resolver failed", "err", err)
	}
	ge := gqlError{Message: msg, Path: append([]any(nil), path...), Extensions: map[string]any{"code": code}}
	if f != nil && f.Position != nil {
		ge.Locations = []location{{f.Position.Line, f.Position.Column}}
	}
	e.errors = append(e.errors, ge)
}

// collect groups a selection set's fields by response key, expanding
// fragments that apply to typ and honouring @skip and @include.
func (e *executor) collect(set ast.SelectionSet, typ *ast.Definition, keys *[]string, groups map[string][]*ast.Field) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if !e.included(s.Directives) {
				continue
			}
			k := s.Alias
			if k == "" {
				k = s.Name
			}
			if _, seen := groups[k]; !seen {
				*keys = append(*keys, k)
			}
			groups[k] = append(groups[k], s)
		case *ast.InlineFragment:
			if e.included(s.Directives) && e.applies(s.TypeCondition, typ) {
				e.collect(s.SelectionSet, typ, keys, groups)
			}
		case *ast.FragmentSpread:
			if e.included(s.Directives) && s.Definition != nil && e.applies(s.Definition.TypeCondition, typ) {
				e.collect(s.Definition.SelectionSet, typ, keys, groups)
			}
		}
	}
}

func (e *executor) included(dirs ast.DirectiveList) bool {
	for _, d := range dirs {
		if d.Name != "skip" && d.Name != "include" {
			continue
		}
		v, _ := d.ArgumentMap(e.vars)["if"].(bool)
		if d.Name == "skip" && v || d.Name == "include" && !v {
			return false
		}
	}
	return true
}

func (e *executor) applies(cond string, typ *ast.Definition) bool {
	if cond == "" || cond == typ.Name {
		return true
	}
	for _, p := range e.m.schema.PossibleTypes[cond] {
		if p.Name == typ.Name {
			return true
		}
	}
	return false
}

// selectionSet resolves a selection on src of type typ. ok is false when a
// non-null field came out null: the object itself must then be null.
func (e *executor) selectionSet(set ast.SelectionSet, typ *ast.Definition, src any, path []any) (*ordered, bool) {
	groups := e.grouped(set, typ)
	out := &ordered{keys: make([]string, 0, len(groups)), vals: make([]any, 0, len(groups))}
	for _, g := range groups {
		v, ok := e.field(typ, src, g.fields, append(path, g.key))
		if !ok {
			return nil, false
		}
		out.set(g.key, v)
	}
	return out, true
}

// grouped is collect's result for a selection on typ, computed once.
func (e *executor) grouped(set ast.SelectionSet, typ *ast.Definition) []fieldGroup {
	if len(set) == 0 {
		return nil
	}
	k := collectKey{set[0], len(set), typ.Name}
	if g, ok := e.collected[k]; ok {
		return g
	}
	var keys []string
	groups := map[string][]*ast.Field{}
	e.collect(set, typ, &keys, groups)
	out := make([]fieldGroup, len(keys))
	for i, key := range keys {
		out[i] = fieldGroup{key, groups[key]}
	}
	if e.collected == nil {
		e.collected = map[collectKey][]fieldGroup{}
	}
	e.collected[k] = out
	return out
}

func (e *executor) field(typ *ast.Definition, src any, fields []*ast.Field, path []any) (any, bool) {
	f := fields[0]
	if f.Name == "__typename" {
		return typ.Name, true
	}
	if f.Definition == nil {
		return nil, true
	}
	if e.clientGone != nil && e.clientGone.Err() != nil {
		if !e.abandoned {
			e.abandoned = true
			e.h.log.Info("graphql: the client hung up; its query stops", "ip", e.ip)
			e.fail(f, path, schema.Errorf(schema.CodeInternalServerError, "The client closed the connection."))
		}
		return nil, !f.Definition.Type.NonNull
	}
	var args map[string]any
	if len(f.Definition.Arguments) > 0 {
		args = f.ArgumentMap(e.vars)
		for _, def := range f.Definition.Arguments {
			if v, ok := args[def.Name]; ok {
				args[def.Name] = e.m.listCoerced(v, def.Type, 0)
			}
		}
	}
	v, err := e.safeResolve(typ, src, f, args, path)
	if err != nil {
		e.fail(f, path, err)
		return nil, !f.Definition.Type.NonNull
	}
	return e.complete(f.Definition.Type, fields, v, path)
}

// safeResolve is resolve with a bug in one resolver turned into that
// field's error (code 1, logged with its stack), never a failed request.
func (e *executor) safeResolve(typ *ast.Definition, src any, f *ast.Field, args map[string]any, path []any) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			e.h.log.Error("graphql: resolver panicked", "field", f.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			v, err = nil, fmt.Errorf("panic in resolver %s", f.Name)
		}
	}()
	return e.resolve(typ, src, f, args, path)
}

// subSelection merges the selection sets of fields sharing a response key.
func subSelection(fields []*ast.Field) ast.SelectionSet {
	if len(fields) == 1 {
		return fields[0].SelectionSet
	}
	var set ast.SelectionSet
	for _, f := range fields {
		set = append(set, f.SelectionSet...)
	}
	return set
}

// complete shapes a resolved value by its GraphQL type.
func (e *executor) complete(t *ast.Type, fields []*ast.Field, v any, path []any) (any, bool) {
	if t.NonNull {
		inner := *t
		inner.NonNull = false
		r, ok := e.complete(&inner, fields, v, path)
		if !ok {
			return nil, false
		}
		if r == nil {
			e.fail(fields[0], path, schema.Errorf(schema.CodeInternalServerError, "Cannot return null for non-nullable field %s.", fields[0].Name))
			return nil, false
		}
		return r, true
	}
	if v == nil {
		return nil, true
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, true
		}
		out := make([]any, len(list))
		for i, item := range list {
			r, ok := e.complete(t.Elem, fields, item, append(path, i))
			if !ok {
				return nil, true
			}
			out[i] = r
		}
		return out, true
	}
	def := e.m.schema.Types[t.NamedType]
	switch def.Kind {
	case ast.Scalar, ast.Enum:
		return serializeLeaf(def.Name, v), true
	case ast.Interface, ast.Union:
		name := e.typeOf(v)
		if def = e.m.schema.Types[name]; def == nil {
			e.fail(fields[0], path, fmt.Errorf("no concrete type for %T", v))
			return nil, true
		}
	}
	obj, ok := e.selectionSet(subSelection(fields), def, v, path)
	if !ok {
		return nil, true
	}
	return obj, true
}

// typeOf names the concrete type of a value in an abstract position.
func (e *executor) typeOf(v any) string {
	switch x := v.(type) {
	case *objectValue:
		return x.cm.typ
	case map[string]any:
		s, _ := x["__typename"].(string)
		return s
	}
	return ""
}

// serializeLeaf writes a scalar or enum value.
func serializeLeaf(typ string, v any) any {
	switch typ {
	case "Int":
		switch n := v.(type) {
		case int:
			return n
		case int64:
			return n
		case float64:
			if n == math.Trunc(n) && math.Abs(n) < 1<<31 {
				return int(n)
			}
			return nil
		}
		return nil
	case "Float":
		switch n := v.(type) {
		case float64:
			return n
		case int:
			return float64(n)
		case int64:
			return float64(n)
		}
		return nil
	case "Boolean":
		b, ok := v.(bool)
		if !ok {
			return nil
		}
		return b
	case "String", "ID":
		switch s := v.(type) {
		case string:
			return s
		case float64, bool, int:
			return fmt.Sprint(s)
		}
		return nil
	}
	return v
}

package graphql

import (
	"maps"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// objectValue is a Parse object in a GraphQL position.
type objectValue struct {
	cm  *classModel
	obj schema.Object
}

// resolve finds a field's value on its source, dispatching on the Go type
// of the source; plain maps (payloads, ACL entries, geo points) answer by
// key.
func (e *executor) resolve(typ *ast.Definition, src any, f *ast.Field, args map[string]any, path []any) (any, error) {
	switch s := src.(type) {
	case rootValue:
		if v, ok, err := e.custom(f, args, nil); ok {
			return v, err
		}
		if err := e.limitRoot(typ, f, args); err != nil {
			return nil, err
		}
		if typ.Name == e.m.schema.Mutation.Name {
			return e.mutate(f, args)
		}
		return e.query(f, args)
	case eventRoot:
		return &objectValue{s.cm, s.obj}, nil
	case *objectValue:
		if v, ok, err := e.custom(f, args, s); ok {
			return v, err
		}
		return e.objectField(s, f, args)
	case *connValue:
		return s.field(f.Name), nil
	case map[string]any:
		return s[f.Name], nil
	}
	return e.introspectField(src, f, args)
}

// query resolves a root query field.
func (e *executor) query(f *ast.Field, args map[string]any) (any, error) {
	switch f.Name {
	case "health":
		return true, nil
	case "viewer":
		return e.viewer(e.auth)
	case "node":
		class, id := fromGlobalID(str(args["id"]))
		cm := e.m.classes[class]
		if cm == nil {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "node needs a global id (base64 of \"Class:objectId\") of a known class.")
		}
		return e.get(cm, id, f.SelectionSet)
	case "class":
		return e.class(str(args["name"]))
	case "classes":
		return e.classes()
	case "cloudConfig":
		return e.cloudConfig(str(args["paramName"]))
	case "__schema":
		return introSchema{e.m.schema}, nil
	case "__type":
		if d := e.m.schema.Types[str(args["name"])]; d != nil {
			return d, nil
		}
		return nil, nil
	}
	rf, ok := e.m.query[f.Name]
	if !ok {
		return nil, nil
	}
	if rf.kind == rootGet {
		return e.get(rf.class, idOf(rf.class.class, str(args["id"])), f.SelectionSet)
	}
	where, err := e.where(rf.class, args["where"])
	if err != nil {
		return nil, err
	}
	return e.page(rf.class, where, args, f.SelectionSet)
}

// get reads one object as the caller may see it.
func (e *executor) get(cm *classModel, id string, sel ast.SelectionSet) (any, error) {
	obj, err := e.h.svc.Get(e.auth, cm.class, id, service.ReadOptions{Include: includes(cm, sel, "", 0, nil)})
	if err != nil {
		return nil, err
	}
	return &objectValue{cm, obj}, nil
}

// objectField resolves a field of a Parse object.
func (e *executor) objectField(o *objectValue, f *ast.Field, args map[string]any) (any, error) {
	switch f.Name {
	case "id":
		return globalID(o.cm.class, str(o.obj["objectId"])), nil
	case "objectId", "createdAt", "updatedAt":
		return o.obj[f.Name], nil
	case "ACL":
		return aclOut(o.obj["ACL"]), nil
	case "authDataResponse":
		return o.obj["authDataResponse"], nil // set by logInWith only
	}
	fm, ok := o.cm.byName[f.Name]
	if !ok {
		return nil, nil
	}
	v := o.obj[f.Name]
	switch fm.Type {
	case schema.TypeRelation:
		where, err := e.where(fm.target, args["where"])
		if err != nil {
			return nil, err
		}
		where["$relatedTo"] = map[string]any{"object": schema.Pointer(o.cm.class, str(o.obj["objectId"])), "key": f.Name}
		return e.page(fm.target, where, args, f.SelectionSet)
	case schema.TypePointer:
		return e.pointerOut(fm.target, v)
	case schema.TypeArray:
		list, ok := v.([]any)
		if !ok {
			return nil, nil
		}
		out := make([]any, 0, len(list))
		for _, item := range list {
			if m, ok := item.(map[string]any); ok && (m["__type"] == "Pointer" || m["__type"] == "Object") {
				if cm := e.m.classes[str(m["className"])]; cm != nil {
					p, err := e.pointerOut(cm, m)
					if err != nil {
						return nil, err
					}
					if p != nil {
						out = append(out, p)
					}
					continue
				}
			}
			out = append(out, map[string]any{"__typename": "Element", "value": item})
		}
		return out, nil
	}
	return valueOut(fm.Type, v), nil
}

// pointerOut follows a pointer as the caller may read it: an unreadable
// or missing target reads as null.
func (e *executor) pointerOut(target *classModel, v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	if m["__type"] == "Object" {
		return &objectValue{target, m}, nil
	}
	obj, err := e.h.svc.Get(e.auth, target.class, str(m["objectId"]), service.ReadOptions{})
	if err != nil {
		if pe, ok := schema.AsError(err); ok && pe.Code == schema.CodeObjectNotFound {
			return nil, nil
		}
		return nil, err
	}
	return &objectValue{target, obj}, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// custom resolves a field carrying @resolve or @mock
// (graphQLCustomTypeDefs), on a root type or, for parent, on a class type;
// ok is false for any other field. The cloud function's params are the
// field's arguments, and on a class type "object": the parent as the
// caller reads it (REST JSON with className), unless an argument has that
// name.
func (e *executor) custom(f *ast.Field, args map[string]any, parent *objectValue) (v any, ok bool, err error) {
	dirs := f.Definition.Directives
	if d := dirs.ForName("mock"); d != nil {
		if a := d.Arguments.ForName("with"); a != nil {
			v, err = a.Value.Value(nil)
			return v, true, err
		}
		return nil, true, nil
	}
	d := dirs.ForName("resolve")
	if d == nil {
		return nil, false, nil
	}
	name := f.Name
	if a := d.Arguments.ForName("to"); a != nil && a.Value != nil {
		name = a.Value.Raw
	}
	params, _ := numbers(args).(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	if err := e.limit("POST", "/functions/"+name); err != nil {
		return nil, true, err
	}
	if _, named := params["object"]; parent != nil && !named {
		obj := maps.Clone(parent.obj)
		obj["className"] = parent.cm.class
		delete(obj, "__type")
		params["object"] = obj
	}
	res, err := e.h.svc.RunFunction(e.auth, name, params)
	if err != nil {
		return nil, true, err
	}
	if res == service.NoResult {
		res = nil
	}
	return res, true, nil
}

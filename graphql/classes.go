package graphql

import (
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// schemaFieldTypes names the SchemaField type of each Parse field type.
var schemaFieldTypes = map[string]string{
	"String": "SchemaStringField", "Number": "SchemaNumberField", "Boolean": "SchemaBooleanField",
	"Array": "SchemaArrayField", "Object": "SchemaObjectField", "Date": "SchemaDateField",
	"File": "SchemaFileField", "GeoPoint": "SchemaGeoPointField", "Polygon": "SchemaPolygonField",
	"Bytes": "SchemaBytesField", "Pointer": "SchemaPointerField", "Relation": "SchemaRelationField",
	"ACL": "SchemaACLField",
}

// addInputs maps SchemaFieldsInput's lists to Parse types.
var addInputs = []struct{ input, typ string }{
	{"addStrings", "String"}, {"addNumbers", "Number"}, {"addBooleans", "Boolean"},
	{"addArrays", "Array"}, {"addObjects", "Object"}, {"addDates", "Date"}, {"addFiles", "File"},
	{"addGeoPoint", "GeoPoint"}, {"addPolygons", "Polygon"}, {"addBytes", "Bytes"},
	{"addPointers", "Pointer"}, {"addRelations", "Relation"},
}

func (e *executor) needMaster() error {
	if !e.auth.Master {
		return schema.Errorf(schema.CodeOperationForbidden, "unauthorized: master key is required")
	}
	return nil
}

// classOut shows a schemas-API class as GraphQL's Class.
func classOut(c map[string]any) map[string]any {
	fields, _ := c["fields"].(map[string]any)
	names := slices.Sorted(maps.Keys(fields))
	list := make([]any, 0, len(names))
	for _, n := range names {
		f, _ := fields[n].(map[string]any)
		entry := map[string]any{"__typename": schemaFieldTypes[str(f["type"])], "name": n}
		if t, ok := f["targetClass"]; ok {
			entry["targetClassName"] = t
		}
		if entry["__typename"] == "" {
			entry["__typename"] = "SchemaObjectField"
		}
		list = append(list, entry)
	}
	return map[string]any{"name": c["className"], "schemaFields": list}
}

func (e *executor) class(name string) (any, error) {
	if err := e.needMaster(); err != nil {
		return nil, err
	}
	c, err := e.h.svc.Schema(name)
	if err != nil && slices.Contains(startupClasses, name) {
		c, err = builtinClass(name), nil
	}
	if err != nil {
		return nil, err
	}
	return classOut(c), nil
}

func (e *executor) classes() (any, error) {
	if err := e.needMaster(); err != nil {
		return nil, err
	}
	all := e.h.svc.Schemas()
	for _, name := range startupClasses {
		if !slices.ContainsFunc(all, func(c map[string]any) bool { return c["className"] == name }) {
			all = append(all, builtinClass(name))
		}
	}
	slices.SortFunc(all, func(a, b map[string]any) int { return strings.Compare(str(a["className"]), str(b["className"])) })
	out := make([]any, len(all))
	for i, c := range all {
		out[i] = classOut(c)
	}
	return out, nil
}

// startupClasses are the classes Parse Server creates when it starts, so
// its class and classes show them before their first object.
var startupClasses = []string{"_User", "_Role"}

// builtinClass is a built-in class not stored yet, in the schemas API's
// shape: its default fields only.
func builtinClass(name string) map[string]any {
	fields := map[string]any{}
	for _, fs := range []iter.Seq2[string, schema.Field]{schema.DefaultFields(), schema.BuiltinFields(name)} {
		for k, f := range fs {
			entry := map[string]any{"type": string(f.Type)}
			if f.TargetClass != "" {
				entry["targetClass"] = f.TargetClass
			}
			fields[k] = entry
		}
	}
	return map[string]any{"className": name, "fields": fields}
}

// schemaFieldsIn turns a SchemaFieldsInput into the schemas API's fields.
func schemaFieldsIn(v any) map[string]any {
	in, _ := v.(map[string]any)
	fields := map[string]any{}
	for _, a := range addInputs {
		items := asList(in[a.input])
		if m, ok := in[a.input].(map[string]any); ok {
			items = []any{m}
		}
		for _, item := range items {
			m, _ := item.(map[string]any)
			f := map[string]any{"type": a.typ}
			if t, ok := m["targetClassName"]; ok {
				f["targetClass"] = t
			}
			fields[str(m["name"])] = f
		}
	}
	for _, item := range asList(in["remove"]) {
		m, _ := item.(map[string]any)
		fields[str(m["name"])] = map[string]any{"__op": "Delete"}
	}
	return fields
}

func (e *executor) classMutation(op string, input map[string]any) (map[string]any, error) {
	if err := e.needMaster(); err != nil {
		return nil, err
	}
	if e.h.opts.LockSchemas {
		return nil, errSchemasLocked
	}
	name := str(input["name"])
	var c map[string]any
	var err error
	switch op {
	case "createClass":
		c, err = e.h.svc.CreateSchema(e.auth, name, map[string]any{"className": name, "fields": schemaFieldsIn(input["schemaFields"])})
	case "updateClass":
		c, err = e.h.svc.UpdateSchema(e.auth, name, map[string]any{"className": name, "fields": schemaFieldsIn(input["schemaFields"])})
	case "deleteClass":
		if c, err = e.h.svc.Schema(name); err == nil {
			err = e.h.svc.DeleteSchema(e.auth, name)
		}
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"class": classOut(c)}, nil
}

// errSchemasLocked refuses schema changes under the schema option's
// lockSchemas, with the code and message REST answers (Parse Server's).
var errSchemasLocked = schema.Errorf(schema.CodeOperationForbidden, "Cannot perform this operation when schemas options is used.")

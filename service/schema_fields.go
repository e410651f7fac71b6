package service

import (
	"regexp"
	"sort"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// Field declarations of the schemas API: names, types, and the options
// (required, defaultValue) the write path applies.

// visibleFields are the fields the schemas API shows and may name in CLPs
// and indexes: internal ones (leading underscore) left out.
func visibleFields(fields map[string]schema.Field) map[string]schema.Field {
	out := make(map[string]schema.Field, len(fields))
	for k, f := range fields {
		if !strings.HasPrefix(k, "_") {
			out[k] = f
		}
	}
	return out
}

var fieldNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// checkNewFieldName applies Parse's rules to a field the schemas API adds.
func checkNewFieldName(class, name string) error {
	if !fieldNamePattern.MatchString(name) || len(name) > schema.MaxKeyLength || schema.IsForbiddenFieldName(name) || name == "className" {
		return schema.Errorf(schema.CodeInvalidKeyName, "invalid field name: %s", name)
	}
	if isDefaultField(class, name) {
		return schema.Errorf(schema.CodeChangedImmutableField, "field %s cannot be added", name)
	}
	return nil
}

// fieldTypes are the types the schemas API may declare.
var fieldTypes = map[schema.Type]bool{
	schema.TypeString: true, schema.TypeNumber: true, schema.TypeBoolean: true, schema.TypeDate: true,
	schema.TypeObject: true, schema.TypeArray: true, schema.TypeGeoPoint: true, schema.TypeFile: true,
	schema.TypeBytes: true, schema.TypePolygon: true, schema.TypePointer: true, schema.TypeRelation: true,
}

// parseFieldSpec reads one entry of a schema body's fields: a declaration
// {type, targetClass?, required?, defaultValue?} or {"__op":"Delete"}.
func parseFieldSpec(class, name string, v any) (f schema.Field, del bool, err error) {
	badJSON := schema.Errorf(schema.CodeInvalidJSON, "invalid JSON")
	m, ok := v.(map[string]any)
	if !ok {
		return f, false, badJSON
	}
	if op, has := m["__op"]; has {
		if op == "Delete" {
			return f, true, nil
		}
		return f, false, badJSON
	}
	t, ok := m["type"].(string)
	if !ok {
		return f, false, badJSON
	}
	f.Type = schema.Type(t)
	if f.Type == schema.TypePointer || f.Type == schema.TypeRelation {
		target, has := m["targetClass"]
		if !has || target == nil || target == "" {
			return f, false, schema.Errorf(schema.CodeMissingRequiredField, "type %s needs a class name", t)
		}
		ts, ok := target.(string)
		if !ok {
			return f, false, badJSON
		}
		if !schema.ValidClassName(ts) {
			return f, false, invalidClassName(ts)
		}
		f.TargetClass = ts
	} else if !fieldTypes[f.Type] {
		return f, false, schema.Errorf(schema.CodeIncorrectType, "invalid field type: %s", t)
	}
	if r, has := m["required"]; has && r != nil {
		b, ok := r.(bool)
		if !ok {
			return f, false, badJSON
		}
		f.Required = b
	}
	if f.Required && f.Type == schema.TypeRelation {
		return f, false, schema.Errorf(schema.CodeIncorrectType, "The 'required' option is not applicable for %s", describe(f))
	}
	if dv, has := m["defaultValue"]; has && dv != nil {
		if f.Type == schema.TypeRelation {
			return f, false, schema.Errorf(schema.CodeIncorrectType, "The 'default value' option is not applicable for %s", describe(f))
		}
		norm, err := normalizeValue(dv, 1)
		if err != nil {
			return f, false, err
		}
		got, typed, err := schema.TypeOf(norm)
		if err != nil {
			return f, false, err
		}
		if !typed || got.Type != f.Type || (f.Type == schema.TypePointer && got.TargetClass != f.TargetClass) {
			gotName := "null"
			if typed {
				gotName = describe(got)
			}
			return f, false, schema.Errorf(schema.CodeIncorrectType,
				"schema mismatch for %s.%s default value; expected %s but got %s", class, name, describe(f), gotName)
		}
		f.DefaultValue = norm
	}
	return f, false, nil
}

func checkGeoPoints(fields map[string]schema.Field) error {
	var geo []string
	for k, f := range fields {
		if f.Type == schema.TypeGeoPoint {
			geo = append(geo, k)
		}
	}
	if len(geo) > 1 {
		sort.Strings(geo)
		return schema.Errorf(schema.CodeIncorrectType,
			"currently, only one GeoPoint field may exist in an object. Adding %s when %s already exists.", geo[1], geo[0])
	}
	return nil
}

// applyFieldOptions enforces the schema's field options on a prepared
// write: on create, a field left out (or null) gets its default value, and
// a required field without one is refused with 142; on update the same
// holds for the fields the body sets to null or deletes.
func (s *Service) applyFieldOptions(d *draft, body map[string]any) error {
	cls := s.Class(d.class)
	if cls == nil || d.obj == nil {
		return nil
	}
	var names []string
	for name, f := range cls.Fields {
		if f.Required || f.DefaultValue != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if d.original != nil {
			if _, touched := body[name]; !touched {
				continue
			}
		}
		if v, ok := d.obj[name]; ok && v != nil {
			continue
		}
		f := cls.Fields[name]
		if f.DefaultValue != nil {
			d.obj[name] = f.DefaultValue
			// The SDKs learn the saved object's fields from the reply.
			d.setEcho(name, f.DefaultValue)
			continue
		}
		return schema.Errorf(schema.CodeValidationError, "%s is required", name)
	}
	return nil
}

// CLP validation.

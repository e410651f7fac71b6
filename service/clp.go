package service

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// Class-level permissions: the operations a CLP grants, the default CLP,
// and the validation of a CLP sent to the schemas API into the shape the
// read and write paths enforce.

// clpOperations are the operations a CLP grants, in Parse's order.
var clpOperations = []string{"find", "count", "get", "create", "update", "delete", "addField"}

// DefaultCLP is the CLP of a class that has none stored: every operation
// public, nothing protected.
func DefaultCLP() map[string]any {
	out := make(map[string]any, len(clpOperations)+1)
	for _, op := range clpOperations {
		out[op] = map[string]any{"*": true}
	}
	out["protectedFields"] = map[string]any{"*": []any{}}
	return out
}

var (
	clpUserID    = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	clpRole      = regexp.MustCompile(`^role:.+$`)
	clpUserField = regexp.MustCompile(`^userField:.+$`)
)

// normalizeCLP validates a client's class-level permissions and returns
// the stored form: Parse's shape, with every operation present ({} when
// the client left it out: the master key only) and protectedFields {} by
// default. fields are the class's fields after the change.
func normalizeCLP(v any, fields map[string]schema.Field) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "'%v' is not a valid value for class level permissions", v)
	}
	out := make(map[string]any, len(clpOperations)+3)
	for _, op := range clpOperations {
		out[op] = map[string]any{}
	}
	out["protectedFields"] = map[string]any{}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		val := m[key]
		switch key {
		case "find", "count", "get", "create", "update", "delete", "addField":
			entry, err := clpOperation(key, val, fields)
			if err != nil {
				return nil, err
			}
			out[key] = entry
		case "readUserFields", "writeUserFields":
			list, ok := val.([]any)
			if !ok {
				return nil, schema.Errorf(schema.CodeInvalidJSON,
					"'%v' is not a valid value for class level permissions %s - must be an array", val, key)
			}
			names, err := pointerPermissionFields(list, fields, key)
			if err != nil {
				return nil, err
			}
			out[key] = names
		case "protectedFields":
			pf, err := clpProtectedFields(val, fields)
			if err != nil {
				return nil, err
			}
			out[key] = pf
		default:
			return nil, schema.Errorf(schema.CodeInvalidJSON, "%s is not a valid operation for class level permissions", key)
		}
	}
	return out, nil
}

func clpOperation(op string, v any, fields map[string]schema.Field) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON,
			"'%v' is not a valid value for class level permissions %s - must be an object", v, op)
	}
	out := make(map[string]any, len(m))
	for _, who := range slices.Sorted(maps.Keys(m)) {
		val := m[who]
		switch {
		case who == "pointerFields":
			list, ok := val.([]any)
			if !ok {
				return nil, schema.Errorf(schema.CodeInvalidJSON,
					"'%v' is not a valid value for %s[%s] - expected an array.", val, op, who)
			}
			names, err := pointerPermissionFields(list, fields, op)
			if err != nil {
				return nil, err
			}
			out[who] = names
			continue
		case who == "*", who == "requiresAuthentication", clpRole.MatchString(who), clpUserID.MatchString(who):
		default:
			return nil, schema.Errorf(schema.CodeInvalidJSON, "'%s' is not a valid key for class level permissions", who)
		}
		if val != true {
			return nil, schema.Errorf(schema.CodeInvalidJSON,
				"'%v' is not a valid value for class level permissions %s:%s:%v", val, op, who, val)
		}
		out[who] = true
	}
	return out, nil
}

// pointerPermissionFields checks that each named field is a Pointer<_User>
// or an Array, as pointer permissions need.
func pointerPermissionFields(list []any, fields map[string]schema.Field, op string) ([]any, error) {
	out := make([]any, 0, len(list))
	for _, e := range list {
		name, _ := e.(string)
		f, ok := fields[name]
		if !ok || !(f.Type == schema.TypePointer && f.TargetClass == "_User" || f.Type == schema.TypeArray) {
			return nil, schema.Errorf(schema.CodeInvalidJSON,
				"'%v' is not a valid column for class level pointer permissions %s", e, op)
		}
		out = append(out, name)
	}
	return out, nil
}

func clpProtectedFields(v any, fields map[string]schema.Field) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON,
			"'%v' is not a valid value for class level permissions protectedFields - must be an object", v)
	}
	out := make(map[string]any, len(m))
	for _, who := range slices.Sorted(maps.Keys(m)) {
		if !(who == "*" || who == "authenticated" || clpRole.MatchString(who) || clpUserField.MatchString(who) || clpUserID.MatchString(who)) {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "'%s' is not a valid key for class level permissions", who)
		}
		if field, ok := strings.CutPrefix(who, "userField:"); ok {
			// The same rule as pointer permissions: a pointer to _User or an array.
			if _, err := pointerPermissionFields([]any{field}, fields, "protectedFields"); err != nil {
				return nil, err
			}
		}
		list, ok := m[who].([]any)
		if !ok {
			return nil, schema.Errorf(schema.CodeInvalidJSON,
				"'%v' is not a valid value for protectedFields[%s] - expected an array.", m[who], who)
		}
		names := make([]any, 0, len(list))
		for _, e := range list {
			name, ok := e.(string)
			if !ok {
				return nil, schema.Errorf(schema.CodeInvalidJSON, "'%v' is not a valid field name in protectedFields[%s]", e, who)
			}
			if _, isDefault := schema.DefaultField(name); isDefault {
				return nil, schema.Errorf(schema.CodeInvalidJSON, "Default field '%s' can not be protected", name)
			}
			if _, exists := fields[name]; !exists {
				return nil, schema.Errorf(schema.CodeInvalidJSON, "Field '%s' in protectedFields:%s does not exist", name, who)
			}
			names = append(names, name)
		}
		out[who] = names
	}
	return out, nil
}

// Index declarations.

package schema

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Class-level permissions: the operations a CLP grants, the default and
// the master-only CLP, the classes whose CLP is fixed, and the validation
// of a CLP into the shape the read and write paths enforce. A CLP that
// does not validate is never stored: an entry of the wrong type must not
// read as "public".

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

// NormalizeCLP validates class-level permissions (sent to the schemas API,
// or read from a dump being imported) and returns the stored form: Parse's
// shape, with every operation present ({} when
// the client left it out: the master key only) and protectedFields {} by
// default. fields are the class's fields after the change.
func NormalizeCLP(v any, fields map[string]Field) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(CodeInvalidJSON, "'%v' is not a valid value for class level permissions", v)
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
				return nil, Errorf(CodeInvalidJSON,
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
			return nil, Errorf(CodeInvalidJSON, "%s is not a valid operation for class level permissions", key)
		}
	}
	return out, nil
}

func clpOperation(op string, v any, fields map[string]Field) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(CodeInvalidJSON,
			"'%v' is not a valid value for class level permissions %s - must be an object", v, op)
	}
	out := make(map[string]any, len(m))
	for _, who := range slices.Sorted(maps.Keys(m)) {
		val := m[who]
		switch {
		case who == "pointerFields":
			list, ok := val.([]any)
			if !ok {
				return nil, Errorf(CodeInvalidJSON,
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
			return nil, Errorf(CodeInvalidJSON, "'%s' is not a valid key for class level permissions", who)
		}
		if val != true {
			return nil, Errorf(CodeInvalidJSON,
				"'%v' is not a valid value for class level permissions %s:%s:%v", val, op, who, val)
		}
		out[who] = true
	}
	return out, nil
}

// pointerPermissionFields checks that each named field is a Pointer<_User>
// or an Array, as pointer permissions need.
func pointerPermissionFields(list []any, fields map[string]Field, op string) ([]any, error) {
	out := make([]any, 0, len(list))
	for _, e := range list {
		name, _ := e.(string)
		f, ok := fields[name]
		if !ok || !(f.Type == TypePointer && f.TargetClass == "_User" || f.Type == TypeArray) {
			return nil, Errorf(CodeInvalidJSON,
				"'%v' is not a valid column for class level pointer permissions %s", e, op)
		}
		out = append(out, name)
	}
	return out, nil
}

func clpProtectedFields(v any, fields map[string]Field) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, Errorf(CodeInvalidJSON,
			"'%v' is not a valid value for class level permissions protectedFields - must be an object", v)
	}
	out := make(map[string]any, len(m))
	for _, who := range slices.Sorted(maps.Keys(m)) {
		if !(who == "*" || who == "authenticated" || clpRole.MatchString(who) || clpUserField.MatchString(who) || clpUserID.MatchString(who)) {
			return nil, Errorf(CodeInvalidJSON, "'%s' is not a valid key for class level permissions", who)
		}
		if field, ok := strings.CutPrefix(who, "userField:"); ok {
			// The same rule as pointer permissions: a pointer to _User or an array.
			if _, err := pointerPermissionFields([]any{field}, fields, "protectedFields"); err != nil {
				return nil, err
			}
		}
		list, ok := m[who].([]any)
		if !ok {
			return nil, Errorf(CodeInvalidJSON,
				"'%v' is not a valid value for protectedFields[%s] - expected an array.", m[who], who)
		}
		names := make([]any, 0, len(list))
		for _, e := range list {
			name, ok := e.(string)
			if !ok {
				return nil, Errorf(CodeInvalidJSON, "'%v' is not a valid field name in protectedFields[%s]", e, who)
			}
			if _, isDefault := DefaultField(name); isDefault {
				return nil, Errorf(CodeInvalidJSON, "Default field '%s' can not be protected", name)
			}
			if _, exists := fields[name]; !exists {
				return nil, Errorf(CodeInvalidJSON, "Field '%s' in protectedFields:%s does not exist", name, who)
			}
			names = append(names, name)
		}
		out[who] = names
	}
	return out, nil
}

// masterOnlyClasses are the built-in classes only the master key may read
// or write, whatever CLP is stored for them: webhooks, jobs, push records,
// audiences and idempotency keys are the server's own bookkeeping.
var masterOnlyClasses = map[string]bool{
	"_Audience": true, "_Idempotency": true, "_JobStatus": true,
	"_JobSchedule": true, "_PushStatus": true, "_Hooks": true,
	"_Subscription": true,
}

// MasterOnlyClass reports whether only the master key may touch class's
// objects, whatever its stored CLP says.
func MasterOnlyClass(class string) bool { return masterOnlyClasses[class] }

// MasterOnlyCLP grants no operation to anyone but the master key.
func MasterOnlyCLP() map[string]any {
	out := make(map[string]any, len(clpOperations)+1)
	for _, op := range clpOperations {
		out[op] = map[string]any{}
	}
	out["protectedFields"] = map[string]any{}
	return out
}

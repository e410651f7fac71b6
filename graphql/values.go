package graphql

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/quarrydata/quarry/schema"
)

// valueOut shows a stored value of a scalar-like field type.
func valueOut(t schema.Type, v any) any {
	m, _ := v.(map[string]any)
	switch t {
	case schema.TypeDate:
		if m != nil {
			return m["iso"]
		}
		return v
	case schema.TypeFile:
		if m == nil {
			return nil
		}
		return map[string]any{"name": m["name"], "url": m["url"]}
	case schema.TypeGeoPoint:
		if m == nil {
			return nil
		}
		return map[string]any{"latitude": m["latitude"], "longitude": m["longitude"]}
	case schema.TypePolygon:
		if m == nil {
			return nil
		}
		coords, _ := m["coordinates"].([]any)
		out := make([]any, 0, len(coords))
		for _, c := range coords {
			if p, ok := c.([]any); ok && len(p) == 2 {
				out = append(out, map[string]any{"latitude": p[0], "longitude": p[1]})
			}
		}
		return out
	case schema.TypeBytes:
		if m != nil {
			return m["base64"]
		}
		return v
	}
	return v
}

// aclOut shows an ACL as GraphQL's ACL type; no ACL reads as public read
// and write, as Parse Server shows it.
func aclOut(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{"public": map[string]any{"read": true, "write": true}}
	}
	keys := slices.Sorted(maps.Keys(m))
	var users, roles []any
	var public any
	for _, k := range keys {
		perm, _ := m[k].(map[string]any)
		read, _ := perm["read"].(bool)
		write, _ := perm["write"].(bool)
		switch {
		case k == "*":
			public = map[string]any{"read": read, "write": write}
		case strings.HasPrefix(k, "role:"):
			roles = append(roles, map[string]any{"roleName": strings.TrimPrefix(k, "role:"), "read": read, "write": write})
		default:
			users = append(users, map[string]any{"userId": globalID("_User", k), "read": read, "write": write})
		}
	}
	out := map[string]any{"users": nil, "roles": nil, "public": public}
	// No entries of a kind read as null, not as an empty list, as in
	// Parse Server.
	if len(users) > 0 {
		out["users"] = users
	}
	if len(roles) > 0 {
		out["roles"] = roles
	}
	return out
}

// aclIn turns an ACLInput into Parse's ACL.
func aclIn(v any) map[string]any {
	in, _ := v.(map[string]any)
	acl := map[string]any{}
	perm := func(m map[string]any) map[string]any {
		p := map[string]any{}
		if r, _ := m["read"].(bool); r {
			p["read"] = true
		}
		if w, _ := m["write"].(bool); w {
			p["write"] = true
		}
		return p
	}
	for _, u := range asList(in["users"]) {
		um, _ := u.(map[string]any)
		acl[idOf("_User", str(um["userId"]))] = perm(um)
	}
	for _, r := range asList(in["roles"]) {
		rm, _ := r.(map[string]any)
		acl["role:"+str(rm["roleName"])] = perm(rm)
	}
	if p, ok := in["public"].(map[string]any); ok {
		acl["*"] = perm(p)
	}
	for k, p := range acl {
		if len(p.(map[string]any)) == 0 {
			delete(acl, k)
		}
	}
	return acl
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// numbers turns the int64 values gqlparser gives for integer literals into
// float64, the only number type Parse objects hold.
func numbers(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = numbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbers(e)
		}
		return out
	}
	return v
}

// geoIn turns a GeoPointInput into a Parse GeoPoint.
func geoIn(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	return map[string]any{"__type": "GeoPoint", "latitude": m["latitude"], "longitude": m["longitude"]}
}

// fileIn turns a File scalar (a name or {name, url}) into a Parse File.
func fileIn(v any) any {
	switch x := v.(type) {
	case string:
		return map[string]any{"__type": "File", "name": x}
	case map[string]any:
		out := map[string]any{"__type": "File", "name": x["name"]}
		if u, ok := x["url"]; ok {
			out["url"] = u
		}
		return out
	}
	return v
}

// scalarIn turns an input value of field type t into its Parse encoding.
func scalarIn(t schema.Type, v any) any {
	if v == nil {
		return nil
	}
	switch t {
	case schema.TypeDate:
		if s, ok := v.(string); ok {
			return schema.Date(s)
		}
	case schema.TypeBytes:
		if s, ok := v.(string); ok {
			return map[string]any{"__type": "Bytes", "base64": s}
		}
	case schema.TypeFile:
		return fileIn(v)
	case schema.TypeGeoPoint:
		return geoIn(v)
	case schema.TypePolygon:
		var coords []any
		for _, p := range asList(v) {
			pm, _ := p.(map[string]any)
			coords = append(coords, []any{pm["latitude"], pm["longitude"]})
		}
		return map[string]any{"__type": "Polygon", "coordinates": coords}
	}
	return v
}

// plainLists turns the typed slices gqlparser's variable coercion makes
// ([]string{"x"} for a variable of type [String] given "x") into the
// []any the resolvers and listCoerced read, at any depth: left typed, a
// list given as one value was read as no list at all.
func plainLists(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		for k, e := range x {
			x[k] = plainLists(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = plainLists(e)
		}
		return x
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return v
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = plainLists(rv.Index(i).Interface())
	}
	return out
}

// listCoerced applies GraphQL's input coercion of lists to an argument's
// value: where typ is a list and one item is given (order: score_DESC,
// in: "x", add: "id"), the value is a list of that item. Input objects
// are coerced field by field. gqlparser checks such values but hands them
// over as written.
func (m *model) listCoerced(v any, typ *ast.Type, depth int) any {
	if v == nil || typ == nil || depth > maxCoercionDepth {
		return v
	}
	if typ.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return []any{m.listCoerced(v, typ.Elem, depth+1)}
		}
		for i, item := range list {
			list[i] = m.listCoerced(item, typ.Elem, depth+1)
		}
		return list
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	def := m.schema.Types[typ.NamedType]
	if def == nil || def.Kind != ast.InputObject {
		return v
	}
	for _, fd := range def.Fields {
		if fv, ok := obj[fd.Name]; ok {
			obj[fd.Name] = m.listCoerced(fv, fd.Type, depth+1)
		}
	}
	return obj
}

// maxCoercionDepth bounds listCoerced's walk (graphQLMaxDepth bounds
// selections, not input values).
const maxCoercionDepth = 64

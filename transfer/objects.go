package transfer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// converted is one source document in Quarry's stored form.
type converted struct {
	obj     schema.Object
	dropped []string      // internal fields left out, as "field: reason"
	session schema.Object // a _Session made from a legacy _User._session_token
	// relations are the Relation fields a REST object shows (field ->
	// target class); objects hold no relation values.
	relations map[string]string
}

// objectFromMongo turns a Parse Server MongoDB document of class into a
// stored object. cls is the class's schema (it says which strings are
// file names and which arrays are GeoPoints); fields it lacks are left as
// they are.
func objectFromMongo(class string, doc map[string]any, cls *schema.Class) (converted, error) {
	var out converted
	for k, v := range doc {
		pv, err := plainValue(v)
		if err != nil {
			// One value JSON cannot hold (NaN, a malformed date) costs
			// its field, not the object.
			out.dropped = append(out.dropped, k+": "+err.Error())
			delete(doc, k)
			continue
		}
		doc[k] = pv
	}
	obj := make(schema.Object, len(doc)+2)
	out.obj = obj
	switch id := doc[mongoID].(type) {
	case string:
		obj["objectId"] = id
	case float64:
		obj["objectId"] = strconv.FormatFloat(id, 'f', -1, 64)
	default:
		return out, fmt.Errorf("no usable _id")
	}
	rperm, hasR := doc[mongoRPerm]
	wperm, hasW := doc[mongoWPerm]
	switch {
	case hasR || hasW:
		obj["ACL"] = aclFromPerms(rperm, wperm)
	case doc[mongoACL] != nil:
		obj["ACL"] = aclFromMongo(doc[mongoACL])
	}
	for k, v := range doc {
		switch {
		case k == mongoID || k == mongoRPerm || k == mongoWPerm || k == mongoACL:
		case k == mongoCreatedAt || k == mongoUpdatedAt:
			d, ok := v.(map[string]any)
			iso, _ := d["iso"].(string)
			if !ok || iso == "" {
				return out, fmt.Errorf("%s is not a date", k)
			}
			obj[fieldFromMongoKey(k)] = iso
		case strings.HasPrefix(k, pointerPrefix):
			field := k[len(pointerPrefix):]
			if v == nil {
				continue
			}
			s, _ := v.(string)
			target, id, ok := strings.Cut(s, "$")
			if !ok || target == "" || id == "" {
				out.dropped = append(out.dropped, k+": not a Class$objectId pointer")
				continue
			}
			obj[field] = schema.Pointer(target, id)
		case strings.HasPrefix(k, "_"):
			out.internalField(class, k, v)
		default:
			obj[k] = typedValue(cls, k, v)
		}
	}
	out.finish(class)
	return out, nil
}

// internalField keeps what Quarry has of one of Parse Server's internal
// fields (a "_" column or key) and counts the rest as dropped.
func (out *converted) internalField(class, k string, v any) {
	switch {
	case k == mongoPassword:
		out.obj[keyPassword] = v
	case k == mongoToken && class == "_Session":
		out.obj["sessionToken"] = v
	case k == mongoToken && class == "_User":
		out.session = legacySession(v)
	case strings.HasPrefix(k, authDataPrefix):
		auth, _ := out.obj["authData"].(map[string]any)
		if auth == nil {
			auth = map[string]any{}
			out.obj["authData"] = auth
		}
		auth[k[len(authDataPrefix):]] = v
	case class == "_User" && accountFields[k]:
		out.obj[k] = v
	default:
		reason, known := droppedFields[k]
		if !known {
			reason = "Quarry keeps no internal field of this name"
		}
		out.dropped = append(out.dropped, k+": "+reason)
	}
}

// finish links a legacy session to its user and adds the lower-cased
// keys users are found by.
func (out *converted) finish(class string) {
	if out.session != nil {
		out.session["user"] = schema.Pointer("_User", fmt.Sprint(out.obj["objectId"]))
	}
	addUserKeys(class, out.obj)
}

// legacySession keeps a Parse.com-era session token (stored on the user
// itself) working: it becomes a _Session of the user.
func legacySession(token any) schema.Object {
	s, ok := token.(string)
	if !ok || s == "" {
		return nil
	}
	return schema.Object{
		"sessionToken": s,
		"createdWith":  map[string]any{"action": "login", "authProvider": "password"},
		"restricted":   false,
	}
}

// typedValue converts a top-level MongoDB value of a typed field: file
// names to Files, [lng, lat] to GeoPoints, GeoJSON to Polygons.
func typedValue(cls *schema.Class, k string, v any) any {
	if cls == nil {
		return v
	}
	switch cls.Fields[k].Type {
	case schema.TypeFile:
		switch x := v.(type) {
		case string:
			return map[string]any{"__type": "File", "name": x}
		case map[string]any:
			if name, ok := x["name"].(string); ok && x["__type"] == "File" {
				return map[string]any{"__type": "File", "name": name}
			}
		}
	case schema.TypeGeoPoint:
		if p, ok := v.([]any); ok && len(p) == 2 {
			lng, ok1 := p[0].(float64)
			lat, ok2 := p[1].(float64)
			if ok1 && ok2 {
				return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
			}
		}
	case schema.TypePolygon:
		if g, ok := v.(map[string]any); ok && g["type"] == "Polygon" {
			rings, _ := g["coordinates"].([]any)
			if len(rings) > 0 {
				ring, _ := rings[0].([]any)
				coords := make([]any, 0, len(ring))
				for _, p := range ring {
					pair, _ := p.([]any)
					if len(pair) != 2 {
						return v
					}
					coords = append(coords, []any{pair[1], pair[0]})
				}
				return map[string]any{"__type": "Polygon", "coordinates": coords}
			}
		}
	}
	return v
}

// addUserKeys sets the lower-cased username and email Quarry looks users
// up by.
func addUserKeys(class string, obj schema.Object) {
	if class != "_User" {
		return
	}
	if u, ok := obj["username"].(string); ok {
		obj[keyUserLC] = strings.ToLower(u)
	}
	if e, ok := obj["email"].(string); ok && e != "" {
		obj[keyEmailLC] = strings.ToLower(e)
	}
}

// aclFromPerms builds an ACL from Parse Server's _rperm and _wperm lists,
// which are what Parse Server itself reads access from.
func aclFromPerms(rperm, wperm any) map[string]any {
	acl := map[string]any{}
	grant := func(list any, right string) {
		ids, _ := list.([]any)
		for _, id := range ids {
			s, ok := id.(string)
			if !ok {
				continue
			}
			e, _ := acl[s].(map[string]any)
			if e == nil {
				e = map[string]any{}
				acl[s] = e
			}
			e[right] = true
		}
	}
	grant(rperm, "read")
	grant(wperm, "write")
	return acl
}

// aclFromMongo reads the _acl form {id: {r: true, w: true}}.
func aclFromMongo(v any) map[string]any {
	m, _ := v.(map[string]any)
	acl := map[string]any{}
	for id, e := range m {
		rights, _ := e.(map[string]any)
		out := map[string]any{}
		if rights["r"] == true {
			out["read"] = true
		}
		if rights["w"] == true {
			out["write"] = true
		}
		acl[id] = out
	}
	return acl
}

// objectToMongo is the inverse of objectFromMongo: the document Parse
// Server would keep in MongoDB for a stored object.
func objectToMongo(class string, obj schema.Object) map[string]any {
	doc := make(map[string]any, len(obj)+2)
	for k, v := range obj {
		switch k {
		case "objectId":
			doc[mongoID] = v
		case "createdAt", "updatedAt":
			doc[fieldToMongoKey(nil, k)] = map[string]any{"$date": v}
		case "ACL":
			rperm, wperm, acl := aclToMongo(v)
			doc[mongoRPerm], doc[mongoWPerm], doc[mongoACL] = rperm, wperm, acl
		case keyUserLC, keyEmailLC:
			// derived again on import
		case "authData":
			if m, ok := v.(map[string]any); ok && class == "_User" {
				for p, d := range m {
					doc[authDataPrefix+p] = d
				}
				continue
			}
			doc[k] = mongoValue(v, false)
		case "sessionToken":
			if class == "_Session" {
				doc[mongoToken] = v
				continue
			}
			doc[k] = mongoValue(v, true)
		default:
			if m, ok := v.(map[string]any); ok && m["__type"] == "Pointer" {
				doc[pointerPrefix+k] = fmt.Sprintf("%v$%v", m["className"], m["objectId"])
				continue
			}
			doc[k] = mongoValue(v, true)
		}
	}
	return doc
}

// aclToMongo writes an ACL as _rperm, _wperm (sorted) and _acl.
func aclToMongo(v any) (rperm, wperm []any, acl map[string]any) {
	m, _ := v.(map[string]any)
	rperm, wperm, acl = []any{}, []any{}, map[string]any{}
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		rights, _ := m[id].(map[string]any)
		e := map[string]any{}
		if rights["read"] == true {
			rperm = append(rperm, id)
			e["r"] = true
		}
		if rights["write"] == true {
			wperm = append(wperm, id)
			e["w"] = true
		}
		acl[id] = e
	}
	return rperm, wperm, acl
}

// mongoValue writes a stored value as MongoDB Extended JSON (relaxed):
// Dates at any depth; at the top level also Files (their name), GeoPoints
// ([lng, lat]), Polygons (GeoJSON) and Bytes (binary).
func mongoValue(v any, top bool) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mongoValue(e, false)
		}
		return out
	case map[string]any:
		switch x["__type"] {
		case "Date":
			return map[string]any{"$date": x["iso"]}
		case "File":
			if top {
				return x["name"]
			}
		case "GeoPoint":
			if top {
				return []any{x["longitude"], x["latitude"]}
			}
		case "Polygon":
			if top {
				coords, _ := x["coordinates"].([]any)
				ring := make([]any, 0, len(coords))
				for _, p := range coords {
					pair, _ := p.([]any)
					if len(pair) == 2 {
						ring = append(ring, []any{pair[1], pair[0]})
					}
				}
				return map[string]any{"type": "Polygon", "coordinates": []any{ring}}
			}
		case "Bytes":
			if top {
				return map[string]any{"$binary": map[string]any{"base64": x["base64"], "subType": "00"}}
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mongoValue(e, false)
		}
		return out
	}
	return v
}

// objectFromREST turns an object of a Parse Dashboard export (REST form)
// into a stored object. Relation values only name their target class (a
// Dashboard export holds no memberships): they are returned as relations.
// File urls are left out; replies make them from the files adapter.
func objectFromREST(class string, doc map[string]any) (converted, error) {
	var out converted
	id, _ := doc["objectId"].(string)
	if id == "" {
		return out, fmt.Errorf("no objectId")
	}
	obj := make(schema.Object, len(doc)+2)
	out.obj = obj
	for k, v := range doc {
		m, _ := v.(map[string]any)
		switch {
		case k == "__type" || k == "className" && doc["__type"] == "Object":
		case k == "createdAt" || k == "updatedAt":
			if iso, ok := m["iso"].(string); ok {
				v = iso
			}
			s, ok := v.(string)
			t, valid := schema.ParseTime(s)
			if !ok || !valid {
				return out, fmt.Errorf("%s is not a date", k)
			}
			obj[k] = schema.FormatTime(t)
		case k == keyPassword:
			obj[k] = v
		case strings.HasPrefix(k, "_"):
			out.dropped = append(out.dropped, k+": Quarry keeps no internal field of this name")
		case k == "sessionToken" && class == "_User":
			out.dropped = append(out.dropped, k+": sessions come from _Session")
		case k == "password" && class == "_User":
			out.dropped = append(out.dropped, k+": a Dashboard export holds no password hashes")
		case m["__type"] == "Relation":
			if out.relations == nil {
				out.relations = map[string]string{}
			}
			out.relations[k], _ = m["className"].(string)
		case m["__type"] == "File":
			name, _ := m["name"].(string)
			obj[k] = map[string]any{"__type": "File", "name": name}
		default:
			obj[k] = v
		}
	}
	addUserKeys(class, obj)
	return out, nil
}

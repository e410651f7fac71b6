package graphql

import (
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// MaxRelationMatches caps the objects a have/haveNot on a relation field
// may match; beyond it the query is refused with 102.
const MaxRelationMatches = 10_000

// whereOps maps the where inputs' operators to Parse's.
var whereOps = map[string]string{
	"equalTo": "$eq", "notEqualTo": "$ne", "lessThan": "$lt", "lessThanOrEqualTo": "$lte",
	"greaterThan": "$gt", "greaterThanOrEqualTo": "$gte", "in": "$in", "notIn": "$nin",
	"exists": "$exists", "matchesRegex": "$regex", "options": "$options",
	"containedBy": "$containedBy", "contains": "$all",
	"inQueryKey": "$select", "notInQueryKey": "$dontSelect", "text": "$text",
	"nearSphere": "$nearSphere", "maxDistance": "$maxDistance", "maxDistanceInRadians": "$maxDistanceInRadians",
	"maxDistanceInMiles": "$maxDistanceInMiles", "maxDistanceInKilometers": "$maxDistanceInKilometers",
	"within": "$within", "geoWithin": "$geoWithin", "geoIntersects": "$geoIntersects",
}

// where turns a <Class>WhereInput into a Parse where.
func (e *executor) where(cm *classModel, v any) (map[string]any, error) {
	in, _ := numbers(v).(map[string]any)
	out := map[string]any{}
	for k, c := range in {
		if c == nil {
			continue
		}
		switch k {
		case "OR", "AND", "NOR":
			var list []any
			for _, sub := range asList(c) {
				w, err := e.where(cm, sub)
				if err != nil {
					return nil, err
				}
				list = append(list, w)
			}
			out["$"+lower(k)] = list
			continue
		case "id", "objectId":
			out["objectId"] = constraint(schema.TypeString, c, cm.class)
			continue
		case "createdAt", "updatedAt":
			out[k] = constraint(schema.TypeDate, c, "")
			continue
		case "ACL":
			objectConstraint(out, k, c)
			continue
		}
		fm, ok := cm.byName[k]
		if !ok {
			continue
		}
		switch fm.Type {
		case schema.TypePointer, schema.TypeRelation:
			cond, err := e.relationConstraint(fm, c)
			if err != nil {
				return nil, err
			}
			out[k] = cond
		case schema.TypeObject:
			objectConstraint(out, k, c)
		default:
			out[k] = constraint(fm.Type, c, "")
		}
	}
	return out, nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// constraint translates one field's where input; for objectId (idClass
// set) the values may be global ids of that class.
func constraint(t schema.Type, v any, idClass string) map[string]any {
	in, _ := v.(map[string]any)
	out := map[string]any{}
	conv := func(x any) any {
		if idClass != "" {
			if s, ok := x.(string); ok {
				return idOf(idClass, s)
			}
		}
		return scalarIn(t, x)
	}
	for op, x := range in {
		pop, ok := whereOps[op]
		if !ok || x == nil {
			continue
		}
		switch op {
		case "in", "notIn", "containedBy", "contains":
			list := make([]any, 0, len(asList(x)))
			for _, item := range asList(x) {
				list = append(list, conv(item))
			}
			out[pop] = list
		case "exists", "matchesRegex", "options", "inQueryKey", "notInQueryKey",
			"maxDistance", "maxDistanceInRadians", "maxDistanceInMiles", "maxDistanceInKilometers":
			out[pop] = x
		case "text":
			out[pop] = textIn(x)
		case "nearSphere":
			out[pop] = geoIn(x)
		case "within":
			box, _ := x.(map[string]any)["box"].(map[string]any)
			out[pop] = map[string]any{"$box": []any{geoIn(box["bottomLeft"]), geoIn(box["upperRight"])}}
		case "geoWithin":
			out[pop] = geoWithinIn(x)
		case "geoIntersects":
			p, _ := x.(map[string]any)
			out[pop] = map[string]any{"$point": geoIn(p["point"])}
		default:
			out[pop] = conv(x)
		}
	}
	return out
}

func textIn(v any) any {
	m, _ := v.(map[string]any)
	s, _ := m["search"].(map[string]any)
	search := map[string]any{}
	for k, x := range s {
		if x != nil {
			search["$"+k] = x
		}
	}
	return map[string]any{"$search": search}
}

func geoWithinIn(v any) any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	if p := asList(m["polygon"]); p != nil {
		pts := make([]any, len(p))
		for i, x := range p {
			pts[i] = geoIn(x)
		}
		out["$polygon"] = pts
	}
	if c, ok := m["centerSphere"].(map[string]any); ok {
		out["$centerSphere"] = []any{geoIn(c["center"]), c["distance"]}
	}
	return out
}

// objectConstraint translates an ObjectWhereInput: each operator names a
// key inside the object ({key, value}), so constraints land on dotted
// paths.
func objectConstraint(out map[string]any, field string, v any) {
	in, _ := v.(map[string]any)
	at := func(key string) map[string]any {
		path := field + "." + key
		m, ok := out[path].(map[string]any)
		if !ok {
			m = map[string]any{}
			out[path] = m
		}
		return m
	}
	for op, x := range in {
		pop, ok := whereOps[op]
		if !ok || x == nil {
			continue
		}
		switch op {
		case "exists", "inQueryKey", "notInQueryKey":
			m, ok := out[field].(map[string]any)
			if !ok {
				m = map[string]any{}
				out[field] = m
			}
			m[pop] = x
		case "in", "notIn":
			for _, item := range asList(x) {
				kv, _ := item.(map[string]any)
				m := at(str(kv["key"]))
				list, _ := m[pop].([]any)
				m[pop] = append(list, kv["value"])
			}
		default:
			kv, _ := x.(map[string]any)
			at(str(kv["key"]))[pop] = kv["value"]
		}
	}
}

// relationConstraint translates a <Class>RelationWhereInput on a pointer
// or relation field: have and haveNot become subqueries on the target.
func (e *executor) relationConstraint(fm fieldModel, v any) (map[string]any, error) {
	in, _ := v.(map[string]any)
	out := map[string]any{}
	for op, x := range in {
		if x == nil {
			continue
		}
		switch op {
		case "have", "haveNot":
			w, err := e.where(fm.target, x)
			if err != nil {
				return nil, err
			}
			if fm.Type == schema.TypeRelation {
				// The planner resolves $inQuery to pointers, which a
				// relation does not hold: run the subquery here and ask
				// for membership of its results.
				ptrs, err := e.members(fm.target, w)
				if err != nil {
					return nil, err
				}
				key := "$in"
				if op == "haveNot" {
					key = "$nin"
				}
				out[key] = ptrs
				continue
			}
			key := "$inQuery"
			if op == "haveNot" {
				key = "$notInQuery"
			}
			out[key] = map[string]any{"className": fm.target.class, "where": w}
		case "exists":
			if fm.Type != schema.TypeRelation {
				out["$exists"] = x
				continue
			}
			// A relation is not a stored field: it exists on an owner
			// with any member, as Parse's GraphQL reads it.
			ptrs, err := e.members(fm.target, map[string]any{})
			if err != nil {
				return nil, err
			}
			key := "$in"
			if x != true {
				key = "$nin"
			}
			out[key] = ptrs
		}
	}
	return out, nil
}

// members runs a relation's have/haveNot subquery as the caller and
// returns pointers to what it found.
func (e *executor) members(target *classModel, w map[string]any) ([]any, error) {
	res, err := e.h.svc.Find(e.auth, target.class, service.FindParams{Where: w, Limit: MaxRelationMatches + 1,
		Read: service.ReadOptions{Keys: []string{"objectId"}}})
	if err != nil {
		return nil, err
	}
	if len(res.Results) > MaxRelationMatches {
		return nil, schema.Errorf(schema.CodeInvalidQuery, "have/haveNot on a relation matches more than %d objects.", MaxRelationMatches)
	}
	ptrs := make([]any, len(res.Results))
	for i, o := range res.Results {
		ptrs[i] = schema.Pointer(target.class, str(o["objectId"]))
	}
	return ptrs, nil
}

package transfer

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// How Parse Server lays out an object in MongoDB, by field name.
const (
	mongoID        = "_id"
	mongoCreatedAt = "_created_at"
	mongoUpdatedAt = "_updated_at"
	mongoACL       = "_acl"
	mongoRPerm     = "_rperm"
	mongoWPerm     = "_wperm"
	mongoPassword  = "_hashed_password"
	mongoToken     = "_session_token"
	pointerPrefix  = "_p_"
	authDataPrefix = "_auth_data_"
	schemaColl     = "_SCHEMA"
	joinPrefix     = "_Join:"
)

// Internal keys Quarry keeps in stored _User objects (defined in schema).
const (
	keyPassword = schema.KeyHashedPassword
	keyUserLC   = schema.KeyUsernameLC
	keyEmailLC  = schema.KeyEmailLC
)

// accountFields are Parse Server's _User bookkeeping fields that Quarry
// keeps under the same names and in the same form (schema.AccountKeys):
// they are imported as they are.
var accountFields = func() map[string]bool {
	m := make(map[string]bool, len(schema.AccountKeys))
	for _, k := range schema.AccountKeys {
		m[k] = true
	}
	return m
}()

// droppedFields are Parse Server's internal fields that Quarry keeps no
// equivalent of; an import drops them and counts them in its summary.
var droppedFields = map[string]string{
	"_tombstone": "tombstones are not carried over",
}

// plainValue turns MongoDB Extended JSON (canonical or relaxed, v1 or v2)
// into Parse's stored value form, at any depth: dates become Date values,
// binary becomes Bytes, typed numbers become numbers, ObjectIds their hex.
func plainValue(v any) (any, error) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			p, err := plainValue(e)
			if err != nil {
				return nil, err
			}
			x[i] = p
		}
		return x, nil
	case map[string]any:
		if len(x) <= 2 {
			if p, ok, err := extendedScalar(x); ok || err != nil {
				return p, err
			}
		}
		for k, e := range x {
			p, err := plainValue(e)
			if err != nil {
				return nil, err
			}
			x[k] = p
		}
		return x, nil
	}
	return v, nil
}

// extendedScalar decodes one Extended JSON wrapper ({"$date": ...},
// {"$numberLong": ...}, ...); ok is false for an ordinary object.
func extendedScalar(m map[string]any) (v any, ok bool, err error) {
	if d, has := m["$date"]; has && len(m) == 1 {
		t, err := extendedDate(d)
		if err != nil {
			return nil, true, err
		}
		return map[string]any{"__type": "Date", "iso": schema.FormatTime(t)}, true, nil
	}
	if s, has := m["$oid"].(string); has && len(m) == 1 {
		return s, true, nil
	}
	for _, k := range []string{"$numberLong", "$numberInt", "$numberDouble", "$numberDecimal"} {
		if s, has := m[k].(string); has && len(m) == 1 {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, true, fmt.Errorf("a number JSON cannot hold (NaN or infinite)")
			}
			return f, true, nil
		}
	}
	if b, has := m["$binary"]; has {
		var data string
		switch bx := b.(type) {
		case map[string]any: // v2: {"$binary": {"base64": ..., "subType": ...}}
			data, _ = bx["base64"].(string)
		case string: // v1: {"$binary": ..., "$type": ...}
			data = bx
		}
		if _, err := base64.StdEncoding.DecodeString(data); err != nil {
			return nil, true, fmt.Errorf("binary value is not base64")
		}
		return map[string]any{"__type": "Bytes", "base64": data}, true, nil
	}
	return nil, false, nil
}

// extendedDate reads the value of a $date: an ISO string, milliseconds
// since the epoch, or {"$numberLong": "<ms>"}.
func extendedDate(d any) (time.Time, error) {
	switch x := d.(type) {
	case string:
		if t, ok := schema.ParseTime(x); ok {
			return t, nil
		}
	case float64:
		return time.UnixMilli(int64(x)).UTC(), nil
	case map[string]any:
		if s, ok := x["$numberLong"].(string); ok {
			if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
				return time.UnixMilli(ms).UTC(), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("a $date that is not a date")
}

// mongoSchemaType reads a field type as _SCHEMA spells it ("string",
// "*_User", "relation<Post>", ...).
func mongoSchemaType(s string) (schema.Field, bool) {
	if target, ok := strings.CutPrefix(s, "*"); ok && target != "" {
		return schema.Field{Type: schema.TypePointer, TargetClass: target}, true
	}
	if rest, ok := strings.CutPrefix(s, "relation<"); ok && strings.HasSuffix(rest, ">") && len(rest) > 1 {
		return schema.Field{Type: schema.TypeRelation, TargetClass: rest[:len(rest)-1]}, true
	}
	switch strings.ToLower(s) {
	case "string":
		return schema.Field{Type: schema.TypeString}, true
	case "number":
		return schema.Field{Type: schema.TypeNumber}, true
	case "boolean":
		return schema.Field{Type: schema.TypeBoolean}, true
	case "date":
		return schema.Field{Type: schema.TypeDate}, true
	case "object", "map":
		return schema.Field{Type: schema.TypeObject}, true
	case "array":
		return schema.Field{Type: schema.TypeArray}, true
	case "geopoint":
		return schema.Field{Type: schema.TypeGeoPoint}, true
	case "file":
		return schema.Field{Type: schema.TypeFile}, true
	case "bytes":
		return schema.Field{Type: schema.TypeBytes}, true
	case "polygon":
		return schema.Field{Type: schema.TypePolygon}, true
	case "acl":
		return schema.Field{Type: schema.TypeACL}, true
	}
	return schema.Field{}, false
}

// mongoTypeName is the inverse of mongoSchemaType.
func mongoTypeName(f schema.Field) string {
	switch f.Type {
	case schema.TypePointer:
		return "*" + f.TargetClass
	case schema.TypeRelation:
		return "relation<" + f.TargetClass + ">"
	}
	return strings.ToLower(string(f.Type))
}

// classFromMongo turns one _SCHEMA document into a class schema: its
// fields, CLPs (class_permissions), indexes and field options.
func classFromMongo(doc map[string]any) (*schema.Class, error) {
	name, _ := doc[mongoID].(string)
	if name == "" {
		return nil, fmt.Errorf("_SCHEMA document without a class name in _id")
	}
	c := schema.NewClass(name)
	meta, _ := doc["_metadata"].(map[string]any)
	options, _ := meta["fields_options"].(map[string]any)
	for k, v := range doc {
		if k == mongoID || k == "_metadata" {
			continue
		}
		s, _ := v.(string)
		f, ok := mongoSchemaType(s)
		if !ok {
			return nil, fmt.Errorf("class %s: field %s has unknown type %v", name, k, v)
		}
		if o, ok := options[k].(map[string]any); ok {
			f.Required, _ = o["required"].(bool)
			f.DefaultValue = o["defaultValue"]
		}
		c.Fields[k] = f
	}
	raw, present := meta["class_permissions"]
	clp, err := clpOf(name, raw, present)
	if err != nil {
		return nil, err
	}
	c.CLP = clp
	if idx, ok := meta["indexes"].(map[string]any); ok {
		c.Indexes = indexesFromMongo(idx)
	}
	return c, nil
}

// indexesFromMongo names fields as Parse clients do (author, not
// _p_author) and leaves out MongoDB's own _id index, and keys on Parse
// Server's internal fields (_email_verify_token, a text index's _fts and
// _ftsx), which Quarry does not keep.
func indexesFromMongo(idx map[string]any) map[string]any {
	out := map[string]any{}
	for name, spec := range idx {
		keys, ok := spec.(map[string]any)
		if !ok || name == "_id_" {
			continue
		}
		fields := map[string]any{}
		for k, dir := range keys {
			f := fieldFromMongoKey(k)
			if f == "" || strings.HasPrefix(f, "_") || strings.Contains("."+f+".", "..") {
				continue
			}
			fields[f] = dir
		}
		if len(fields) > 0 {
			out[name] = fields
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func fieldFromMongoKey(k string) string {
	switch k {
	case mongoCreatedAt:
		return "createdAt"
	case mongoUpdatedAt:
		return "updatedAt"
	case mongoID:
		return "objectId"
	}
	if f, ok := strings.CutPrefix(k, pointerPrefix); ok {
		return f
	}
	return k
}

// classToMongo is the inverse of classFromMongo.
func classToMongo(c *schema.Class) map[string]any {
	doc := map[string]any{mongoID: c.Name}
	options := map[string]any{}
	for k, f := range c.Fields {
		if k == "ACL" {
			continue // _SCHEMA never lists ACL; every class has it
		}
		doc[k] = mongoTypeName(f)
		if f.Required || f.DefaultValue != nil {
			o := map[string]any{}
			if f.Required {
				o["required"] = true
			}
			if f.DefaultValue != nil {
				o["defaultValue"] = f.DefaultValue
			}
			options[k] = o
		}
	}
	meta := map[string]any{}
	if c.CLP != nil {
		meta["class_permissions"] = c.CLP
	}
	if len(c.Indexes) > 0 {
		idx := map[string]any{}
		for name, spec := range c.Indexes {
			keys, _ := spec.(map[string]any)
			fields := map[string]any{}
			for k, dir := range keys {
				fields[fieldToMongoKey(c, k)] = dir
			}
			idx[name] = fields
		}
		meta["indexes"] = idx
	}
	if len(options) > 0 {
		meta["fields_options"] = options
	}
	if len(meta) > 0 {
		doc["_metadata"] = meta
	}
	return doc
}

func fieldToMongoKey(c *schema.Class, k string) string {
	switch k {
	case "createdAt":
		return mongoCreatedAt
	case "updatedAt":
		return mongoUpdatedAt
	case "objectId":
		return mongoID
	}
	if c.Fields[k].Type == schema.TypePointer {
		return pointerPrefix + k
	}
	return k
}

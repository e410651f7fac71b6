package service

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// The schemas API (GET/POST/PUT/DELETE /schemas, DELETE /purge): class
// schemas in Parse's wire shape, field options (required, defaultValue),
// class-level permissions (validated and stored in Parse's shape; the read
// and write paths enforce them) and declared indexes.

// Limits of the schemas API.
const (
	// MaxIndexesPerClass caps declared indexes per class (MongoDB's limit).
	MaxIndexesPerClass = 64
	// schemaRewriteBatch is how many objects one store commit rewrites when
	// a field is deleted or a class purged.
	schemaRewriteBatch = 1000
)

// isDefaultField reports whether name is a default field of class.
func isDefaultField(class, name string) bool {
	if _, ok := schema.DefaultField(name); ok {
		return true
	}
	_, ok := schema.BuiltinField(class, name)
	return ok
}

// newClass is a class as it comes into being: every default field of its
// kind, and the indexes the operator declared for it in the configuration
// (kept in its schema like those declared through the schemas API).
func (s *Service) newClass(name string) *schema.Class {
	c := schema.NewClass(name)
	for k, f := range schema.BuiltinFields(name) {
		c.Fields[k] = f
	}
	if schema.MasterOnlyClass(name) {
		c.CLP = schema.MasterOnlyCLP()
	}
	if paths := s.configIndexes[name]; len(paths) > 0 {
		c.Indexes = make(map[string]any, len(paths))
		for _, p := range paths {
			c.Indexes[indexName(p)] = map[string]any{p: 1.0}
		}
	}
	return c
}

// schemaJSON renders a class in the schemas API's shape: className, every
// field (defaults first) with its options, the class-level permissions
// and the indexes: MongoDB's _id_ and the declared ones.
func (s *Service) schemaJSON(cls *schema.Class) map[string]any {
	fields := map[string]any{}
	for k, f := range schema.DefaultFields() {
		fields[k] = fieldJSON(f)
	}
	for k, f := range schema.BuiltinFields(cls.Name) {
		fields[k] = fieldJSON(f)
	}
	for k, f := range cls.Fields {
		if strings.HasPrefix(k, "_") {
			continue // internal fields (password hashes, shadow keys) stay inside
		}
		fields[k] = fieldJSON(f)
	}
	clp := cls.CLP
	if clp == nil {
		clp = DefaultCLP()
	}
	idx := map[string]any{"_id_": map[string]any{"_id": 1.0}}
	for k, v := range cls.Indexes {
		idx[k] = v
	}
	return map[string]any{"className": cls.Name, "fields": fields, "classLevelPermissions": clp, "indexes": idx}
}

func fieldJSON(f schema.Field) map[string]any {
	out := map[string]any{"type": string(f.Type)}
	if f.TargetClass != "" {
		out["targetClass"] = f.TargetClass
	}
	if f.Required {
		out["required"] = true
	}
	if f.DefaultValue != nil {
		out["defaultValue"] = f.DefaultValue
	}
	return out
}

// isPublicClass reports whether the schemas API shows a class: internal
// storage classes (config, analytics) have names no client may use.
func isPublicClass(name string) bool { return schema.ValidClassName(name) }

// Schemas lists every class in the schemas API's shape, by name.
func (s *Service) Schemas() []map[string]any {
	var classes []*schema.Class
	for _, c := range s.Classes() {
		if isPublicClass(c.Name) {
			classes = append(classes, c)
		}
	}
	sort.Slice(classes, func(i, j int) bool { return classes[i].Name < classes[j].Name })
	out := make([]map[string]any, len(classes))
	for i, c := range classes {
		out[i] = s.schemaJSON(c)
	}
	return out
}

// Schema returns one class in the schemas API's shape.
func (s *Service) Schema(class string) (map[string]any, error) {
	if !isPublicClass(class) {
		return nil, invalidClassName(class)
	}
	c := s.Class(class)
	if c == nil {
		return nil, classMissing(class)
	}
	return s.schemaJSON(c), nil
}

func invalidClassName(class string) error {
	return schema.Errorf(schema.CodeInvalidClassName,
		"Invalid classname: %s, classnames can only have alphanumeric characters and _, and must start with an alpha character ", class)
}

func classMissing(class string) error {
	return schema.Errorf(schema.CodeInvalidClassName, "Class %s does not exist.", class)
}

func readOnlySchema(verb string) error {
	return schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to %s a schema.", verb)
}

// SchemaClassName resolves the class of a POST /schemas[/<C>] or PUT: the
// path's name, the body's className, or both when they agree.
func SchemaClassName(path string, body map[string]any) (string, error) {
	raw, has := body["className"]
	if has && raw != nil {
		name, ok := raw.(string)
		if !ok {
			return "", schema.Errorf(schema.CodeInvalidJSON, "className must be a string")
		}
		if path != "" && name != path {
			return "", schema.Errorf(schema.CodeInvalidClassName, "Class name mismatch between %s and %s.", name, path)
		}
		return name, nil
	}
	if path == "" {
		return "", schema.Errorf(schema.CodeMissingRequiredField, "POST /schemas needs a class name.")
	}
	return path, nil
}

var schemaBodyKeys = map[string]bool{"className": true, "fields": true, "classLevelPermissions": true, "indexes": true}

func checkSchemaBody(body map[string]any) error {
	for k := range body {
		if !schemaBodyKeys[k] {
			return schema.Errorf(schema.CodeInvalidJSON, "unknown schema key: %s", k)
		}
	}
	if f, ok := body["fields"]; ok && f != nil {
		if _, isMap := f.(map[string]any); !isMap {
			return schema.Errorf(schema.CodeInvalidJSON, "fields must be an object")
		}
	}
	return nil
}

// CreateSchema creates a class with fields, class-level permissions and
// indexes (POST /schemas).
func (s *Service) CreateSchema(auth Auth, class string, body map[string]any) (map[string]any, error) {
	if auth.ReadOnly {
		return nil, readOnlySchema("create")
	}
	if err := checkSchemaBody(body); err != nil {
		return nil, err
	}
	if !isPublicClass(class) {
		return nil, invalidClassName(class)
	}
	defer s.announceSchemas()        // after the unlock
	defer s.buildIndexesAfter(class) // after the unlock too
	s.lockSchema(class)
	defer s.schemaMu.Unlock()
	if s.Class(class) != nil {
		return nil, schema.Errorf(schema.CodeInvalidClassName, "Class %s already exists.", class)
	}
	next := s.newClass(class)
	fields, _ := body["fields"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		f, del, err := parseFieldSpec(class, name, fields[name])
		if err != nil {
			return nil, err
		}
		if del {
			return nil, schema.Errorf(schema.CodeInvalidSchemaOperation, "Field %s does not exist, cannot delete.", name)
		}
		if err := checkNewFieldName(class, name); err != nil {
			return nil, err
		}
		next.Fields[name] = f
	}
	if len(next.Fields) > MaxFieldsPerClass {
		return nil, tooManyFields(class)
	}
	if err := checkGeoPoints(next.Fields); err != nil {
		return nil, err
	}
	if raw, ok := body["classLevelPermissions"]; ok && raw != nil {
		clp, err := normalizeCLP(raw, visibleFields(next.Fields))
		if err != nil {
			return nil, err
		}
		next.CLP = clp
	}
	if raw, ok := body["indexes"]; ok && raw != nil {
		indexes, _, err := applyIndexChanges(nil, raw, visibleFields(next.Fields))
		if err != nil {
			return nil, err
		}
		next.Indexes = indexes
	}
	if err := s.storeClass(next); err != nil {
		return nil, err
	}
	s.syncIndexes(class, nil, next)
	return s.schemaJSON(next), nil
}

// UpdateSchema changes a class (PUT /schemas/<C>): fields are added,
// re-declared with new options or deleted ({"__op":"Delete"}, which drops
// their data from every object); classLevelPermissions replaces the CLP;
// indexes are added or dropped.
func (s *Service) UpdateSchema(auth Auth, class string, body map[string]any) (map[string]any, error) {
	if auth.ReadOnly {
		return nil, readOnlySchema("update")
	}
	if err := checkSchemaBody(body); err != nil {
		return nil, err
	}
	if !isPublicClass(class) {
		return nil, invalidClassName(class)
	}
	fields, _ := body["fields"].(map[string]any)
	deleting := false
	for _, v := range fields {
		if isDeleteOp(v) {
			deleting = true
		}
	}
	defer s.announceSchemas()        // after the unlocks
	defer s.buildIndexesAfter(class) // after the unlocks too
	if deleting {
		// Dropping a field's data rewrites objects: no write may run
		// meanwhile, or it could bring the field back half-deleted.
		unlock := s.lockClass(class)
		defer unlock()
	}
	s.lockSchema(class)
	defer s.schemaMu.Unlock()
	cur := s.Class(class)
	if cur == nil {
		return nil, classMissing(class)
	}
	next := cur.Clone()
	dropped, err := applyFieldChanges(class, next, fields)
	if err != nil {
		return nil, err
	}
	if err := applyClassOptions(next, body, dropped); err != nil {
		return nil, err
	}
	// Data first, schema last: a crash in between leaves the field
	// declared and partly emptied, never undeclared with data left behind.
	for _, name := range dropped {
		if err := s.dropFieldData(class, name, cur.Fields[name].Type == schema.TypeRelation); err != nil {
			return nil, err
		}
	}
	if err := s.storeClass(next); err != nil {
		return nil, err
	}
	s.syncIndexes(class, cur, next)
	return s.schemaJSON(next), nil
}

// DeleteSchema drops an empty class (DELETE /schemas/<C>); a class that
// still holds objects is refused with 255.
func (s *Service) DeleteSchema(auth Auth, class string) error {
	if auth.ReadOnly {
		return readOnlySchema("delete")
	}
	if !isPublicClass(class) {
		return invalidClassName(class)
	}
	defer s.announceSchemas() // after the unlocks
	unlock := s.lockClass(class)
	defer unlock()
	s.lockSchema(class)
	defer s.schemaMu.Unlock()
	cur := s.Class(class)
	if cur == nil {
		// Parse Server answers a drop of a class that is not there as a
		// drop: the class is gone either way.
		return nil
	}
	if c := s.data.Collection(class, false); c != nil && c.Len() > 0 {
		return schema.Errorf(schema.CodeInvalidSchemaOperation,
			"Class %s is not empty, contains %d objects, cannot drop schema.", class, c.Len())
	}
	if s.isSQLClass(class) {
		if n, err := s.querier.Count(auth.Context(), class, store.Select{}); err != nil || n > 0 {
			if err != nil {
				return fmt.Errorf("dropping schema: %w", err)
			}
			return schema.Errorf(schema.CodeInvalidSchemaOperation,
				"Class %s is not empty, contains %d objects, cannot drop schema.", class, n)
		}
	}
	if err := s.store.Commit([]store.Record{{Kind: store.KindSchema, Class: class}}); err != nil {
		return fmt.Errorf("dropping schema: %w", err)
	}
	s.schemas.Delete(class)
	s.schemaNews.mark(class)
	s.data.DropCollection(class)
	return nil
}

// applyFieldChanges applies an update's fields to next (a clone of the
// class): new fields, changed options, deletions. It returns the deleted
// fields, whose data the caller drops.
func applyFieldChanges(class string, next *schema.Class, fields map[string]any) (dropped []string, err error) {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if strings.HasPrefix(name, "_") {
			// Internal fields (password hashes, shadow keys) are not the API's.
			return nil, schema.Errorf(schema.CodeInvalidKeyName, "invalid field name: %s", name)
		}
		f, del, err := parseFieldSpec(class, name, fields[name])
		if err != nil {
			return nil, err
		}
		have, exists := next.Fields[name]
		if !exists && isDefaultField(class, name) {
			have, exists = schema.BuiltinField(class, name)
		}
		switch {
		case del && !exists:
			return nil, schema.Errorf(schema.CodeInvalidSchemaOperation, "Field %s does not exist, cannot delete.", name)
		case del && isDefaultField(class, name):
			return nil, schema.Errorf(schema.CodeChangedImmutableField, "field %s cannot be changed", name)
		case del:
			delete(next.Fields, name)
			dropped = append(dropped, name)
		case exists && (have.Type != f.Type || have.TargetClass != f.TargetClass):
			return nil, schema.Errorf(schema.CodeInvalidSchemaOperation, "Field %s exists, cannot update.", name)
		case exists:
			if isDefaultField(class, name) && (f.Required || f.DefaultValue != nil) {
				return nil, schema.Errorf(schema.CodeChangedImmutableField, "field %s cannot be changed", name)
			}
			next.Fields[name] = f // same type: the options change
		default:
			if err := checkNewFieldName(class, name); err != nil {
				return nil, err
			}
			next.Fields[name] = f
		}
	}
	if len(next.Fields) > MaxFieldsPerClass {
		return nil, tooManyFields(class)
	}
	if err := checkGeoPoints(next.Fields); err != nil {
		return nil, err
	}
	return dropped, nil
}

// applyClassOptions applies an update's class-level permissions and index
// changes to next; indexes on the dropped fields go with them.
func applyClassOptions(next *schema.Class, body map[string]any, dropped []string) error {
	if raw, ok := body["classLevelPermissions"]; ok {
		if raw == nil {
			next.CLP = nil // back to the default
		} else {
			clp, err := normalizeCLP(raw, visibleFields(next.Fields))
			if err != nil {
				return err
			}
			next.CLP = clp
		}
	}
	// Indexes on deleted fields go with them.
	if len(dropped) > 0 && len(next.Indexes) > 0 {
		kept := map[string]any{}
		for name, spec := range next.Indexes {
			if !indexUses(spec, dropped) {
				kept[name] = spec
			}
		}
		next.Indexes = kept
	}
	if raw, ok := body["indexes"]; ok && raw != nil {
		indexes, _, err := applyIndexChanges(next.Indexes, raw, visibleFields(next.Fields))
		if err != nil {
			return err
		}
		next.Indexes = indexes
	}
	if len(next.Indexes) == 0 {
		next.Indexes = nil
	}
	return nil
}

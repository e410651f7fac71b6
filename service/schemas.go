package service

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

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

// BuiltinClassFields are the default fields of the built-in classes beyond
// the four every class has (objectId, createdAt, updatedAt, ACL). The
// schemas API shows them and refuses to add or delete them.
var BuiltinClassFields = map[string]map[string]schema.Field{
	"_User": {
		"username":      {Type: schema.TypeString},
		"password":      {Type: schema.TypeString},
		"email":         {Type: schema.TypeString},
		"emailVerified": {Type: schema.TypeBoolean},
		"authData":      {Type: schema.TypeObject},
	},
	"_Installation": {
		"installationId":   {Type: schema.TypeString},
		"deviceToken":      {Type: schema.TypeString},
		"channels":         {Type: schema.TypeArray},
		"deviceType":       {Type: schema.TypeString},
		"pushType":         {Type: schema.TypeString},
		"GCMSenderId":      {Type: schema.TypeString},
		"timeZone":         {Type: schema.TypeString},
		"localeIdentifier": {Type: schema.TypeString},
		"badge":            {Type: schema.TypeNumber},
		"appVersion":       {Type: schema.TypeString},
		"appName":          {Type: schema.TypeString},
		"appIdentifier":    {Type: schema.TypeString},
		"parseVersion":     {Type: schema.TypeString},
	},
	"_Role": {
		"name":  {Type: schema.TypeString},
		"users": {Type: schema.TypeRelation, TargetClass: "_User"},
		"roles": {Type: schema.TypeRelation, TargetClass: "_Role"},
	},
	ClassAudience: {
		"name":      {Type: schema.TypeString},
		"query":     {Type: schema.TypeString},
		"lastUsed":  {Type: schema.TypeDate},
		"timesUsed": {Type: schema.TypeNumber},
	},
	ClassIdempotency: {
		"reqId":  {Type: schema.TypeString},
		"expire": {Type: schema.TypeDate},
	},
	"_Session": {
		"user":           {Type: schema.TypePointer, TargetClass: "_User"},
		"installationId": {Type: schema.TypeString},
		"sessionToken":   {Type: schema.TypeString},
		"expiresAt":      {Type: schema.TypeDate},
		"createdWith":    {Type: schema.TypeObject},
	},
}

// isDefaultField reports whether name is a default field of class.
func isDefaultField(class, name string) bool {
	if _, ok := schema.DefaultFields[name]; ok {
		return true
	}
	_, ok := BuiltinClassFields[class][name]
	return ok
}

// newClass is a class as it comes into being: every default field of its
// kind, and the indexes the operator declared for it in the configuration
// (kept in its schema like those declared through the schemas API).
func (s *Service) newClass(name string) *schema.Class {
	c := schema.NewClass(name)
	for k, f := range BuiltinClassFields[name] {
		c.Fields[k] = f
	}
	if masterOnlyClasses[name] {
		c.CLP = masterOnlyCLP()
	}
	if paths := s.configIndexes[name]; len(paths) > 0 {
		c.Indexes = make(map[string]any, len(paths))
		for _, p := range paths {
			c.Indexes[indexName(p)] = map[string]any{p: 1.0}
		}
	}
	return c
}

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

// schemaJSON renders a class in the schemas API's shape: className, every
// field (defaults first) with its options, the class-level permissions
// and the indexes: MongoDB's _id_ and the declared ones.
func (s *Service) schemaJSON(cls *schema.Class) map[string]any {
	fields := map[string]any{}
	for k, f := range schema.DefaultFields {
		fields[k] = fieldJSON(f)
	}
	for k, f := range BuiltinClassFields[cls.Name] {
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
	s.schemaMu.Lock()
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
	if deleting {
		// Dropping a field's data rewrites objects: no write may run
		// meanwhile, or it could bring the field back half-deleted.
		unlock := s.lockClass(class)
		defer unlock()
	}
	s.schemaMu.Lock()
	defer s.schemaMu.Unlock()
	cur := s.Class(class)
	if cur == nil {
		return nil, classMissing(class)
	}
	next := cur.Clone()
	var dropped []string
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
			have, exists = BuiltinClassFields[class][name]
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
	if raw, ok := body["classLevelPermissions"]; ok {
		if raw == nil {
			next.CLP = nil // back to the default
		} else {
			clp, err := normalizeCLP(raw, visibleFields(next.Fields))
			if err != nil {
				return nil, err
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
			return nil, err
		}
		next.Indexes = indexes
	}
	if len(next.Indexes) == 0 {
		next.Indexes = nil
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
	unlock := s.lockClass(class)
	defer unlock()
	s.schemaMu.Lock()
	defer s.schemaMu.Unlock()
	cur := s.Class(class)
	if cur == nil {
		return classMissing(class)
	}
	if c := s.data.Collection(class, false); c != nil && c.Len() > 0 {
		return schema.Errorf(schema.CodeInvalidSchemaOperation,
			"Class %s is not empty, contains %d objects, cannot drop schema.", class, c.Len())
	}
	if err := s.store.Commit([]store.Record{{Kind: store.KindSchema, Class: class}}); err != nil {
		return fmt.Errorf("dropping schema: %w", err)
	}
	s.schemas.Delete(class)
	s.data.DropCollection(class)
	return nil
}

// Purge deletes every object of a class and keeps its schema
// (DELETE /purge/<C>).
func (s *Service) Purge(auth Auth, class string) error {
	if auth.ReadOnly {
		return readOnlySchema("purge")
	}
	if !isPublicClass(class) {
		return invalidClassName(class)
	}
	unlock := s.lockClass(class)
	defer unlock()
	if s.Class(class) == nil {
		return classMissing(class)
	}
	coll := s.data.Collection(class, false)
	if coll == nil {
		return nil
	}
	var ids []string
	coll.Scan(func(o schema.Object) bool {
		ids = append(ids, o["objectId"].(string))
		return true
	})
	relKeys := s.relationKeys(class)
	for start := 0; start < len(ids); start += schemaRewriteBatch {
		batch := ids[start:min(start+schemaRewriteBatch, len(ids))]
		var records []store.Record
		type join struct{ key, owner, related string }
		var joins []join
		for _, id := range batch {
			records = append(records, store.Record{Kind: store.KindObject, Class: class, Key: id})
			for _, key := range relKeys {
				s.data.Related(class, key, id, func(rel string) bool {
					joins = append(joins, join{key, id, rel})
					records = append(records, store.Record{Kind: store.KindJoin, Class: joinClass(key, class), Key: joinKey(id, rel)})
					return true
				})
			}
		}
		if err := s.store.Commit(records); err != nil {
			return fmt.Errorf("purge: %w", err)
		}
		for _, id := range batch {
			coll.Delete(id)
		}
		for _, j := range joins {
			s.data.SetRelation(class, j.key, j.owner, j.related, false)
		}
	}
	if class == classRole {
		s.forgetRoles()
	}
	return nil
}

// lockClass stops every write to class until the returned function is
// called (purge, field drops, schema deletion): writes hold their classes'
// locks shared, so writes to other classes go on meanwhile.
func (s *Service) lockClass(class string) func() {
	mu := s.classLock(class)
	mu.Lock()
	return mu.Unlock
}

// classLock is the lock of one class, made on first use.
func (s *Service) classLock(class string) *sync.RWMutex {
	if mu, ok := s.classLocks.Load(class); ok {
		return mu.(*sync.RWMutex)
	}
	mu, _ := s.classLocks.LoadOrStore(class, &sync.RWMutex{})
	return mu.(*sync.RWMutex)
}

// shareClasses holds the locks of the classes ops write, shared, in name
// order (so that two writers never wait on each other in a cycle).
func (s *Service) shareClasses(ops []WriteOp) func() {
	classes := make([]string, 0, 1)
	for _, op := range ops {
		if !slices.Contains(classes, op.Class) {
			classes = append(classes, op.Class)
		}
	}
	slices.Sort(classes)
	locks := make([]*sync.RWMutex, len(classes))
	for i, c := range classes {
		locks[i] = s.classLock(c)
		locks[i].RLock()
	}
	return func() {
		for i := len(locks) - 1; i >= 0; i-- {
			locks[i].RUnlock()
		}
	}
}

// dropFieldData removes a field from every object of a class (or, for a
// Relation, every membership), a batch of objects per store commit. The
// caller holds every object lock.
func (s *Service) dropFieldData(class, field string, relation bool) error {
	coll := s.data.Collection(class, false)
	if coll == nil {
		return nil
	}
	if relation {
		type pair struct{ owner, related string }
		var pairs []pair
		coll.Scan(func(o schema.Object) bool {
			id := o["objectId"].(string)
			s.data.Related(class, field, id, func(rel string) bool {
				pairs = append(pairs, pair{id, rel})
				return true
			})
			return true
		})
		for start := 0; start < len(pairs); start += schemaRewriteBatch {
			batch := pairs[start:min(start+schemaRewriteBatch, len(pairs))]
			records := make([]store.Record, len(batch))
			for i, p := range batch {
				records[i] = store.Record{Kind: store.KindJoin, Class: joinClass(field, class), Key: joinKey(p.owner, p.related)}
			}
			if err := s.store.Commit(records); err != nil {
				return fmt.Errorf("dropping relation %s: %w", field, err)
			}
			for _, p := range batch {
				s.data.SetRelation(class, field, p.owner, p.related, false)
			}
		}
		return nil
	}
	var changed []schema.Object
	coll.Scan(func(o schema.Object) bool {
		if _, ok := o[field]; ok {
			cp := make(schema.Object, len(o))
			for k, v := range o {
				if k != field {
					cp[k] = v
				}
			}
			changed = append(changed, cp)
		}
		return true
	})
	for start := 0; start < len(changed); start += schemaRewriteBatch {
		batch := changed[start:min(start+schemaRewriteBatch, len(changed))]
		records := make([]store.Record, len(batch))
		for i, o := range batch {
			b, err := json.Marshal(o)
			if err != nil {
				return err
			}
			records[i] = store.Record{Kind: store.KindObject, Class: class, Key: o["objectId"].(string), Value: b}
		}
		if err := s.store.Commit(records); err != nil {
			return fmt.Errorf("dropping field %s: %w", field, err)
		}
		for _, o := range batch {
			coll.Put(o)
		}
	}
	return nil
}

// storeClass durably writes a class schema and publishes it. The caller
// holds schemaMu.
func (s *Service) storeClass(cls *schema.Class) error {
	b, err := json.Marshal(cls)
	if err != nil {
		return err
	}
	if err := s.store.Commit([]store.Record{{Kind: store.KindSchema, Class: cls.Name, Value: b}}); err != nil {
		return fmt.Errorf("storing schema: %w", err)
	}
	s.schemas.Store(cls.Name, cls)
	return nil
}

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
	if !fieldNamePattern.MatchString(name) || len(name) > schema.MaxKeyLength || schema.ForbiddenFieldNames[name] || name == "className" {
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
			d.echo[name] = f.DefaultValue
			continue
		}
		return schema.Errorf(schema.CodeValidationError, "%s is required", name)
	}
	return nil
}

// CLP validation.

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
			if _, isDefault := schema.DefaultFields[name]; isDefault {
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

var indexNamePattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// applyIndexChanges applies a schema body's indexes ({name: {field: 1|-1|
// "text"}} adds, {name: {"__op":"Delete"}} drops) to the declared ones and
// returns the new declarations and the dropped names.
func applyIndexChanges(existing map[string]any, v any, fields map[string]schema.Field) (map[string]any, []string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, schema.Errorf(schema.CodeInvalidJSON, "indexes must be an object")
	}
	out := make(map[string]any, len(existing)+len(m))
	for k, spec := range existing {
		out[k] = spec
	}
	var dropped []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		spec, ok := m[name].(map[string]any)
		if !ok {
			return nil, nil, schema.Errorf(schema.CodeInvalidJSON, "index %s must be an object", name)
		}
		if isDeleteOp(spec) {
			if name == "_id_" {
				return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Index _id_ cannot be dropped.")
			}
			if _, ok := out[name]; !ok {
				return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Index %s does not exist, cannot delete.", name)
			}
			delete(out, name)
			dropped = append(dropped, name)
			continue
		}
		if _, ok := out[name]; ok || name == "_id_" {
			return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Index %s exists, cannot update.", name)
		}
		if !indexNamePattern.MatchString(name) {
			return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Invalid index name: %s", name)
		}
		if len(spec) == 0 {
			return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Index %s names no field.", name)
		}
		clean := make(map[string]any, len(spec))
		for path, dir := range spec {
			root, _, _ := strings.Cut(path, ".")
			f, exists := fields[root]
			if !exists {
				return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Field %s does not exist, cannot add index.", path)
			}
			if f.Type == schema.TypeRelation {
				return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Field %s is a Relation, cannot add index.", path)
			}
			if strings.Contains("."+path+".", "..") || strings.Contains(path, "$") {
				return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "Invalid index field: %s", path)
			}
			switch dir {
			case 1.0, -1.0, "text":
			default:
				return nil, nil, schema.Errorf(schema.CodeInvalidQuery,
					"Invalid index direction %v for %s: use 1, -1 or \"text\".", dir, path)
			}
			clean[path] = dir
		}
		out[name] = clean
	}
	if len(out) > MaxIndexesPerClass {
		return nil, nil, schema.Errorf(schema.CodeInvalidQuery, "a class may declare at most %d indexes", MaxIndexesPerClass)
	}
	return out, dropped, nil
}

// indexUses reports whether an index declaration covers one of fields.
func indexUses(spec any, fields []string) bool {
	m, _ := spec.(map[string]any)
	for path := range m {
		root, _, _ := strings.Cut(path, ".")
		for _, f := range fields {
			if root == f {
				return true
			}
		}
	}
	return false
}

// syncIndexes builds the B-trees the new declarations need and drops the
// ones no declaration (or the service's own lookups) needs any more.
func (s *Service) syncIndexes(class string, before, after *schema.Class) {
	want := map[string]bool{}
	for _, p := range indexedPaths(after) {
		want[p] = true
	}
	coll := s.data.Collection(class, true)
	if before != nil {
		for _, p := range indexedPaths(before) {
			if !want[p] {
				coll.DropIndex(p)
			}
		}
	}
	for p := range want {
		// Paths were validated; EnsureIndex fails only on malformed ones.
		_ = coll.EnsureIndex(p)
	}
}

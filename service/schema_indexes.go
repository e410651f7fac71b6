package service

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// Index declarations of the schemas API: validated, kept in the class's
// schema, and built or dropped in memory as the schema changes.

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

// syncIndexes drops the B-trees no declaration (or the service's own
// lookups) needs any more; the new declarations are built after the
// schema lock is released (buildIndexes). The caller holds schemaMu.
func (s *Service) syncIndexes(class string, before, after *schema.Class) {
	if s.isSQLClass(class) || before == nil {
		// PostgreSQL's indexes are kept while any declaration is dropped:
		// they cost writes, never answers.
		return
	}
	want := map[string]bool{}
	for _, p := range indexedPaths(after) {
		want[p] = true
	}
	coll := s.data.Collection(class, false)
	if coll == nil {
		return
	}
	for _, p := range indexedPaths(before) {
		if !want[p] {
			coll.DropIndex(p)
		}
	}
}

package service

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// indexName is Parse's (MongoDB's) name for a single-field ascending index.
func indexName(path string) string { return path + "_1" }

// EnsureIndex declares a secondary index on a field (a dot path into an
// Object field is allowed). The declaration is kept in the class schema's
// indexes, so the index is rebuilt at every start; the planner uses it at once.
func (s *Service) EnsureIndex(class, path string) error {
	if !schema.ValidClassName(class) {
		return schema.ClassNameError(class)
	}
	for _, part := range strings.Split(path, ".") {
		if !schema.ValidKeyName(part) && !schema.ReservedKeys[part] {
			return schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", path)
		}
	}
	s.schemaMu.Lock()
	defer s.schemaMu.Unlock()
	cls := s.Class(class)
	if cls == nil {
		cls = schema.NewClass(class)
	} else {
		cls = cls.Clone()
	}
	name := indexName(path)
	if _, ok := cls.Indexes[name]; !ok {
		indexes := make(map[string]any, len(cls.Indexes)+1)
		for k, v := range cls.Indexes {
			indexes[k] = v
		}
		indexes[name] = map[string]any{path: 1.0}
		cls.Indexes = indexes
		b, err := json.Marshal(cls)
		if err != nil {
			return err
		}
		if err := s.store.Commit([]store.Record{{Kind: store.KindSchema, Class: class, Value: b}}); err != nil {
			return err
		}
		s.schemas.Store(class, cls)
	}
	return s.data.Collection(class, true).EnsureIndex(path)
}

// buildDeclaredIndexes builds every index the schemas declare; called once
// after loading, when bulk-building is cheapest.
func (s *Service) buildDeclaredIndexes() error {
	for _, cls := range s.Classes() {
		for _, path := range indexedPaths(cls) {
			if err := s.data.Collection(cls.Name, true).EnsureIndex(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexedPaths reads the fields of a schema's index declarations; a
// compound index is served by its leading field.
func indexedPaths(cls *schema.Class) []string {
	var paths []string
	for _, spec := range cls.Indexes {
		m, ok := spec.(map[string]any)
		if !ok || len(m) == 0 {
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if keys[0] != "_id" {
			paths = append(paths, keys[0])
		}
	}
	sort.Strings(paths)
	return paths
}

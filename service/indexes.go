package service

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// indexName is Parse's (MongoDB's) name for a single-field ascending index.
func indexName(path string) string { return path + "_1" }

// EnsureIndex declares a secondary index on a field (a dot path into an
// Object field is allowed). The declaration is kept in the class schema's
// indexes, so the index is rebuilt at every start. The schema lock covers
// the declaration only: the index is built after (buildIndexes), reads and
// writes of the class going on meanwhile, and the planner uses it once
// EnsureIndex returns.
func (s *Service) EnsureIndex(class, path string) error {
	if !schema.ValidClassName(class) {
		return schema.ClassNameError(class)
	}
	if !validIndexPath(path) {
		return schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", path)
	}
	if err := s.declareIndex(class, path); err != nil {
		return err
	}
	s.announceSchemas()
	return s.buildIndexes(class)
}

// declareIndex commits path's index declaration in class's schema.
func (s *Service) declareIndex(class, path string) error {
	s.lockSchema(class)
	defer s.schemaMu.Unlock()
	cls := s.Class(class)
	if cls == nil {
		cls = s.newClass(class)
	} else {
		cls = cls.Clone()
	}
	name := indexName(path)
	if _, ok := cls.Indexes[name]; ok {
		return nil
	}
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
	s.schemaNews.mark(class)
	return nil
}

// validIndexPath reports whether path names a field, or a dot path into
// an Object field.
func validIndexPath(path string) bool {
	for _, part := range strings.Split(path, ".") {
		if !schema.ValidKeyName(part) && !schema.IsReservedKey(part) {
			return false
		}
	}
	return true
}

// buildDeclaredIndexes builds every index the schemas declare; called once
// after loading, when bulk-building is cheapest.
func (s *Service) buildDeclaredIndexes() error {
	for _, cls := range s.Classes() {
		if c := s.data.Collection(cls.Name, false); c != nil {
			ensureGeoIndexes(c, cls.Fields) // the first write builds them for a class without objects
		}
		for _, path := range indexedPaths(cls) {
			if err := s.data.Collection(cls.Name, true).EnsureIndex(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexedPaths reads the fields of a schema's index declarations. Every
// field of a compound index gets its own B-tree (JSON objects do not keep
// the order that would name a leading field); "text" entries need none:
// $text runs as a residual filter.
func indexedPaths(cls *schema.Class) []string {
	seen := map[string]bool{}
	var paths []string
	for _, spec := range cls.Indexes {
		m, ok := spec.(map[string]any)
		if !ok {
			continue
		}
		for k, dir := range m {
			if k == "_id" || dir == "text" || seen[k] {
				continue
			}
			seen[k] = true
			paths = append(paths, k)
		}
	}
	sort.Strings(paths)
	return paths
}

// DropIndex removes a declared index by name (as the schemas API lists
// it, e.g. "score_1"). The planner stops using the field's B-tree at once
// unless another declaration still covers the field.
func (s *Service) DropIndex(class, name string) error {
	defer s.announceSchemas() // after the unlock
	s.lockSchema(class)
	defer s.schemaMu.Unlock()
	cur := s.Class(class)
	if cur == nil {
		return schema.Errorf(schema.CodeInvalidClassName, "Class %s does not exist.", class)
	}
	if _, ok := cur.Indexes[name]; !ok {
		return schema.Errorf(schema.CodeInvalidQuery, "Index %s does not exist, cannot delete.", name)
	}
	next := cur.Clone()
	next.Indexes = make(map[string]any, len(cur.Indexes))
	for k, v := range cur.Indexes {
		if k != name {
			next.Indexes[k] = v
		}
	}
	if len(next.Indexes) == 0 {
		next.Indexes = nil
	}
	if err := s.storeClass(next); err != nil {
		return err
	}
	s.syncIndexes(class, cur, next)
	return nil
}

// ensureGeoIndexes gives every GeoPoint and Polygon field among fields its
// S2 cell index (the planner serves $nearSphere, $within, $geoWithin and
// $geoIntersects from them). Indexes are not declared in the schema: every
// such field has one, built at start-up and when a write first brings the
// field. It is cheap when they exist.
func ensureGeoIndexes(coll *index.Collection, fields map[string]schema.Field) {
	for name, f := range fields {
		kind := index.GeoNone
		switch f.Type {
		case schema.TypeGeoPoint:
			kind = index.GeoPoints
		case schema.TypePolygon:
			kind = index.GeoShapes
		}
		if kind != index.GeoNone && coll.GeoIndex(name) != kind {
			_ = coll.EnsureGeoIndex(name, kind) // fails only for another kind on the path, which lock-in prevents
		}
	}
}

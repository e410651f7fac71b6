package planner

import (
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

// memSource is a Source over an index.DB with a fixed schema, for tests.
type memSource struct {
	db     *index.DB
	fields map[string]map[string]schema.Field
}

func newMemSource() *memSource {
	return &memSource{db: index.New(), fields: map[string]map[string]schema.Field{}}
}

func (m *memSource) put(class string, obj schema.Object) {
	m.db.Collection(class, true).Put(obj)
	if m.fields[class] == nil {
		m.fields[class] = map[string]schema.Field{}
	}
	for k, v := range obj {
		if f, ok, _ := schema.TypeOf(v); ok {
			if _, known := m.fields[class][k]; !known {
				m.fields[class][k] = f
			}
		}
	}
}

func (m *memSource) Collection(class string) Collection {
	if c := m.db.Collection(class, false); c != nil {
		return c
	}
	return nil
}

func (m *memSource) Related(owningClass, key, owningID string, fn func(string) bool) {
	m.db.Related(owningClass, key, owningID, fn)
}

func (m *memSource) RelatedCount(owningClass, key, owningID string) int {
	return m.db.RelatedCount(owningClass, key, owningID)
}

func (m *memSource) Owners(owningClass, key, relatedID string, fn func(string) bool) {
	m.db.Owners(owningClass, key, relatedID, fn)
}

func (m *memSource) FieldType(class, field string) (schema.Type, bool) {
	f, ok := m.fields[class][field]
	return f.Type, ok
}

func (m *memSource) RelationTarget(class, field string) string {
	if f, ok := m.fields[class][field]; ok && f.Type == schema.TypeRelation {
		return f.TargetClass
	}
	return ""
}

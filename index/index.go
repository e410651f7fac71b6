// Package index owns Quarry's in-memory data: per-class collections of
// decoded objects with ordered secondary indexes, and relation membership in
// both directions. It is rebuilt from the store at start-up and updated by
// the service after every durable commit.
//
// index never imports planner or service; it answers scans with callbacks.
package index

import (
	"sort"
	"sync"

	"github.com/quarrydata/quarry/schema"
)

// DB holds every class's collection and the relation memberships.
type DB struct {
	mu        sync.RWMutex
	classes   map[string]*Collection
	relations map[relationKey]*relation
}

// New returns an empty DB.
func New() *DB {
	return &DB{classes: map[string]*Collection{}, relations: map[relationKey]*relation{}}
}

// Collection returns the class's collection, creating it when create is set.
func (db *DB) Collection(class string, create bool) *Collection {
	db.mu.RLock()
	c := db.classes[class]
	db.mu.RUnlock()
	if c != nil || !create {
		return c
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if c = db.classes[class]; c == nil {
		c = &Collection{name: class, objects: map[string]schema.Object{}}
		db.classes[class] = c
	}
	return c
}

// DropCollection forgets a class's objects.
func (db *DB) DropCollection(class string) {
	db.mu.Lock()
	delete(db.classes, class)
	db.mu.Unlock()
}

// Collection is one class's objects. Stored objects are never mutated in
// place: writers replace them, so a reader may keep an object it was given.
type Collection struct {
	name    string
	mu      sync.RWMutex
	objects map[string]schema.Object
}

// Get returns the object with id.
func (c *Collection) Get(id string) (schema.Object, bool) {
	c.mu.RLock()
	o, ok := c.objects[id]
	c.mu.RUnlock()
	return o, ok
}

// Put inserts or replaces an object (keyed by its objectId).
func (c *Collection) Put(obj schema.Object) {
	id, _ := obj["objectId"].(string)
	c.mu.Lock()
	c.objects[id] = obj
	c.mu.Unlock()
}

// Delete removes an object.
func (c *Collection) Delete(id string) {
	c.mu.Lock()
	delete(c.objects, id)
	c.mu.Unlock()
}

// Len is the number of objects, O(1).
func (c *Collection) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.objects)
}

// Scan calls fn for every object in objectId order until fn returns false.
func (c *Collection) Scan(fn func(schema.Object) bool) {
	c.mu.RLock()
	ids := make([]string, 0, len(c.objects))
	for id := range c.objects {
		ids = append(ids, id)
	}
	objs := make([]schema.Object, len(ids))
	sort.Strings(ids)
	for i, id := range ids {
		objs[i] = c.objects[id]
	}
	c.mu.RUnlock()
	for _, o := range objs {
		if !fn(o) {
			return
		}
	}
}

type relationKey struct{ owningClass, key string }

type relation struct {
	forward map[string]map[string]struct{} // owning id -> related ids
	reverse map[string]map[string]struct{} // related id -> owning ids
}

// SetRelation adds (present) or removes a membership of relatedID in the
// relation key of owningClass/owningID.
func (db *DB) SetRelation(owningClass, key, owningID, relatedID string, present bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	rk := relationKey{owningClass, key}
	r := db.relations[rk]
	if r == nil {
		if !present {
			return
		}
		r = &relation{forward: map[string]map[string]struct{}{}, reverse: map[string]map[string]struct{}{}}
		db.relations[rk] = r
	}
	setEdge(r.forward, owningID, relatedID, present)
	setEdge(r.reverse, relatedID, owningID, present)
}

func setEdge(m map[string]map[string]struct{}, from, to string, present bool) {
	set := m[from]
	if present {
		if set == nil {
			set = map[string]struct{}{}
			m[from] = set
		}
		set[to] = struct{}{}
		return
	}
	delete(set, to)
	if len(set) == 0 {
		delete(m, from)
	}
}

// Related calls fn with every related id in owningClass/owningID's relation key.
func (db *DB) Related(owningClass, key, owningID string, fn func(relatedID string) bool) {
	db.mu.RLock()
	r := db.relations[relationKey{owningClass, key}]
	var ids []string
	if r != nil {
		for id := range r.forward[owningID] {
			ids = append(ids, id)
		}
	}
	db.mu.RUnlock()
	sort.Strings(ids)
	for _, id := range ids {
		if !fn(id) {
			return
		}
	}
}

// Owners calls fn with every owning id whose relation key contains relatedID.
func (db *DB) Owners(owningClass, key, relatedID string, fn func(owningID string) bool) {
	db.mu.RLock()
	r := db.relations[relationKey{owningClass, key}]
	var ids []string
	if r != nil {
		for id := range r.reverse[relatedID] {
			ids = append(ids, id)
		}
	}
	db.mu.RUnlock()
	sort.Strings(ids)
	for _, id := range ids {
		if !fn(id) {
			return
		}
	}
}

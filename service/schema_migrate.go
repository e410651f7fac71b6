package service

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Changes that rewrite a class's data: purge, and dropping a field's
// values and relation rows, run in batches under the class's exclusive
// lock so writes to other classes go on.

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
	var ids []string
	switch {
	case s.isSQLClass(class):
		var err error
		if ids, err = s.sqlIDs(class); err != nil {
			return fmt.Errorf("purge: %w", err)
		}
	case coll == nil:
		return nil
	default:
		coll.Scan(func(o schema.Object) bool {
			ids = append(ids, o["objectId"].(string))
			return true
		})
	}
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
			if coll != nil {
				coll.Delete(id)
			}
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
	if s.isSQLClass(class) {
		return errSQLFieldDrop(class, field)
	}
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
	s.schemaNews.mark(cls.Name)
	return nil
}

package service

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/quarrydata/quarry/memtune"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// loadBatch is how many object records one decoding worker takes at once.
const loadBatch = 512

// defaultLoadProgressEvery is how many objects pass between two
// LoadProgress calls: a few seconds of loading on a slow machine.
const defaultLoadProgressEvery = 100_000

// load reads everything the store holds into memory. Objects are checked
// and stored as their JSON by one worker per processor, without being
// decoded (index.Collection.PutLoaded), the other records in store order;
// the index DB is in its deferred mode (index.DB.BeginLoad), so a Put
// only stores the object.
func (s *Service) load() error {
	defer raiseGCForLoad()()
	work := make(chan []store.Record, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	var failMu sync.Mutex
	var failed error
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range work {
				if err := s.loadObjects(batch); err != nil {
					failMu.Lock()
					if failed == nil {
						failed = err // the first damaged record is the one reported
					}
					failMu.Unlock()
				}
			}
		}()
	}
	var batch []store.Record
	objects, every := 0, s.opts.LoadProgressEvery
	if every <= 0 {
		every = defaultLoadProgressEvery
	}
	err := s.store.Load(func(r store.Record) error {
		if r.Kind == store.KindObject {
			if objects++; s.opts.LoadProgress != nil && objects%every == 0 {
				s.opts.LoadProgress(objects)
			}
			if batch = append(batch, r); len(batch) == loadBatch {
				work <- batch
				batch = nil
			}
			return nil
		}
		return s.loadRecord(r)
	})
	if len(batch) > 0 {
		work <- batch
	}
	close(work)
	wg.Wait()
	if err != nil {
		return err
	}
	return failed
}

// loadGCPercent is the collector's target while a store loads (memtune).
const loadGCPercent = memtune.LoadGCPercent

// raiseGCForLoad raises the collector's target for a load
// (memtune.RaiseForLoad) and returns the function that restores it.
func raiseGCForLoad() (restore func()) { return memtune.RaiseForLoad() }

// loadObjects stores a batch of object records as their bytes: nothing
// is decoded (index.Collection.PutLoaded reads the objectId and the ACL
// from the bytes).
func (s *Service) loadObjects(batch []store.Record) error {
	for _, r := range batch {
		if err := s.data.Collection(r.Class, true).PutLoaded(r.Value); err != nil {
			return fmt.Errorf("%w: object %s/%s is not valid JSON", store.ErrDamaged, r.Class, r.Key)
		}
	}
	return nil
}

// loadRecord loads a schema, setting or relation record.
func (s *Service) loadRecord(r store.Record) error {
	switch r.Kind {
	case store.KindSchema:
		var c schema.Class
		if err := json.Unmarshal(r.Value, &c); err != nil {
			return fmt.Errorf("%w: the schema of class %s is not valid JSON", store.ErrDamaged, r.Class)
		}
		s.schemas.Store(c.Name, &c)
	case store.KindMeta:
		s.putMeta(r.Key, r.Value)
	case store.KindJoin:
		key, owningClass, ok1 := cutJoinClass(r.Class)
		owningID, relatedID, ok2 := cutJoinKey(r.Key)
		if !ok1 || !ok2 {
			return fmt.Errorf("%w: malformed relation record %q %q", store.ErrDamaged, r.Class, r.Key)
		}
		s.data.SetRelation(owningClass, key, owningID, relatedID, true)
	}
	return nil
}

package service

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
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

// loadGCPercent is the collector's target (GOGC) while a store loads.
// Nearly all a load allocates stays live, so at the default of 100 the
// collections during a load mostly mark the growing data again and again
// (a third of a start's CPU on 1M objects); at 400 they run about half as
// often, and the heap's peak barely moves, as there is little garbage to
// let pile up.
const loadGCPercent = 400

// loadGC counts the loads in progress: the first raises the target, the
// last puts back what it found (an operator's GOGC, or off).
var loadGC struct {
	sync.Mutex
	loads int
	prev  int
}

// raiseGCForLoad raises the collector's target to loadGCPercent unless
// it is off or higher already, and returns the function that restores it.
// The GC headroom policy (memtune), which re-sets the target after each
// collection, stands aside meanwhile and applies again at the end; the
// target it had set was for the heap before the load (on a small heap,
// far above loadGCPercent), so it is not kept.
func raiseGCForLoad() (restore func()) {
	release, tuned := memtune.Hold()
	loadGC.Lock()
	defer loadGC.Unlock()
	if loadGC.loads == 0 {
		loadGC.prev = debug.SetGCPercent(loadGCPercent)
		if !tuned && (loadGC.prev < 0 || loadGC.prev > loadGCPercent) {
			debug.SetGCPercent(loadGC.prev)
		}
	}
	loadGC.loads++
	return func() {
		loadGC.Lock()
		defer loadGC.Unlock()
		if loadGC.loads--; loadGC.loads == 0 {
			debug.SetGCPercent(loadGC.prev)
		}
		release()
	}
}

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

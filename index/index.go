// Package index owns Quarry's in-memory data: per-class collections of
// objects, each version kept once, as its JSON (encoding.go: the bytes a
// write committed or the store loaded, the store's own memory), from which
// index keys are read field by field (fields.go) and maps are decoded only
// when asked for and cached weakly (record.go), ordered B-tree indexes
// over field paths (objectId, createdAt and
// updatedAt always, others on request) built in bulk (build.go), once
// loaded outside the lock from a snapshot (the writes made meanwhile
// replayed before the index is published), S2 cell
// indexes over GeoPoint and Polygon paths (geo.go), range and cell scans
// with a callback and a deadline that hand out Refs (ref.go: the versions
// they read, whose maps and bytes a reply takes with no second lookup),
// cardinality estimates for the planner,
// and relation membership in both directions. It is rebuilt from the
// store at start-up and updated by the service after every durable commit.
//
// index never imports planner or service; keys order by schema.Compare.
package index

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tidwall/btree"
	"github.com/tidwall/gjson"

	"github.com/quarrydata/quarry/schema"
)

// Limits and tuning.
const (
	// CheckEvery is how many index entries a scan visits between two
	// deadline checks.
	CheckEvery = 256
	// batchSize bounds the ids gathered under a read lock before the
	// callback runs without it (ScanIDs, Related, Owners).
	batchSize = 256
)

// Errors returned by index operations.
var (
	// ErrDeadline is returned by a scan that stopped because its deadline
	// passed.
	ErrDeadline = errors.New("index: scan deadline exceeded")
	// ErrNoIndex is returned when a scan names a path without an index.
	ErrNoIndex = errors.New("index: no index on path")
	// ErrBadPath is returned by EnsureIndex for an empty path or one with an
	// empty dot-separated segment.
	ErrBadPath = errors.New("index: bad index path")
)

// builtin are the paths indexed in every collection; they cannot be dropped.
var builtin = [...]string{"objectId", "createdAt", "updatedAt"}

// DB holds every class's collection and the relation memberships.
type DB struct {
	mu        sync.RWMutex
	classes   map[string]*Collection
	relations map[relationKey]*relation
	flag      func(schema.Object) bool
	// flagReads are the top-level fields flag reads (NewFlagging).
	flagReads []string
	// standing are the paths indexed whenever a class's collection exists
	// (SetStandingIndexes), also after it is dropped and created again.
	standing map[string][]string
	// loading defers index building while a store loads (BeginLoad).
	loading bool
	// onBuild is the test hook SetBuildHook sets, shared with the
	// collections.
	onBuild atomic.Pointer[func(class, path string)]
}

// New returns an empty DB.
func New() *DB {
	return &DB{classes: map[string]*Collection{}, relations: map[relationKey]*relation{}, standing: map[string][]string{}}
}

// NewFlagging returns an empty DB whose collections count, exactly and in
// O(1), the objects for which flag holds (see Collection.Flagged). The
// service flags objects that are not publicly readable, so a class with
// none needs no per-object ACL filter. reads, when given, are the only
// top-level fields flag looks at: PutLoaded then calls it on an object of
// just those fields read from the bytes instead of decoding the whole
// object.
func NewFlagging(flag func(schema.Object) bool, reads ...string) *DB {
	db := New()
	db.flag, db.flagReads = flag, reads
	return db
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
		c = newCollection(class)
		c.flag, c.flagReads = db.flag, db.flagReads
		c.deferred = db.loading
		c.onBuild = &db.onBuild
		for _, p := range db.standing[class] {
			c.ensureStanding(p)
		}
		db.classes[class] = c
	}
	return c
}

// SetStandingIndexes declares B-tree indexes that class has whenever its
// collection exists: built now when it does, and again each time the
// collection is created after a drop. DropIndex leaves them alone. They are
// configuration (the service's own lookups, operators' declared indexes),
// not data, so dropping a class does not forget them.
func (db *DB) SetStandingIndexes(class string, paths ...string) error {
	for _, p := range paths {
		if !validPath(p) {
			return ErrBadPath
		}
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, p := range paths {
		if !slices.Contains(db.standing[class], p) {
			db.standing[class] = append(db.standing[class], p)
		}
		if c := db.classes[class]; c != nil {
			c.ensureStanding(p)
		}
	}
	return nil
}

// DropCollection forgets a class's objects and its indexes.
func (db *DB) DropCollection(class string) {
	db.mu.Lock()
	delete(db.classes, class)
	db.mu.Unlock()
}

// Collection is one class's objects and their indexes.
//
// Stored objects are never mutated in place: writers replace them, so a
// reader may keep an object it was given. Put and Delete update the object
// and every index at once under the collection's write lock. Scans iterate a
// copy-on-write snapshot of one index taken when they start: they see the
// collection as of that moment, hold no lock while fn runs (fn may read or
// write the collection), and never block writers.
type Collection struct {
	name    string
	mu      sync.RWMutex
	objects map[string]*record
	indexes map[string]*index
	list    []*index // the values of indexes, builtins first
	// geo holds the S2 cell indexes of GeoPoint and Polygon paths
	// (geo.go); geoList is its values, updated with list.
	geo     map[string]*geoIndex
	geoList []*geoIndex
	// standing are the paths DropIndex leaves (DB.SetStandingIndexes).
	standing map[string]bool
	// building are the indexes being built outside the lock, by path
	// (EnsureIndex); writes note in them the objects they change.
	building map[string]*building
	// onBuild is the DB's build hook (DB.SetBuildHook), nil for a
	// collection made without a DB.
	onBuild *atomic.Pointer[func(class, path string)]

	// snapMu serializes taking snapshots under mu's read lock: copying a
	// tree writes to the source tree's copy-on-write bookkeeping.
	snapMu sync.Mutex

	// flag and flagged: the objects the DB's flag predicate holds for.
	flag      func(schema.Object) bool
	flagReads []string
	flagged   int

	// deferred: Put only stores objects, and declared indexes wait to be
	// built all at once by DB.FinishLoad.
	deferred bool
	// loaded are the records Put while deferred, which the builds read
	// in objectId order (records). loadedMixed is set once a deferred
	// Put replaced or Delete removed a record.
	loaded      []*record
	loadedMixed bool
}

func newCollection(name string) *Collection {
	c := &Collection{name: name, objects: map[string]*record{}, indexes: map[string]*index{}}
	for _, p := range builtin {
		ix := newIndex(p, false)
		c.indexes[p] = ix
		c.list = append(c.list, ix)
	}
	return c
}

// Name is the collection's class name.
func (c *Collection) Name() string { return c.name }

// Get returns the object with id.
func (c *Collection) Get(id string) (schema.Object, bool) {
	c.mu.RLock()
	rec, ok := c.objects[id]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return rec.object(), true
}

// Put inserts or replaces an object (keyed by its objectId), moving its
// entries in every index. obj must not be modified afterwards.
func (c *Collection) Put(obj schema.Object) {
	c.PutEncoded(obj, nil)
}

// PutEncoded is Put with obj's JSON encoding as encoding/json's Marshal
// makes it (the bytes a write has just committed), kept as the reply
// bytes of this version of the object (see Encoding); nil leaves them to
// be made by the first read. Neither obj nor enc may be modified
// afterwards.
func (c *Collection) PutEncoded(obj schema.Object, enc []byte) {
	c.put(obj, enc, true)
}

// PutStored is Put with the bytes obj was decoded from as the store keeps
// them (store.Adapter.Load), so that the store's copy is also the reply
// encoding and the object is in memory once. They are served once the
// first read has found them equal to encoding/json's output (see
// encoding). Neither obj nor stored may be modified afterwards.
//
// obj is not kept (a load's maps are garbage once their objects are
// stored): Get and the scans decode stored again when asked.
func (c *Collection) PutStored(obj schema.Object, stored []byte) {
	c.put(obj, stored, false)
}

func (c *Collection) put(obj schema.Object, enc []byte, checked bool) {
	rec := newRecord(obj, enc, checked)
	rec.flagged = c.flag != nil && c.flag(obj)
	c.insert(rec)
}

// ErrNotObject is returned by PutLoaded for bytes that are not a JSON
// object.
var ErrNotObject = errors.New("index: stored bytes are not a JSON object")

// PutLoaded is PutStored without the decoded map: the objectId and the
// flag's fields (NewFlagging's reads) are read from stored, so a load
// decodes no object (without reads, it decodes each to flag it). The
// bytes are checked to be a JSON object, not decoded: a value Unmarshal
// would refuse within valid JSON (a number beyond float64's range, which
// encoding/json never writes) is found only when the object is first
// read. stored must never be modified afterwards.
func (c *Collection) PutLoaded(stored []byte) error {
	js := unsafe.String(unsafe.SliceData(stored), len(stored))
	if !gjson.Valid(js) || !gjson.Parse(js).IsObject() {
		return ErrNotObject
	}
	id, _ := valueAt(js, "objectId")
	rec := &record{b: stored}
	rec.id, _ = id.(string)
	if c.flag != nil {
		fields, err := c.flagFields(js, stored)
		if err != nil {
			return err
		}
		rec.flagged = c.flag(fields)
	}
	c.insert(rec)
	return nil
}

// flagFields is the object the flag predicate is given for the JSON js:
// the fields it reads, or without reads the whole decoded object.
func (c *Collection) flagFields(js string, stored []byte) (schema.Object, error) {
	if c.flagReads == nil {
		return Decode(stored)
	}
	var fields schema.Object
	for _, name := range c.flagReads {
		if v, ok := valueAt(js, name); ok {
			if fields == nil {
				fields = make(schema.Object, len(c.flagReads))
			}
			fields[name] = v
		}
	}
	return fields, nil
}

// insert stores rec in place of the version with its id and moves the
// index entries.
func (c *Collection) insert(rec *record) {
	c.mu.Lock()
	old := c.objects[rec.id]
	c.objects[rec.id] = rec
	if old != nil && old.flagged {
		c.flagged--
	}
	if rec.flagged {
		c.flagged++
	}
	if c.deferred {
		c.loaded = append(c.loaded, rec)
		c.loadedMixed = c.loadedMixed || old != nil
	} else {
		c.noteLocked(rec.id, old)
		for _, ix := range c.list {
			ix.replace(old, rec)
		}
		for _, gx := range c.geoList {
			gx.replace(old, rec)
		}
	}
	c.mu.Unlock()
}

// Delete removes an object and its index entries.
func (c *Collection) Delete(id string) {
	c.mu.Lock()
	if old, ok := c.objects[id]; ok {
		delete(c.objects, id)
		c.loadedMixed = c.loadedMixed || c.deferred
		if old.flagged {
			c.flagged--
		}
		c.noteLocked(id, old)
		for _, ix := range c.list {
			ix.replace(old, nil)
		}
		for _, gx := range c.geoList {
			gx.replace(old, nil)
		}
	}
	c.mu.Unlock()
}

// Flagged is the number of objects the DB's flag predicate holds for, O(1)
// (0 without a predicate).
func (c *Collection) Flagged() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.flagged
}

// Len is the number of objects, O(1).
func (c *Collection) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.objects)
}

// Scan calls fn for every object in objectId order until fn returns false.
func (c *Collection) Scan(fn func(schema.Object) bool) {
	_ = c.ScanOrdered("objectId", false, time.Time{}, func(r Ref) bool { return fn(r.Object()) })
}

// ScanIDs calls fn, in the order of ids, for each of them that names a
// stored object, until fn returns false. Unknown ids are skipped; a repeated
// id is delivered again. Lookups take the read lock per batch of ids; fn
// runs without it.
func (c *Collection) ScanIDs(ids []string, fn func(Ref) bool) {
	var buf []*record
	for len(ids) > 0 {
		n := min(len(ids), batchSize)
		buf = buf[:0]
		c.mu.RLock()
		for _, id := range ids[:n] {
			if rec, ok := c.objects[id]; ok {
				buf = append(buf, rec)
			}
		}
		c.mu.RUnlock()
		ids = ids[n:]
		for _, rec := range buf {
			if !fn(Ref{rec}) {
				return
			}
		}
	}
}

func validPath(path string) bool { return path != "" && !strings.Contains("."+path+".", "..") }

// ensureStanding indexes a valid path and keeps DropIndex off it.
func (c *Collection) ensureStanding(path string) {
	_ = c.EnsureIndex(path) // the path was validated by SetStandingIndexes
	c.mu.Lock()
	if c.standing == nil {
		c.standing = map[string]bool{}
	}
	c.standing[path] = true
	c.mu.Unlock()
}

// EnsureIndex declares an index on a field path (a top-level key or a dot
// path into nested objects) and builds it from the current objects. Declaring
// an existing index, including the built-in objectId, createdAt and updatedAt
// indexes, does nothing; declaring one being built waits for that build.
//
// The build holds no lock: it reads a copy-on-write snapshot of the
// objects, while writes go on and note the objects they change; those are
// replayed into the new index under the write lock, which then publishes
// it. Until then the index is neither listed nor scanned (HasIndex is
// false), so a plan never reads a half-built one, and scans that started
// before keep reading what they read.
func (c *Collection) EnsureIndex(path string) error {
	if !validPath(path) {
		return ErrBadPath
	}
	c.mu.Lock()
	if c.indexes[path] != nil {
		c.mu.Unlock()
		return nil
	}
	if b := c.building[path]; b != nil {
		c.mu.Unlock()
		<-b.done
		return nil
	}
	ix := newIndex(path, true)
	if c.deferred {
		c.publishLocked(ix)
		c.mu.Unlock()
		return nil
	}
	b, recs := c.startBuildLocked(path, GeoNone)
	c.mu.Unlock()
	defer close(b.done)
	ix.build(recs, true)
	c.buildHook(path)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.building[path] != b {
		return nil // dropped (DropIndex) while it was built
	}
	delete(c.building, path)
	for id, old := range b.touched {
		ix.replace(old, c.objects[id])
	}
	c.publishLocked(ix)
	return nil
}

// building is an index being built outside the lock (EnsureIndex,
// EnsureGeoIndex).
type building struct {
	// touched maps each object a write changed since the build's
	// snapshot to its version in the snapshot (nil when it had none).
	touched map[string]*record
	// done is closed when the build is over, published or not.
	done chan struct{}
	// kind is a geo index's kind, GeoNone for a B-tree.
	kind GeoKind
}

// startBuildLocked registers a build under key and returns it with the
// records it indexes, in objectId order: a copy-on-write snapshot's,
// taken in O(1) under the write lock the caller holds, and read after
// the caller releases it.
func (c *Collection) startBuildLocked(key string, kind GeoKind) (*building, []*record) {
	b := &building{touched: map[string]*record{}, done: make(chan struct{}), kind: kind}
	if c.building == nil {
		c.building = map[string]*building{}
	}
	c.building[key] = b
	snap := c.snapshotLocked(c.indexes["objectId"])
	recs := make([]*record, 0, snap.tree.Len())
	snap.tree.Scan(func(e entry) bool {
		recs = append(recs, e.rec)
		return true
	})
	return b, recs
}

// buildHook calls the DB's build hook, if any (SetBuildHook).
func (c *Collection) buildHook(path string) {
	if c.onBuild != nil {
		if hook := c.onBuild.Load(); hook != nil {
			(*hook)(c.name, path)
		}
	}
}

// noteLocked records, for every index being built, that the object id
// (old its version before this write) changed; the caller holds the
// write lock.
func (c *Collection) noteLocked(id string, old *record) {
	for _, b := range c.building {
		if _, seen := b.touched[id]; !seen {
			b.touched[id] = old
		}
	}
}

// publishLocked lists a built index; the caller holds the write lock.
func (c *Collection) publishLocked(ix *index) {
	c.indexes[ix.path] = ix
	c.list = append(c.list, ix)
}

// SetBuildHook makes every index build of the DB's collections call fn
// (class and path) once its snapshot is indexed and before it replays
// the writes made meanwhile and publishes: tests hold a build there to
// read and write around it. nil removes it.
func (db *DB) SetBuildHook(fn func(class, path string)) {
	if fn == nil {
		db.onBuild.Store(nil)
		return
	}
	db.onBuild.Store(&fn)
}

// DropIndex removes a declared index and reports whether there was one. The
// built-in indexes are never dropped.
func (c *Collection) DropIndex(path string) bool {
	for _, p := range builtin {
		if p == path {
			return false
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.standing[path] {
		return false
	}
	if c.building[path] != nil {
		delete(c.building, path) // the build ends without publishing
		return true
	}
	ix := c.indexes[path]
	if ix == nil {
		return false
	}
	delete(c.indexes, path)
	list := make([]*index, 0, len(c.list)-1)
	for _, x := range c.list {
		if x != ix {
			list = append(list, x)
		}
	}
	c.list = list
	return true
}

// Indexes lists the indexed paths, built-ins included, sorted.
func (c *Collection) Indexes() []string {
	c.mu.RLock()
	out := make([]string, 0, len(c.list))
	for _, ix := range c.list {
		out = append(out, ix.path)
	}
	c.mu.RUnlock()
	sort.Strings(out)
	return out
}

// HasIndex reports whether path is indexed.
func (c *Collection) HasIndex(path string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.indexes[path] != nil
}

// Multikey reports whether some object currently holds an array at path,
// so that the index on path has one entry per distinct element (an empty
// array has one entry, the key []any{}). On a multikey index ScanOrdered is
// not the Parse sort order; a range scan yields the objects with at least
// one element in the range, so it is a superset of a one-sided constraint
// ($gt 5) but not of a two-sided one (MongoDB matches {$gt: 2, $lt: 4} on
// [1, 5], each bound met by another element); and a whole-array operand
// cannot be looked up, since arrays are not keys. False when path is not
// indexed.
func (c *Collection) Multikey(path string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indexes[path]
	return ix != nil && ix.arrays > 0
}

// index is one ordered index over a path.
type index struct {
	path string
	// tree is the live tree, changed only under Collection.mu's write lock.
	tree *btree.BTreeG[entry]
	// arrays counts the objects holding an array at path.
	arrays int
	// snap is a read-only copy of tree for scans, or nil after a write.
	snap atomic.Pointer[snapshot]
	// keys holds, for each countable key (see countable) with at least
	// two entries, their number and the two with the smallest objectIds:
	// the estimate of an equality is one map lookup instead of rank
	// searches, and ScanEqual reads the start of each key's run without a
	// seek. A key with one entry is not tracked, so that a unique field's
	// index costs no map entry per object (a miss means 0 or 1 entries,
	// and the tree answers). Declared indexes have it; the
	// built-in ones do not (objectIds and timestamps are all but unique,
	// and a map entry per object would cost more than it saves).
	keys map[any]keyStats
	// tail remembers where the last insertion went, for the indexes whose
	// new keys come last (a write's createdAt and updatedAt are the
	// latest): inserting there takes one comparison per tree level instead
	// of a binary search in each node. Used under the write lock only.
	tail     btree.PathHint
	appended bool
}

// keyStats is what a declared index keeps per countable key: the number
// of its entries, and of those the ones with the smallest and second
// smallest objectId (second is nil when n is 1). A page drawn from many
// keys takes one or two objects of most of them, so two save the seeks.
type keyStats struct {
	n             int
	first, second *record
}

func newIndex(path string, counted bool) *index {
	ix := &index{path: path, tree: newTree(), appended: path == "createdAt" || path == "updatedAt"}
	if counted {
		ix.keys = map[any]keyStats{}
	}
	return ix
}

// countable reports whether a key is tracked in index.keys: the
// comparable kinds whose map equality is compareKeys equality. NaN is
// left out, as it never equals itself.
func countable(k any) bool {
	switch x := k.(type) {
	case nil, string, bool, isoDate, ptrKey:
		return true
	case float64:
		return x == x
	}
	return false
}

// added records that the entry (k, rec) entered the tree.
func (ix *index) added(k any, rec *record) {
	if ix.keys == nil || !countable(k) {
		return
	}
	st, tracked := ix.keys[k]
	if !tracked {
		// The key had at most one entry: track it once it has two.
		ix.tree.Ascend(entry{k, recFirst}, func(e entry) bool {
			if compareKeys(e.key, k) != 0 {
				return false
			}
			if st.n++; st.n == 1 {
				st.first = e.rec
			} else {
				st.second = e.rec
			}
			return st.n < 2
		})
		if st.n == 2 {
			ix.keys[k] = st
		}
		return
	}
	st.n++
	switch {
	case st.first == nil || rec.id < st.first.id:
		st.first, st.second = rec, st.first
	case st.second == nil || rec.id < st.second.id:
		st.second = rec
	}
	ix.keys[k] = st
}

// removed records that the entry (k, rec) left the tree; when it was one
// of the key's first two, the entry after the (new) first becomes second.
func (ix *index) removed(k any, rec *record) {
	if ix.keys == nil || !countable(k) {
		return
	}
	st, tracked := ix.keys[k]
	if !tracked {
		return
	}
	if st.n--; st.n <= 1 {
		delete(ix.keys, k) // one entry left: untracked
		return
	}
	switch rec {
	case st.first:
		st.first, st.second = st.second, nil
	case st.second:
		st.second = nil
	default:
		ix.keys[k] = st
		return
	}
	ix.tree.Ascend(entry{k, st.first}, func(e entry) bool {
		if e.rec == st.first {
			return true
		}
		if compareKeys(e.key, k) == 0 {
			st.second = e.rec
		}
		return false
	})
	ix.keys[k] = st
}

func newTree() *btree.BTreeG[entry] {
	return btree.NewBTreeGOptions(lessEntry, btree.Options{NoLocks: true})
}

// replace swaps old's entries for rec's (either may be nil). The caller
// holds the collection's write lock.
func (ix *index) replace(old, rec *record) {
	var oldBuf, newBuf [1]any
	var oldKeys, newKeys []any
	var oldArr, newArr bool
	if old != nil {
		oldKeys, oldArr = ix.appendKeys(oldBuf[:0], old)
	}
	if rec != nil {
		newKeys, newArr = ix.appendKeys(newBuf[:0], rec)
	}
	ix.snap.Store(nil)
	if oldArr {
		ix.arrays--
	}
	if newArr {
		ix.arrays++
	}
	if len(oldKeys) == 1 && len(newKeys) == 1 && compareKeys(oldKeys[0], newKeys[0]) == 0 {
		k := newKeys[0]
		ix.tree.Set(entry{k, rec}) // same position: replace in place
		if ix.keys != nil && countable(k) {
			if st, tracked := ix.keys[k]; tracked {
				switch old {
				case st.first:
					st.first = rec
				case st.second:
					st.second = rec
				}
				ix.keys[k] = st
			}
		}
		return
	}
	for _, k := range oldKeys {
		if _, found := ix.tree.Delete(entry{k, old}); found {
			ix.removed(k, old)
		}
	}
	for _, k := range newKeys {
		var replaced bool
		if ix.appended {
			_, replaced = ix.tree.SetHint(entry{k, rec}, &ix.tail)
		} else {
			_, replaced = ix.tree.Set(entry{k, rec})
		}
		if !replaced {
			ix.added(k, rec)
		}
	}
}

// appendKeys is appendKeys for this index. The objectId index takes the
// record's id rather than reading it out of the JSON: every write moves
// the object's entry there, and the id is the key.
func (ix *index) appendKeys(dst []any, rec *record) ([]any, bool) {
	if ix.path == "objectId" && rec.id != "" {
		return append(dst, rec.id), false
	}
	return appendKeys(dst, rec, ix.path)
}

// track records the stats of one key's run of entries, in order, when it
// has the two entries a tracked key needs.
func (ix *index) track(run []entry) {
	if ix.keys != nil && len(run) >= 2 && countable(run[0].key) {
		ix.keys[run[0].key] = keyStats{n: len(run), first: run[0].rec, second: run[1].rec}
	}
}

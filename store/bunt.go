package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/tidwall/buntdb"

	"github.com/quarrydata/quarry/memtune"
)

// Group commit limits. One fsync covers at most maxGroupCommits callers and
// about maxGroupBytes of records (a single larger Commit still goes alone),
// and at most queueLen Commits wait in line; further callers block. Together
// they bound the committer's memory.
const (
	maxGroupCommits = 1000
	maxGroupBytes   = 4 << 20
	queueLen        = 1024
	recordOverhead  = 32 // bytes counted per record on top of Class, Key and Value
)

// maxGroupWait caps how long the committer holds a group open for the
// callers it expects back (see gather). The wait is half the last fsync's
// duration: a caller that misses the group waits a whole fsync for the next
// one, so holding the group for it costs the others less than that. On a
// disk where fsync costs nothing, nothing waits.
const maxGroupWait = time.Millisecond

// missedWaitBackoff is how many groups gather starts at once after a group
// wait that ran out with none of the expected callers come.
const missedWaitBackoff = 8

// AOF compaction policy, the same knobs as buntdb's auto-shrink: the file is
// rewritten once it is larger than shrinkMinSize and has grown by
// shrinkPercentage since the last rewrite (or since the live data measured at
// Open). Write amplification stays below 2x and the file below about twice
// the live data plus shrinkMinSize.
const (
	shrinkPercentage = 100
	shrinkMinSize    = 32 << 20
)

// loadChunk is how many records Load copies out under buntdb's read lock
// before it releases the lock and hands them to the callback.
const loadChunk = 256

// keySep ends the Class inside a buntdb key: Kind byte, Class, keySep, Key.
// Classes may not contain it, so two classes never share keys, and since
// it is the smallest byte, buntdb's byte order is the (Kind, Class, Key) order.
const keySep = '\x00'

// buntOptions are the knobs of the on-disk adapter; tests shrink them.
type buntOptions struct {
	shrinkPercentage int
	shrinkMinSize    int64
	beforeSync       func(groupSize int) // test hook: called by the committer before each fsync
	groupWait        time.Duration       // test hook: when set, the fixed wait of gather
	waiting          func()              // test hook: called by gather when it starts a wait
	logPruneEvery    time.Duration       // test hook: when set, how often the change log is pruned
}

func defaultBuntOptions() buntOptions {
	return buntOptions{shrinkPercentage: shrinkPercentage, shrinkMinSize: shrinkMinSize}
}

// buntAdapter keeps records in a buntdb append-only file.
//
// buntdb is run with SyncPolicy Never and auto-shrink off: buntdb's Always
// policy drops fsync errors and its background shrink swaps the file without
// syncing it, so the adapter fsyncs and compacts itself. One committer
// goroutine owns every write: it drains the queue, applies a group of Commits
// in one buntdb transaction (behind a journal when a Commit holds several
// records, see writeGroup), fsyncs once, then answers the whole group.
type buntAdapter struct {
	db   *buntdb.DB
	path string // absolute
	opts buntOptions
	lock *os.File // holds the flock on path+".lock" (syncf holds one on the file itself)

	mu     sync.RWMutex // closed, and the queue against sends after close
	closed bool
	queue  chan *commitReq
	done   chan struct{} // closed when the committer has answered everything

	syncMu sync.Mutex // guards the three fields below
	syncf  *os.File   // our own descriptor on the current database file
	// retired are former data files (swapped out by a rewrite) that another
	// name — a hard link — still reaches: their flock is kept, so no second
	// server starts on that stale copy while this one runs.
	retired []*os.File
	mode    os.FileMode
	failed  error // sticky: set by a failed fsync or journal deletion, then every Commit fails

	shrinkBase atomic.Int64 // file size after the last rewrite, or live data at Open
	shrinking  atomic.Bool
	shrinkWG   sync.WaitGroup

	jbuf     []byte        // committer-owned journal buffer
	syncTook time.Duration // committer-owned: the last fsync's duration
	// waitBackoff (committer-owned) counts the groups gather still starts
	// without waiting, after a wait that ran out (missedWaitBackoff).
	waitBackoff int
	expect      int // committer-owned: callers expected in the next group

	groups    atomic.Uint64 // fsyncs done for commit groups
	commits   atomic.Uint64 // Commits answered by the committer
	shrinks   atomic.Uint64 // rewrites of the file
	fileBytes atomic.Int64  // the file's size after the last fsync
	observe   atomic.Pointer[func(took time.Duration, commits int)]

	// The change log (bunt_changelog.go).
	logOn        atomic.Bool
	logRetention atomic.Int64 // nanoseconds
	logSeq       int64        // committer-owned after Open: the last id handed out
	groupLog     int64        // committer-owned: the current group's last id
	logDurable   atomic.Int64 // the last id fsynced: readers stop there
	logPruned    atomic.Int64 // ids up to it were pruned
	logPrunedAt  time.Time    // committer-owned
}

// Stats implements Instrumented.
func (a *buntAdapter) Stats() Stats {
	return Stats{Commits: a.commits.Load(), Groups: a.groups.Load(), Shrinks: a.shrinks.Load(), FileBytes: a.fileBytes.Load()}
}

// ObserveGroups implements Instrumented.
func (a *buntAdapter) ObserveGroups(fn func(took time.Duration, commits int)) { a.observe.Store(&fn) }

// commitReq is one Commit call waiting for the committer.
type commitReq struct {
	records  []Record
	size     int
	logValue []byte // the change log entry, when changes are kept (bunt_changelog.go)
	done     chan error
}

var reqPool = sync.Pool{New: func() any { return &commitReq{done: make(chan error, 1)} }}

func openBunt(path string, opts buntOptions) (*buntAdapter, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := makeDirs(filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	if abs, err = realPath(abs); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	lock, err := lockFile(abs + ".lock")
	if err != nil {
		return nil, err
	}
	a, err := openBuntLocked(abs, opts)
	if err != nil {
		_ = lock.Close()
		return nil, openError(abs, err)
	}
	a.lock = lock
	return a, nil
}

// openError says which file could not be opened, what is wrong with it
// and what the operator can do.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, buntdb.ErrInvalid):
		return fmt.Errorf("%w: %s holds data that is not a record Quarry wrote (damaged on disk or edited). "+
			"Nothing was changed; restore the file from a backup, or move it aside to start with an empty database", ErrDamaged, path)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("store: %s is a directory, not a data file: point databaseURI at a file, such as %s", path, filepath.Join(path, "quarry.db"))
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("store: cannot read and write %s: permission denied; run Quarry as the file's owner or give it read and write access", path)
	}
	return fmt.Errorf("store: open %s: %w", path, err)
}

// realPath resolves symbolic links in abs (the file itself, or its directory
// when the file does not exist yet), so that every name of one database file
// leads to one lock file.
func realPath(abs string) (string, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if _, lerr := os.Lstat(abs); lerr == nil {
		return "", fmt.Errorf("%s is a symbolic link to a missing file", abs)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}

func openBuntLocked(abs string, opts buntOptions) (*buntAdapter, error) {
	_, err := os.Stat(abs)
	created := errors.Is(err, os.ErrNotExist)
	// Create the file ourselves: buntdb would make it world-readable, and it
	// holds the master key.
	f, err := os.OpenFile(abs, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockOpenFile(f, abs); err != nil {
		_ = f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && created {
		if err = f.Sync(); err == nil {
			err = syncDir(filepath.Dir(abs))
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	// Reading the file is most of a large store's heap arriving at once:
	// collect as during the service's load (memtune.RaiseForLoad).
	restoreGC := memtune.RaiseForLoad()
	db, err := buntdb.Open(abs)
	restoreGC()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	err = db.SetConfig(buntdb.Config{SyncPolicy: buntdb.Never, AutoShrinkDisabled: true})
	if err == nil {
		var recovered bool
		if recovered, err = recoverJournal(db); recovered && err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		_ = db.Close()
		_ = f.Close()
		return nil, err
	}
	a := &buntAdapter{
		db:    db,
		path:  abs,
		opts:  opts,
		queue: make(chan *commitReq, queueLen),
		done:  make(chan struct{}),
		syncf: f,
		mode:  fi.Mode().Perm(),
	}
	a.shrinkBase.Store(liveSize(db))
	if err := a.openLog(); err != nil { // bunt_changelog.go
		_ = db.Close()
		_ = f.Close()
		return nil, err
	}
	go a.run()
	return a, nil
}

// Load implements Adapter.
func (a *buntAdapter) Load(fn func(Record) error) error {
	return loadAll(a.db, fn)
}

// Commit implements Adapter: it queues records for the committer and waits
// until their group is written and fsynced.
func (a *buntAdapter) Commit(records []Record) error {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return ErrClosed
	}
	size, err := checkRecords(records)
	if err != nil || len(records) == 0 {
		a.mu.RUnlock()
		return err
	}
	var entry []byte
	if a.logOn.Load() {
		if entry, err = encodeLogEntry(time.Now(), records); err != nil {
			a.mu.RUnlock()
			return err
		}
	}
	return a.queueLocked(records, size+len(entry), entry)
}

// commit queues records (checked already) for the committer and waits
// until their group is written and fsynced.
func (a *buntAdapter) commit(records []Record, size int, logValue []byte) error {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return ErrClosed
	}
	return a.queueLocked(records, size, logValue)
}

// queueLocked hands records to the committer, releases the read lock the
// caller took (one per commit, on every commit's path), and waits.
func (a *buntAdapter) queueLocked(records []Record, size int, logValue []byte) error {
	r := reqPool.Get().(*commitReq)
	r.records, r.size, r.logValue = records, size, logValue
	a.queue <- r
	a.mu.RUnlock()
	err := <-r.done
	r.records, r.logValue = nil, nil
	reqPool.Put(r)
	return err
}

// Close implements Adapter: Commits already queued are written and fsynced,
// a running rewrite finishes, then the file is closed. Later Commits return
// ErrClosed, and so does a second Close.
func (a *buntAdapter) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	a.closed = true
	close(a.queue)
	a.mu.Unlock()
	<-a.done
	a.shrinkWG.Wait()
	err := a.db.Close()
	a.syncMu.Lock()
	err = errors.Join(err, a.syncf.Close(), a.lock.Close())
	for _, f := range a.retired {
		err = errors.Join(err, f.Close())
	}
	a.syncMu.Unlock()
	return err
}

// run is the committer: it takes the first waiting Commit, adds whatever
// else is already queued (up to the group limits), and commits them together.
// While it fsyncs, new Commits pile up in the queue for the next group.
//
// Taking only what is queued splits steady concurrent writers into cohorts
// that alternate: the callers a group answers come back while the next group,
// formed from those who arrived during the fsync, is already being synced, so
// each caller waits about two fsyncs. gather therefore expects back the
// callers just answered, together with those who queued meanwhile, and holds
// the next group open a little while for them (maxGroupWait): then one fsync
// covers everyone.
func (a *buntAdapter) run() {
	defer close(a.done)
	group := make([]*commitReq, 0, 64)
	var next *commitReq // did not fit in the previous group
	for {
		first := next
		next = nil
		if first == nil {
			r, ok := <-a.queue
			if !ok {
				return
			}
			first = r
		}
		group, next = a.gather(append(group[:0], first), a.expect)
		a.commitGroup(group)
		clear(group) // drop references to answered requests
	}
}

// gather adds queued Commits to group up to the group limits. While the
// group holds fewer than expect callers, it waits for more, up to the
// group wait. A wait that runs out with nobody come is not tried again for
// the next missedWaitBackoff groups: the callers had other things to do,
// and starting the fsync at once serves them better (measured: waiting
// every time cost about a tenth of the create throughput). A wait that
// brought some of them but not all is tried again: on a busy CPU the
// answered callers come back late but they do come, and each one that
// joins saves an fsync's CPU (measured: creates from 16 clients went from
// 0.133 to 0.100 fsyncs each). gather returns the group and the Commit that
// did not fit, if any.
func (a *buntAdapter) gather(group []*commitReq, expect int) ([]*commitReq, *commitReq) {
	size := group[0].size
	var timer *time.Timer
	waitedFrom := 0 // the group's size when the wait began
	for len(group) < maxGroupCommits {
		var r *commitReq
		var ok bool
		select {
		case r, ok = <-a.queue:
		default:
			if len(group) >= expect {
				return group, nil
			}
			if timer == nil {
				wait := a.groupWait()
				if wait <= 0 || a.waitBackoff > 0 {
					a.waitBackoff = max(a.waitBackoff-1, 0)
					return group, nil
				}
				timer = time.NewTimer(wait)
				defer timer.Stop()
				waitedFrom = len(group)
				if a.opts.waiting != nil {
					a.opts.waiting()
				}
			}
			select {
			case r, ok = <-a.queue:
			case <-timer.C:
				if len(group) == waitedFrom {
					a.waitBackoff = missedWaitBackoff
				}
				return group, nil
			}
		}
		if !ok {
			return group, nil // closed: commit what is here, run then stops
		}
		if size+r.size > maxGroupBytes {
			return group, r
		}
		group = append(group, r)
		size += r.size
	}
	return group, nil
}

// groupWait is how long gather may hold a group open: half the last fsync,
// at most maxGroupWait.
func (a *buntAdapter) groupWait() time.Duration {
	if a.opts.groupWait > 0 {
		return a.opts.groupWait
	}
	return min(a.syncTook/2, maxGroupWait)
}

// commitGroup writes every request of group, fsyncs once and answers each
// request with the group's outcome. Records are validated before they join
// a group, so a group fails only on an I/O error, and then as a whole.
func (a *buntAdapter) commitGroup(group []*commitReq) {
	start := time.Now()
	err := a.writeGroup(group)
	if err == nil {
		if a.opts.beforeSync != nil {
			a.opts.beforeSync(len(group))
		}
		var size int64
		synced := time.Now()
		size, err = a.syncFile()
		a.syncTook = time.Since(synced)
		a.groups.Add(1)
		if err == nil {
			if a.groupLog > 0 {
				a.logDurable.Store(a.groupLog)
			}
			a.fileBytes.Store(size)
			if observe := a.observe.Load(); observe != nil {
				(*observe)(time.Since(start), len(group))
			}
			a.maybeShrink(size)
			a.pruneLog(time.Now())
		}
	}
	a.commits.Add(uint64(len(group)))
	// Those about to be answered will likely write again, joining whoever
	// queued during the fsync. Counted before answering, so that nobody
	// is counted twice.
	a.expect = min(len(group)+len(a.queue), maxGroupCommits)
	for _, r := range group {
		r.done <- err
	}
}

// writeGroup applies the group in one buntdb transaction. buntdb writes a
// transaction with one write(2), but a kill can still cut a long write
// short, and the reload keeps every complete command before the cut. So
// when a request holds several records, the group goes through the journal:
// first the journal key alone (one command: loaded whole or not at all),
// then the records, then the journal's deletion. Open replays a journal it
// finds, so a cut anywhere leaves each request all there or all gone.
func (a *buntAdapter) writeGroup(group []*commitReq) error {
	if err := a.syncErr(); err != nil {
		return err
	}
	a.groupLog = a.addLogEntries(group) // bunt_changelog.go
	a.jbuf = appendJournal(a.jbuf[:0], group)
	if len(a.jbuf) > 0 {
		err := a.db.Update(func(tx *buntdb.Tx) error {
			_, _, err := tx.Set(journalKey, string(a.jbuf), nil)
			return err
		})
		if err != nil {
			return err // buntdb truncated whatever part was written
		}
	}
	err := a.db.Update(func(tx *buntdb.Tx) error {
		for _, r := range group {
			if err := applyRecords(tx, r.records); err != nil {
				return err
			}
		}
		return nil
	})
	if len(a.jbuf) > 0 {
		// Delete the journal even when the records failed, or a restart
		// would replay a group its callers saw fail.
		derr := a.db.Update(func(tx *buntdb.Tx) error {
			_, err := tx.Delete(journalKey)
			return err
		})
		if derr != nil {
			a.setFailed(fmt.Errorf("%w: clear journal: %w", ErrUnwritable, derr))
			return errors.Join(err, derr)
		}
		if cap(a.jbuf) > maxGroupBytes {
			a.jbuf = nil // one oversize Commit must not pin its buffer
		}
	}
	return err
}

func (a *buntAdapter) setFailed(err error) {
	a.syncMu.Lock()
	defer a.syncMu.Unlock()
	if a.failed == nil {
		a.failed = err
	}
}

// Writable implements Health: the sticky failure, or the data file
// gone from its directory (deleted or moved: what is written goes to a
// file no restart would read, so the next commit fails).
func (a *buntAdapter) Writable() error {
	if err := a.syncErr(); err != nil {
		return err
	}
	if _, err := os.Stat(a.path); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnwritable, a.path, err)
	}
	return nil
}

func (a *buntAdapter) syncErr() error {
	a.syncMu.Lock()
	defer a.syncMu.Unlock()
	return a.failed
}

// syncFile makes everything written to the database file so far durable and
// returns the file's size. It holds buntdb's read lock, so no write and no
// Shrink file swap happens meanwhile. If a Shrink swapped in a rewritten file
// since the last call, that file is adopted: fsynced, its directory entry
// fsynced, its permissions restored. A failed fsync is sticky: the page cache
// may have dropped the data, so nothing written afterwards can be trusted.
func (a *buntAdapter) syncFile() (size int64, err error) {
	err = a.db.View(func(*buntdb.Tx) error {
		a.syncMu.Lock()
		defer a.syncMu.Unlock()
		if a.failed != nil {
			return a.failed
		}
		var err error
		size, err = a.syncLocked()
		if err != nil {
			a.failed = fmt.Errorf("%w: fsync %s: %w", ErrUnwritable, a.path, err)
		}
		return a.failed
	})
	return size, err
}

func (a *buntAdapter) syncLocked() (int64, error) {
	cur, err := os.Stat(a.path)
	if err != nil {
		return 0, err
	}
	old, err := a.syncf.Stat()
	if err != nil {
		return 0, err
	}
	if os.SameFile(cur, old) {
		return cur.Size(), a.syncf.Sync()
	}
	f, err := os.OpenFile(a.path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	// The rewritten file is a new inode: lock it before letting go of the
	// old one, so a hard link made to it later is refused too.
	err = lockOpenFile(f, a.path)
	if err == nil {
		err = f.Chmod(a.mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = syncDir(filepath.Dir(a.path))
	}
	if err != nil {
		_ = f.Close()
		return 0, err
	}
	a.retire(a.syncf)
	a.syncf = f
	return cur.Size(), nil
}

// retire lets go of a swapped-out data file unless a hard link still
// names it (then its lock is kept), and of earlier ones whose last other
// name is gone. Called with syncMu held.
func (a *buntAdapter) retire(old *os.File) {
	keep := a.retired[:0]
	for _, f := range append(a.retired, old) {
		if fi, err := f.Stat(); err == nil && linkCount(fi) > 0 {
			keep = append(keep, f)
			continue
		}
		_ = f.Close()
	}
	a.retired = keep
}

// maybeShrink starts a background rewrite of the file when it has outgrown
// the compaction policy. Commits go on meanwhile.
func (a *buntAdapter) maybeShrink(size int64) {
	base := a.shrinkBase.Load()
	if size < a.opts.shrinkMinSize || size <= base+base*int64(a.opts.shrinkPercentage)/100 {
		return
	}
	if !a.shrinking.CompareAndSwap(false, true) {
		return
	}
	a.shrinkWG.Add(1)
	go func() {
		defer a.shrinkWG.Done()
		defer a.shrinking.Store(false)
		if err := a.db.Shrink(); err != nil {
			// The old file is intact. Wait for another round of growth
			// rather than retrying at every commit.
			a.shrinkBase.Store(size)
			return
		}
		// Make the rewritten file and its name durable now rather than at
		// the next commit. An error here is sticky and fails later Commits.
		if n, err := a.syncFile(); err == nil {
			a.shrinkBase.Store(n)
			a.fileBytes.Store(n)
			a.shrinks.Add(1)
		}
	}()
}

// memoryAdapter is buntdb without a file: nothing to fsync, so Commit
// applies directly under buntdb's own write lock.
type memoryAdapter struct {
	db     *buntdb.DB
	mu     sync.RWMutex
	closed bool
}

func openMemory() (*memoryAdapter, error) {
	db, err := buntdb.Open(MemoryURI)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", MemoryURI, err)
	}
	return &memoryAdapter{db: db}, nil
}

// Load implements Adapter.
func (m *memoryAdapter) Load(fn func(Record) error) error {
	return loadAll(m.db, fn)
}

// Commit implements Adapter; nothing survives the process.
func (m *memoryAdapter) Commit(records []Record) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ErrClosed
	}
	if _, err := checkRecords(records); err != nil || len(records) == 0 {
		return err
	}
	return m.db.Update(func(tx *buntdb.Tx) error { return applyRecords(tx, records) })
}

// Close implements Adapter. A second Close returns ErrClosed.
func (m *memoryAdapter) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.closed = true
	return m.db.Close()
}

// checkRecords validates one Commit and returns its size for the group limit.
func checkRecords(records []Record) (int, error) { return checkRecordsOf(records, false) }

// checkRecordsOf is checkRecords, accepting the store's own kinds
// (kindLog, kindCursor) when internal: a journal holds them too.
func checkRecordsOf(records []Record, internal bool) (int, error) {
	size := 0
	for i, r := range records {
		switch r.Kind {
		case KindObject, KindSchema, KindJoin, KindMeta:
		case kindLog, kindCursor:
			if !internal {
				return 0, fmt.Errorf("%w: record %d has unknown kind %q", ErrInvalidRecord, i, byte(r.Kind))
			}
		default:
			return 0, fmt.Errorf("%w: record %d has unknown kind %q", ErrInvalidRecord, i, byte(r.Kind))
		}
		if strings.IndexByte(r.Class, keySep) >= 0 {
			return 0, fmt.Errorf("%w: record %d has a NUL byte in its class", ErrInvalidRecord, i)
		}
		size += len(r.Class) + len(r.Key) + len(r.Value) + recordOverhead
	}
	return size, nil
}

// applyRecords sets or deletes (nil Value) each record, in order.
func applyRecords(tx *buntdb.Tx, records []Record) error {
	for _, r := range records {
		k := recordKey(r)
		if r.Value == nil {
			if _, err := tx.Delete(k); err != nil && !errors.Is(err, buntdb.ErrNotFound) {
				return err
			}
			continue
		}
		if _, _, err := tx.Set(k, sharedString(r.Value), nil); err != nil {
			return err
		}
	}
	return nil
}

// sharedString is b as a string without a copy: buntdb keeps a committed
// Value as is, and the service keeps the same bytes as the object's reply
// encoding, so an object is held once. Sound because a committed Value is
// never modified again (Adapter.Commit).
func sharedString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// sharedBytes is buntdb's value string as a Record's Value without a copy
// (never nil, even when empty). Nothing may write to it: Adapter.Load
// hands out read-only Values.
func sharedBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// recordKey is the buntdb key of r: Kind, Class, keySep, Key.
func recordKey(r Record) string {
	var b strings.Builder
	b.Grow(2 + len(r.Class) + len(r.Key))
	b.WriteByte(byte(r.Kind))
	b.WriteString(r.Class)
	b.WriteByte(keySep)
	b.WriteString(r.Key)
	return b.String()
}

// parseKey splits a buntdb key made by recordKey.
func parseKey(k string) (Record, bool) {
	if len(k) < 2 {
		return Record{}, false
	}
	class, key, ok := strings.Cut(k[1:], string(keySep))
	return Record{Kind: Kind(k[0]), Class: class, Key: key}, ok
}

// loadAll calls fn for every record in key order. Records are copied out
// loadChunk at a time, and fn runs without buntdb's lock held, so fn may
// even Commit; Load is then not a snapshot, which start-up never needs.
const loadFrom = "\x04"

func loadAll(db *buntdb.DB, fn func(Record) error) error {
	batch := make([]Record, 0, loadChunk)
	// Keys below loadFrom are the store's own (journal, change log,
	// cursors): never records.
	last, started := loadFrom, false
	for {
		batch = batch[:0]
		more := false
		var bad error
		err := db.View(func(tx *buntdb.Tx) error {
			return tx.AscendGreaterOrEqual("", last, func(k, v string) bool {
				if started && k == last || k == journalKey {
					return true
				}
				if len(batch) == loadChunk {
					more = true
					return false
				}
				r, ok := parseKey(k)
				if !ok {
					bad = fmt.Errorf("store: load: malformed key %q", k)
					return false
				}
				r.Value = sharedBytes(v)
				batch = append(batch, r)
				last, started = k, true
				return true
			})
		})
		if errors.Is(err, buntdb.ErrDatabaseClosed) {
			return ErrClosed
		}
		if err != nil {
			return fmt.Errorf("store: load: %w", err)
		}
		if bad != nil {
			return bad
		}
		for _, r := range batch {
			if err := fn(r); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
	}
}

// liveSize estimates the size of a freshly rewritten file: the baseline of
// the compaction policy when nothing was rewritten yet.
func liveSize(db *buntdb.DB) int64 {
	var n int64
	_ = db.View(func(tx *buntdb.Tx) error {
		return tx.Ascend("", func(k, v string) bool {
			n += int64(len(k)+len(v)) + recordOverhead
			return true
		})
	})
	return n
}

// makeDirs creates dir and its missing parents, then fsyncs the parent of
// each new directory so the chain survives a power loss.
func makeDirs(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		_, err := os.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, d := range missing {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// syncDir fsyncs a directory, making the names in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

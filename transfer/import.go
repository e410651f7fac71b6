package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Import limits. One store commit holds at most DefaultBatch documents or
// about maxBatchBytes of source documents, whichever comes first: big enough that
// fsyncs are a small part of the time, small enough that an interrupted
// import loses little.
const (
	DefaultBatch  = 2000
	maxBatchBytes = 8 << 20
)

// ErrNotEmpty is returned by Import when the target store already holds
// records and the import is not a resumed one.
var ErrNotEmpty = errors.New("transfer: the target database is not empty")

// ErrCheckpoint is returned when a checkpoint exists but the import was
// not asked to resume, or belongs to another source.
var ErrCheckpoint = errors.New("transfer: checkpoint mismatch")

// ImportOptions configure Import.
type ImportOptions struct {
	From       string // a directory of collection files, or one file
	Checkpoint string // the checkpoint file; "" keeps none
	Resume     bool   // continue after the collections and offsets the checkpoint records
	BatchSize  int    // documents per commit; 0 means DefaultBatch
	// Progress, when set, is called after every committed batch.
	Progress func(Progress)

	// Files, when FilesFrom or FilesFromURL is set, receives the bytes of
	// every file the imported objects name, under the same names.
	Files files.Adapter
	// FilesFrom is the directory of Parse Server's filesystem files
	// adapter (files/<filesSubDirectory> beside where it ran), or a
	// MongoDB export holding GridFS's fs.files and fs.chunks (Parse
	// Server's default files adapter on MongoDB).
	FilesFrom string
	// FilesFromURL is the old server's public files address,
	// <serverURL>/files/<appId>.
	FilesFromURL string
}

// Progress is the state of a running import.
type Progress struct {
	Collection string
	Docs       int64 // documents read in this collection
	Bytes      int64 // how far through the source: bytes of files, rows of tables
	TotalBytes int64 // the source's size in the same unit
	Imported   int64 // objects written, all collections
	Elapsed    time.Duration
	Done       bool // the collection is finished
}

// Summary tells what an import did.
type Summary struct {
	Objects   map[string]int64 `json:"objects"`   // objects written, by class
	Relations int64            `json:"relations"` // relation memberships written
	Schemas   int              `json:"schemas"`   // class schemas written
	Sessions  int64            `json:"sessions"`  // sessions made from legacy _User._session_token
	Files     int64            `json:"files"`     // files whose bytes were copied
	Skipped   map[string]int64 `json:"skipped"`   // "Class: reason" -> documents not imported
	Dropped   map[string]int64 `json:"dropped"`   // "Class.field: reason" -> values not imported
	// Rejected counts documents refused for their objectId (not
	// Parse-shaped, or repeating an earlier one); RejectedDocs describes
	// the first maxRejectedShown. They are also counted in Skipped.
	Rejected     int64         `json:"rejected"`
	RejectedDocs []string      `json:"rejectedDocs,omitempty"`
	Elapsed      time.Duration `json:"-"`
}

// maxRejectedShown bounds Summary.RejectedDocs: a dump with a million bad
// ids reports the first ones and the count.
const maxRejectedShown = 20

func newSummary() *Summary {
	return &Summary{Objects: map[string]int64{}, Skipped: map[string]int64{}, Dropped: map[string]int64{}}
}

// Total is the number of objects written.
func (s *Summary) Total() int64 {
	var n int64
	for _, c := range s.Objects {
		n += c
	}
	return n
}

// checkpoint is what an interrupted import leaves behind.
type checkpoint struct {
	Source   string                   `json:"source"`
	Offsets  map[string]int64         `json:"offsets"`  // collection -> documents committed
	Complete map[string]bool          `json:"complete"` // collections finished
	Schemas  map[string]*schema.Class `json:"schemas"`
	Summary  *Summary                 `json:"summary"`
}

// saveCheckpoint replaces the checkpoint file at path (none when "") with
// b. It needs no fsync: a checkpoint older than the data only makes a
// resumed import write a batch again.
func saveCheckpoint(path string, b []byte) error {
	if path == "" {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// importer is one run of Import.
type importer struct {
	ctx   context.Context
	st    store.Adapter
	opts  ImportOptions
	cp    *checkpoint
	start time.Time
	total int64 // source bytes
	done  int64 // source bytes of finished collections

	// The commit of the previous batch runs while the next is converted.
	inflight chan error // nil when no commit runs
	saved    []byte     // the checkpoint as of the last durable commit

	seen idSet // the objectIds of the collection being imported
}

// Import reads every collection at opts.From into st, which no server may
// have open. Documents keep their objectIds, timestamps, ACLs, pointers,
// relations, password hashes and sessions; _SCHEMA gives the class
// schemas, CLPs and indexes, and fields no schema declares get the type of
// their values. After a cancelled or failed run the checkpoint records how
// far it came, and a run with Resume continues from there; records are
// keyed by objectId, so a batch written twice is written the same.
func Import(ctx context.Context, st store.Adapter, opts ImportOptions) (*Summary, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatch
	}
	fsrc, err := fileSourceOf(opts)
	if err != nil {
		return nil, err
	}
	if p, ok := fsrc.(preparedSource); ok {
		defer p.close()
	}
	var cols []Collection
	var src string
	if isPostgresURI(opts.From) {
		var ps *postgresSource
		if ps, cols, err = listPostgres(ctx, opts.From); err != nil {
			return nil, err
		}
		defer ps.close()
		src = redactURI(opts.From)
	} else {
		if cols, err = ListCollections(opts.From); err != nil {
			return nil, err
		}
		if src, err = filepath.Abs(opts.From); err != nil {
			return nil, err
		}
	}
	im := &importer{ctx: ctx, st: st, opts: opts, start: time.Now()}
	if im.cp, err = loadCheckpoint(opts, src); err != nil {
		return nil, err
	}
	if im.saved, err = json.Marshal(im.cp); err != nil {
		return nil, err
	}
	if !opts.Resume {
		if empty, err := isEmpty(st); err != nil {
			return nil, err
		} else if !empty {
			return nil, fmt.Errorf("%w: import into a new data file, or pass --resume to continue an interrupted import", ErrNotEmpty)
		}
	}
	for _, c := range cols {
		im.total += c.Size
	}
	for _, c := range cols {
		err := im.collection(c)
		if werr := im.wait(); err == nil {
			err = werr
		}
		if err != nil {
			return im.savedSummary(), err
		}
		im.done += c.Size
	}
	if fsrc != nil {
		if err := im.copyFiles(fsrc); err != nil {
			return im.savedSummary(), err
		}
	}
	im.cp.Summary.Schemas = len(im.cp.Schemas)
	im.cp.Summary.Elapsed = time.Since(im.start)
	if opts.Checkpoint != "" {
		if err := os.Remove(opts.Checkpoint); err != nil && !errors.Is(err, os.ErrNotExist) {
			return im.cp.Summary, err
		}
	}
	return im.cp.Summary, nil
}

func loadCheckpoint(opts ImportOptions, src string) (*checkpoint, error) {
	fresh := &checkpoint{Source: src, Offsets: map[string]int64{}, Complete: map[string]bool{},
		Schemas: map[string]*schema.Class{}, Summary: newSummary()}
	if opts.Checkpoint == "" {
		return fresh, nil
	}
	b, err := os.ReadFile(opts.Checkpoint)
	if errors.Is(err, os.ErrNotExist) {
		return fresh, nil
	}
	if err != nil {
		return nil, err
	}
	if !opts.Resume {
		return nil, fmt.Errorf("%w: %s records an interrupted import; pass --resume to continue it, or delete it to start over", ErrCheckpoint, opts.Checkpoint)
	}
	var cp checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("%w: %s is not a checkpoint: %v", ErrCheckpoint, opts.Checkpoint, err)
	}
	if cp.Source != src {
		return nil, fmt.Errorf("%w: %s belongs to an import from %s, not %s", ErrCheckpoint, opts.Checkpoint, cp.Source, src)
	}
	if cp.Offsets == nil || cp.Complete == nil || cp.Schemas == nil || cp.Summary == nil {
		return nil, fmt.Errorf("%w: %s is incomplete", ErrCheckpoint, opts.Checkpoint)
	}
	return &cp, nil
}

var errStop = errors.New("stop")

// isEmpty reports whether st holds no data: server settings (meta
// records, such as a master key generated at a first start) do not count.
func isEmpty(st store.Adapter) (bool, error) {
	empty := true
	err := st.Load(func(r store.Record) error {
		if r.Kind == store.KindMeta {
			return nil
		}
		empty = false
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return false, err
	}
	return empty, nil
}

// batch gathers the records of one commit.
type batch struct {
	records []store.Record
	objects map[string]int64 // by class
	classes map[string]bool  // whose schema changed
}

func (b *batch) reset() {
	b.records = b.records[:0]
	b.objects, b.classes = map[string]int64{}, map[string]bool{}
}

// collection imports one collection: documents are read in order, a
// batch at a time converted by one worker per processor, then merged and
// committed in order.
func (im *importer) collection(c Collection) error {
	if im.cp.Complete[c.Name] {
		return nil // its schemas, if it is _SCHEMA, are in the checkpoint
	}
	r, err := openDocs(c)
	if err != nil {
		return err
	}
	defer r.Close()
	skip := im.cp.Offsets[c.Name]
	if err := im.seen.reset(im.st, c, skip > 0); err != nil {
		return err
	}
	var n int64
	var b batch
	b.reset()
	raws := make([][]byte, 0, im.opts.BatchSize)
	for eof := false; !eof; {
		raws = raws[:0]
		size := 0
		for len(raws) < im.opts.BatchSize && size < maxBatchBytes {
			raw, err := r.Next(n < skip)
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return fmt.Errorf("%s: document %d: %w", c.Name, n+1, err)
			}
			if n++; n <= skip {
				continue
			}
			raws = append(raws, raw)
			size += len(raw)
		}
		if err := im.addAll(&b, c, r, raws, n-int64(len(raws))+1); err != nil {
			return err
		}
		if err := im.commit(&b, c, n, r.Offset(), eof); err != nil {
			return err
		}
		if err := im.ctx.Err(); err != nil && !eof {
			return err
		}
	}
	return nil
}

func (b *batch) put(r store.Record) {
	b.records = append(b.records, r)
}

func (b *batch) putObject(class, id string, value []byte) {
	b.put(store.Record{Kind: store.KindObject, Class: class, Key: id, Value: value})
	b.objects[class]++
}

// class returns the schema a class is being imported under, making one
// (default and built-in fields) when _SCHEMA did not declare it.
func (im *importer) class(name string) *schema.Class {
	if c, ok := im.cp.Schemas[name]; ok {
		return c
	}
	c := schema.NewClass(name)
	for k, f := range schema.BuiltinFields(name) {
		c.Fields[k] = f
	}
	if schema.MasterOnlyClass(name) {
		c.CLP = schema.MasterOnlyCLP() // as the server makes it
	}
	im.cp.Schemas[name] = c
	return c
}

// infer gives fields no schema declares the type of their value; it
// reports whether cls changed.
func (im *importer) infer(cls *schema.Class, obj schema.Object) bool {
	changed := false
	for k, v := range obj {
		if _, known := cls.Fields[k]; known || strings.HasPrefix(k, "_") || k == "authData" && cls.Name == "_User" {
			continue
		}
		f, ok, err := schema.TypeOf(v)
		if !ok || err != nil {
			continue
		}
		cls.Fields[k] = f
		changed = true
	}
	return changed
}

// commit hands b, with the schemas it changed, to a goroutine that
// commits it durably, then saves the checkpoint and reports progress. It
// first waits for the previous batch's commit: at most one runs, and
// batches reach the store in order. b is left empty for the next batch.
func (im *importer) commit(b *batch, c Collection, docs, offset int64, last bool) error {
	for name := range b.classes {
		v, err := json.Marshal(im.cp.Schemas[name])
		if err != nil {
			return err
		}
		b.put(store.Record{Kind: store.KindSchema, Class: name, Value: v})
	}
	for class, n := range b.objects {
		im.cp.Summary.Objects[class] += n
	}
	im.cp.Offsets[c.Name] = docs
	if last {
		im.cp.Complete[c.Name] = true
	}
	im.cp.Summary.Schemas = len(im.cp.Schemas)
	state, err := json.Marshal(im.cp)
	if err != nil {
		return err
	}
	progress := Progress{Collection: c.Name, Docs: docs, Bytes: im.done + min(offset, c.Size), TotalBytes: im.total,
		Imported: im.cp.Summary.Total(), Done: last}
	if err := im.wait(); err != nil {
		return err
	}
	records := b.records
	b.records = nil // owned by the committing goroutine now
	b.reset()
	done := make(chan error, 1)
	im.inflight = done
	go func() { done <- im.flush(records, state, progress) }()
	return nil
}

// flush commits one batch, then records it in the checkpoint.
func (im *importer) flush(records []store.Record, state []byte, p Progress) error {
	if len(records) > 0 {
		if err := im.st.Commit(records); err != nil {
			return err
		}
	}
	if err := saveCheckpoint(im.opts.Checkpoint, state); err != nil {
		return err
	}
	im.saved = state
	if im.opts.Progress != nil {
		p.Elapsed = time.Since(im.start)
		im.opts.Progress(p)
	}
	return nil
}

// wait waits for the commit in flight, if any, and returns its error.
func (im *importer) wait() error {
	if im.inflight == nil {
		return nil
	}
	err := <-im.inflight
	im.inflight = nil
	return err
}

// savedSummary is the summary as of the last durable commit (after a
// failure, later batches were counted but not written).
func (im *importer) savedSummary() *Summary {
	var cp checkpoint
	if im.saved == nil || json.Unmarshal(im.saved, &cp) != nil || cp.Summary == nil {
		cp.Summary = newSummary()
	}
	cp.Summary.Elapsed = time.Since(im.start)
	return cp.Summary
}

// sessionID derives a legacy session's objectId from its token, so that a
// resumed import makes the same session again rather than a second one.
func sessionID(token string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	sum := sha256.Sum256([]byte(token))
	out := make([]byte, 10)
	for i := range out {
		out[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(out)
}

// Package logring keeps the most recent log entries in memory, in the shape
// Parse Dashboard's Logs page reads from GET /scriptlog, by teeing them off
// a slog.Handler. It holds a bounded number of entries, writes nothing to
// disk, and knows nothing of HTTP.
package logring

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// DefaultSize is the number of entries a server keeps.
const DefaultSize = 1000

// Entry is one log record. Attrs are kept as the record's own (with the
// handler's group prefix) and flattened only when the entry is read, so
// that keeping a line costs little on the request path.
type Entry struct {
	Time    time.Time
	Level   slog.Level
	Message string
	Attrs   map[string]any // for entries added directly

	// record is kept by value (tee set) so keeping a line costs no
	// allocation of its own.
	record slog.Record
	// line, when set (tee set), holds the attributes instead of record.
	line Line
	tee  *teeHandler
}

// Line is a log entry kept as its producer's own fields and turned into
// attributes only when the ring is read: a line written on every request
// then costs neither a slog.Record nor copies of its attributes. Attrs
// yields them in order; a Line must not change once kept.
type Line interface {
	Attrs(yield func(slog.Attr))
}

// LineKeeper is implemented by Tee's handlers. KeepLine keeps line in the
// ring when level is at or above the ring's minimum, and returns the
// handler the tee passes records on to when that handler is enabled at
// level (the caller then hands it the line as a record), else nil.
type LineKeeper interface {
	KeepLine(ctx context.Context, t time.Time, level slog.Level, msg string, line Line) slog.Handler
}

// attrs flattens the entry's attributes.
func (e *Entry) attrs() map[string]any {
	out := map[string]any{}
	if e.tee == nil {
		for k, v := range e.Attrs {
			out[k] = v
		}
		return out
	}
	for _, a := range e.tee.attrs {
		addAttr(out, "", a)
	}
	if e.line != nil {
		e.line.Attrs(func(a slog.Attr) { addAttr(out, e.tee.prefix, a) })
		return out
	}
	e.record.Attrs(func(a slog.Attr) bool {
		addAttr(out, e.tee.prefix, a)
		return true
	})
	return out
}

// Ring is a bounded buffer of the latest entries; safe for concurrent use.
type Ring struct {
	mu      sync.Mutex
	entries []Entry
	next    int // where the next entry goes once the ring is full
}

// New makes a ring holding at most size entries (DefaultSize when size <= 0).
func New(size int) *Ring {
	if size <= 0 {
		size = DefaultSize
	}
	return &Ring{entries: make([]Entry, 0, size)}
}

// Add keeps e, forgetting the oldest entry when the ring is full.
func (r *Ring) Add(e Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.entries) < cap(r.entries) {
		r.entries = append(r.entries, e)
		return
	}
	r.entries[r.next] = e
	r.next = (r.next + 1) % len(r.entries)
}

// Query selects entries as /scriptlog's parameters do.
type Query struct {
	// MinLevel keeps entries at least this severe.
	MinLevel slog.Level
	// N is the most entries returned.
	N int
	// From and Until bound the entries' times; zero means unbounded.
	From, Until time.Time
	// Ascending returns the oldest first; by default the newest come first.
	Ascending bool
}

// Find returns the entries q selects, each in Parse's log shape:
// {"timestamp", "level", "message", and the record's attributes}.
func (r *Ring) Find(q Query) []map[string]any {
	r.mu.Lock()
	ordered := make([]Entry, 0, len(r.entries))
	ordered = append(ordered, r.entries[r.next:]...)
	ordered = append(ordered, r.entries[:r.next]...)
	r.mu.Unlock()
	out := []map[string]any{}
	for i := range ordered {
		e := ordered[len(ordered)-1-i]
		if q.Ascending {
			e = ordered[i]
		}
		if e.Level < q.MinLevel || !q.From.IsZero() && e.Time.Before(q.From) || !q.Until.IsZero() && e.Time.After(q.Until) {
			continue
		}
		m := e.attrs()
		m["timestamp"] = e.Time.UTC().Format("2006-01-02T15:04:05.000Z")
		m["level"] = LevelName(e.Level)
		m["message"] = e.Message
		out = append(out, m)
		if q.N > 0 && len(out) == q.N {
			break
		}
	}
	return out
}

// LevelName is a level as Parse's logs name it.
func LevelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warn"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "verbose"
}

// Tee returns a handler that passes records to h and keeps those at
// minLevel or above in r, whatever h's own level (so the Dashboard's logs
// work even for a silent server).
func Tee(h slog.Handler, r *Ring, minLevel slog.Level) slog.Handler {
	return &teeHandler{next: h, ring: r, min: minLevel}
}

type teeHandler struct {
	next   slog.Handler
	ring   *Ring
	min    slog.Level
	attrs  []slog.Attr
	prefix string // group names, dotted
}

func (t *teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= t.min || t.next.Enabled(ctx, l)
}

func (t *teeHandler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= t.min {
		t.ring.Add(Entry{Time: rec.Time, Level: rec.Level, Message: rec.Message, record: rec.Clone(), tee: t})
	}
	if t.next.Enabled(ctx, rec.Level) {
		return t.next.Handle(ctx, rec)
	}
	return nil
}

func (t *teeHandler) KeepLine(ctx context.Context, tm time.Time, level slog.Level, msg string, line Line) slog.Handler {
	if level >= t.min {
		t.ring.Add(Entry{Time: tm, Level: level, Message: msg, line: line, tee: t})
	}
	if t.next.Enabled(ctx, level) {
		return t.next
	}
	return nil
}

func addAttr(into map[string]any, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			addAttr(into, prefix+a.Key+".", g)
		}
		return
	}
	into[prefix+a.Key] = v.Any()
}

func (t *teeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *t
	c.next = t.next.WithAttrs(attrs)
	c.attrs = append([]slog.Attr(nil), t.attrs...)
	for _, a := range attrs {
		c.attrs = append(c.attrs, slog.Attr{Key: t.prefix + a.Key, Value: a.Value})
	}
	return &c
}

func (t *teeHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return t
	}
	c := *t
	c.next = t.next.WithGroup(name)
	c.prefix = t.prefix + name + "."
	return &c
}

// ParseLevel reads /scriptlog's level parameter: "error" keeps errors,
// anything else (Parse's default "info") keeps info and above.
func ParseLevel(s string) slog.Level {
	if strings.EqualFold(s, "error") {
		return slog.LevelError
	}
	return slog.LevelInfo
}

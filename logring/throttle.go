package logring

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Throttled logs a condition that can repeat thousands of times a second
// (every write refused on a full disk) without flooding the log: the first
// occurrence is logged at once, the ones after it are counted, and each
// interval's count is logged as one line at the interval's end. It is safe
// for concurrent use.
type Throttled struct {
	log   *slog.Logger
	level slog.Level
	msg   string
	every time.Duration

	mu         sync.Mutex
	last       time.Time // when a line was last written
	suppressed int       // occurrences since then, not yet reported
	args       []any     // the latest suppressed occurrence's attributes
	timer      *time.Timer
}

// NewThrottled logs msg at level at most once per every, plus one count
// line per interval in which it happened again.
func NewThrottled(log *slog.Logger, level slog.Level, msg string, every time.Duration) *Throttled {
	return &Throttled{log: log, level: level, msg: msg, every: every}
}

// Log reports one occurrence with its attributes (slog key-value pairs).
func (t *Throttled) Log(args ...any) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer == nil && (t.last.IsZero() || now.Sub(t.last) >= t.every) {
		t.last = now
		t.log.Log(context.Background(), t.level, t.msg, args...)
		return
	}
	t.suppressed++
	t.args = args
	if t.timer == nil {
		t.timer = time.AfterFunc(t.every-now.Sub(t.last), t.flush)
	}
}

// flush writes the count of the interval that just ended.
func (t *Throttled) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timer = nil
	if t.suppressed == 0 {
		return
	}
	args := append([]any{"repeated", t.suppressed, "interval", t.every.String()}, t.args...)
	t.log.Log(context.Background(), t.level, t.msg, args...)
	t.suppressed, t.args, t.last = 0, nil, time.Now()
}

// Stop drops a pending count line (at shutdown).
func (t *Throttled) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}

package live

import (
	"context"
	"log/slog"
	"strings"
)

// Logger narrows base to the LiveQuery logLevel: VERBOSE logs everything
// (debug), INFO (the default) informational messages and errors, ERROR
// only errors, NONE nothing.
func Logger(base *slog.Logger, level string) *slog.Logger {
	var min slog.Level
	switch strings.ToUpper(level) {
	case "VERBOSE":
		min = slog.LevelDebug
	case "ERROR":
		min = slog.LevelError
	case "NONE":
		return slog.New(slog.DiscardHandler)
	default:
		min = slog.LevelInfo
	}
	if base == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(levelHandler{min: min, h: base.Handler()})
}

// levelHandler drops records below min, whatever the wrapped handler's
// own level.
type levelHandler struct {
	min slog.Level
	h   slog.Handler
}

func (l levelHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.h.Enabled(ctx, lv)
}
func (l levelHandler) Handle(ctx context.Context, r slog.Record) error { return l.h.Handle(ctx, r) }
func (l levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return levelHandler{min: l.min, h: l.h.WithAttrs(as)}
}
func (l levelHandler) WithGroup(name string) slog.Handler {
	return levelHandler{min: l.min, h: l.h.WithGroup(name)}
}

package logring

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"
)

func TestRingKeepsTheLatest(t *testing.T) {
	r := New(3)
	t0 := time.Unix(1_700_000_000, 0)
	for i, l := range []slog.Level{slog.LevelInfo, slog.LevelError, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		r.Add(Entry{Time: t0.Add(time.Duration(i) * time.Second), Level: l, Message: string(rune('a' + i))})
	}
	messages := func(q Query) string {
		var b []byte
		for _, e := range r.Find(q) {
			b = append(b, e["message"].(string)...)
		}
		return string(b)
	}
	for _, c := range []struct {
		name string
		q    Query
		want string
	}{
		{"newest first", Query{}, "edc"},
		{"oldest first", Query{Ascending: true}, "cde"},
		{"n", Query{N: 2}, "ed"},
		{"errors", Query{MinLevel: slog.LevelError}, "e"},
		{"warnings and up", Query{MinLevel: slog.LevelWarn}, "ed"},
		{"until", Query{Until: t0.Add(3 * time.Second)}, "dc"},
		{"from", Query{From: t0.Add(4 * time.Second)}, "e"},
	} {
		if got := messages(c.q); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	e := r.Find(Query{N: 1})[0]
	if e["level"] != "error" || e["timestamp"] != "2023-11-14T22:13:24.000Z" {
		t.Errorf("entry shape: %v", e)
	}
}

func TestTeeKeepsAttributesAndPassesOn(t *testing.T) {
	var out bytes.Buffer
	r := New(10)
	log := slog.New(Tee(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}), r, slog.LevelInfo))
	log.With("component", "live").WithGroup("req").Info("hello", "status", 200)
	log.Debug("not kept")
	got := r.Find(Query{})
	if len(got) != 1 || got[0]["component"] != "live" || got[0]["req.status"] != int64(200) || got[0]["message"] != "hello" {
		t.Fatalf("ring holds %v", got)
	}
	if out.Len() != 0 {
		t.Errorf("an info line reached a warn-level handler: %s", out.String())
	}
	log.Warn("passed on")
	if !bytes.Contains(out.Bytes(), []byte("passed on")) {
		t.Errorf("the warning did not reach the handler: %q", out.String())
	}
}

// testLine is a Line of two attributes.
type testLine struct{ path string }

func (l *testLine) Attrs(yield func(slog.Attr)) {
	yield(slog.String("path", l.path))
	yield(slog.Int("status", 200))
}

// TestKeepLine: a line is kept and read as a record with the same
// attributes would be (the logger's attributes and group included), and
// the handler the tee passes on to is returned only when it wants the
// line.
func TestKeepLine(t *testing.T) {
	for _, c := range []struct {
		name     string
		level    slog.Level
		next     slog.Level // the level of the handler passed on to
		kept     bool
		passedOn bool
	}{
		{"kept, not passed on", slog.LevelInfo, slog.LevelError, true, false},
		{"kept and passed on", slog.LevelInfo, slog.LevelInfo, true, true},
		{"below the ring, passed on", slog.LevelDebug, slog.LevelDebug, false, true},
		{"neither", slog.LevelDebug, slog.LevelInfo, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := New(10)
			next := slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: c.next})
			h := slog.New(Tee(next, r, slog.LevelInfo)).With("component", "rest").WithGroup("req").Handler()
			keeper, ok := h.(LineKeeper)
			if !ok {
				t.Fatal("a tee's handler keeps no lines")
			}
			t0 := time.Unix(1_700_000_000, 0)
			passedOn := keeper.KeepLine(context.Background(), t0, c.level, "request", &testLine{path: "/a"})
			if (passedOn != nil) != c.passedOn {
				t.Errorf("passed on: %v, want %v", passedOn != nil, c.passedOn)
			}
			got := r.Find(Query{MinLevel: slog.LevelDebug})
			if !c.kept {
				if len(got) != 0 {
					t.Errorf("ring holds %v, want nothing", got)
				}
				return
			}
			want := map[string]any{"component": "rest", "req.path": "/a", "req.status": int64(200), "message": "request",
				"level": "info", "timestamp": "2023-11-14T22:13:20.000Z"}
			if len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) {
				t.Errorf("ring holds %v, want [%v]", got, want)
			}
		})
	}
}

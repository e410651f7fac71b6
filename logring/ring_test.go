package logring

import (
	"bytes"
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

package logring

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestThrottled: a condition repeated 5,000 times in one interval gives
// one line at once and one count line when the interval ends.
func TestThrottled(t *testing.T) {
	var out bytes.Buffer
	th := NewThrottled(slog.New(slog.NewTextHandler(&out, nil)), slog.LevelError, "disk full", time.Hour)
	defer th.Stop()
	for i := range 5000 {
		th.Log("n", i)
	}
	if got := strings.Count(out.String(), "disk full"); got != 1 {
		t.Fatalf("%d lines during the interval, want 1:\n%s", got, out.String())
	}
	th.flush() // the interval's end, without waiting an hour
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "repeated=4999") || !strings.Contains(lines[1], "n=4999") {
		t.Fatalf("lines after the interval: %q, want a count of 4999 with the latest attributes", lines)
	}
	th.flush() // nothing more happened: no line
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Fatalf("%d lines after an empty interval, want 2", n)
	}
}

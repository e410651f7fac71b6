package service

import (
	"runtime/debug"
	"testing"
)

// TestRaiseGCForLoad: loads raise the collector's target unless it is off
// or higher, and the last load to finish puts back what the first found.
func TestRaiseGCForLoad(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	cases := []struct {
		operator, during int
	}{
		{100, loadGCPercent},
		{50, loadGCPercent},
		{-1, -1},                               // GOGC=off stays off
		{loadGCPercent * 2, loadGCPercent * 2}, // a higher target is kept
	}
	for _, tc := range cases {
		debug.SetGCPercent(tc.operator)
		restoreA := raiseGCForLoad()
		restoreB := raiseGCForLoad() // two stores loading at once
		if got := gcPercent(); got != tc.during {
			t.Fatalf("GOGC %d: %d while loading, want %d", tc.operator, got, tc.during)
		}
		restoreA()
		if got := gcPercent(); got != tc.during {
			t.Fatalf("GOGC %d: %d after the first load ended, want %d", tc.operator, got, tc.during)
		}
		restoreB()
		if got := gcPercent(); got != tc.operator {
			t.Fatalf("GOGC %d: %d after both loads, want it back", tc.operator, got)
		}
	}
}

func gcPercent() int {
	p := debug.SetGCPercent(0)
	debug.SetGCPercent(p)
	return p
}

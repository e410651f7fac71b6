package memtune

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestRaiseForLoadCapsTheHeap: while a load runs the heap is capped below
// the machine's memory (GOGC 400 alone lets it peak at several times the
// data), and the last load to end puts back no limit.
func TestRaiseForLoadCapsTheHeap(t *testing.T) {
	if Explicit() != "" || totalMemory() == 0 {
		t.Skip("GOGC/GOMEMLIMIT set or /proc/meminfo missing: the cap does not apply")
	}
	before := debug.SetMemoryLimit(-1)
	if before != math.MaxInt64 {
		t.Skip("a memory limit is already set")
	}
	restoreA := RaiseForLoad()
	restoreB := RaiseForLoad()
	if got, want := debug.SetMemoryLimit(-1), int64(totalMemory()/loadMemoryShare); got != want {
		t.Fatalf("memory limit during the load: %d, want %d", got, want)
	}
	restoreA()
	restoreA() // a second call does nothing
	if got := debug.SetMemoryLimit(-1); got == math.MaxInt64 {
		t.Fatal("the first load to end lifted the cap while another still loads")
	}
	restoreB()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("memory limit after the loads: %d, want none", got)
	}
}

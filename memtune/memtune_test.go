package memtune

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestGCPercent(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name    string
		live    uint64
		percent int
		want    int
	}{
		{"large heap: the fraction", 1000 * mib, 25, 25},
		{"large heap, another fraction", 1000 * mib, 10, 10},
		{"heap at four floors: fraction and floor agree", 256 * mib, 25, 25},
		{"medium heap: the floor", 128 * mib, 25, 50},
		{"heap equal to the floor: GOGC 100", 64 * mib, 25, 100},
		{"small heap: the floor, more than GOGC 100", 16 * mib, 25, 400},
		{"floor over a heap not a divisor of it: rounded up", 96 * mib, 25, 67},
		// Below 4 MB the runtime's minimum goal (4 MB × GOGC / 100)
		// would exceed live + floor: capped at that goal.
		{"tiny heap: capped by the runtime's minimum", 1 * mib, 25, 1625},
		{"3 MB heap: capped", 3 * mib, 25, 1675},
		{"before the first collection", 0, 25, 1600},
	}
	for _, tc := range cases {
		if got := GCPercent(tc.live, tc.percent, Floor); got != tc.want {
			t.Errorf("%s: GCPercent(%d, %d) = %d, want %d", tc.name, tc.live, tc.percent, got, tc.want)
		}
	}
}

// TestGoalNotBelowDefault checks the promise that no heap collects more
// often than at GOGC 100 while it is below the floor, nor under the
// fraction above it.
func TestGoalNotBelowDefault(t *testing.T) {
	for live := uint64(1 << 10); live < 1<<36; live = live*3/2 + 1 {
		p := GCPercent(live, DefaultPercent, Floor)
		goal := float64(live) * (1 + float64(p)/100)
		want := float64(live) + max(float64(Floor), float64(live)*DefaultPercent/100)
		if live >= runtimeHeapMinimum && goal < want {
			t.Fatalf("live %d: GOGC %d gives goal %.0f, below %.0f", live, p, goal, want)
		}
		if live < Floor && goal < 2*float64(live) {
			t.Fatalf("live %d: GOGC %d collects more often than GOGC 100", live, p)
		}
	}
}

func TestExplicitEnvironmentTurnsItOff(t *testing.T) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv(name, "100")
			before := debug.SetGCPercent(100)
			defer debug.SetGCPercent(before)
			stop, running := Start(DefaultPercent)
			defer stop()
			if running {
				t.Fatalf("%s set: the policy runs", name)
			}
			runtime.GC()
			if got := debug.SetGCPercent(100); got != 100 {
				t.Fatalf("%s set: GOGC changed to %d", name, got)
			}
		})
	}
}

func TestRunsAfterEachCollection(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	stop, running := Start(DefaultPercent)
	if !running {
		t.Fatal("the policy does not run")
	}
	// Whatever sets GOGC meanwhile is corrected after the next collection.
	debug.SetGCPercent(7)
	for i := 0; i < 100 && currentGCPercent() == 7; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	want := GCPercent(liveHeap(), DefaultPercent, Floor)
	if got := currentGCPercent(); got == 7 || got < want/2 || got > want*2 {
		t.Fatalf("after collections GOGC = %d, want about %d", got, want)
	}

	// Held, the policy leaves GOGC alone; released, it applies at once.
	release, tuned := Hold()
	if !tuned {
		t.Fatal("Hold: the running policy is not reported")
	}
	debug.SetGCPercent(400)
	runtime.GC()
	runtime.GC()
	if got := currentGCPercent(); got != 400 {
		t.Fatalf("held: GOGC = %d, want 400", got)
	}
	release()
	if got := currentGCPercent(); got == 400 {
		t.Fatal("released: GOGC still 400")
	}
	stop()
	if got := currentGCPercent(); got != 100 {
		t.Fatalf("stopped: GOGC = %d, want the 100 found", got)
	}
}

func currentGCPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

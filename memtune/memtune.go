// Package memtune keeps the garbage collector's headroom proportionate to
// a heap that is mostly long-lived data. Quarry's heap is nearly all
// objects and indexes that live until they are replaced, so at Go's
// default GOGC of 100 the collector lets the heap grow to twice the live
// data before it runs: half the resident size is headroom for garbage a
// server makes little of. The policy re-sets GOGC after every collection
// so that the next one starts at the live heap plus a fraction of it, but
// never less than a floor (small heaps collect no more often than at
// GOGC 100). It is a target, not a limit: a heap that grows moves the
// target up at the next collection, and the collector never runs
// continuously against a cap the data has outgrown, as it would under
// GOMEMLIMIT.
//
// An operator's GOGC or GOMEMLIMIT in the environment is an explicit
// choice: then the policy does nothing.
package memtune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Floor is the least headroom the policy leaves above the live heap: at
// GOGC 100 a heap below it gets less headroom than Floor, so with it no
// heap smaller than Floor collects more often than under Go's default.
const Floor = 64 << 20

// DefaultPercent is the headroom as a percentage of the live heap.
const DefaultPercent = 25

// runtimeHeapMinimum is the Go runtime's smallest heap goal at GOGC 100
// (4 MB), which it scales with GOGC.
const runtimeHeapMinimum = 4 << 20

// GCPercent returns the GOGC that makes the next collection start when
// the heap reaches live + max(floor, live × percent / 100). The runtime
// also never collects below 4 MB × GOGC / 100, so on a tiny heap the
// result is lowered to keep that minimum within the same goal.
func GCPercent(live uint64, percent int, floor uint64) int {
	headroom := max(floor, live/100*uint64(percent)+live%100*uint64(percent)/100)
	goal := float64(live) + float64(headroom)
	capped := goal * 100 / runtimeHeapMinimum
	p := capped
	if live > 0 {
		p = min(math.Ceil(float64(headroom)*100/float64(live)), capped)
	}
	return int(max(1, min(p, math.MaxInt32)))
}

// Explicit reports the environment variable that makes the policy stand
// aside ("" when none is set).
func Explicit() string {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if os.Getenv(name) != "" {
			return name
		}
	}
	return ""
}

// policy is the process's one policy: GOGC is process-wide.
var policy struct {
	sync.Mutex
	users   int // Start calls not yet stopped
	percent int
	held    int // Hold calls not yet released
	armed   bool
	initial int // the GOGC found by the first Start, put back by the last stop
}

// Start runs the policy with headroom percent (> 0) of the live heap
// until the returned stop is called, unless GOGC or GOMEMLIMIT is set
// (then it returns false and a stop that does nothing). Starts nest: the
// latest percent applies, and the last stop puts back the GOGC found.
func Start(percent int) (stop func(), running bool) {
	if percent <= 0 || Explicit() != "" {
		return func() {}, false
	}
	policy.Lock()
	defer policy.Unlock()
	if policy.users == 0 {
		// Read by setting: -1 (off) would wait for a running cycle,
		// and the metric /gc/gogc:percent reads 0 for off.
		policy.initial = debug.SetGCPercent(100)
		debug.SetGCPercent(policy.initial)
	}
	policy.users++
	policy.percent = percent
	if !policy.armed {
		policy.armed = true
		arm()
	}
	applyLocked()
	var once sync.Once
	return func() {
		once.Do(func() {
			policy.Lock()
			defer policy.Unlock()
			if policy.users--; policy.users == 0 {
				debug.SetGCPercent(policy.initial)
			}
		})
	}, true
}

// Hold stands the policy aside until release is called, for code that
// sets GOGC itself for a while (a store's load raises it); release
// re-applies the policy at once, since that code puts back a value the
// policy chose for a heap of another size. Holds nest. tuned reports
// whether the policy is running, so that GOGC is its choice.
func Hold() (release func(), tuned bool) {
	policy.Lock()
	policy.held++
	tuned = policy.users > 0
	policy.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			policy.Lock()
			defer policy.Unlock()
			if policy.held--; policy.held == 0 {
				applyLocked()
			}
		})
	}, tuned
}

// sentinel is garbage whose cleanup marks the end of a collection. It
// holds a pointer so that the tiny allocator never packs it with others
// (a cleanup on a packed object may never run).
type sentinel struct {
	_ *byte
	_ [2]uint64
}

// arm allocates a sentinel whose cleanup runs after the collection that
// finds it unreachable: it re-applies the policy and arms the next.
func arm() {
	runtime.AddCleanup(&sentinel{}, func(struct{}) { afterCollection() }, struct{}{})
}

func afterCollection() {
	policy.Lock()
	defer policy.Unlock()
	if policy.users == 0 {
		policy.armed = false
		return
	}
	applyLocked()
	arm()
}

// applyLocked sets GOGC from the live heap of the last collection, unless
// the policy is stopped or held. The caller holds policy's lock.
func applyLocked() {
	if policy.users == 0 || policy.held > 0 {
		return
	}
	debug.SetGCPercent(GCPercent(liveHeap(), policy.percent, Floor))
}

// liveHeap is the heap the last collection marked live (0 before the
// first).
func liveHeap() uint64 { return readMetric("/gc/heap/live:bytes") }

// readMetric reads one of runtime/metrics' integer metrics (0 when the
// runtime lacks it).
func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

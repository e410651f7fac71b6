package cloud

import (
	"context"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// Bounds of one JavaScript call besides its time (cloudCodeTimeout). goja
// has no memory limit of its own: a script pushing into an array forever
// would grow the Go heap until the process is killed.
const (
	// DefaultMaxMemory is cloudCodeMaxMemory's default: how much the heap
	// may grow while one call runs.
	DefaultMaxMemory int64 = 512 << 20
	// memoryFirstCheck is how long a call runs before the watchdog first
	// reads the heap: an ordinary call has answered by then and never
	// pays for a reading.
	memoryFirstCheck = 2 * time.Millisecond
	// memoryCheckEvery is the watchdog's period after its first reading.
	memoryCheckEvery = 5 * time.Millisecond
	// maxCallDepth bounds JavaScript recursion: goja keeps its call stack
	// on the heap, so without a bound an endless recursion is a memory
	// exhaustion. Node allows about 11,000 frames.
	maxCallDepth = 10_000
)

// liveHeapMetric is the heap the last garbage collection found reachable.
// Garbage does not count, so a call that allocates a lot and keeps
// little is never stopped, and a large in-memory data set's own churn is
// not blamed on a script; the reading is cheap (no stop of the world,
// unlike runtime.ReadMemStats).
const liveHeapMetric = "/gc/heap/live:bytes"

// liveHeap reads liveHeapMetric into the runtime's own sample (a
// reading then allocates nothing; it costs 0.5–1 µs). rt.mu is held.
func (rt *jsRuntime) liveHeap() uint64 {
	rt.heapSample[0].Name = liveHeapMetric
	metrics.Read(rt.heapSample[:])
	return rt.heapSample[0].Value.Uint64()
}

// memoryGuard is what the runtimes of one pool share to bound each call's
// memory. A reading is of the whole process, so growth cannot be told
// apart by call: every call running may keep one allowance, and a call
// is stopped when the heap has grown since its start past the allowance
// times the most calls seen running at once since then. The most, not
// the current count: the live heap is known at each collection only, so
// it still holds what calls that just ended kept.
type memoryGuard struct {
	allowance uint64
	running   atomic.Int64 // calls armed
}

// stopReason says why the watchdog interrupted a call.
type stopReason int

const (
	notStopped stopReason = iota
	stoppedTimeout
	stoppedMemory
)

// arm starts the watchdog for a call under ctx: past ctx's deadline, or
// once the call's memory is past its bound, the script is interrupted
// and the loop stopped. The runtime's one timer serves every call and
// both checks; a context without a deadline but with an end gets
// context.AfterFunc; a job's has neither (and only the memory check).
func (rt *jsRuntime) arm(ctx context.Context) {
	d, timed := ctx.Deadline()
	if rt.mem != nil {
		rt.mem.running.Add(1)
	}
	rt.mu.Lock()
	rt.armed, rt.stopped, rt.deadline, rt.unwatch = true, notStopped, time.Time{}, nil
	if timed {
		rt.deadline = d
	}
	if wait, ok := rt.nextCheck(memoryFirstCheck); ok {
		rt.watchdog.Reset(wait)
	}
	rt.mu.Unlock()
	if !timed && ctx.Done() != nil {
		rt.unwatch = context.AfterFunc(ctx, rt.cancelFn)
	}
}

// nextCheck is when the watchdog looks next: after wait when memory is
// bounded, at the deadline when it comes sooner; false when neither
// applies.
func (rt *jsRuntime) nextCheck(wait time.Duration) (time.Duration, bool) {
	if rt.deadline.IsZero() {
		return wait, rt.mem != nil
	}
	if left := time.Until(rt.deadline); rt.mem == nil || left < wait {
		return left, true
	}
	return wait, true
}

// disarm stops the watchdog and says whether it interrupted the call; if
// it did, the runtime may be interrupted still and must not be reused.
func (rt *jsRuntime) disarm() stopReason {
	if rt.unwatch != nil {
		rt.unwatch()
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.armed && rt.mem != nil {
		rt.mem.running.Add(-1)
	}
	rt.armed, rt.heapStart, rt.peakRunning = false, 0, 0
	rt.watchdog.Stop()
	return rt.stopped
}

// tick is the watchdog's timer: it stops a call past its deadline or its
// memory, else sets itself again. A tick that lost the race with disarm
// finds the runtime unarmed (or armed for the next call, whose own checks
// it then makes) and does nothing wrong.
func (rt *jsRuntime) tick() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if !rt.armed || rt.stopped != notStopped {
		return
	}
	if !rt.deadline.IsZero() && !time.Now().Before(rt.deadline) {
		rt.halt(stoppedTimeout)
		return
	}
	if rt.mem != nil && rt.overMemory() {
		rt.halt(stoppedMemory)
		return
	}
	if wait, ok := rt.nextCheck(memoryCheckEvery); ok {
		rt.watchdog.Reset(wait)
	}
}

// overMemory reads the heap: the first reading is the call's start, later
// ones compare the growth since with the allowance of the calls running
// (see memoryGuard). rt.mu is held.
func (rt *jsRuntime) overMemory() bool {
	now := rt.liveHeap()
	rt.peakRunning = max(rt.peakRunning, rt.mem.running.Load(), 1)
	if rt.heapStart == 0 {
		rt.heapStart = max(now, 1)
		return false
	}
	return now > rt.heapStart && now-rt.heapStart > rt.mem.allowance*uint64(rt.peakRunning)
}

// cancel stops the call whose context ended (a context without a
// deadline: the runtime's timer does not know when).
func (rt *jsRuntime) cancel() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.armed && rt.stopped == notStopped {
		rt.halt(stoppedTimeout)
	}
}

// halt interrupts the script and stops the loop. rt.mu is held.
func (rt *jsRuntime) halt(why stopReason) {
	rt.stopped = why
	rt.vm.Interrupt(why)
	rt.loop.StopNoWait()
}

// stopError is the Parse error a call stopped by the watchdog answers.
func (s *Scripts) stopError(why stopReason) error {
	if why == stoppedMemory {
		return schema.Errorf(schema.CodeScriptFailed, "Script exceeded its memory limit of %s.", formatBytes(s.maxMemory))
	}
	return schema.Errorf(schema.CodeTimeout, "Script timed out after %s.", s.reg.timeout)
}

// formatBytes writes n in the largest unit that divides it (as the
// option is usually written: 512mb).
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
		if n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
